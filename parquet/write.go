package parquet

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// WriteOptions configure WriteFile. The zero value is valid.
type WriteOptions struct {
	// RowGroupRows is the number of rows per row group; the last group of a file
	// may be shorter. Default: 1,048,576 (2^20).
	RowGroupRows int64
	// Compression is "zstd" (level 3), "snappy" or "none". Default: "zstd".
	Compression string
	// CreatedBy is the footer's created_by. Default: "lore".
	CreatedBy string
	// KeyValue is written to the footer's key-value metadata, in key order.
	KeyValue map[string]string
	// SortedBy names top-level, non-nested columns the rows are sorted by
	// (ascending, NULLs first), recorded as every row group's sorting_columns.
	// WriteFile records the caller's promise; it does not check the order.
	SortedBy []string
}

// WriteDefaultRowGroupRows is the row-group length used when WriteOptions leaves it
// unset.
const WriteDefaultRowGroupRows = 1 << 20

// WriteFile writes one Parquet file at path. fn produces the rows by calling emit
// once per record (in schema order, any number of rows); WriteFile cuts the rows into
// row groups of exactly opts.RowGroupRows regardless of how fn batches them, so that
// a file's layout depends only on its rows.
//
// The file is written with dictionary encoding, column statistics and the column
// and offset page index on every column. It is staged at path+".tmp", synced, and
// renamed into place only when complete, so a reader never sees a partial file at
// path; on any error the staged file is removed.
func WriteFile(path string, schema *arrow.Schema, fn func(emit func(arrow.Record) error) error, opts WriteOptions) error {
	// The library writes 128-bit decimals only (small ones as INT32 and INT64).
	schema = vector.WideSchema(schema)
	var (
		codec compress.Compression
		level int // 0: the codec's default
	)
	switch strings.ToLower(opts.Compression) {
	case "", "zstd":
		codec, level = compress.Codecs.Zstd, 3
	case "snappy":
		codec = compress.Codecs.Snappy
	case "none", "uncompressed":
		codec = compress.Codecs.Uncompressed
	default:
		return errs.New(errs.Analysis, "unknown compression %q (want zstd, snappy or none)", opts.Compression)
	}
	rgRows := opts.RowGroupRows
	if rgRows <= 0 {
		rgRows = WriteDefaultRowGroupRows
	}
	createdBy := opts.CreatedBy
	if createdBy == "" {
		createdBy = "lore"
	}
	props := []pq.WriterProperty{
		pq.WithCreatedBy(createdBy),
		pq.WithDictionaryDefault(true),
		pq.WithStats(true),
		pq.WithPageIndexEnabled(true),
		pq.WithCompression(codec),
		// Decimals of up to 18 digits as INT32/INT64, as DuckDB and Spark write them:
		// smaller, and decoded without a byte-array round trip.
		pq.WithStoreDecimalAsInteger(true),
		// Row groups are cut by WriteFile itself; the library limit only backs it up.
		pq.WithMaxRowGroupLength(rgRows),
	}
	if level != 0 {
		props = append(props, pq.WithCompressionLevel(level))
	}
	if len(opts.SortedBy) > 0 {
		cols, err := sortingColumns(schema, opts.SortedBy)
		if err != nil {
			return fmt.Errorf("cannot sort %q: %w", path, err)
		}
		props = append(props, pq.WithSortingColumns(cols))
	}

	tmp := path + ".tmp"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cannot create directory for %q: %w", path, err)
	}
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("cannot create %q: %w", tmp, err)
	}
	// Until the rename succeeds, any failure removes the staged file.
	committed := false
	defer func() {
		if !committed {
			f.Close() // may already be closed; the error is of no interest
			os.Remove(tmp)
		}
	}()

	// The writer gets f without its Close, so that the data can be synced to disk
	// before the rename publishes it.
	fw, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{f}, pq.NewWriterProperties(props...),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return fmt.Errorf("cannot start Parquet file %q: %w", path, err)
	}

	var inGroup int64 // rows in the open row group
	started := false
	emit := func(rec arrow.Record) error {
		rec = vector.WideRecord(rec)
		if !rec.Schema().Equal(schema) {
			return errs.New(errs.Internal, "record schema %s does not match file schema %s", rec.Schema(), schema)
		}
		for off := int64(0); off < rec.NumRows(); {
			if !started || inGroup == rgRows {
				if err := fw.NewBufferedRowGroupChecked(); err != nil {
					return fmt.Errorf("cannot start row group in %q: %w", path, err)
				}
				started, inGroup = true, 0
			}
			n := min(rgRows-inGroup, rec.NumRows()-off)
			part := rec
			if off != 0 || n != rec.NumRows() {
				part = rec.NewSlice(off, off+n)
			}
			err := fw.WriteBuffered(part)
			if part != rec {
				part.Release()
			}
			if err != nil {
				return fmt.Errorf("cannot write rows to %q: %w", path, err)
			}
			off += n
			inGroup += n
		}
		return nil
	}
	if err := fn(emit); err != nil {
		fw.Close()
		return err
	}

	keys := make([]string, 0, len(opts.KeyValue))
	for k := range opts.KeyValue {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := fw.AppendKeyValueMetadata(k, opts.KeyValue[k]); err != nil {
			fw.Close()
			return fmt.Errorf("cannot add footer metadata %q to %q: %w", k, path, err)
		}
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("cannot finish Parquet file %q: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("cannot sync %q: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cannot close %q: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("cannot move %q into place: %w", path, err)
	}
	committed = true
	return nil
}

// sortingColumns names columns of schema as footer sorting columns (ascending, NULLs
// first). A sorting column is named by its leaf index, so the leaves of nested
// columns before it count.
func sortingColumns(schema *arrow.Schema, names []string) ([]pq.SortingColumn, error) {
	var leaves func(dt arrow.DataType) int
	leaves = func(dt arrow.DataType) int {
		switch t := dt.(type) {
		case *arrow.StructType:
			n := 0
			for _, f := range t.Fields() {
				n += leaves(f.Type)
			}
			return n
		case *arrow.MapType:
			return leaves(t.KeyType()) + leaves(t.ItemType())
		case arrow.ListLikeType:
			return leaves(t.Elem())
		}
		return 1
	}
	cols := make([]pq.SortingColumn, 0, len(names))
	for _, name := range names {
		idx := schema.FieldIndices(name)
		if len(idx) != 1 {
			return nil, errs.New(errs.Analysis, "no single column named %q to sort by", name)
		}
		if types.IsNested(schema.Field(idx[0]).Type) {
			return nil, errs.New(errs.Analysis, "cannot sort by nested column %q", name)
		}
		leaf := 0
		for _, prev := range schema.Fields()[:idx[0]] {
			leaf += leaves(prev.Type)
		}
		cols = append(cols, pq.SortingColumn{ColumnIdx: int32(leaf), NullsFirst: true})
	}
	return cols, nil
}
