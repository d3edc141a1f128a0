package profile

import (
	"context"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"golang.org/x/sync/errgroup"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// Options configure Full.
type Options struct {
	Threads     int                             // workers (row groups in parallel); <= 0: GOMAXPROCS
	MemoryLimit int64                           // bytes the pass may hold (sketches and states); exceeding it fails with errs.ResourceExhausted; <= 0: no limit
	Progress    func(rowsDone, rowsTotal int64) // called now and then from any goroutine (serialize it yourself); may be nil
}

// Memory a sketch is counted as: an HLL is its registers; a KLL about three
// compactors' worth of k float64 items.
const (
	hllBytes = stats.HLLRegisters
	kllBytes = 8 * 3 * stats.KLLK
)

// Full reads every column of every file of l once and upgrades rec — a record built by
// stats.FromFooters for the same listing, whose Zones are exactly l's row groups (never
// one of stats.FromLakeStats, whose zones are whole files: that is refused) — to depth
// full: per column an HLL sketch (all orderable/hashable types) and a KLL sketch
// (stats.KLLSupports types), exact bounds (BoundsExact true) and exact null counts for every
// zone, file and the table, HasNaN for float columns holding NaN (a NaN-holding zone keeps no
// bounds: NaN is never a bound), and per zone the exact SUM of numeric columns as text.
// rec is changed only when Full returns nil.
//
// Row groups are read in parallel, each by one worker; a file that lacks one of the
// table's columns reads it as NULL, as the footers' record does. Errors reading a file
// are returned as they are (CORRUPT_SOURCE naming the file); ctx is checked between
// batches.
func Full(ctx context.Context, store storage.Store, l *source.Listing, rec *stats.Record, opt Options) error {
	if err := rec.LoadDetail(); err != nil {
		return err
	}
	if l == nil || rec == nil {
		return errs.New(errs.Internal, "BUG: profile.Full without a listing or a record")
	}
	cols := planColumns(l)
	if len(rec.Columns) != len(cols) {
		return errs.New(errs.Internal, "BUG: the record of %q has %d columns, the listing %d", l.Location, len(rec.Columns), len(cols))
	}
	firstZone, err := zoneIndex(l, rec)
	if err != nil {
		return err
	}
	footers, err := l.Footers(ctx, store)
	if err != nil {
		return err
	}
	tasks, err := planTasks(ctx, store, l, footers, firstZone, rec)
	if err != nil {
		return err
	}
	p := &pass{
		location: l.Location,
		cols:     cols,
		tasks:    tasks,
		opt:      opt,
		total:    rec.Rows,
		zones:    make([][]stats.ZoneColumn, len(rec.Zones)),
		zoneRows: make([]int64, len(rec.Zones)),
	}
	p.mem.limit = opt.MemoryLimit
	p.zr = zoneReader{location: l.Location, cols: cols, mem: &p.mem, progress: p.progress}
	workers := opt.Threads
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(tasks)))
	if err := p.sink.init(p, cols, workers); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	for range workers {
		g.Go(func() error {
			err := errs.Safe(func() error { return p.work(gctx) })()
			if err != nil {
				p.sink.abort(err)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		// The first failure, not a worker that stopped because of it.
		if first := p.sink.failure(); first != nil {
			return first
		}
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return p.apply(l, rec, firstZone)
}

// column is what the pass computes for one table column.
type column struct {
	name   string
	dt     arrow.DataType
	codec  *stats.Codec
	minMax bool // MIN and MAX accept the type and the codec encodes their results
	sum    bool // SUM accepts the type (integers, floats, decimals)
	float  bool
	hll    bool
	kll    bool
}

func planColumns(l *source.Listing) []column {
	fields := l.Schema.Fields()
	cols := make([]column, len(fields))
	for i, f := range fields {
		dt := types.Unwrap(f.Type)
		c := column{name: f.Name, dt: f.Type, float: types.IsFloat(dt)}
		if codec, ok := stats.CodecFor(f.Type); ok {
			c.codec = &codec
		}
		_, errMin := agg.ResultType(agg.Spec{Name: "min", ArgType: f.Type})
		c.minMax = errMin == nil && c.codec != nil
		_, errSum := agg.ResultType(agg.Spec{Name: "sum", ArgType: f.Type})
		c.sum = errSum == nil && types.IsNumeric(dt)
		c.hll = dt.ID() != arrow.NULL && (c.codec != nil || types.IsOrderable(dt))
		c.kll = stats.KLLSupports(dt)
		cols[i] = c
	}
	return cols
}

// zoneIndex checks that rec's zones are l's row groups, file by file in order, and
// returns the index of each file's first zone (a file's zone for row group g is
// firstZone[file]+g; firstZone has one more entry, the end).
func zoneIndex(l *source.Listing, rec *stats.Record) ([]int, error) {
	first := make([]int, len(l.Files)+1)
	z := 0
	for fi := range l.Files {
		first[fi] = z
		for ; z < len(rec.Zones) && rec.Zones[z].File == fi; z++ {
			if rec.Zones[z].RowGroup != z-first[fi] || len(rec.Zones[z].Columns) != len(rec.Columns) {
				return nil, errs.New(errs.Internal, "BUG: zone %d of the record of %q is not row group %d of file %d", z, l.Location, z-first[fi], fi)
			}
		}
	}
	first[len(l.Files)] = z
	if z != len(rec.Zones) || (len(rec.PerFile) > 0 && len(rec.PerFile) != len(l.Files)) {
		return nil, errs.New(errs.Internal, "BUG: the record of %q does not describe its %d files", l.Location, len(l.Files))
	}
	return first, nil
}

// task is one zone to read: a morsel of a scan plan producing cols (table column
// indexes, in the plan's column order). Columns not in cols are absent from the file.
type task struct {
	zone   int
	path   string
	plan   *source.ScanPlan
	morsel source.Morsel
	cols   []int
}

// presentColumns are the table columns file fi of l holds, or reads as a value its
// metadata states (a partition column, a default), with key naming that set.
func presentColumns(l *source.Listing, footer *parquet.File, fi int) (key string, present []int) {
	b := make([]byte, 0, len(l.Schema.Fields()))
	for i, f := range l.Schema.Fields() {
		if l.Partition(i) >= 0 || l.FileColumn(footer, f.Name) >= 0 || !l.MissingIn(l.Files[fi], i).Null {
			present = append(present, i)
			b = append(b, '1')
		} else {
			b = append(b, '0')
		}
	}
	return string(b), present
}

// planTasks plans the scans that read every zone once, in zone order. Files are
// grouped by the table columns they hold, one plan per group, because a plan reads
// the same columns from every file.
func planTasks(ctx context.Context, store storage.Store, l *source.Listing, footers []*parquet.File, firstZone []int, rec *stats.Record) ([]task, error) {
	type group struct {
		cols  []int
		files []int
	}
	groups := map[string]*group{}
	var order []string
	for fi := range l.Files {
		key, present := presentColumns(l, footers[fi], fi)
		g := groups[key]
		if g == nil {
			g = &group{cols: present}
			groups[key] = g
			order = append(order, key)
		}
		g.files = append(g.files, fi)
	}
	var tasks []task
	for _, key := range order {
		g := groups[key]
		sub := *l
		sub.Files = make([]source.FileRef, len(g.files))
		names := make([]string, len(g.cols))
		for k, fi := range g.files {
			sub.Files[k] = l.Files[fi]
		}
		for k, i := range g.cols {
			names[k] = l.Schema.Field(i).Name
		}
		plan, err := sub.Plan(ctx, store, source.ScanSpec{Columns: names}, nil)
		if err != nil {
			return nil, err
		}
		for _, m := range plan.Morsels {
			fi := g.files[m.File]
			z := firstZone[fi] + m.RowGroup
			if z >= firstZone[fi+1] || rec.Zones[z].Rows != plan.Live(m) {
				return nil, errs.New(errs.Internal, "BUG: row group %d of %q is not in the record", m.RowGroup, l.Files[fi].Info.Path)
			}
			tasks = append(tasks, task{zone: z, path: l.Files[fi].Info.Path, plan: plan, morsel: m, cols: g.cols})
		}
	}
	if len(tasks) != len(rec.Zones) {
		return nil, errs.New(errs.Internal, "BUG: %d row groups to read of %q for %d zones", len(tasks), l.Location, len(rec.Zones))
	}
	sort.Slice(tasks, func(a, b int) bool { return tasks[a].zone < tasks[b].zone })
	return tasks, nil
}

// pass is one run of Full.
type pass struct {
	location string
	cols     []column
	tasks    []task
	opt      Options
	next     atomic.Int64 // next task to claim
	mem      budget
	sink     sink
	zr       zoneReader

	// zones[z] and zoneRows[z] are written by the one worker that reads zone z and
	// read after every worker has finished.
	zones    [][]stats.ZoneColumn
	zoneRows []int64

	progressMu sync.Mutex
	done       int64
	total      int64
}

// budget counts the bytes the pass holds against the memory limit.
type budget struct {
	limit int64
	held  atomic.Int64
}

func (b *budget) take(n int64, location string) error {
	if n <= 0 {
		b.held.Add(n)
		return nil
	}
	if h := b.held.Add(n); b.limit > 0 && h > b.limit {
		b.held.Add(-n)
		return errs.New(errs.ResourceExhausted, "profiling %q needs more than its memory limit of %d bytes (%d held, %d more asked)", location, b.limit, h-n, n)
	}
	return nil
}

func (b *budget) give(n int64) { b.held.Add(-n) }

func (p *pass) progress(rows int64) {
	if p.opt.Progress == nil {
		return
	}
	p.progressMu.Lock()
	defer p.progressMu.Unlock()
	p.done += rows
	p.opt.Progress(p.done, p.total)
}

// work claims tasks in zone order until none is left.
func (p *pass) work(ctx context.Context) error {
	var hashes []uint64
	for {
		i := int(p.next.Add(1)) - 1
		if i >= len(p.tasks) {
			return nil
		}
		if err := p.sink.wait(ctx, i); err != nil {
			return err
		}
		t := &p.tasks[i]
		res, held, err := p.zr.readZone(ctx, t, &hashes)
		if err != nil {
			return err
		}
		z := zoneSketches{hll: make([]*stats.HLL, len(res.Columns)), kll: make([]*stats.KLL, len(res.Columns)), held: held}
		cols := make([]stats.ZoneColumn, len(res.Columns))
		for c := range res.Columns {
			cols[c] = res.Columns[c].Zone
			z.hll[c], z.kll[c] = res.Columns[c].HLL, res.Columns[c].KLL
		}
		p.zones[t.zone], p.zoneRows[t.zone] = cols, res.Rows
		p.sink.put(i, z)
	}
}

// colState is one column's partial states over the zone being read.
type colState struct {
	min, max, count, sum agg.Accumulator
	sumFailed            bool // SUM overflowed: the zone records no sum
	hll                  *stats.HLL
	kll                  *stats.KLL
}

func newColState(c *column) (colState, error) {
	var s colState
	var err error
	newAcc := func(name string) agg.Accumulator {
		if err != nil {
			return nil
		}
		var a agg.Accumulator
		a, err = agg.New(agg.Spec{Name: name, ArgType: c.dt})
		return a
	}
	s.count = newAcc("count")
	if c.minMax {
		s.min, s.max = newAcc("min"), newAcc("max")
	}
	if c.sum {
		s.sum = newAcc("sum")
	}
	if c.hll {
		s.hll = stats.NewHLL()
	}
	if c.kll {
		s.kll = stats.NewKLL()
	}
	return s, err
}

func (s *colState) memory() int64 {
	n := s.count.MemoryUsage()
	for _, a := range []agg.Accumulator{s.min, s.max, s.sum} {
		if a != nil {
			n += a.MemoryUsage()
		}
	}
	if s.hll != nil {
		n += hllBytes
	}
	if s.kll != nil {
		n += kllBytes
	}
	return n
}

// sketchMemory is what a zone's sketches hold until they are folded into the table's.
func (s *colState) sketchMemory() int64 {
	var n int64
	if s.hll != nil {
		n += hllBytes
	}
	if s.kll != nil {
		n += kllBytes
	}
	return n
}

// update folds one batch's column into the states: the same calls a grouped scan
// makes, with every row in the zone's one group.
func (s *colState) update(c *column, arr arrow.Array, sel []int32, hashes *[]uint64) error {
	if err := s.count.Update(arr, sel, nil); err != nil {
		return err
	}
	if s.min != nil {
		if err := s.min.Update(arr, sel, nil); err != nil {
			return err
		}
		if err := s.max.Update(arr, sel, nil); err != nil {
			return err
		}
	}
	if s.sum != nil && !s.sumFailed {
		if err := s.sum.Update(arr, sel, nil); err != nil {
			if errs.CodeOf(err) != errs.Analysis {
				return err
			}
			s.sumFailed = true // overflow: this zone's sum is not recorded
		}
	}
	if s.hll != nil {
		*hashes = s.hll.AddColumn(arr, sel, *hashes)
	}
	if s.kll != nil && !s.kll.AddColumn(arr, sel) {
		return errs.New(errs.Internal, "BUG: KLL refused a column of %s", types.Name(c.dt))
	}
	return nil
}

// withoutNulls returns arr with its validity dropped and the selection of its non-NULL
// rows among sel (nil = all rows), using scratch; nil when no row is selected. Every
// state then folds only valid rows through its fast path, instead of each testing
// every row's validity again. The values under the NULL rows are never read.
func withoutNulls(arr arrow.Array, sel []int32, scratch *[]int32) (arrow.Array, []int32) {
	d := arr.Data()
	bitmap := d.Buffers()[0]
	if bitmap == nil || arr.DataType().ID() == arrow.NULL {
		if arr.NullN() == arr.Len() {
			return nil, nil
		}
		return arr, sel // no bitmap to drop
	}
	bits, off := bitmap.Bytes(), d.Offset()
	out := (*scratch)[:0]
	if sel == nil {
		for i := range arr.Len() {
			if bitutil.BitIsSet(bits, off+i) {
				out = append(out, int32(i))
			}
		}
	} else {
		for _, i := range sel {
			if bitutil.BitIsSet(bits, off+int(i)) {
				out = append(out, i)
			}
		}
	}
	*scratch = out
	if len(out) == 0 {
		return nil, nil
	}
	bufs := slices.Clone(d.Buffers())
	bufs[0] = nil
	var nd arrow.ArrayData
	// Data.Dictionary is a typed nil (never a nil interface) without a dictionary:
	// the type says whether there is one.
	if d.DataType().ID() == arrow.DICTIONARY {
		nd = array.NewDataWithDictionary(d.DataType(), d.Len(), bufs, 0, d.Offset(), d.Dictionary().(*array.Data))
	} else {
		nd = array.NewData(d.DataType(), d.Len(), bufs, d.Children(), 0, d.Offset())
	}
	defer nd.Release()
	return array.MakeFromData(nd), out
}

// zoneReader is what reading any zone of a pass needs.
type zoneReader struct {
	location string
	cols     []column
	mem      *budget
	progress func(rows int64)
}

// ZoneResult is what reading one zone learns: a profile of every table column, in
// the table's order. A column the zone's file lacks reads as NULL there.
type ZoneResult struct {
	Rows    int64
	Columns []stats.ColumnProfile
}

// readZone reads task t's zone. The sketches of the result stay held against the
// budget (held bytes) until the caller gives them back.
func (zr *zoneReader) readZone(ctx context.Context, t *task, hashes *[]uint64) (res ZoneResult, sketches int64, err error) {
	states := make([]colState, len(t.cols))
	var held int64
	for k, c := range t.cols {
		s, err := newColState(&zr.cols[c])
		if err != nil {
			return res, 0, err
		}
		states[k] = s
		held += s.memory()
	}
	if err := zr.mem.take(held, zr.location); err != nil {
		return res, 0, err
	}
	var rows int64
	var valid []int32
	err = t.plan.Read(ctx, t.morsel, func(b *vector.Batch) error {
		n := int64(b.Rows)
		if b.Sel != nil {
			n = int64(len(b.Sel))
		}
		for k, c := range t.cols {
			arr, sel := b.Cols[k], b.Sel
			if arr.NullN() > 0 {
				if arr, sel = withoutNulls(arr, sel, &valid); arr == nil {
					continue // every row NULL: nothing to fold, the count says so
				}
			}
			if err := states[k].update(&zr.cols[c], arr, sel, hashes); err != nil {
				return errs.New(errs.CodeOf(err), "cannot profile column %q of %q: %w", zr.cols[c].name, zr.location, err)
			}
		}
		rows += n
		// Accumulators keep scratch that grows with the batches: count it.
		var now int64
		for k := range states {
			now += states[k].memory()
		}
		if err := zr.mem.take(now-held, zr.location); err != nil {
			return err
		}
		held = now
		if zr.progress != nil {
			zr.progress(n)
		}
		return nil
	})
	if err != nil {
		zr.mem.give(held)
		return res, 0, err
	}
	// Equality deletes leave out rows no count foretells.
	if live := t.plan.Live(t.morsel); rows != live && !(rows < live && t.plan.Equality(t.morsel)) {
		zr.mem.give(held)
		return res, 0, errs.New(errs.CorruptSource, "cannot read row group %d of %q: read %d rows, the footer says %d",
			t.morsel.RowGroup, t.path, rows, t.morsel.Rows)
	}
	res = ZoneResult{Rows: rows, Columns: make([]stats.ColumnProfile, len(zr.cols))}
	for c := range res.Columns {
		n := rows // a column the file lacks reads as NULL
		res.Columns[c] = stats.ColumnProfile{Rows: rows, Zone: stats.ZoneColumn{NullCount: &n}}
	}
	for k, c := range t.cols {
		zc, err := states[k].finish(&zr.cols[c], rows)
		if err != nil {
			zr.mem.give(held)
			return res, 0, errs.New(errs.CodeOf(err), "cannot profile column %q of %q: %w", zr.cols[c].name, zr.location, err)
		}
		res.Columns[c].Zone = zc
		res.Columns[c].HLL, res.Columns[c].KLL = states[k].hll, states[k].kll
		sketches += states[k].sketchMemory()
	}
	// The accumulators are done with; the sketches stay held until folded in.
	zr.mem.give(held - sketches)
	return res, sketches, nil
}

// finish reads a column's zone partials out of its states.
func (s *colState) finish(c *column, rows int64) (stats.ZoneColumn, error) {
	cnt, _, err := first(s.count)
	if err != nil {
		return stats.ZoneColumn{}, err
	}
	nulls := rows - cnt.I
	zc := stats.ZoneColumn{NullCount: &nulls}
	if s.min != nil {
		lo, okLo, err := first(s.min)
		if err != nil {
			return zc, err
		}
		hi, okHi, err := first(s.max)
		if err != nil {
			return zc, err
		}
		switch {
		case !okLo || !okHi:
			// no value: no bounds
		case c.float && hi.F != hi.F:
			zc.HasNaN = true // NaN orders greatest, so the zone holds one; no bounds
		default:
			bLo, ok1 := c.codec.Encode(lo)
			bHi, ok2 := c.codec.Encode(hi)
			if ok1 && ok2 {
				zc.Min, zc.Max, zc.BoundsExact = bLo, bHi, true
			}
		}
	}
	if s.sum != nil && !s.sumFailed {
		// A failed Final is a sum past its result type: not recorded, as a failed Update.
		if v, ok, err := first(s.sum); err == nil && ok {
			if c.float {
				zc.Sum = strconv.FormatFloat(v.F, 'g', -1, 64)
			} else {
				zc.Sum = v.String()
			}
		}
	}
	return zc, nil
}

// first is the value of an accumulator's group 0; ok is false when it is NULL or the
// group was never made (no rows).
func first(a agg.Accumulator) (types.Value, bool, error) {
	arr, err := a.Final()
	if err != nil {
		return types.Value{}, false, err
	}
	if arr.Len() == 0 || arr.IsNull(0) {
		return types.Value{}, false, nil
	}
	return types.ValueAt(arr, 0), true, nil
}

// zoneSketches are one zone's sketches by table column (nil where none), waiting to
// be folded into the table's.
type zoneSketches struct {
	hll  []*stats.HLL
	kll  []*stats.KLL
	held int64
}

// sink folds zones' sketches into the table's in zone order. A worker may run at most
// window zones ahead of the first zone not folded yet, which bounds the sketches
// waiting (and the memory they hold).
type sink struct {
	p       *pass
	mu      sync.Mutex
	cond    *sync.Cond
	next    int // the next task whose sketches are folded
	window  int
	pending map[int]zoneSketches
	failed  error // the first error of any worker
	hll     []*stats.HLL
	kll     []*stats.KLL
}

func (s *sink) init(p *pass, cols []column, workers int) error {
	s.p = p
	s.cond = sync.NewCond(&s.mu)
	s.window = 2*workers + 2
	s.pending = map[int]zoneSketches{}
	s.hll = make([]*stats.HLL, len(cols))
	s.kll = make([]*stats.KLL, len(cols))
	var held int64
	for i := range cols {
		if cols[i].hll {
			s.hll[i] = stats.NewHLL()
			held += hllBytes
		}
		if cols[i].kll {
			s.kll[i] = stats.NewKLL()
			held += kllBytes
		}
	}
	return p.mem.take(held, p.location)
}

// wait blocks until task i is within the window.
func (s *sink) wait(ctx context.Context, i int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i-s.next >= s.window && s.failed == nil {
		s.cond.Wait()
	}
	if s.failed != nil {
		return s.failed
	}
	return ctx.Err()
}

// abort stops the pass: the first error is kept as its cause, and waiting workers
// return.
func (s *sink) abort(err error) {
	s.mu.Lock()
	if s.failed == nil {
		s.failed = err
	}
	s.mu.Unlock()
	s.cond.Broadcast()
}

func (s *sink) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// put hands over task i's sketches and folds every zone now in order.
func (s *sink) put(i int, z zoneSketches) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[i] = z
	for {
		z, ok := s.pending[s.next]
		if !ok {
			break
		}
		delete(s.pending, s.next)
		for c, h := range z.hll {
			if h != nil {
				s.hll[c].Merge(h)
			}
		}
		for c, k := range z.kll {
			if k != nil {
				s.kll[c].Merge(k)
			}
		}
		s.p.mem.give(z.held)
		s.next++
	}
	s.cond.Broadcast()
}

// apply writes the pass's results into rec; nothing in rec changes before every
// result is ready.
func (p *pass) apply(l *source.Listing, rec *stats.Record, firstZone []int) error {
	return apply(l, rec, firstZone, p.zones, p.zoneRows, p.sink.hll, p.sink.kll)
}

// apply writes into rec, a record of l whose file fi's zones start at firstZone[fi],
// the zone columns and rows every zone read gave (by zone) and each column's merged
// sketches (nil where the column has none): rec becomes depth full.
func apply(l *source.Listing, rec *stats.Record, firstZone []int, zoneCols [][]stats.ZoneColumn, zoneRows []int64, hll []*stats.HLL, kll []*stats.KLL) error {
	ncols := len(rec.Columns)
	distinct := make([][]byte, ncols)
	quantiles := make([][]byte, ncols)
	for c := range ncols {
		var err error
		if h := hll[c]; h != nil {
			if distinct[c], err = h.MarshalBinary(); err != nil {
				return err
			}
		}
		if k := kll[c]; k != nil {
			if quantiles[c], err = k.MarshalBinary(); err != nil {
				return err
			}
		}
	}
	zones := make([]stats.Zone, len(rec.Zones))
	files := make([][]stats.ZoneColumn, len(l.Files))
	tables := make([]stats.ZoneMerge, ncols)
	for c := range tables {
		tables[c] = stats.NewZoneMerge()
	}
	for fi := range l.Files {
		merges := make([]stats.ZoneMerge, ncols)
		for c := range merges {
			merges[c] = stats.NewZoneMerge()
		}
		for z := firstZone[fi]; z < firstZone[fi+1]; z++ {
			zones[z] = rec.Zones[z]
			zones[z].Columns = zoneCols[z]
			for c := range ncols {
				merges[c].Add(zoneCols[z][c], zoneRows[z])
				tables[c].Add(zoneCols[z][c], zoneRows[z])
			}
		}
		files[fi] = make([]stats.ZoneColumn, ncols)
		for c := range merges {
			files[fi][c] = merges[c].Result()
		}
	}
	rec.Depth = stats.DepthFull
	rec.Zones = zones
	for fi := range rec.PerFile {
		rec.PerFile[fi].Columns = files[fi]
	}
	for c := range rec.Columns {
		col := &rec.Columns[c]
		col.SetPartials(tables[c].Result())
		col.Distinct, col.Quantiles = distinct[c], quantiles[c]
	}
	return nil
}
