package parquet

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// The layout's defaults (SPEC §8 "The layout").
const (
	LayoutRowGroupRows  = 1 << 20   // rows per row group, at most
	LayoutRowGroupBytes = 128 << 20 // encoded bytes per row group, about
	LayoutFileBytes     = 1 << 30   // a file is closed at the first row-group boundary past this
	LayoutPageBytes     = 1 << 20   // data page size
	LayoutBloomFPP      = 0.01      // bloom filters' false positive probability
	// LayoutKeyClusteredBy is the footer key naming the clustering columns, comma
	// separated.
	LayoutKeyClusteredBy = "lore.layout.clustered_by"
	// layoutBloomMaxBytes caps one bloom filter: 2^20 distinct values at FPP 0.01 need
	// about 1.2 MB, and filters are sized in powers of two.
	layoutBloomMaxBytes = 2 << 20
	// layoutBloomCandidates is how many filter sizes, halving from the cap, an
	// adaptive filter chooses among: down to 4 KiB, so that a small row group does not
	// carry a filter sized for a million values.
	layoutBloomCandidates = 10
	// layoutChunkRows is how many rows are written between checks of the row group's
	// encoded size.
	layoutChunkRows = 16384
)

// LayoutOptions configure a LayoutWriter. Zero limits take the layout's defaults.
type LayoutOptions struct {
	RowGroupRows  int64
	RowGroupBytes int64
	FileBytes     int64
	// ClusteredBy are the top-level columns the rows arrive sorted by (ascending,
	// NULLs first, NaN above every number). The writer checks the order.
	ClusteredBy []string
	// Bloom are more columns, besides ClusteredBy, to write bloom filters for.
	Bloom []string
	// CreatedBy is the footer's created_by, e.g. "lore 1.2.0".
	CreatedBy string
	// KeyValue is more footer key-value metadata; LayoutKeyClusteredBy is added.
	KeyValue map[string]string
}

// WrittenFile is one file a LayoutWriter wrote.
type WrittenFile struct {
	Path      string
	Rows      int64
	RowGroups int
	Bytes     int64
}

// LayoutWriter writes rows sorted by clustering columns as the layout says: row groups
// closed at RowGroupRows or RowGroupBytes, whichever comes first, files closed at the
// first row-group boundary past FileBytes, every file with the column and offset
// index, bloom filters on the clustering and bloom columns, dictionary encoding,
// statistics, ZSTD level 3, sorting_columns and the clustering key in the footer.
// Sizes are the encoded, compressed bytes of the pages closed so far: a row group's
// open pages and dictionaries are not yet counted, so a limit is reached at most a
// page per column late. arrow-go's writer cuts pages by bytes only: the layout's
// 20,000-row page limit is not applied.
//
// It verifies the clustering order across and within batches: rows out of order are
// a bug in whoever sorted them, refused with an INTERNAL error rather than written
// as a file whose footer would lie about its order.
type LayoutWriter struct {
	schema *arrow.Schema
	opts   LayoutOptions
	next   func() string // the path of the next file
	props  *pq.WriterProperties
	keys   []int // schema indexes of the clustering columns

	last []types.Value // the clustering key of the last row written; nil before any

	f       *os.File
	fw      *pqarrow.FileWriter
	cur     WrittenFile
	inGroup int64 // rows in the open row group
	grouped bool  // a row group is open
	done    []WrittenFile
}

// NewLayoutWriter starts a writer of files of schema at the paths next names, one
// call per file. Files are written in place and synced when closed; staging them
// where no reader looks is the caller's business.
func NewLayoutWriter(schema *arrow.Schema, next func() string, opts LayoutOptions) (*LayoutWriter, error) {
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = LayoutRowGroupRows
	}
	if opts.RowGroupBytes <= 0 {
		opts.RowGroupBytes = LayoutRowGroupBytes
	}
	if opts.FileBytes <= 0 {
		opts.FileBytes = LayoutFileBytes
	}
	if opts.CreatedBy == "" {
		opts.CreatedBy = "lore"
	}
	w := &LayoutWriter{schema: schema, opts: opts, next: next}
	props := []pq.WriterProperty{
		pq.WithCreatedBy(opts.CreatedBy),
		pq.WithDictionaryDefault(true),
		pq.WithStats(true),
		pq.WithPageIndexEnabled(true),
		pq.WithDataPageSize(layoutPageBytes(opts)),
		// A dictionary larger than a page falls back to plain pages, which count.
		pq.WithDictionaryPageSizeLimit(layoutPageBytes(opts)),
		pq.WithCompression(compress.Codecs.Zstd),
		pq.WithCompressionLevel(3),
		pq.WithStoreDecimalAsInteger(true),
		pq.WithMaxRowGroupLength(opts.RowGroupRows),
		pq.WithMaxBloomFilterBytes(layoutBloomMaxBytes),
	}
	for _, name := range opts.ClusteredBy {
		idx := schema.FieldIndices(name)
		if len(idx) != 1 || types.IsNested(schema.Field(idx[0]).Type) {
			return nil, errs.New(errs.Analysis, "cannot cluster by %q: no single top-level column of that name", name)
		}
		w.keys = append(w.keys, idx[0])
	}
	if len(opts.ClusteredBy) > 0 {
		cols, err := sortingColumns(schema, opts.ClusteredBy)
		if err != nil {
			return nil, err
		}
		props = append(props, pq.WithSortingColumns(cols))
	}
	for _, name := range append(slices.Clone(opts.ClusteredBy), opts.Bloom...) {
		idx := schema.FieldIndices(name)
		if len(idx) != 1 || types.IsNested(schema.Field(idx[0]).Type) {
			return nil, errs.New(errs.Analysis, "cannot write a bloom filter for %q: no single top-level column of that name", name)
		}
		// Adaptive: the filter is sized for the distinct values the row group turns
		// out to hold, at the stated probability, within the cap.
		props = append(props,
			pq.WithBloomFilterEnabledFor(name, true),
			pq.WithBloomFilterFPPFor(name, LayoutBloomFPP),
			pq.WithAdaptiveBloomFilterEnabledFor(name, true),
			pq.WithBloomFilterCandidatesFor(name, layoutBloomCandidates))
	}
	w.props = pq.NewWriterProperties(props...)
	return w, nil
}

// layoutPageBytes is the data page size: LayoutPageBytes, or a sixteenth of a smaller
// row-group or file limit (at least 4 KiB). The limits are checked against the bytes
// of the pages closed so far, so pages must be small beside them for the check to
// see a row group or file grow.
func layoutPageBytes(opts LayoutOptions) int64 {
	limit := min(opts.RowGroupBytes, opts.FileBytes) / 16
	return max(min(LayoutPageBytes, limit), 4<<10)
}

// Write appends rec's rows, which must continue the clustering order.
func (w *LayoutWriter) Write(rec arrow.Record) error {
	if !sameTypes(rec.Schema(), w.schema) {
		return errs.New(errs.Internal, "record schema %s does not match the files' schema %s", rec.Schema(), w.schema)
	}
	if !rec.Schema().Equal(w.schema) {
		// Only nullability or metadata differ: the files' schema is the one written.
		rec = array.NewRecord(w.schema, rec.Columns(), rec.NumRows())
		defer rec.Release()
	}
	if rec.NumRows() == 0 {
		return nil
	}
	if err := w.checkOrder(rec); err != nil {
		return err
	}
	for off := int64(0); off < rec.NumRows(); {
		if err := w.ensureGroup(); err != nil {
			return err
		}
		n := min(w.opts.RowGroupRows-w.inGroup, rec.NumRows()-off, layoutChunkRows)
		part := rec.NewSlice(off, off+n)
		err := w.fw.WriteBuffered(part)
		part.Release()
		if err != nil {
			return fmt.Errorf("cannot write rows to %q: %w", w.cur.Path, err)
		}
		off += n
		w.inGroup += n
		w.cur.Rows += n
		if w.inGroup >= w.opts.RowGroupRows || w.fw.RowGroupTotalCompressedBytes() >= w.opts.RowGroupBytes {
			if err := w.closeGroup(); err != nil {
				return err
			}
		}
	}
	return nil
}

// sameTypes reports schemas of the same column names and types.
func sameTypes(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || !arrow.TypeEqual(fa.Type, fb.Type) {
			return false
		}
	}
	return true
}

// checkOrder compares each row's clustering key with the one before it, the first
// with the last row of the previous batch.
func (w *LayoutWriter) checkOrder(rec arrow.Record) error {
	if len(w.keys) == 0 {
		return nil
	}
	cols := make([]arrow.Array, len(w.keys))
	for i, k := range w.keys {
		cols[i] = rec.Column(k)
	}
	// Two keys, reused: the row before and the row at hand.
	prev, cur := w.last, make([]types.Value, len(cols))
	if prev == nil {
		prev = make([]types.Value, len(cols))
	}
	has := w.last != nil
	for row := 0; row < int(rec.NumRows()); row++ {
		for i, c := range cols {
			cur[i] = types.ValueAt(c, row)
		}
		if has && compareKeys(prev, cur) > 0 {
			return errs.New(errs.Internal, "rows arrive out of order on %s: %s after %s (the sort before the writer is wrong)",
				strings.Join(w.opts.ClusteredBy, ", "), renderKey(cur), renderKey(prev))
		}
		prev, cur, has = cur, prev, true
	}
	// The key kept across batches must not point into this batch's buffers, which
	// its producer may reuse.
	w.last = make([]types.Value, len(prev))
	for i, v := range prev {
		if v.S != "" {
			v.S = strings.Clone(v.S)
		}
		w.last[i] = v
	}
	return nil
}

// compareKeys orders clustering keys ascending, NULLs first.
func compareKeys(a, b []types.Value) int {
	for i := range a {
		an, bn := a[i].Null, b[i].Null
		switch {
		case an && bn:
			continue
		case an:
			return -1
		case bn:
			return 1
		}
		if c := types.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

func renderKey(k []types.Value) string {
	parts := make([]string, len(k))
	for i, v := range k {
		parts[i] = v.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// ensureGroup opens a file and a row group when none is open.
func (w *LayoutWriter) ensureGroup() error {
	if w.fw == nil {
		path := w.next()
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("cannot create %q: %w", path, err)
		}
		// The writer gets f without its Close, so that the file is synced before it
		// is closed.
		fw, err := pqarrow.NewFileWriter(w.schema, struct{ io.Writer }{f}, w.props,
			pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			f.Close()
			return fmt.Errorf("cannot start Parquet file %q: %w", path, err)
		}
		w.f, w.fw, w.cur = f, fw, WrittenFile{Path: path}
	}
	if !w.grouped {
		if err := w.fw.NewBufferedRowGroupChecked(); err != nil {
			return fmt.Errorf("cannot start row group in %q: %w", w.cur.Path, err)
		}
		w.cur.RowGroups++
		w.grouped, w.inGroup = true, 0
	}
	return nil
}

// closeGroup ends the open row group, and the file when it has grown past FileBytes.
func (w *LayoutWriter) closeGroup() error {
	w.grouped, w.inGroup = false, 0
	if w.fw.TotalCompressedBytes() >= w.opts.FileBytes {
		return w.closeFile()
	}
	return nil
}

// closeFile finishes the open file: footer, sync, close.
func (w *LayoutWriter) closeFile() error {
	fw, f := w.fw, w.f
	w.fw, w.f, w.grouped, w.inGroup = nil, nil, false, 0
	kv := map[string]string{}
	for k, v := range w.opts.KeyValue {
		kv[k] = v
	}
	if len(w.opts.ClusteredBy) > 0 {
		kv[LayoutKeyClusteredBy] = strings.Join(w.opts.ClusteredBy, ",")
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := fw.AppendKeyValueMetadata(k, kv[k]); err != nil {
			fw.Close()
			f.Close()
			return fmt.Errorf("cannot add footer metadata %q to %q: %w", k, w.cur.Path, err)
		}
	}
	if err := fw.Close(); err != nil {
		f.Close()
		return fmt.Errorf("cannot finish Parquet file %q: %w", w.cur.Path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("cannot sync %q: %w", w.cur.Path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("cannot stat %q: %w", w.cur.Path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cannot close %q: %w", w.cur.Path, err)
	}
	w.cur.Bytes = st.Size()
	w.done = append(w.done, w.cur)
	w.cur = WrittenFile{}
	return nil
}

// Close finishes the open file and returns every file written, in order.
func (w *LayoutWriter) Close() ([]WrittenFile, error) {
	if w.fw != nil {
		if err := w.closeFile(); err != nil {
			return nil, err
		}
	}
	return w.done, nil
}

// Abort stops writing, closing the open file as it is; the caller removes the files.
func (w *LayoutWriter) Abort() {
	if w.fw != nil {
		w.fw.Close()
		w.f.Close()
		w.fw, w.f, w.grouped, w.inGroup = nil, nil, false, 0
	}
}
