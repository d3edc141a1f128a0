package parquet

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// ReadRowGroup reads the top-level columns cols (indexes into Schema) of row group rg
// and calls fn with batches of about vector.BatchSize rows whose Cols are in the order
// of cols. With no columns, fn still gets batches with Rows set (the footer's count) and
// no Cols. Errors decoding data are errs.CorruptSource naming the file and the row
// group; an error from fn is returned as it is. ctx is checked between batches.
func (f *File) ReadRowGroup(ctx context.Context, rg int, cols []int, fn func(*vector.Batch) error) error {
	return f.ReadRowGroupLate(ctx, rg, nil, cols, nil, func(b *vector.Batch, _ Late) error { return fn(b) })
}

// ReadRowGroupLate is ReadRowGroup with late materialisation: only the columns cols[i]
// with early[i] set (every column when early is nil) are decoded before fn is called;
// the others are nil in the batch until fn calls late, which decodes them into the
// batch's Cols for the same rows. late(which, sel) decodes the late columns at the
// positions which (into cols; nil: every late column not decoded yet) and stores
// values only for the rows sel (ascending; nil: every row) — the other rows of those
// arrays hold valid zero values, for a caller that will read none of them — or,
// with dense set, returns arrays of the rows sel alone, in order. The rows of a
// batch whose late columns fn never asks for are passed over without decoding their
// values, and pages they fill whole are dropped. A column asked for both early and
// late is early. With no early column, batches follow the row group's row count in
// the footer.
//
// Only the rows in ranges are read (every row when ranges is nil); ranges are in
// order and do not overlap. The rows between them are passed over as rows of batches
// nobody asks for are, so that parts of one row group can be read in parallel and
// pages a page index rules out are never decoded.
func (f *File) ReadRowGroupLate(ctx context.Context, rg int, ranges []RowRange, cols []int, early []bool, fn func(b *vector.Batch, late Late) error) error {
	if rg < 0 || rg >= len(f.groups) {
		return errs.New(errs.Internal, "BUG: row group %d of %q out of range", rg, f.name)
	}
	total := f.groups[rg].Rows
	if ranges == nil {
		ranges = []RowRange{{0, total}}
	}
	at := int64(0)
	for _, r := range ranges {
		if r.First < at || r.Rows < 0 || r.First+r.Rows > total {
			return errs.New(errs.Internal, "BUG: rows %d+%d of row group %d of %q, which has %d, out of order or range", r.First, r.Rows, rg, f.name, total)
		}
		at = r.First + r.Rows
	}
	if early != nil && len(early) != len(cols) {
		return errs.New(errs.Internal, "BUG: %d early flags for %d columns", len(early), len(cols))
	}
	for _, c := range cols {
		if c < 0 || c >= len(f.cols) {
			return errs.New(errs.Internal, "BUG: column %d of %q out of range", c, f.name)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	noLate := func([]int, []int32, bool) error { return nil }
	if len(cols) == 0 {
		for _, r := range ranges {
			for left := r.Rows; left > 0; {
				n := min(left, vector.BatchSize)
				if err := fn(&vector.Batch{Cols: []arrow.Array{}, Rows: int(n)}, noLate); err != nil {
					return err
				}
				left -= n
				if err := ctx.Err(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if f.src == nil {
		return errs.New(errs.Internal, "BUG: %q has no open reader", f.name)
	}
	rd, err := f.openGroup(ctx, rg, ranges, cols, early)
	if err != nil {
		return err
	}
	defer rd.release()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := rd.next()
		if err != nil || b == nil {
			return err
		}
		late := noLate
		if rd.anyLate {
			late = func(which []int, sel []int32, dense bool) error { return rd.late(b, which, sel, dense) }
		}
		if err := fn(b, late); err != nil {
			return err
		}
	}
}

// Late decodes late columns of the batch it came with (see ReadRowGroupLate).
type Late func(which []int, sel []int32, dense bool) error

// groupReader reads the distinct requested columns of one row group: the early ones
// in lockstep, the late ones on demand, each late reader remembering how many rows it
// has yet to pass over.
type groupReader struct {
	f       *File
	rg      int
	uniq    []int // distinct schema columns read
	readers []colReader
	early   []bool  // by uniq: decoded for every batch
	lag     []int64 // by uniq: rows a late reader is behind the early ones
	anyLate bool
	// anyEarly is false when every column is late: batches then follow the footer's
	// row count.
	anyEarly bool
	pos      []int // for each requested column, its index in uniq
	rows     int64 // the next row of the row group to read
	ranges   []RowRange
	cur      int    // the range rows is in, or after
	last     int    // rows of the last batch
	done     []bool // by uniq: the last batch's column is decoded
}

func (f *File) openGroup(ctx context.Context, rg int, ranges []RowRange, cols []int, early []bool) (g *groupReader, err error) {
	g = &groupReader{f: f, rg: rg, pos: make([]int, len(cols)), ranges: ranges}
	defer func() {
		if p := recover(); p != nil {
			g.release()
			g, err = nil, f.readError(rg, panicText(p))
		}
	}()
	// An object store fetches the chunks to be read in few requests, before the
	// readers below ask for them piece by piece.
	if err := storage.Prefetch(ctx, f.src, f.chunkRanges(rg, cols)); err != nil {
		return nil, err
	}
	lib := &libraryReaders{f: f, rg: rg, cols: cols}
	seen := map[int]int{}
	for i, c := range cols {
		k, ok := seen[c]
		if !ok {
			k = len(g.uniq)
			seen[c] = k
			g.uniq = append(g.uniq, c)
			cr, err := f.columnReader(ctx, lib, rg, c)
			if err != nil {
				g.release()
				return nil, f.readError(rg, err)
			}
			g.readers = append(g.readers, cr)
			g.early = append(g.early, false)
			g.lag = append(g.lag, 0)
		}
		g.early[k] = g.early[k] || early == nil || early[i]
		g.pos[i] = k
	}
	g.anyLate = slices.Contains(g.early, false)
	g.anyEarly = slices.Contains(g.early, true)
	g.done = slices.Clone(g.early)
	return g, nil
}

// chunkRanges are the bytes of the column chunks of cols in row group rg: each from
// its dictionary page (or first data page) on, as long as the footer says it is. A
// chunk the footer places outside the file is left out: reading it fails as before.
func (f *File) chunkRanges(rg int, cols []int) []storage.Range {
	var out []storage.Range
	for _, c := range cols {
		for _, leaf := range f.cols[c].leaves {
			ci := f.chunk(rg, leaf)
			if ci == nil {
				continue
			}
			if start, n := ci.start, ci.compressed; start >= 0 && n > 0 && start <= f.size && n <= f.size-start {
				out = append(out, storage.Range{Off: start, Len: n})
			}
		}
	}
	return out
}

func (g *groupReader) release() {
	for _, r := range g.readers {
		if r != nil {
			r.release()
		}
	}
	g.readers = nil
}

// next reads the early columns of the next batch, or returns nil at the end of the
// row group.
func (g *groupReader) next() (b *vector.Batch, err error) {
	f := g.f
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, f.readError(g.rg, panicText(p))
		}
	}()
	for k, d := range g.done {
		if !d {
			g.lag[k] += int64(g.last)
		}
	}
	// Move to the range the next row is in, passing over the rows before it.
	for g.cur < len(g.ranges) && (g.ranges[g.cur].Rows == 0 || g.rows >= g.ranges[g.cur].First+g.ranges[g.cur].Rows) {
		g.cur++
	}
	if g.cur == len(g.ranges) {
		return nil, nil
	}
	r := g.ranges[g.cur]
	if gap := r.First - g.rows; gap > 0 {
		for k := range g.lag {
			g.lag[k] += gap
		}
		g.rows = r.First
	}
	// Ask for no more rows than the range has left, so that the last batch's buffers
	// are allocated at their exact size.
	want := min(int64(vector.BatchSize), r.First+r.Rows-g.rows)
	arrs := make([]arrow.Array, len(g.uniq))
	n, first := -1, -1
	for k := range g.readers {
		if !g.early[k] {
			continue
		}
		arr, err := g.read(k, want)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			n, first = arr.Len(), k
		} else if arr.Len() != n {
			return nil, g.mismatch(k, arr.Len(), first, n)
		}
		arrs[k] = arr
	}
	if !g.anyEarly {
		n = int(want)
	}
	if n <= 0 {
		return nil, f.readError(g.rg, fmt.Errorf("read %d rows, the footer says %d", g.rows, f.groups[g.rg].Rows))
	}
	g.rows += int64(n)
	g.last = n
	copy(g.done, g.early)
	out := make([]arrow.Array, len(g.pos))
	for i, k := range g.pos {
		out[i] = arrs[k]
	}
	return &vector.Batch{Cols: out, Rows: n}, nil
}

// late decodes late columns of b, the last batch next returned, into b.Cols: those
// at positions which (every one when nil), at rows sel (every row when nil); with
// dense set, holding the rows sel alone.
func (g *groupReader) late(b *vector.Batch, which []int, sel []int32, dense bool) (err error) {
	f := g.f
	defer func() {
		if p := recover(); p != nil {
			err = f.readError(g.rg, panicText(p))
		}
	}()
	for _, i := range which {
		if i < 0 || i >= len(g.pos) {
			return errs.New(errs.Internal, "BUG: late column %d of %d", i, len(g.pos))
		}
	}
	for k := range g.readers {
		if g.done[k] || (which != nil && !slices.ContainsFunc(which, func(i int) bool { return g.pos[i] == k })) {
			continue
		}
		arr, err := g.readAt(k, int64(b.Rows), sel, dense)
		if err != nil {
			return err
		}
		if want := b.Rows; arr.Len() != want && !(dense && arr.Len() == len(sel)) {
			if dense {
				want = len(sel)
			}
			return g.mismatch(k, arr.Len(), -1, want)
		}
		g.done[k] = true
		for i, j := range g.pos {
			if j == k {
				b.Cols[i] = arr
			}
		}
	}
	return nil
}

// read passes reader k over the rows it lags behind, then reads the next n.
func (g *groupReader) read(k int, n int64) (arrow.Array, error) { return g.readAt(k, n, nil, false) }

// readAt is read storing values only for the rows sel when the reader can
// (selective); sel nil is every row. With dense set, it returns the rows sel alone.
func (g *groupReader) readAt(k int, n int64, sel []int32, dense bool) (arrow.Array, error) {
	r := g.readers[k]
	if g.lag[k] > 0 {
		if err := r.skip(g.lag[k]); err != nil {
			return nil, g.f.readError(g.rg, err)
		}
		g.lag[k] = 0
	}
	var arr arrow.Array
	var err error
	sr, ok := r.(selective)
	switch {
	case ok && dense:
		arr, err = sr.nextDense(n, sel)
	case ok && sel != nil:
		arr, err = sr.nextAt(n, sel)
	default:
		if arr, err = r.next(n); err == nil && dense {
			if arr.Len() != int(n) {
				return nil, g.f.readError(g.rg, fmt.Errorf("column %q has %d values where the batch has %d", g.f.schema.Field(g.uniq[k]).Name, arr.Len(), n))
			}
			arr = vector.Take(arr, sel)
		}
	}
	if err != nil {
		return nil, g.f.readError(g.rg, err)
	}
	return arr, nil
}

// selective is a colReader that can store the values of some rows only.
type selective interface {
	// nextAt is next(n) that stores values for the rows sel (ascending, below n)
	// alone; the others hold valid zero values.
	nextAt(n int64, sel []int32) (arrow.Array, error)
	// nextDense reads the next n rows and returns the rows sel alone, in order.
	nextDense(n int64, sel []int32) (arrow.Array, error)
}

// mismatch is the error for column uniq[k] holding got values where column
// uniq[first] (or the batch, when first < 0) has want.
func (g *groupReader) mismatch(k, got, first, want int) error {
	other := "the other columns"
	if first >= 0 {
		other = fmt.Sprintf("%q", g.f.schema.Field(g.uniq[first]).Name)
	}
	return g.f.readError(g.rg, fmt.Errorf("column %q has %d values where %s have %d",
		g.f.schema.Field(g.uniq[k]).Name, got, other, want))
}

func (f *File) readError(rg int, cause any) error {
	return errs.New(errs.CorruptSource, "cannot read row group %d of %q: %v", rg, f.name, cause)
}

// single turns a chunked array into one array.
func single(ch *arrow.Chunked) (arrow.Array, error) {
	chunks := ch.Chunks()
	switch len(chunks) {
	case 0:
		return array.MakeArrayOfNull(memory.DefaultAllocator, ch.DataType(), 0), nil
	case 1:
		chunks[0].Retain()
		return chunks[0], nil
	}
	return array.Concatenate(chunks, memory.DefaultAllocator)
}

// colReader reads one top-level column of a row group, batch by batch, in the
// column's normalised type.
type colReader interface {
	next(n int64) (arrow.Array, error)
	skip(n int64) error // passes over n rows, decoding as little as it can
	release()
}

// skipped checks what a library reader's Skip returned (k rows, err) against the n
// rows asked for.
func skipped(n, k int64, err error) error {
	if err == nil && k != n {
		err = fmt.Errorf("column chunk ends %d rows early", n-k)
	}
	return err
}

// libraryReaders are the library's readers of one row group, opened when a column
// first needs them: a column on the page path needs neither, and the Arrow reader
// maps the whole schema when it is made (as much work as the rest of opening a row
// group of a small file).
type libraryReaders struct {
	f    *File
	rg   int
	cols []int
	rdr  *file.Reader
	fr   *pqarrow.FileReader
}

// file is the library's reader of the file.
func (l *libraryReaders) file() (*file.Reader, error) {
	if l.rdr == nil {
		md, err := l.f.metadata()
		if err != nil {
			return nil, err
		}
		rdr, err := file.NewParquetReader(io.NewSectionReader(l.f.src, 0, l.f.size),
			file.WithReadProps(readProps()), file.WithMetadata(md))
		if err != nil {
			return nil, err
		}
		l.rdr = rdr
	}
	return l.rdr, nil
}

// arrow is the library's Arrow reader of the file, set up for the columns read.
func (l *libraryReaders) arrow() (*pqarrow.FileReader, error) {
	if l.fr == nil {
		rdr, err := l.file()
		if err != nil {
			return nil, err
		}
		fr, err := pqarrow.NewFileReader(rdr, l.f.readProps(l.rg, l.cols), memory.DefaultAllocator)
		if err != nil {
			return nil, err
		}
		l.fr = fr
	}
	return l.fr, nil
}

func (f *File) columnReader(ctx context.Context, lib *libraryReaders, rg, c int) (colReader, error) {
	col := f.cols[c]
	if f.pageKind(rg, c) == pageNone {
		// The library sizes a dictionary from its page header's count.
		for _, leaf := range col.leaves {
			if err := f.checkDictionary(rg, leaf); err != nil {
				return nil, err
			}
		}
	}
	if col.int96 {
		rdr, err := lib.file()
		if err != nil {
			return nil, err
		}
		cr, err := rdr.RowGroup(rg).Column(col.leaves[0])
		if err != nil {
			return nil, err
		}
		r, ok := cr.(*file.Int96ColumnChunkReader)
		if !ok {
			return nil, fmt.Errorf("column %q: INT96 column has a %T reader", f.schema.Field(c).Name, cr)
		}
		return &int96Reader{r: r, maxDef: col.leaf.MaxDefinitionLevel(),
			vals: make([]pq.Int96, vector.BatchSize), defs: make([]int16, vector.BatchSize)}, nil
	}
	if r, err := f.pageColumn(rg, c, recyclerFrom(ctx)); r != nil || err != nil {
		return r, err
	}
	if r, err := f.typedColumn(lib, rg, c); r != nil || err != nil {
		return r, err
	}
	leaves := map[int]bool{}
	for _, l := range col.leaves {
		leaves[l] = true
	}
	fr, err := lib.arrow()
	if err != nil {
		return nil, err
	}
	r, err := fr.GetFieldReader(ctx, c, leaves, []int{rg})
	if err != nil {
		return nil, err
	}
	return &arrowReader{r: r, want: f.schema.Field(c).Type, name: f.schema.Field(c).Name}, nil
}

// arrowReader reads a column through the library's Arrow reader.
type arrowReader struct {
	r    *pqarrow.ColumnReader
	want arrow.DataType
	name string
}

func (a *arrowReader) next(n int64) (arrow.Array, error) {
	ch, err := a.r.NextBatch(n)
	if err != nil {
		return nil, err
	}
	arr, err := single(ch)
	ch.Release()
	if err != nil {
		return nil, err
	}
	if err := validNested(arr); err != nil {
		arr.Release()
		return nil, corrupt("column %q: its nested levels do not fit together (%v)", a.name, err)
	}
	return normalize(arr, a.want)
}

// validNested checks that the offsets of a list or map, at every level, stay within
// their child arrays: a file whose repetition and definition levels contradict each
// other (a NULL list given elements) can make the library build lists that do not.
func validNested(arr arrow.Array) error {
	switch a := arr.(type) {
	case *array.List:
		if err := a.ValidateFull(); err != nil {
			return err
		}
		return validNested(a.ListValues())
	case *array.LargeList:
		if err := a.ValidateFull(); err != nil {
			return err
		}
		return validNested(a.ListValues())
	case *array.Map:
		if err := a.ValidateFull(); err != nil {
			return err
		}
		return validNested(a.ListValues())
	case *array.Struct:
		for f := range a.NumField() {
			if err := validNested(a.Field(f)); err != nil {
				return err
			}
		}
	}
	return nil
}

// skip reads the rows and drops them: the library's Arrow reader cannot pass over
// rows.
func (a *arrowReader) skip(n int64) error {
	for n > 0 {
		arr, err := a.next(n)
		if err != nil {
			return err
		}
		k := int64(arr.Len())
		arr.Release()
		if k == 0 {
			return errors.New("column chunk ends before the rows of its row group")
		}
		n -= k
	}
	return nil
}

func (a *arrowReader) release() { a.r.Release() }

// int96Reader reads a flat INT96 column as microsecond timestamps. The library reads
// INT96 as nanoseconds and refuses dates outside 1677-2262, which writers such as Spark
// do produce; microseconds cover about 290,000 years either way, as DuckDB reads them.
type int96Reader struct {
	r      *file.Int96ColumnChunkReader
	maxDef int16
	vals   []pq.Int96
	defs   []int16
}

func (c *int96Reader) next(n int64) (arrow.Array, error) {
	b := array.NewTimestampBuilder(memory.DefaultAllocator, types.Timestamp.(*arrow.TimestampType))
	defer b.Release()
	for left := n; left > 0 && c.r.HasNext(); {
		total, nv, err := c.r.ReadBatch(min(left, int64(len(c.vals))), c.vals, c.defs, nil)
		if err != nil {
			return nil, err
		}
		if total <= 0 {
			break
		}
		k := 0
		for i := 0; i < int(total); i++ {
			if c.maxDef > 0 && c.defs[i] < c.maxDef {
				b.AppendNull()
				continue
			}
			if k >= nv {
				return nil, fmt.Errorf("INT96 column has fewer values than its levels say")
			}
			us, ok := int96Micros(c.vals[k])
			if !ok {
				return nil, fmt.Errorf("INT96 timestamp out of range")
			}
			b.Append(arrow.Timestamp(us))
			k++
		}
		left -= total
	}
	if err := c.r.Err(); err != nil {
		return nil, err
	}
	return b.NewArray(), nil
}

func (c *int96Reader) skip(n int64) error {
	k, err := c.r.Skip(n)
	return skipped(n, k, err)
}

func (c *int96Reader) release() {}

// julianEpoch is the Julian day number of 1970-01-01.
const julianEpoch = 2440588

// int96Micros converts an INT96 timestamp (signed nanoseconds of the day, then the
// signed Julian day, little-endian) to microseconds since the epoch; ok is false
// outside the range of int64 microseconds.
func int96Micros(v pq.Int96) (int64, bool) {
	nanos := int64(binary.LittleEndian.Uint64(v[:8]))
	days := int64(int32(binary.LittleEndian.Uint32(v[8:]))) - julianEpoch
	const maxDays = math.MaxInt64/86400_000_000 - 1
	if days > maxDays || days < -maxDays {
		return 0, false
	}
	us := days * 86400_000_000
	d := nanos / 1000
	if nanos%1000 < 0 {
		d--
	}
	if (d > 0 && us > math.MaxInt64-d) || (d < 0 && us < math.MinInt64-d) {
		return 0, false
	}
	return us + d, true
}

// readProps asks the library to keep flat string and binary columns as dictionaries
// when their chunk in row group rg is dictionary-encoded throughout: predicates,
// functions and group keys then run once per distinct value, and the column is not
// expanded into one string per row. A chunk whose pages fell back to plain encoding
// (high-cardinality text) is read as plain strings: building a dictionary for it
// would cost more than it saves.
func (f *File) readProps(rg int, cols []int) pqarrow.ArrowReadProperties {
	var props pqarrow.ArrowReadProperties
	for _, c := range cols {
		col := f.cols[c]
		if col.leaf == nil || col.int96 {
			continue
		}
		want := f.schema.Field(c).Type
		if !types.IsString(want) && !types.IsBinary(want) {
			continue
		}
		if id := col.read.ID(); id != arrow.STRING && id != arrow.BINARY && id != arrow.LARGE_STRING && id != arrow.LARGE_BINARY {
			continue
		}
		if f.dictionaryEncoded(rg, col.leaves[0]) {
			props.SetReadDict(col.leaves[0], true)
		}
	}
	return props
}

// dictionaryEncoded reports whether every data page of a column chunk is
// dictionary-encoded, by the chunk's page encoding statistics or, for writers that
// leave them out (DuckDB), by its list of encodings: only dictionary encodings and
// those of levels. A PLAIN in that list may be the dictionary page's or a data
// page's, so it counts as not dictionary-encoded.
func (f *File) dictionaryEncoded(rg, leaf int) bool {
	ci := f.chunk(rg, leaf)
	return ci != nil && ci.dictOnly
}

// dictionaryEncoded is whether every data page of column chunk cc is
// dictionary-encoded (see File.dictionaryEncoded).
func dictionaryEncoded(cc *metadata.ColumnChunkMetaData) bool {
	if !cc.HasDictionaryPage() {
		return false
	}
	stats := cc.EncodingStats()
	if len(stats) == 0 {
		dict := false
		for _, e := range cc.Encodings() {
			switch e {
			case pq.Encodings.RLEDict, pq.Encodings.PlainDict:
				dict = true
			case pq.Encodings.RLE, pq.Encodings.BitPacked:
			default:
				return false
			}
		}
		return dict
	}
	for _, st := range stats {
		if st.PageType.String() == "DICTIONARY_PAGE" {
			continue
		}
		if st.Encoding != pq.Encodings.RLEDict && st.Encoding != pq.Encodings.PlainDict {
			return false
		}
	}
	return true
}
