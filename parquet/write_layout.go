package parquet

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// The layout's defaults (SPEC §8 "The layout").
const (
	LayoutRowGroupRows  = 1 << 20   // rows per row group, at most
	LayoutRowGroupBytes = 128 << 20 // encoded bytes per row group, about
	LayoutFileBytes     = 1 << 30   // a file is closed at the first row-group boundary past this
	LayoutPageBytes     = 1 << 20   // data page size, at most (see pageRows)
	LayoutPageRows      = 20_000    // rows per data page, at most
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
// Data pages hold at most LayoutPageRows rows (fewer when that many of the widest
// column's values would pass LayoutPageBytes, judged from the first rows); a page
// ends early where a written batch ends if it is at least half full, and the last
// of a row group holds what is left. Columns are encoded in parallel (one goroutine
// each) when none is nested. Sizes are the encoded, compressed bytes of the pages
// closed so far: dictionaries are counted when their row group closes, so a limit
// may be reached a page late.
//
// It verifies the clustering order across and within batches: rows out of order are
// a bug in whoever sorted them, refused with an INTERNAL error rather than written
// as a file whose footer would lie about its order.
type LayoutWriter struct {
	schema *arrow.Schema
	opts   LayoutOptions
	next   func() string // the path of the next file
	base   []pq.WriterProperty
	props  *pq.WriterProperties // base with the page length; nil until the first rows
	keys   []int                // schema indexes of the clustering columns
	// pageRows is the rows of every data page but a row group's last: chosen from
	// the first rows written, 0 before.
	pageRows int64

	// pending are rows written but not yet encoded: pages are cut where each write to
	// arrow-go's writer ends, so rows are handed over pageRows at a time.
	pending     []arrow.Record
	pendingRows int64

	last []types.Value // the clustering key of the last row written; nil before any

	f       *os.File
	enc     fileEncoder
	cur     WrittenFile
	inGroup int64 // rows in the open row group
	grouped bool  // a row group is open
	done    []WrittenFile
}

// WithDefaults is opts with the sizes and writer name it leaves unset filled in, as
// a LayoutWriter writes them.
func (opts LayoutOptions) WithDefaults() LayoutOptions {
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
	return opts
}

// NewLayoutWriter starts a writer of files of schema at the paths next names, one
// call per file. Files are written in place and synced when closed; staging them
// where no reader looks is the caller's business.
func NewLayoutWriter(schema *arrow.Schema, next func() string, opts LayoutOptions) (*LayoutWriter, error) {
	// The library writes 128-bit decimals only (small ones as INT32 and INT64).
	schema = vector.WideSchema(schema)
	opts = opts.WithDefaults()
	w := &LayoutWriter{schema: schema, opts: opts, next: next}
	props := []pq.WriterProperty{
		pq.WithCreatedBy(opts.CreatedBy),
		pq.WithDictionaryDefault(true),
		pq.WithStats(true),
		pq.WithPageIndexEnabled(true),
		// arrow-go closes a page after a write batch once the page holds this many
		// bytes: one byte closes one after every batch, and every call to the writer
		// is one batch of pageRows rows (WithBatchSize, set with the page length).
		pq.WithDataPageSize(1),
		// A dictionary larger than this falls back to plain pages, whose bytes count
		// towards the limits at once.
		pq.WithDictionaryPageSizeLimit(layoutDictBytes(opts)),
		pq.WithCompression(compress.Codecs.Zstd),
		pq.WithCompressionLevel(3),
		pq.WithStoreDecimalAsInteger(true),
		pq.WithMaxRowGroupLength(opts.RowGroupRows),
		pq.WithMaxBloomFilterBytes(layoutBloomMaxBytes),
	}
	// A column whose dictionary and indices would not be smaller than its plain
	// values (timestamps, measurements: mostly distinct) falls back to plain pages at
	// its first page instead of hashing every value of the row group first.
	for _, f := range schema.Fields() {
		if !types.IsNested(f.Type) {
			props = append(props, pq.WithDictionaryCostFallbackFor(f.Name, true))
		}
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
	w.base = props
	return w, nil
}

// layoutDictBytes is the dictionary size past which a column chunk falls back to
// plain pages: LayoutPageBytes, or a sixteenth of a smaller row-group or file limit
// (at least 4 KiB). A dictionary counts towards the limits only when its row group
// closes, so it must be small beside them.
func layoutDictBytes(opts LayoutOptions) int64 {
	limit := min(opts.RowGroupBytes, opts.FileBytes) / 16
	return max(min(LayoutPageBytes, limit), 4<<10)
}

// pageRows is the page length for rows like rec's: LayoutPageRows, or fewer when
// that many of the widest column's values, unencoded, would pass LayoutPageBytes.
func pageRows(rec arrow.Record) int64 {
	widest := int64(1)
	if n := rec.NumRows(); n > 0 {
		for _, c := range rec.Columns() {
			var bytes int64
			for _, b := range c.Data().Buffers() {
				if b != nil {
					bytes += int64(b.Len())
				}
			}
			widest = max(widest, bytes/n)
		}
	}
	return max(min(LayoutPageRows, LayoutPageBytes/widest), 1024)
}

// Write appends rec's rows, which must continue the clustering order. The writer
// keeps rec (Retain) until its rows are encoded.
func (w *LayoutWriter) Write(rec arrow.Record) error {
	rec = vector.WideRecord(rec)
	if !sameTypes(rec.Schema(), w.schema) {
		return errs.New(errs.Internal, "record schema %s does not match the files' schema %s", rec.Schema(), w.schema)
	}
	if rec.NumRows() == 0 {
		return nil
	}
	if err := w.checkOrder(rec); err != nil {
		return err
	}
	if rec.Schema().Equal(w.schema) {
		rec.Retain()
	} else {
		// Only nullability or metadata differ: the files' schema is the one written.
		rec = array.NewRecord(w.schema, rec.Columns(), rec.NumRows())
	}
	if w.props == nil {
		w.pageRows = pageRows(rec)
		w.props = pq.NewWriterProperties(append(w.base, pq.WithBatchSize(w.pageRows))...)
	}
	w.pending = append(w.pending, rec)
	w.pendingRows += rec.NumRows()
	return w.drain(false)
}

// drain encodes the pending rows a page at a time: whole pages only, or (final)
// every row.
func (w *LayoutWriter) drain(final bool) error {
	for w.pendingRows > 0 {
		n := min(w.pageRows, w.opts.RowGroupRows-w.inGroup)
		if w.pendingRows < n && !final {
			return nil
		}
		n = min(n, w.pendingRows)
		// A page ends where a batch does when that leaves it at least half full:
		// batches of about a page's rows are then encoded as they came, not joined.
		if first := w.pending[0].NumRows(); first < n && 2*first >= w.pageRows {
			n = first
		}
		if err := w.ensureGroup(); err != nil {
			return err
		}
		part, err := w.take(n)
		if err != nil {
			return err
		}
		err = w.enc.writePage(part)
		part.Release()
		if err != nil {
			return fmt.Errorf("cannot write rows to %q: %w", w.cur.Path, err)
		}
		w.inGroup += n
		w.cur.Rows += n
		// An estimate past the limit is confirmed by the exact count.
		if w.inGroup >= w.opts.RowGroupRows ||
			w.enc.rowGroupBytes(false) >= w.opts.RowGroupBytes && w.enc.rowGroupBytes(true) >= w.opts.RowGroupBytes {
			if err := w.closeGroup(); err != nil {
				return err
			}
		}
	}
	return nil
}

// take removes the first n pending rows as one record: a slice of the first pending
// record when it holds them, else its columns joined with the next ones'.
func (w *LayoutWriter) take(n int64) (arrow.Record, error) {
	var parts []arrow.Record
	for need := n; need > 0; {
		r := w.pending[0]
		if r.NumRows() <= need {
			parts = append(parts, r)
			w.pending = w.pending[1:]
			need -= r.NumRows()
			continue
		}
		parts = append(parts, r.NewSlice(0, need))
		w.pending[0] = r.NewSlice(need, r.NumRows())
		r.Release()
		need = 0
	}
	w.pendingRows -= n
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	cols := make([]arrow.Array, w.schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	arrs := make([]arrow.Array, len(parts))
	for c := range cols {
		for i, p := range parts {
			arrs[i] = p.Column(c)
		}
		joined, err := array.Concatenate(arrs, memory.DefaultAllocator)
		if err != nil {
			return nil, fmt.Errorf("cannot join rows for a page: %w", err)
		}
		cols[c] = joined
	}
	return array.NewRecord(w.schema, cols, n), nil
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
		if has && CompareKeys(prev, cur) > 0 {
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

// CompareKeys orders clustering keys as the layout sorts rows by them: ascending,
// NULLs first (types.Compare orders the values).
func CompareKeys(a, b []types.Value) int {
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
	if w.enc == nil {
		path := w.next()
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("cannot create %q: %w", path, err)
		}
		// The encoder gets f without its Close, so that the file is synced before it
		// is closed.
		enc, err := newFileEncoder(w.schema, struct{ io.Writer }{f}, w.props)
		if err != nil {
			f.Close()
			return fmt.Errorf("cannot start Parquet file %q: %w", path, err)
		}
		w.f, w.enc, w.cur = f, enc, WrittenFile{Path: path}
	}
	if !w.grouped {
		if err := w.enc.newRowGroup(); err != nil {
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
	if err := w.enc.closeRowGroup(); err != nil {
		return fmt.Errorf("cannot finish a row group of %q: %w", w.cur.Path, err)
	}
	if w.enc.fileBytes() >= w.opts.FileBytes {
		return w.closeFile()
	}
	return nil
}

// closeFile finishes the open file: footer, sync, close.
func (w *LayoutWriter) closeFile() error {
	enc, f := w.enc, w.f
	w.enc, w.f, w.grouped, w.inGroup = nil, nil, false, 0
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
	pairs := make([][2]string, len(keys))
	for i, k := range keys {
		pairs[i] = [2]string{k, kv[k]}
	}
	if err := enc.finish(pairs); err != nil {
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
	if err := w.drain(true); err != nil {
		return nil, err
	}
	if w.enc != nil {
		if err := w.closeFile(); err != nil {
			return nil, err
		}
	}
	return w.done, nil
}

// Abort stops writing, closing the open file as it is; the caller removes the files.
func (w *LayoutWriter) Abort() {
	for _, r := range w.pending {
		r.Release()
	}
	w.pending, w.pendingRows = nil, 0
	if w.enc != nil {
		w.enc.abort()
		w.f.Close()
		w.enc, w.f, w.grouped, w.inGroup = nil, nil, false, 0
	}
}
