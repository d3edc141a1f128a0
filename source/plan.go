package source

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// Predicate is one conjunct usable for pruning: Column Op Values[0] (for "in", any of
// Values). Op is one of "=", "<>", "<", "<=", ">", ">=", "in", "is_null",
// "is_not_null". Values are typed like the column.
type Predicate struct {
	Column string
	Op     string
	Values []types.Value
}

// ScanSpec is what a scan produces and what it may skip.
type ScanSpec struct {
	Columns []string    // columns to produce, in this order (file and/or partition columns); may be empty
	Filters []Predicate // conjunctive; used only to skip work — the caller still filters rows
	// Known is what the table's statistics record states of each file, by index into
	// Files, for the files whose own metadata states nothing (Meta): a file it rules
	// out is not opened. The record need not be current, but every entry must describe
	// the very file listed (same path, size and change marker). nil, or a nil entry,
	// when nothing is known.
	Known []*FileMeta
	// Excluded marks, by index into Files, the files the table's statistics record
	// rules out by its bounds (found by the catalog's bounds index): they are not
	// opened. Like Known, every file it marks must be the very file the record
	// measured. nil when nothing is excluded this way.
	Excluded []bool
}

// Morsel is one unit of parallel work: a row group of a file, or a range of its rows
// (see ScanPlan.Divide).
type Morsel struct {
	File     int // index into the listing's Files
	RowGroup int
	Rows     int64 // rows of the morsel
	First    int64 // its first row within the row group
	// Share, for the parts of a row group whose chunks are single pages, is where
	// the parts find the pages one of them decompressed (parquet.PageShare).
	Share *parquet.PageShare
}

// Divide cuts morsel m into about parts morsels with as many rows left to read each
// — the rows the file's page index leaves under the spec's filters — each starting
// at a multiple of align rows where it can. It returns m whole when reading it in
// parts would cost more than it saves: when a reader cannot pass over the rows before
// a part without decoding them, or m is too small to share. When most of its bytes
// are chunks of a single page, which every part would otherwise decompress whole,
// the parts share one parquet.PageShare and decompress each page once between them.
func (p *ScanPlan) Divide(ctx context.Context, m Morsel, parts int, align int64) ([]Morsel, error) {
	if parts <= 1 || m.File < 0 || m.File >= len(p.files) || p.files[m.File] == nil {
		return []Morsel{m}, nil
	}
	fs := p.files[m.File]
	if !fs.footer.PassesOverPages(m.RowGroup, fs.cols) {
		return []Morsel{m}, nil
	}
	kept := []parquet.RowRange{{First: m.First, Rows: m.Rows}}
	var bounds []int64 // rows where a page of a filtered column starts
	share := false
	// Chunks that are one page are needed whole by every part: when they are most
	// of the row group, the parts share their pages (a page index has nothing to
	// cut at then). Finding out reads a page header per chunk, which is only asked
	// of local files: an object store's row group is never shared, and is cut as
	// though its chunks had pages to cut at.
	local := p.FetchBytes(m) == 0
	if local || len(fs.filters) > 0 {
		r, err := storage.OpenInfo(ctx, p.store, p.listing.Files[m.File].Info)
		if err != nil {
			return nil, err
		}
		f, err := fs.footer.WithReader(r)
		whole, size := int64(0), int64(0)
		if err == nil && local {
			whole, size, err = f.WholePages(m.RowGroup, fs.cols)
		}
		if err == nil && whole*2 <= size && len(fs.filters) > 0 {
			if rr := p.rowRanges(f, fs, m); rr != nil {
				kept = rr
			}
			if pages, ok := f.PageIndex(m.RowGroup, fs.filters[0].col); ok {
				for _, pg := range pages {
					bounds = append(bounds, pg.FirstRow)
				}
			}
		}
		r.Close()
		if err != nil {
			return nil, err
		}
		share = whole*2 > size
	}
	var total int64
	for _, r := range kept {
		total += r.Rows
	}
	step := (total + int64(parts) - 1) / int64(parts)
	step = (step + align - 1) / align * align
	if total == 0 || step >= total {
		return []Morsel{m}, nil
	}
	// Cut where every step-th row left to read falls — moved on to where a page
	// starts, when the page index says, so that parts do not decompress the same
	// pages — then extend the parts to cover the morsel: the rows between them are
	// passed over when read.
	var cuts []int64
	seen, next := int64(0), step
	for _, r := range kept {
		for next < seen+r.Rows {
			c := r.First + (next - seen)
			if k, _ := slices.BinarySearch(bounds, c); k < len(bounds) {
				c = bounds[k]
			} else if len(bounds) > 0 {
				c = m.First + m.Rows
			}
			cuts = append(cuts, c)
			next += step
		}
		seen += r.Rows
	}
	out := make([]Morsel, 0, len(cuts)+1)
	first := m.First
	for _, c := range append(cuts, m.First+m.Rows) {
		if c > first {
			out = append(out, Morsel{File: m.File, RowGroup: m.RowGroup, First: first, Rows: c - first})
			first = c
		}
	}
	if share && len(out) > 1 {
		s := parquet.NewPageShare(m.RowGroup, fs.cols, len(out))
		for i := range out {
			out[i].Share = s
		}
	}
	return out, nil
}

// Whole reports whether m is a whole row group rather than a part of one.
func (m Morsel) Whole() bool { return m.First == 0 }

// ScanPlan is a pruned scan: the morsels left to read and what reading them needs.
// It is immutable once built, so Read may run on many morsels at once.
type ScanPlan struct {
	Morsels []Morsel

	listing *Listing
	store   storage.Store
	spec    ScanSpec
	outs    []output    // one per spec column, then the key columns of equality deletes the spec lacks
	nout    int         // how many outputs are the spec's columns
	keyOut  map[int]int // for each column an equality delete compares, its output
	files   []*fileScan // per listing file; nil when pruned by partition
	c       *Counters

	bloomMu sync.Mutex
	bloomed map[[2]int]*bloomAnswer // by file and row group: see BloomExcludes
}

// output says where one produced column comes from.
type output struct {
	partition int // index into Partitions, or -1 for a file column
	field     int // index into the listing schema
	typ       arrow.DataType
}

// fileScan is what Read needs of one file.
type fileScan struct {
	footer  *parquet.File
	filters []fileFilter     // the spec's filters on this file's columns
	blooms  []bloomProbe     // the = and IN filters its bloom filters can check
	cols    []int            // distinct file columns read, as indexes into the file's schema
	slot    []int            // for each output, its index in cols (file columns only; absent for a column the file lacks)
	casts   []arrow.DataType // for each entry of cols, the type to cast to, or nil
	plans   []*nestedPlan    // for each entry of cols, how a nested column is read as the table's, or nil
}

// Plan prunes the listing for spec: files whose partition values fail a filter first,
// then row groups whose statistics exclude a filter, opening (or reusing cached)
// footers of the files left. It counts into c: FilesPrunedByPartition,
// FilesConsidered, FilesOpened (footers used, cached or read), RowGroupsConsidered and
// RowGroupsPruned.
func (l *Listing) Plan(ctx context.Context, store storage.Store, spec ScanSpec, c *Counters) (*ScanPlan, error) {
	if c == nil {
		c = &Counters{}
	}
	p := &ScanPlan{listing: l, store: store, spec: spec, c: c, files: make([]*fileScan, len(l.Files))}
	for _, name := range spec.Columns {
		i := l.fieldIndex(name)
		if i < 0 {
			return nil, errs.New(errs.Analysis, "no column %q in %q", name, l.Location)
		}
		o := output{partition: l.Partition(i), field: i, typ: l.Schema.Field(i).Type}
		p.outs = append(p.outs, o)
	}
	p.nout = len(p.outs)
	// Equality deletes compare columns the statement may not read: they are read too,
	// and left out of the batches.
	for _, ref := range l.Files {
		for _, d := range ref.Equality {
			for _, i := range d.Fields {
				if i < 0 || i >= l.Schema.NumFields() {
					return nil, errs.New(errs.Internal, "BUG: equality delete on column %d of %d", i, l.Schema.NumFields())
				}
				if p.keyOut == nil {
					p.keyOut = map[int]int{}
				}
				if _, ok := p.keyOut[i]; ok {
					continue
				}
				k := slices.IndexFunc(p.outs[:p.nout], func(o output) bool { return o.field == i })
				if k < 0 {
					k = len(p.outs)
					p.outs = append(p.outs, output{partition: l.Partition(i), field: i, typ: l.Schema.Field(i).Type})
				}
				p.keyOut[i] = k
			}
		}
	}
	var partFilters, fileFilters []Predicate
	for _, f := range spec.Filters {
		i := l.fieldIndex(f.Column)
		switch {
		case i < 0:
			return nil, errs.New(errs.Analysis, "no column %q in %q", f.Column, l.Location)
		case l.Partition(i) >= 0:
			partFilters = append(partFilters, f)
		default:
			fileFilters = append(fileFilters, f)
		}
	}
	// What each group of files rules out, worked out once for all its files.
	var groups map[*FileMeta]bool
	for fi, ref := range l.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !l.partitionPasses(ref, partFilters) {
			c.FilesPrunedByPartition.Add(1)
			continue
		}
		c.FilesConsidered.Add(1)
		if g := ref.Group; g != nil && len(fileFilters) > 0 {
			out, ok := groups[g]
			if !ok {
				out = l.metaExcludes(FileRef{Meta: g}, fileFilters)
				if groups == nil {
					groups = map[*FileMeta]bool{}
				}
				groups[g] = out
			}
			if out {
				c.FilesSkipped.Add(1)
				continue
			}
		}
		if ref.Meta == nil && fi < len(spec.Excluded) && spec.Excluded[fi] {
			c.FilesSkipped.Add(1)
			continue
		}
		if ref.Meta == nil && fi < len(spec.Known) {
			ref.Meta = spec.Known[fi]
		}
		if l.metaExcludes(ref, fileFilters) {
			c.FilesSkipped.Add(1)
			continue
		}
		footer, err := loadFooter(ctx, store, ref.Info)
		if err != nil {
			return nil, err
		}
		c.FilesOpened.Add(1)
		fs, err := l.bind(footer, p.outs)
		if err != nil {
			return nil, err
		}
		p.files[fi] = fs
		// Filters on this file's columns, with the file's column index, when the file's
		// statistics are typed so they compare with the filter's values.
		var ffs []fileFilter
		for _, f := range fileFilters {
			if j := l.statsColumn(footer, f.Column); j >= 0 {
				ffs = append(ffs, fileFilter{j, f})
			}
		}
		fs.filters = ffs
		fs.blooms = bloomProbes(footer, ffs)
		for g := 0; g < footer.NumRowGroups(); g++ {
			c.RowGroupsConsidered.Add(1)
			info := footer.RowGroup(g)
			pruned := false
			for _, ff := range ffs {
				if prunes(info.Columns[ff.col], info.Rows, ff.p) {
					pruned = true
					break
				}
			}
			if pruned {
				c.RowGroupsPruned.Add(1)
				continue
			}
			p.Morsels = append(p.Morsels, Morsel{File: fi, RowGroup: g, Rows: info.Rows})
		}
	}
	return p, nil
}

// bloomProbe is an = or IN filter on a file's column, as the column's bloom filters
// hash its values.
type bloomProbe struct {
	col   int
	probe *parquet.BloomProbe
}

// bloomProbes are the = and IN filters of ffs whose values convert exactly to the
// file's physical types, on columns with a bloom filter in some row group.
func bloomProbes(footer *parquet.File, ffs []fileFilter) []bloomProbe {
	var out []bloomProbe
	for _, ff := range ffs {
		if ff.p.Op != "=" && ff.p.Op != "in" {
			continue
		}
		has := false
		for g := 0; g < footer.NumRowGroups() && !has; g++ {
			has = footer.HasBloom(g, ff.col)
		}
		if !has {
			continue
		}
		vals := ff.p.Values
		if ff.p.Op == "=" && len(vals) > 1 {
			vals = vals[:1]
		}
		if probe, ok := footer.BloomProbe(ff.col, vals); ok {
			out = append(out, bloomProbe{ff.col, probe})
		}
	}
	return out
}

// BloomExcludes reports whether a bloom filter of morsel m's row group rules out
// every value of one of the spec's = or IN filters (SPEC §8): the row group then
// holds no row the scan wants. The filters are read the first time any morsel of the
// row group asks — by the scan's workers, in parallel, and only for row groups the
// statistics and the zones left — and the answer is kept for its other parts. That
// first time counts BloomFiltersRead, BloomFilterBytesRead and, for a row group ruled
// out, RowGroupsPrunedByBloom and RowGroupsPruned. A file that cannot be opened has
// its filters left unread: its rows are read instead, and fail there if they must.
func (p *ScanPlan) BloomExcludes(ctx context.Context, m Morsel) bool {
	if m.File < 0 || m.File >= len(p.files) || p.files[m.File] == nil || len(p.files[m.File].blooms) == 0 {
		return false
	}
	p.bloomMu.Lock()
	if p.bloomed == nil {
		p.bloomed = map[[2]int]*bloomAnswer{}
	}
	a, ok := p.bloomed[[2]int{m.File, m.RowGroup}]
	if !ok {
		a = &bloomAnswer{}
		p.bloomed[[2]int{m.File, m.RowGroup}] = a
	}
	p.bloomMu.Unlock()
	a.once.Do(func() { a.excludes = p.checkBlooms(ctx, m) })
	return a.excludes
}

// smallBloom is the size up to which a bloom filter is read whatever the size of the
// chunks it guards: one small read, about what reading them would take.
const smallBloom = 64 << 10

// bloomAnswer is what the bloom filters of one row group said, worked out once.
type bloomAnswer struct {
	once     sync.Once
	excludes bool
}

// checkBlooms reads the bloom filters of m's row group for the file's probes, in
// order, until one rules the row group out.
func (p *ScanPlan) checkBlooms(ctx context.Context, m Morsel) bool {
	fs := p.files[m.File]
	var f *parquet.File
	for _, bp := range fs.blooms {
		if !fs.footer.HasBloom(m.RowGroup, bp.col) {
			continue
		}
		if n := fs.footer.BloomBytes(m.RowGroup, bp.col); n > smallBloom && n > fs.chunkBytes(m.RowGroup) {
			// Reading the filter would cost more than reading what it guards (a
			// writer that sized it for far more values than the row group holds).
			continue
		}
		if f == nil {
			r, err := storage.OpenInfo(ctx, p.store, p.listing.Files[m.File].Info)
			if err != nil {
				return false
			}
			defer r.Close()
			if f, err = fs.footer.WithReader(r); err != nil {
				return false
			}
		}
		out, n, read := f.BloomExcludes(m.RowGroup, bp.col, bp.probe)
		p.c.BloomFilterBytesRead.Add(n)
		if read {
			p.c.BloomFiltersRead.Add(1)
		}
		if out {
			p.c.RowGroupsPrunedByBloom.Add(1)
			p.c.RowGroupsPruned.Add(1)
			return true
		}
	}
	return false
}

// metaExcludes reports whether what the table's metadata states of a file rules it out
// before its footer is read: no row left, or bounds that no row within can satisfy.
func (l *Listing) metaExcludes(ref FileRef, filters []Predicate) bool {
	m := ref.Meta
	if m == nil {
		return false
	}
	if m.Rows == 0 || (m.Rows > 0 && ref.Deleted != nil && ref.Deleted.Len() >= m.Rows) {
		return true
	}
	if m.Columns == nil {
		return false
	}
	for _, f := range filters {
		if i := l.fieldIndex(f.Column); i >= 0 && i < len(m.Columns) && prunes(m.Columns[i], m.Rows, f) {
			return true
		}
	}
	return false
}

// fileFilter is a filter on a file's column: the column's index in the file.
type fileFilter struct {
	col int
	p   Predicate
}

// rowRanges returns the rows of morsel m that its file's page index leaves to read
// under the spec's filters: pages whose statistics exclude a filter are left out. nil
// means the whole row group.
func (p *ScanPlan) rowRanges(f *parquet.File, fs *fileScan, m Morsel) []parquet.RowRange {
	ranges, _ := p.pageRanges(f, fs, m)
	return ranges
}

// pageRanges is rowRanges, with the number of pages of the filtered columns the page
// index ruled out in the whole row group.
func (p *ScanPlan) pageRanges(f *parquet.File, fs *fileScan, m Morsel) ([]parquet.RowRange, int64) {
	var skipped int64
	var ranges []parquet.RowRange
	if !m.Whole() || m.Rows != f.RowGroup(m.RowGroup).Rows {
		ranges = []parquet.RowRange{{First: m.First, Rows: m.Rows}}
	}
	for _, ff := range fs.filters {
		pages, ok := f.PageIndex(m.RowGroup, ff.col)
		if !ok {
			continue
		}
		var keep []parquet.RowRange
		for _, pg := range pages {
			if prunes(pg.Stats, pg.Rows, ff.p) {
				skipped++
				continue
			}
			if n := len(keep); n > 0 && keep[n-1].First+keep[n-1].Rows == pg.FirstRow {
				keep[n-1].Rows += pg.Rows
			} else {
				keep = append(keep, parquet.RowRange{First: pg.FirstRow, Rows: pg.Rows})
			}
		}
		switch {
		case ranges == nil:
			ranges = keep
		case len(ranges) > 0:
			ranges = intersect(ranges, keep)
		}
		if len(ranges) == 0 {
			// No row is left; the other filters' pages are still counted.
			ranges = []parquet.RowRange{}
		}
	}
	return ranges, skipped
}

// intersect returns the rows in both a and b, ranges in order.
func intersect(a, b []parquet.RowRange) []parquet.RowRange {
	var out []parquet.RowRange
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo := max(a[i].First, b[j].First)
		hi := min(a[i].First+a[i].Rows, b[j].First+b[j].Rows)
		if lo < hi {
			out = append(out, parquet.RowRange{First: lo, Rows: hi - lo})
		}
		if a[i].First+a[i].Rows < b[j].First+b[j].Rows {
			i++
		} else {
			j++
		}
	}
	return out
}

// statsColumn is the index in footer of the listing's column name when the file's
// statistics for it compare with values of the listing's type, or -1.
func (l *Listing) statsColumn(footer *parquet.File, name string) int {
	j := l.FileColumn(footer, name)
	if j < 0 || !comparable(footer.Schema().Field(j).Type, l.Schema.Field(l.fieldIndex(name)).Type) {
		return -1
	}
	return j
}

// Stats returns the statistics of column name in morsel m's row group, from its file's
// footer; ok is false for a partition column or a file whose statistics do not
// compare with the listing's type.
func (p *ScanPlan) Stats(m Morsel, name string) (cs parquet.ColumnStats, ok bool) {
	l := p.listing
	i := l.fieldIndex(name)
	if i < 0 || l.Partition(i) >= 0 || m.File < 0 || m.File >= len(p.files) || p.files[m.File] == nil {
		return cs, false
	}
	footer := p.files[m.File].footer
	j := l.statsColumn(footer, name)
	if j < 0 {
		return cs, false
	}
	return footer.RowGroup(m.RowGroup).Columns[j], true
}

// GroupRows is the number of rows of morsel m's row group, which its statistics
// describe (more than m's when m is a part of it); 0 for a morsel not in the plan.
func (p *ScanPlan) GroupRows(m Morsel) int64 {
	if m.File < 0 || m.File >= len(p.files) || p.files[m.File] == nil {
		return 0
	}
	return p.files[m.File].footer.RowGroup(m.RowGroup).Rows
}

// Excludes reports whether no row of morsel m can satisfy f, by its file's partition
// value or its row group's statistics: how a filter learnt while the scan runs (the
// bound of a top-N) passes over row groups. Conservative, like planning.
func (p *ScanPlan) Excludes(m Morsel, f Predicate) bool {
	l := p.listing
	if k := l.Partition(l.fieldIndex(f.Column)); k >= 0 && m.File >= 0 && m.File < len(p.files) && p.files[m.File] != nil {
		return !holds(l.Files[m.File].PartitionValues[k], f)
	}
	cs, ok := p.Stats(m, f.Column)
	return ok && prunes(cs, p.files[m.File].footer.RowGroup(m.RowGroup).Rows, f)
}

// fieldIndex finds a column of the listing: an exact match first, then one that
// differs only in case.
func (l *Listing) fieldIndex(name string) int { return FieldIndex(l.Schema, name) }

// FieldIndex finds a column in s by name: an exact match first, then one that differs
// only in case (as the listing matches files' columns to the table's); -1 when absent.
func FieldIndex(s *arrow.Schema, name string) int {
	if idx := s.FieldIndices(name); len(idx) > 0 {
		return idx[0]
	}
	for i, f := range s.Fields() {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// absent is the slot of an output whose column the file lacks: it reads as NULL.
const absent = -2

// FileColumn is the index in file's schema of the listing's column name, or -1 when
// the file lacks it. A lake table's column is found by its field id in a file that
// carries field ids, else by the names its ColumnSource gives. Otherwise the match is
// by name: an exact match first, then one that differs only in case — unless the
// file's column of that spelling is a column of the listing in its own right (a file
// with both "a" and "A" gives the listing both).
func (l *Listing) FileColumn(file *parquet.File, name string) int {
	fsch := file.Schema()
	i := l.fieldIndex(name)
	if i < 0 || i >= len(l.Columns) {
		return l.fileColumn(fsch, name)
	}
	src := l.Columns[i]
	if src.FieldID > 0 {
		ids := false
		for j := range fsch.NumFields() {
			id, ok := file.FieldID(j)
			if ok && id == src.FieldID {
				return j
			}
			ids = ids || ok
		}
		if ids {
			return -1 // a file with field ids lacks this one
		}
	}
	switch {
	case src.Unmapped:
		return -1
	case len(src.Names) == 0:
		return l.fileColumn(fsch, name)
	}
	for _, n := range src.Names {
		if idx := fsch.FieldIndices(n); len(idx) > 0 {
			return idx[0]
		}
	}
	return -1
}

// fileColumn is FileColumn by name: a file's column that differs only in case from
// name is not taken when files name another of the listing's columns so.
func (l *Listing) fileColumn(fsch *arrow.Schema, name string) int {
	return fileColumn(fsch, name, func(fileName string) bool {
		for i := range l.Schema.NumFields() {
			if l.fileName(i) == fileName {
				return true
			}
		}
		return false
	})
}

// fileColumn is the index in fsch of the column called name, an exact match first,
// then one that differs only in case unless isColumn says files name another of the
// table's columns so; -1 when there is none.
func fileColumn(fsch *arrow.Schema, name string, isColumn func(fileName string) bool) int {
	j := FieldIndex(fsch, name)
	if j >= 0 && fsch.Field(j).Name != name && isColumn(fsch.Field(j).Name) {
		return -1
	}
	return j
}

// bind maps the listing's output columns onto one file's schema, checking types. A
// column the file lacks reads as NULL (schema drift by name, unionSchema).
func (l *Listing) bind(footer *parquet.File, outs []output) (*fileScan, error) {
	fs := &fileScan{footer: footer, slot: make([]int, len(outs))}
	seen := map[int]int{}
	fsch := footer.Schema()
	for i, o := range outs {
		if o.partition >= 0 {
			fs.slot[i] = -1
			continue
		}
		name := l.Schema.Field(o.field).Name
		j := l.FileColumn(footer, name)
		if j < 0 {
			fs.slot[i] = absent
			continue
		}
		have := fsch.Field(j).Type
		var cast arrow.DataType
		var plan *nestedPlan
		if l.Lake != nil && types.IsNested(have) && types.IsNested(o.typ) {
			// A lake table's nested fields are matched as its metadata says, even
			// where the types look alike: a field may have been dropped and added
			// again under the same name.
			var src *ColumnSource
			if o.field < len(l.Columns) {
				src = &l.Columns[o.field]
			}
			p, ok := planNested(have, o.typ, src)
			if !ok {
				return nil, errs.New(errs.CorruptSource, "file %q: column %q has type %s where the table has %s",
					footer.Name(), name, types.Name(have), types.Name(o.typ))
			}
			if !p.identity {
				cast, plan = o.typ, p
			}
		} else if !arrow.TypeEqual(have, o.typ) {
			if !castable(have, o.typ) && !(l.Lake != nil && lakeCastable(have, o.typ)) {
				// Not a type Widen gives: a listing whose schema is not its files' union.
				return nil, errs.New(errs.CorruptSource, "file %q: column %q has type %s where the table has %s",
					footer.Name(), name, types.Name(have), types.Name(o.typ))
			}
			cast = o.typ
		}
		k, ok := seen[j]
		if !ok {
			k = len(fs.cols)
			seen[j] = k
			fs.cols = append(fs.cols, j)
			fs.casts = append(fs.casts, cast)
			fs.plans = append(fs.plans, plan)
		}
		fs.slot[i] = k
	}
	return fs, nil
}

// castable reports types that differ but hold the same kind of value, so a file's
// column can be cast to the table's type: integers, floats, decimals, timestamps of
// the same time-zone kind, strings, binaries.
func castable(from, to arrow.DataType) bool {
	switch {
	case types.IsInteger(from) && (types.IsInteger(to) || types.IsFloat(to) || types.IsDecimal(to)):
		return true
	case types.IsFloat(from) && types.IsFloat(to):
		return true
	case types.IsDecimal(from) && (types.IsDecimal(to) || types.IsFloat(to)):
		return true
	case from.ID() == arrow.TIMESTAMP && to.ID() == arrow.TIMESTAMP:
		return (from.(*arrow.TimestampType).TimeZone == "") == (to.(*arrow.TimestampType).TimeZone == "")
	case from.ID() == arrow.DATE32 && to.ID() == arrow.TIMESTAMP:
		return true
	case types.IsString(from) && types.IsString(to), types.IsBinary(from) && types.IsBinary(to):
		return true
	}
	return false
}

// lakeCastable reports the further differences a lake table's schema may have from
// its files, whose own types the table's metadata overrides: a timestamp the table says
// is an instant that a file stores without a time zone (INT96, or written before
// logical types), and nested types whose fields the files name differently (column
// mapping) but which have the same shape.
func lakeCastable(from, to arrow.DataType) bool {
	switch {
	case from.ID() == arrow.TIMESTAMP && to.ID() == arrow.TIMESTAMP:
		return true
	case types.IsNested(from) && types.IsNested(to):
		return sameShape(from, to)
	}
	return false
}

// sameShape reports whether two nested types differ at most in the names of their
// fields, or in fields one has and the other lacks, so that one's data can be read
// as the other (planNested, matching fields by position or name).
func sameShape(a, b arrow.DataType) bool {
	_, ok := planNested(a, b, nil)
	return ok
}

// comparable reports whether bounds typed like a file column compare correctly (with
// types.Compare) with filter values typed like the table's column.
func comparable(file, table arrow.DataType) bool {
	switch {
	case arrow.TypeEqual(file, table):
		return true
	case types.IsSigned(file) && types.IsSigned(table), types.IsUnsigned(file) && types.IsUnsigned(table):
		return true
	case file.ID() == arrow.FLOAT32 && table.ID() == arrow.FLOAT64:
		return true
	case types.IsString(file) && types.IsString(table), types.IsBinary(file) && types.IsBinary(table):
		return true
	}
	return false
}

// partitionPasses evaluates the partition filters on a file's partition values under
// three-valued logic: a NULL value fails every comparison and passes only is_null.
func (l *Listing) partitionPasses(ref FileRef, filters []Predicate) bool {
	for _, f := range filters {
		v := ref.PartitionValues[l.Partition(l.fieldIndex(f.Column))]
		if !holds(v, f) {
			return false
		}
	}
	return true
}

// holds evaluates a predicate on one value; unknown (NULL) counts as false.
func holds(v types.Value, f Predicate) bool {
	switch f.Op {
	case "is_null":
		return v.Null
	case "is_not_null":
		return !v.Null
	}
	if v.Null {
		return false
	}
	if f.Op == "in" {
		for _, w := range f.Values {
			if !w.Null && types.Compare(v, w) == 0 {
				return true
			}
		}
		return false
	}
	if len(f.Values) == 0 || f.Values[0].Null {
		return false
	}
	c := types.Compare(v, f.Values[0])
	switch f.Op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return true // an operator this layer does not know prunes nothing
}

// Read reads one morsel: file columns through the Parquet reader (cast to the
// listing's types where a file differs), partition columns as constant arrays, in
// spec.Columns order. It counts RowGroupsRead, RowsScanned and CompressedBytesRead
// (the compressed bytes of the column chunks read). Safe for concurrent calls.
func (p *ScanPlan) Read(ctx context.Context, m Morsel, fn func(*vector.Batch) error) error {
	return p.ReadLate(ctx, m, nil, func(b *vector.Batch, _ Late) error { return fn(b) })
}

// Late fills late columns of the batch it came with: those at positions which of the
// spec's columns (nil: every one not filled yet), with values stored for the rows sel
// alone (nil: every row), other rows holding valid zero values — or, with dense set, with
// the rows sel alone, in order (parquet.Late). A partition column is never late.
type Late func(which []int, sel []int32, dense bool) error

// chunkBytes is the compressed size of the chunks of row group rg the scan reads.
func (fs *fileScan) chunkBytes(rg int) int64 {
	info := fs.footer.RowGroup(rg)
	var n int64
	for _, j := range fs.cols {
		n += info.Columns[j].CompressedBytes
	}
	return n
}

// ChunkBytes is the compressed size of the column chunks reading m fetches: what
// Read counts into CompressedBytesRead for a whole row group.
func (p *ScanPlan) ChunkBytes(m Morsel) int64 {
	if m.File < 0 || m.File >= len(p.files) || p.files[m.File] == nil {
		return 0
	}
	return p.files[m.File].chunkBytes(m.RowGroup)
}

// SplitBytes is the compressed size of the chunks of m's row group that the spec's
// columns with early[i] set read, and of those the other columns read: what the rule
// of late materialisation weighs (a partition column weighs nothing, and a file column
// both early and late columns feed counts as early).
func (p *ScanPlan) SplitBytes(m Morsel, early []bool) (earlyBytes, lateBytes int64) {
	if m.File < 0 || m.File >= len(p.files) || p.files[m.File] == nil {
		return 0, 0
	}
	fs := p.files[m.File]
	info := fs.footer.RowGroup(m.RowGroup)
	isEarly := make([]bool, len(fs.cols))
	for i, o := range p.outs {
		if o.partition < 0 && fs.slot[i] >= 0 && (i >= p.nout || (i < len(early) && early[i])) {
			isEarly[fs.slot[i]] = true
		}
	}
	for k, j := range fs.cols {
		if isEarly[k] {
			earlyBytes += info.Columns[j].CompressedBytes
		} else {
			lateBytes += info.Columns[j].CompressedBytes
		}
	}
	return earlyBytes, lateBytes
}

// FetchBytes is what reading m holds in memory ahead of decoding it: from an object
// store, the chunks of its row group the scan reads, fetched at once (the parquet
// reader's prefetch); from local disk nothing. A caller that cannot hold that much
// reads m under storage.NoPrefetch, piece by piece.
func (p *ScanPlan) FetchBytes(m Morsel) int64 {
	if m.File < 0 || m.File >= len(p.files) || p.files[m.File] == nil || storage.Scheme(p.listing.Files[m.File].Info.Path) == "" {
		return 0
	}
	return p.files[m.File].chunkBytes(m.RowGroup)
}

// ReadLate is Read with late materialisation: only the spec's columns with early[i]
// set (every one when early is nil) are in the batch fn gets, and partition columns;
// the others are nil until fn calls late, which fills them for the same rows. Rows
// whose late columns are never asked for are not decoded (parquet.ReadRowGroupLate).
func (p *ScanPlan) ReadLate(ctx context.Context, m Morsel, early []bool, fn func(b *vector.Batch, late Late) error) error {
	if m.File < 0 || m.File >= len(p.files) || p.files[m.File] == nil {
		return errs.New(errs.Internal, "BUG: morsel of file %d is not in the plan", m.File)
	}
	fs := p.files[m.File]
	ref := p.listing.Files[m.File]
	f := fs.footer
	if len(fs.cols) > 0 {
		r, err := storage.OpenInfo(ctx, p.store, ref.Info)
		if err != nil {
			return err
		}
		defer r.Close()
		if f, err = f.WithReader(r); err != nil {
			return err
		}
	}
	if m.Share != nil {
		defer m.Share.Done()
		f = f.Sharing(m.Share)
	}
	if m.Whole() {
		// A row group read in parts counts once, with its first part.
		p.c.RowGroupsRead.Add(1)
		p.c.CompressedBytesRead.Add(fs.chunkBytes(m.RowGroup))
	}
	// A file column is early when any output it feeds is.
	// The key columns of equality deletes are early: the selection needs them.
	var keys [][]int // per equality delete, its columns' outputs
	for _, d := range ref.Equality {
		ks := make([]int, len(d.Fields))
		for j, i := range d.Fields {
			ks[j] = p.keyOut[i]
		}
		keys = append(keys, ks)
	}
	var fileEarly []bool
	if early != nil {
		fileEarly = make([]bool, len(fs.cols))
		for i, o := range p.outs {
			if o.partition < 0 && fs.slot[i] >= 0 && (i >= p.nout || early[i]) {
				fileEarly[fs.slot[i]] = true
			}
		}
		for _, ks := range keys {
			for _, i := range ks {
				if fs.slot[i] >= 0 {
					fileEarly[fs.slot[i]] = true
				}
			}
		}
	}
	// column converts output i of a file batch, or is nil when its column was not
	// decoded.
	column := func(b *vector.Batch, i int) (arrow.Array, error) {
		o := p.outs[i]
		if o.partition >= 0 {
			return constant(ref.PartitionValues[o.partition], b.Rows), nil
		}
		k := fs.slot[i]
		if k == absent {
			return p.listing.missingArray(ref, o.field, b.Rows), nil
		}
		a := b.Cols[k]
		if a == nil || fs.casts[k] == nil {
			return a, nil
		}
		var err error
		if fs.plans[k] != nil {
			a, err = reshape(ctx, a.Data(), fs.plans[k])
		} else {
			a, err = castArray(ctx, a, fs.casts[k])
		}
		if err != nil {
			return nil, castError(f.Name(), p.listing.Schema.Field(o.field).Name, b.Cols[k].DataType(), fs.casts[k], err)
		}
		return a, nil
	}
	ranges, skipped := p.pageRanges(f, fs, m)
	if m.Whole() {
		// Counted once per row group, with its first part, over the whole group.
		p.c.PagesSkipped.Add(skipped)
		whole := ranges
		if m.Rows != f.RowGroup(m.RowGroup).Rows {
			whole, _ = p.pageRanges(f, fs, Morsel{File: m.File, RowGroup: m.RowGroup, Rows: f.RowGroup(m.RowGroup).Rows})
		}
		p.c.CompressedBytesSelected.Add(f.SelectedBytes(m.RowGroup, fs.cols, whole))
	}
	if ranges != nil && len(ranges) == 0 {
		return nil // the page index rules out every row
	}
	// Deleted rows are left out of each batch by a selection, which needs the
	// position of the batch's rows in the file: batches follow the ranges read, in
	// order, and never span two of them (parquet.File.ReadRowGroupLate).
	var at rowCursor
	if ref.Deleted != nil {
		at = newRowCursor(f, m.RowGroup, ranges)
	}
	return f.ReadRowGroupLate(ctx, m.RowGroup, ranges, fs.cols, fileEarly, func(b *vector.Batch, late parquet.Late) error {
		p.c.RowsScanned.Add(int64(b.Rows))
		if err := p.c.Limit.charge(int64(b.Rows)); err != nil {
			return err
		}
		var sel []int32
		if ref.Deleted != nil {
			if sel = ref.Deleted.Live(at.next(b.Rows), b.Rows, nil); sel != nil && len(sel) == 0 {
				return nil // every row of the batch is deleted
			}
		}
		cols := make([]arrow.Array, len(p.outs))
		for i := range p.outs {
			var err error
			if cols[i], err = column(b, i); err != nil {
				return err
			}
		}
		if len(keys) > 0 {
			arrays := make([][]arrow.Array, len(keys))
			for k, ks := range keys {
				arrays[k] = make([]arrow.Array, len(ks))
				for j, i := range ks {
					if cols[i] == nil {
						return errs.New(errs.Internal, "BUG: key column %d of an equality delete was not read", i)
					}
					arrays[k][j] = cols[i]
				}
			}
			if sel = equalityLive(ref.Equality, arrays, b.Rows, sel); sel != nil && len(sel) == 0 {
				return nil // every row of the batch is deleted
			}
		}
		out := &vector.Batch{Cols: cols[:p.nout:p.nout], Rows: b.Rows, Sel: sel}
		return fn(out, func(which []int, sel []int32, dense bool) error {
			var fileCols []int
			if which != nil {
				fileCols = make([]int, 0, len(which))
				for _, i := range which {
					if i < 0 || i >= len(p.outs) {
						return errs.New(errs.Internal, "BUG: late column %d of %d", i, len(p.outs))
					}
					if p.outs[i].partition < 0 && fs.slot[i] >= 0 {
						fileCols = append(fileCols, fs.slot[i])
					}
				}
				if len(fileCols) == 0 {
					return nil
				}
			}
			if err := late(fileCols, sel, dense); err != nil {
				return err
			}
			for i := range p.nout {
				if cols[i] == nil && b.Cols[fs.slot[i]] != nil {
					var err error
					if cols[i], err = column(b, i); err != nil {
						return err
					}
				}
			}
			return nil
		})
	})
}

// rowCursor follows the position in the file of the batches one row group's read
// yields.
type rowCursor struct {
	base   int64              // the row group's first row in the file
	ranges []parquet.RowRange // the rows read, within the row group
	cur    int
	at     int64 // the next batch's first row, within the row group
}

func newRowCursor(f *parquet.File, rg int, ranges []parquet.RowRange) rowCursor {
	c := rowCursor{}
	for g := range rg {
		c.base += f.RowGroup(g).Rows
	}
	if ranges == nil {
		ranges = []parquet.RowRange{{First: 0, Rows: f.RowGroup(rg).Rows}}
	}
	for _, r := range ranges {
		if r.Rows > 0 {
			c.ranges = append(c.ranges, r)
		}
	}
	if len(c.ranges) > 0 {
		c.at = c.ranges[0].First
	}
	return c
}

// next returns the file position of a batch of n rows, the next one read.
func (c *rowCursor) next(n int) int64 {
	first := c.at
	c.at += int64(n)
	if c.cur < len(c.ranges) && c.at >= c.ranges[c.cur].First+c.ranges[c.cur].Rows {
		if c.cur++; c.cur < len(c.ranges) {
			c.at = c.ranges[c.cur].First
		}
	}
	return c.base + first
}

// Live is how many rows of morsel m are not deleted by position: for a file with
// equality deletes, how many at most are read.
func (p *ScanPlan) Live(m Morsel) int64 {
	ref := p.listing.Files[m.File]
	if ref.Deleted == nil || p.files[m.File] == nil {
		return m.Rows
	}
	var base int64
	for g := range m.RowGroup {
		base += p.files[m.File].footer.RowGroup(g).Rows
	}
	return m.Rows - ref.Deleted.CountIn(base+m.First, m.Rows)
}

// Equality reports whether morsel m's file has equality deletes, so that fewer rows
// than Live may be read from it.
func (p *ScanPlan) Equality(m Morsel) bool {
	return m.File >= 0 && m.File < len(p.listing.Files) && len(p.listing.Files[m.File].Equality) > 0
}

// Rows counts the listing's live rows: from what the table's metadata states of each
// file, else its footer (read through the footer cache, so a scan that follows reuses
// it), less the file's deleted rows. It is -1 when the count is not known before the
// rows are read: a file has equality deletes.
func (l *Listing) Rows(ctx context.Context, store storage.Store) (int64, error) {
	if lk := l.Lake; lk != nil && len(l.Files) > 0 {
		// A snapshot shared by statements counts its rows once.
		lk.mu.Lock()
		defer lk.mu.Unlock()
		if lk.rowsKnown && lk.rowsOf == &l.Files[0] && lk.rowsCount == len(l.Files) {
			return lk.rows, nil
		}
		n, err := l.countRows(ctx, store)
		if err == nil {
			lk.rows, lk.rowsKnown, lk.rowsOf, lk.rowsCount = n, true, &l.Files[0], len(l.Files)
		}
		return n, err
	}
	if r := l.rows; r != nil && len(l.Files) > 0 && r.of == &l.Files[0] && r.count == len(l.Files) {
		return r.n, nil
	}
	return l.countRows(ctx, store)
}

func (l *Listing) countRows(ctx context.Context, store storage.Store) (int64, error) {
	for i := range l.Files {
		if len(l.Files[i].Equality) > 0 {
			return -1, nil
		}
	}
	var n int64
	for i := range l.Files {
		f := &l.Files[i]
		rows := int64(-1)
		if f.Meta != nil {
			rows = f.Meta.Rows
		}
		if rows < 0 {
			footer, err := loadFooter(ctx, store, f.Info)
			if err != nil {
				return 0, err
			}
			rows = footer.NumRows()
		}
		n += rows
		if f.Deleted != nil {
			n -= f.Deleted.Len()
		}
	}
	return n, nil
}

// Recycler lends a scan's batch buffers back to it once its consumer has let go of
// them (parquet.Recycler).
type Recycler = parquet.Recycler

// WithRecycler returns ctx whose scans lend their batches' value buffers from r.
func WithRecycler(ctx context.Context, r *Recycler) context.Context {
	return parquet.WithRecycler(ctx, r)
}
