package parquet

import (
	"context"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// PageStats are the rows of one data page of a column chunk and their statistics, as
// the file's page index (column index and offset index) records them.
type PageStats struct {
	FirstRow, Rows int64
	Stats          ColumnStats
}

// RowRange is a range of rows within a row group.
type RowRange struct{ First, Rows int64 }

// PageIndex returns the pages of column c in row group rg with their statistics, from
// the file's page index. ok is false when the file has no usable index for the chunk:
// none written, a nested or INT96 column, an order the statistics are not kept in,
// or an index that does not read back or agree with the row group. The index is read
// from the file (through the reader the File holds) once, and kept for every File
// that shares this one's footer; the pages returned are shared and read-only.
func (f *File) PageIndex(rg, c int) ([]PageStats, bool) {
	if rg < 0 || rg >= len(f.groups) || c < 0 || c >= len(f.cols) || f.src == nil {
		return nil, false
	}
	key := [2]int{rg, c}
	f.index.mu.Lock()
	got, seen := f.index.m[key]
	f.index.mu.Unlock()
	if seen {
		return got.pages, got.ok
	}
	pages, ok, read := f.readPageIndex(rg, c)
	if read {
		f.index.mu.Lock()
		f.index.m[key] = indexEntry{pages, ok}
		f.index.mu.Unlock()
	}
	return pages, ok
}

// pageIndexes are the page indexes of a file read so far, by row group and column,
// and where the file keeps them all.
type pageIndexes struct {
	mu sync.Mutex
	m  map[[2]int]indexEntry
	// region spans every column and offset index of the file (writers put them
	// together, between the last row group and the footer); Len 0 when it has none.
	// The first index read from an object store fetches it whole, in one request,
	// rather than each index in one of its own.
	region storage.Range
	// kept holds the region when the footer's read already brought it (the last
	// 64 KiB of the file): no read at all then. Never more than that tail.
	kept   []byte
	keptAt int64
	// sizes are the data pages of the chunks whose offset index was read for
	// SelectedBytes, by row group and column; nil for a chunk without one.
	sizes map[[2]int][]pageSize
}

// indexRegion finds the bytes spanned by every page index of the file.
func (f *File) indexRegion() storage.Range {
	lo, hi, size := int64(-1), int64(0), f.size
	for i := range f.chunks {
		cc := &f.chunks[i]
		for _, loc := range [...]struct {
			at  metadata.IndexLocation
			has bool
		}{{cc.colIndex, cc.hasColIndex}, {cc.offIndex, cc.hasOffIndex}} {
			if !loc.has || loc.at.Offset < 0 || loc.at.Length <= 0 || loc.at.Offset > size || int64(loc.at.Length) > size-loc.at.Offset {
				continue
			}
			if lo < 0 || loc.at.Offset < lo {
				lo = loc.at.Offset
			}
			hi = max(hi, loc.at.Offset+int64(loc.at.Length))
		}
	}
	if lo < 0 {
		return storage.Range{}
	}
	return storage.Range{Off: lo, Len: hi - lo}
}

// keepTail keeps the index region when the bytes read at tailAt hold it whole.
func (x *pageIndexes) keepTail(tail []byte, tailAt int64) {
	r := x.region
	if r.Len == 0 || r.Off < tailAt || r.Off+r.Len > tailAt+int64(len(tail)) {
		return
	}
	x.kept = append([]byte(nil), tail[r.Off-tailAt:r.Off-tailAt+r.Len]...)
	x.keptAt = r.Off
}

type indexEntry struct {
	pages []PageStats
	ok    bool
}

// readPageIndex reads and checks the page index of column c in row group rg (see
// PageIndex). read is false when the file could not be read, an answer not to keep.
func (f *File) readPageIndex(rg, c int) (pages []PageStats, ok, read bool) {
	col := f.cols[c]
	if col.leaf == nil || col.int96 || col.leaf.SortOrder() == schema.SortUNKNOWN {
		return nil, false, true
	}
	cc := f.chunk(rg, col.leaves[0])
	if cc == nil || cc.encrypted || !cc.hasColIndex || !cc.hasOffIndex {
		return nil, false, true
	}
	ciLoc, oiLoc := &cc.colIndex, &cc.offIndex
	defer func() {
		if p := recover(); p != nil { // the library panics on an index it cannot parse
			pages, ok, read = nil, false, true
		}
	}()
	ciBytes, err1 := f.readIndex(ciLoc)
	oiBytes, err2 := f.readIndex(oiLoc)
	if err1 != nil || err2 != nil {
		return nil, false, false
	}
	props := pq.NewReaderProperties(memory.DefaultAllocator)
	ci := metadata.NewColumnIndex(col.leaf, ciBytes, props, nil)
	oi := metadata.NewOffsetIndex(oiBytes, props, nil)
	locs := oi.GetPageLocations()
	mins, maxs, nulls := ci.GetMinValues(), ci.GetMaxValues(), ci.GetNullPages()
	if len(locs) == 0 || len(mins) != len(locs) || len(maxs) != len(locs) || len(nulls) != len(locs) {
		return nil, false, true
	}
	var nullCounts []int64
	if ci.IsSetNullCounts() {
		if nullCounts = ci.GetNullCounts(); len(nullCounts) != len(locs) {
			return nil, false, true
		}
	}
	total := f.groups[rg].Rows
	dt := f.schema.Field(c).Type
	whole := col.leaf.PhysicalType() != pq.Types.ByteArray && col.leaf.PhysicalType() != pq.Types.FixedLenByteArray
	pages = make([]PageStats, len(locs))
	for i, loc := range locs {
		end := total
		if i+1 < len(locs) {
			end = locs[i+1].FirstRowIndex
		}
		if loc.FirstRowIndex < 0 || end <= loc.FirstRowIndex || end > total || (i == 0 && loc.FirstRowIndex != 0) {
			return nil, false, true
		}
		p := PageStats{FirstRow: loc.FirstRowIndex, Rows: end - loc.FirstRowIndex}
		if nullCounts != nil && nullCounts[i] >= 0 {
			p.Stats.HasNullCount, p.Stats.NullCount = true, nullCounts[i]
		}
		if nulls[i] {
			// Every value of the page is NULL.
			p.Stats.HasNullCount, p.Stats.NullCount = true, p.Rows
		} else {
			st := metadata.NewStatisticsFromEncoded(col.leaf, memory.DefaultAllocator, p.Rows, pageBounds{mins[i], maxs[i]})
			if st != nil && st.HasMinMax() {
				lo, hi, ok := bounds(st, dt, col.read)
				if ok && inRange(lo, dt) && inRange(hi, dt) && types.Compare(lo, hi) <= 0 {
					p.Stats.HasMinMax, p.Stats.Min, p.Stats.Max = true, lo, hi
					p.Stats.MinExact, p.Stats.MaxExact = whole, whole
				}
			}
		}
		pages[i] = p
	}
	return pages, true, true
}

// readIndex reads the bytes of an index at loc, which must lie in the file.
func (f *File) readIndex(loc *metadata.IndexLocation) ([]byte, error) {
	if loc.Offset < 0 || loc.Length <= 0 || loc.Offset > f.size || int64(loc.Length) > f.size-loc.Offset {
		return nil, fmt.Errorf("page index at %d of %d bytes lies outside the file", loc.Offset, loc.Length)
	}
	b := make([]byte, loc.Length)
	x := f.index
	if k := loc.Offset - x.keptAt; x.kept != nil && k >= 0 && k+int64(loc.Length) <= int64(len(x.kept)) {
		copy(b, x.kept[k:])
		return b, checkThrift(b)
	}
	if r := x.region; r.Len > 0 && r.Len <= maxIndexPrefetch && loc.Offset >= r.Off && loc.Offset+int64(loc.Length) <= r.Off+r.Len {
		// A no-op on local disk, and on a reader that fetched the region already.
		if err := storage.Prefetch(context.Background(), f.src, []storage.Range{r}); err != nil {
			return nil, err
		}
	}
	if _, err := f.src.ReadAt(b, loc.Offset); err != nil {
		return nil, err
	}
	// The library allocates the index's lists as long as they say.
	return b, checkThrift(b)
}

// maxIndexPrefetch bounds the index region fetched at once: a file whose indexes
// span more (thousands of row groups) reads each index alone.
const maxIndexPrefetch = 16 << 20

// pageBounds hands a page's encoded bounds to the library's statistics decoder.
type pageBounds struct{ min, max []byte }

func (b pageBounds) GetMin() []byte           { return b.min }
func (b pageBounds) GetMax() []byte           { return b.max }
func (b pageBounds) GetNullCount() int64      { return 0 }
func (b pageBounds) GetDistinctCount() int64  { return 0 }
func (b pageBounds) IsSetMax() bool           { return true }
func (b pageBounds) IsSetMin() bool           { return true }
func (b pageBounds) IsSetNullCount() bool     { return false }
func (b pageBounds) IsSetDistinctCount() bool { return false }

// SelectedBytes is the compressed size of what reading rows of row group rg fetches
// of columns cols: for a column with an offset index, its pages that hold any of
// rows (and its dictionary page, when any is fetched); for one without, the whole
// chunk. nil rows means every row: every chunk whole.
func (f *File) SelectedBytes(rg int, cols []int, rows []RowRange) int64 {
	if rg < 0 || rg >= len(f.groups) {
		return 0
	}
	var n int64
	for _, c := range cols {
		if c < 0 || c >= len(f.cols) {
			continue
		}
		chunk := f.groups[rg].Columns[c].CompressedBytes
		if rows == nil {
			n += chunk
			continue
		}
		pages, ok := f.pageSizes(rg, c)
		if !ok {
			n += chunk
			continue
		}
		var data, selected int64
		for i, pg := range pages {
			data += pg.size
			end := f.groups[rg].Rows
			if i+1 < len(pages) {
				end = pages[i+1].first
			}
			if overlaps(rows, pg.first, end) {
				selected += pg.size
			}
		}
		if selected > 0 && chunk > data {
			selected += chunk - data // the dictionary page, before the data pages
		}
		n += selected
	}
	return n
}

// overlaps reports whether any of rows (in order) meets [first, end).
func overlaps(rows []RowRange, first, end int64) bool {
	for _, r := range rows {
		if r.First < end && r.First+r.Rows > first {
			return true
		}
	}
	return false
}

// pageSize is one data page of a chunk as its offset index records it.
type pageSize struct {
	first int64 // its first row within the row group
	size  int64 // compressed, header included
}

// pageSizes returns the data pages of column c in row group rg from its offset
// index, read once and kept like the page index; ok is false for a nested column or
// a chunk without a usable offset index.
func (f *File) pageSizes(rg, c int) (pages []pageSize, ok bool) {
	key := [2]int{rg, c}
	f.index.mu.Lock()
	got, seen := f.index.sizes[key]
	f.index.mu.Unlock()
	if seen {
		return got, got != nil
	}
	pages, read := f.readPageSizes(rg, c)
	if read {
		f.index.mu.Lock()
		if f.index.sizes == nil {
			f.index.sizes = map[[2]int][]pageSize{}
		}
		f.index.sizes[key] = pages
		f.index.mu.Unlock()
	}
	return pages, pages != nil
}

// readPageSizes reads the offset index of column c in row group rg; read is false
// when the file could not be read, an answer not to keep.
func (f *File) readPageSizes(rg, c int) (pages []pageSize, read bool) {
	col := f.cols[c]
	if col.leaf == nil || f.src == nil {
		return nil, f.src != nil
	}
	cc := f.chunk(rg, col.leaves[0])
	if cc == nil || cc.encrypted || !cc.hasOffIndex {
		return nil, true
	}
	defer func() {
		if p := recover(); p != nil { // the library panics on an index it cannot parse
			pages, read = nil, true
		}
	}()
	b, err := f.readIndex(&cc.offIndex)
	if err != nil {
		return nil, false
	}
	locs := metadata.NewOffsetIndex(b, pq.NewReaderProperties(memory.DefaultAllocator), nil).GetPageLocations()
	total := f.groups[rg].Rows
	for i, loc := range locs {
		if loc.FirstRowIndex < 0 || loc.FirstRowIndex >= max(total, 1) || loc.CompressedPageSize < 0 ||
			(i == 0 && loc.FirstRowIndex != 0) || (i > 0 && loc.FirstRowIndex <= locs[i-1].FirstRowIndex) {
			return nil, true
		}
		pages = append(pages, pageSize{first: loc.FirstRowIndex, size: int64(loc.CompressedPageSize)})
	}
	return pages, true
}
