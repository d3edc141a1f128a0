package parquet

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// File is an opened Parquet file: its footer, Arrow schema and row-group statistics.
// The footer-derived parts are immutable and safe to share between goroutines and
// queries; reads go through the storage.Reader the File was opened (or rebound) with.
type File struct {
	name string
	size int64
	rows int64
	// meta is the library's reading of the footer, decoded again when first needed
	// after Open: it is hundreds of small objects per file, which every collection
	// would mark while the File is cached, and reading needs it only for bloom
	// filters and the library's row-group reader.
	meta *lazyMeta
	*shape
	groups []RowGroupInfo
	// chunks summarises every column chunk's metadata, by row group and then
	// leaf (chunk); nleaves is the leaves per row group.
	chunks  []chunkInfo
	nleaves int
	// index holds the page indexes read so far, shared by every File rebound from
	// this one (WithReader): a scan that divides a row group, and each of its parts,
	// read the same index.
	index *pageIndexes

	// Bound to one open reader; nil for a File whose reader was released.
	src storage.Reader
	// share is the pages of one row group that other readers of it decompress
	// too (Sharing), or nil.
	share *PageShare
}

// column is what File knows of one top-level field.
type column struct {
	leaves []int          // Parquet leaf column indexes under the field
	leaf   *schema.Column // the leaf when the field is a single flat column, else nil
	read   arrow.DataType // the type the library produces
	int96  bool           // the leaf is an INT96 timestamp (read as ns, normalised to µs)
	id     int32          // the field's Parquet field id, or -1 when it has none
}

// chunkInfo is what reading asks of one column chunk's metadata, taken from the
// footer when the file is opened: the library builds a new metadata object, with
// its lists, each time a chunk's is asked for, and opening a row group asked for
// each column's several times. It holds no pointers, so the collector does not
// scan a cached footer's chunks.
type chunkInfo struct {
	start        int64 // the chunk's first byte: its dictionary page's, or its first data page's
	compressed   int64 // its size in the file
	uncompressed int64 // its pages' and headers' size decompressed
	values       int64 // the values (with nulls) of its data pages
	codec        compress.Compression
	colIndex     metadata.IndexLocation // its column index, when hasColIndex
	offIndex     metadata.IndexLocation // its offset index, when hasOffIndex
	bloomOffset  int64                  // its bloom filter's offset; 0 when it has none
	bloomLength  int32                  // the bloom filter's length, header included; 0 when not recorded
	hasColIndex  bool
	hasOffIndex  bool
	hasDict      bool // it has a dictionary page
	encrypted    bool // its pages are encrypted
	oldWriter    bool // it was written by a parquet-mr that misstates page sizes
	listed       bool // it lists its encodings
	plainOrDict  bool // it uses no encodings but PLAIN, the dictionary's and RLE levels
	dictOnly     bool // every data page is dictionary-encoded (see dictionaryEncoded)
}

// chunk is the summary of the chunk of leaf in row group rg, or nil when there is
// none.
func (f *File) chunk(rg, leaf int) *chunkInfo {
	if rg < 0 || leaf < 0 || leaf >= f.nleaves || rg*f.nleaves+leaf >= len(f.chunks) {
		return nil
	}
	return &f.chunks[rg*f.nleaves+leaf]
}

// summarise takes the summary of column chunk cc.
func summarise(cc *metadata.ColumnChunkMetaData, oldWriter bool) chunkInfo {
	start := cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
		start = cc.DictionaryPageOffset()
	}
	ci := chunkInfo{start: start, compressed: cc.TotalCompressedSize(), uncompressed: cc.TotalUncompressedSize(),
		values: cc.NumValues(), codec: cc.Compression(), hasDict: cc.HasDictionaryPage(),
		encrypted: cc.CryptoMetadata() != nil, oldWriter: oldWriter, listed: len(cc.Encodings()) > 0,
		plainOrDict: true, bloomOffset: cc.BloomFilterOffset(), bloomLength: cc.BloomFilterLength()}
	if loc := cc.GetColumnIndexLocation(); loc != nil {
		ci.colIndex, ci.hasColIndex = *loc, true
	}
	if loc := cc.GetOffsetIndexLocation(); loc != nil {
		ci.offIndex, ci.hasOffIndex = *loc, true
	}
	for _, e := range cc.Encodings() {
		switch e {
		case pq.Encodings.Plain, pq.Encodings.PlainDict, pq.Encodings.RLEDict, pq.Encodings.RLE:
		default:
			ci.plainOrDict = false
		}
	}
	ci.dictOnly = dictionaryEncoded(cc)
	return ci
}

// RowGroupInfo is what the footer says of one row group.
type RowGroupInfo struct {
	Rows              int64
	CompressedBytes   int64         // sum of the column chunks' compressed sizes
	UncompressedBytes int64         // the footer's total byte size of the row group, uncompressed
	Columns           []ColumnStats // indexed like Schema().Fields(); nested columns have no bounds
}

// ColumnStats are one column chunk's statistics, typed like the normalised column.
type ColumnStats struct {
	HasMinMax          bool
	Min, Max           types.Value
	MinExact, MaxExact bool
	HasNullCount       bool
	NullCount          int64
	CompressedBytes    int64
	// Distinct is the chunk's count of distinct values as its writer stated it
	// (Parquet's distinct_count, which DuckDB writes for dictionary-encoded chunks);
	// 0 when not stated.
	Distinct int64
}

// Open reads and validates the footer of the Parquet object r, called name in errors.
// Any malformed input is an errs.CorruptSource error naming the file. The File keeps r
// for ReadRowGroup; the caller still owns r and closes it.
func Open(ctx context.Context, r storage.Reader, name string) (f *File, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, corrupt("cannot read footer of %q: %v", name, panicText(p))
		}
	}()
	// The footer is found from the end: the size must be the object's, not one a
	// table's metadata claims.
	if err := storage.CheckSize(r); err != nil {
		return nil, err
	}
	// The footer's lengths and counts are checked before the library allocates from
	// them (see guard.go).
	tail, err := readFooter(r, r.Size())
	if err != nil {
		return nil, corrupt("cannot read footer of %q: %v", name, err)
	}
	rdr, err := file.NewParquetReader(io.NewSectionReader(tail, 0, r.Size()), file.WithReadProps(readProps()))
	if err != nil {
		return nil, corrupt("cannot read footer of %q: %v", name, err)
	}
	md := rdr.MetaData()
	f = &File{name: name, size: r.Size(), rows: md.NumRows, meta: &lazyMeta{footer: bytes.Clone(tail.footer)}, src: r,
		index: &pageIndexes{m: map[[2]int]indexEntry{}}}
	if err := f.load(rdr, md, tail.shape); err != nil {
		return nil, corrupt("cannot read footer of %q: %v", name, err)
	}
	f.index.region = f.indexRegion()
	f.index.keepTail(tail.tail, tail.tailAt)
	return f, nil
}

func readProps() *pq.ReaderProperties {
	props := pq.NewReaderProperties(memory.DefaultAllocator)
	// Without buffering every seek re-reads a whole column chunk.
	props.BufferedStreamEnabled = true
	return props
}

// load maps the schema and decodes every row group's statistics, so that any problem
// in the footer shows at Open and not in the middle of a query.
func (f *File) load(rdr *file.Reader, md *metadata.FileMetaData, key shapeKey) error {
	if md.NumRows < 0 {
		return fmt.Errorf("negative row count %d", md.NumRows)
	}
	sh, err := shapes.get(key, func() (*shape, error) { return newShape(rdr, md.Schema) })
	if err != nil {
		return err
	}
	f.shape = sh
	return f.rowGroups(md)
}

// newShape maps the schema of the file rdr reads, whose Parquet schema is sch.
func newShape(rdr *file.Reader, sch *schema.Schema) (*shape, error) {
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	raw, err := fr.Schema()
	if err != nil {
		return nil, err
	}
	if len(fr.Manifest.Fields) != raw.NumFields() {
		return nil, fmt.Errorf("schema has %d fields but maps to %d", len(fr.Manifest.Fields), raw.NumFields())
	}
	fields := make([]arrow.Field, raw.NumFields())
	sh := &shape{sch: sch, cols: make([]column, raw.NumFields())}
	for i, fld := range raw.Fields() {
		c := column{read: fld.Type, id: sch.Root().Field(i).FieldID()}
		collectLeaves(&fr.Manifest.Fields[i], &c.leaves)
		sf := &fr.Manifest.Fields[i]
		if sf.IsLeaf() {
			c.leaf = sch.Column(sf.ColIndex)
			c.int96 = c.leaf.PhysicalType() == pq.Types.Int96
			if err := checkLeaf(c.leaf); err != nil {
				return nil, err
			}
		}
		nt := normalType(fld.Type)
		switch {
		case c.int96:
			nt = types.Timestamp
		case c.leaf != nil && fixedLenType(c.leaf) != nil:
			nt = fixedLenType(c.leaf)
		case c.leaf != nil && nt.ID() == arrow.TIMESTAMP:
			// TIMESTAMP_MILLIS/MICROS written before logical types say nothing about
			// time zones; like DuckDB, read them as plain timestamps.
			if lt, ok := c.leaf.LogicalType().(schema.TimestampLogicalType); ok && lt.IsFromConvertedType() {
				nt = &arrow.TimestampType{Unit: nt.(*arrow.TimestampType).Unit}
			}
		}
		fields[i] = arrow.Field{Name: fld.Name, Type: nt, Nullable: fld.Nullable}
		sh.cols[i] = c
	}
	sh.schema = arrow.NewSchema(fields, nil)
	return sh, nil
}

// rowGroups summarises every row group's chunks and decodes its statistics.
func (f *File) rowGroups(md *metadata.FileMetaData) error {
	sch := f.sch
	f.groups = make([]RowGroupInfo, md.NumRowGroups())
	f.nleaves = sch.NumColumns()
	f.chunks = make([]chunkInfo, 0, len(f.groups)*f.nleaves)
	oldWriter := md.WriterVersion().LessThan(metadata.Parquet816FixedVersion)
	for g := range f.groups {
		rg := md.RowGroup(g)
		if rg.NumColumns() != sch.NumColumns() {
			return fmt.Errorf("row group %d has %d column chunks, the schema %d", g, rg.NumColumns(), sch.NumColumns())
		}
		if rg.NumRows() < 0 {
			return fmt.Errorf("row group %d has a negative row count", g)
		}
		info := RowGroupInfo{Rows: rg.NumRows(), UncompressedBytes: max(rg.TotalByteSize(), 0), Columns: make([]ColumnStats, len(f.cols))}
		for j := 0; j < rg.NumColumns(); j++ {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				return err
			}
			if cc.TotalCompressedSize() < 0 || cc.TotalCompressedSize() > f.size {
				return fmt.Errorf("row group %d column %d: compressed size %d out of range", g, j, cc.TotalCompressedSize())
			}
			info.CompressedBytes += cc.TotalCompressedSize()
			f.chunks = append(f.chunks, summarise(cc, oldWriter))
		}
		for i, c := range f.cols {
			cs := &info.Columns[i]
			for _, leaf := range c.leaves {
				if ci := f.chunk(g, leaf); ci != nil {
					cs.CompressedBytes += ci.compressed
				}
			}
			if c.leaf == nil || c.int96 {
				continue // nested or INT96 (no defined order): no bounds
			}
			fld := f.schema.Field(i)
			if err := columnStats(md, g, c.leaves[0], c.leaf, fld.Type, c.read, cs); err != nil {
				return fmt.Errorf("statistics of column %q in row group %d: %w", fld.Name, g, err)
			}
		}
		f.groups[g] = info
	}
	return nil
}

// checkLeaf rejects annotations that do not fit the physical type, which the library
// would otherwise read as something they are not.
func checkLeaf(c *schema.Column) error {
	pt := c.PhysicalType()
	bad := func() error {
		return fmt.Errorf("column %q: annotation %s is invalid on physical type %s", c.Path(), c.ConvertedType(), pt)
	}
	switch c.ConvertedType() {
	case schema.ConvertedTypes.Date, schema.ConvertedTypes.TimeMillis,
		schema.ConvertedTypes.Int8, schema.ConvertedTypes.Int16, schema.ConvertedTypes.Int32,
		schema.ConvertedTypes.Uint8, schema.ConvertedTypes.Uint16, schema.ConvertedTypes.Uint32:
		if pt != pq.Types.Int32 {
			return bad()
		}
	case schema.ConvertedTypes.Int64, schema.ConvertedTypes.Uint64, schema.ConvertedTypes.TimeMicros,
		schema.ConvertedTypes.TimestampMillis, schema.ConvertedTypes.TimestampMicros:
		if pt != pq.Types.Int64 {
			return bad()
		}
	case schema.ConvertedTypes.UTF8, schema.ConvertedTypes.JSON, schema.ConvertedTypes.BSON, schema.ConvertedTypes.Enum:
		if pt != pq.Types.ByteArray {
			return bad()
		}
	}
	return nil
}

func collectLeaves(sf *pqarrow.SchemaField, out *[]int) {
	if sf.IsLeaf() {
		*out = append(*out, sf.ColIndex)
		return
	}
	for i := range sf.Children {
		collectLeaves(&sf.Children[i], out)
	}
}

// Name is the name the file was opened with.
func (f *File) Name() string { return f.name }

// Size is the file's size in bytes.
func (f *File) Size() int64 { return f.size }

// Schema is the file's Arrow schema in Lore's normalised types (see the package doc).
func (f *File) Schema() *arrow.Schema { return f.schema }

// NumRows is the footer's row count.
func (f *File) NumRows() int64 { return f.rows }

// NumRowGroups is the number of row groups.
func (f *File) NumRowGroups() int { return len(f.groups) }

// RowGroup describes row group i.
func (f *File) RowGroup(i int) RowGroupInfo { return f.groups[i] }

// FieldID is the Parquet field id of top-level field i (as Schema numbers them), which
// table formats such as Iceberg resolve columns by; ok is false when the writer gave it
// none.
func (f *File) FieldID(i int) (id int32, ok bool) {
	if i < 0 || i >= len(f.cols) || f.cols[i].id < 0 {
		return 0, false
	}
	return f.cols[i].id, true
}

// WithReader returns a File that shares f's footer, schema and statistics but reads
// through r, which must hold the same bytes. It lets a footer be cached across queries
// while every query opens (and closes) its own reader.
func (f *File) WithReader(r storage.Reader) (*File, error) {
	if r.Size() != f.size {
		// A size claimed by a table's metadata may be wrong where the footer's is
		// right: the store says which.
		if err := storage.CheckSize(r); err != nil {
			return nil, err
		}
	}
	if r.Size() != f.size {
		return nil, errs.New(errs.SourceChanged, "file %q changed: size %d, was %d", f.name, r.Size(), f.size)
	}
	g := *f
	g.src = r
	return &g, nil
}

// Sharing returns a File that is f but reads the pages of share's row group through
// share: each is decompressed by whichever part of the row group needs it first.
func (f *File) Sharing(share *PageShare) *File {
	g := *f
	g.share = share
	return &g
}

func corrupt(format string, args ...any) error {
	return errs.New(errs.CorruptSource, format, args...)
}

// panicText describes a panic recovered from the library.
func panicText(p any) string { return fmt.Sprintf("malformed data (%v)", p) }

// fieldIDKey is the Arrow field metadata key under which the library keeps a Parquet
// field id, on nested fields as on top-level ones.
const fieldIDKey = "PARQUET:field_id"

// NestedFieldID is the Parquet field id of a field inside a nested column of Schema
// (a struct's field, a list's element, a map's key or value), which table formats
// resolve nested fields by as they resolve columns (FieldID); ok is false when the
// writer gave it none.
func NestedFieldID(f arrow.Field) (id int32, ok bool) {
	s, found := f.Metadata.GetValue(fieldIDKey)
	if !found {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 0 {
		return 0, false
	}
	return int32(n), true
}
