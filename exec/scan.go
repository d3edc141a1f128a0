package exec

import (
	"context"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// pipeline is a scan with the filters and projections above it: stateless stages
// run by every worker on the batches of the morsels it takes.
type pipeline struct {
	bd     *builder
	scan   *plan.Scan
	stats  *ScanStats
	stages []stage
	// lead is the condition of the first stage when it is a filter: the scan decodes
	// the columns its first conjunct reads first, those of each later conjunct just
	// before it runs (for the rows left), and the others only for batches with rows
	// left. leadSteps are its conjuncts' stages.
	lead      plan.Expr
	leadSteps []stage
	// bounds, when set, are filters its consumer learns as the scan runs.
	bounds *dynamicBounds
	// recycle is set by a consumer that keeps nothing of a batch once its sink
	// returns: the workers' reads then reuse all of the batches' buffers, not only
	// those the stages dropped (source.Recycler).
	recycle bool
	// compact is set by a consumer that keeps every batch, compacted: the workers
	// compact them before the sink, in parallel, and the buffers read before come
	// back to be reused rather than being kept behind a selection.
	compact bool
	// total is the rows of the scan's morsels.
	total atomic.Int64
	// filtered and kept count the rows the filters have seen and let through so far,
	// in either way of reading: the measured selectivity rowFilter weighs, and what a
	// consumer extrapolates its input from (expectRows).
	filtered, kept atomic.Int64
	// members are the Bloom filters of the build keys of the hash joins this
	// pipeline's rows go through (the join it probes and the joins above it in a
	// chain whose keys are its columns).
	members []*keyFilter
	// deferred are the evaluators of the scan's deferred predicates' values.
	deferred []evaluator
	// extra are pruning predicates learnt before the scan starts (the range of the
	// build keys of the hash join this pipeline probes).
	extra []source.Predicate
	// after are the scan columns the stages after the lead filter read, up to the
	// first projection; projected is set once a projection has fixed the columns the
	// pipeline hands on. consumed, when set, are the columns its consumer reads of a
	// pipeline with no projection. A morsel whose statistics prove some of the lead's
	// conjuncts true reads only these and the other conjuncts' columns (implied.go).
	after     map[int]bool
	projected bool
	consumed  map[int]bool
	// implied holds the ways of reading morsels whose statistics prove some of the
	// lead's conjuncts, by the set of conjuncts proved.
	implied impliedPlans
}

// dynamicBound is a filter learnt while a scan runs — the worst key a top-N keeps,
// the least value a MIN has seen — that a row must pass to matter: scan column col op
// value. Until a value is set it filters nothing.
type dynamicBound struct {
	col   int
	op    string // "<", "<=", ">" or ">="
	value atomic.Pointer[types.Value]
}

// tighten sets the bound to v if v is stricter than the value it holds.
func (d *dynamicBound) tighten(v types.Value) {
	for {
		old := d.value.Load()
		if old != nil {
			c := types.Compare(v, *old)
			if (d.op[0] == '<' && c >= 0) || (d.op[0] == '>' && c <= 0) {
				return
			}
		}
		if d.value.CompareAndSwap(old, &v) {
			return
		}
	}
}

// dynamicBounds are the bounds a consumer passes to its scan. A row group is skipped
// when every bound rules it out by its statistics (no bound could gain from it). With
// rows set there is one bound and it is also a filter on rows, tested on its column
// before the others are decoded.
type dynamicBounds struct {
	list []*dynamicBound
	rows bool
}

// pipelineOf returns the pipeline n forms when n is a scan, or a filter or projection
// over one.
func (bd *builder) pipelineOf(n plan.Node) (*pipeline, bool, error) {
	switch x := n.(type) {
	case *plan.Scan:
		st := &ScanStats{Node: x}
		st.Counters.Limit = bd.env.RowLimit
		bd.env.Scans = append(bd.env.Scans, st)
		if bd.env.OnScan != nil {
			bd.env.OnScan(st)
		}
		p := &pipeline{bd: bd, scan: x, stats: st, after: map[int]bool{}}
		for _, d := range x.Deferred {
			ev, err := bd.compile(d.Value)
			if err != nil {
				return nil, false, err
			}
			p.deferred = append(p.deferred, ev)
		}
		return p, true, nil
	case *plan.Filter:
		p, ok, err := bd.pipelineOf(x.Input)
		if !ok || err != nil {
			return nil, false, err
		}
		steps, err := bd.conjunctSteps(x.Cond)
		if err != nil {
			return nil, false, err
		}
		if len(p.stages) == 0 {
			p.lead, p.leadSteps = x.Cond, steps
		} else if !p.projected {
			plan.ColumnsUsed(x.Cond, p.after)
		}
		p.stages = append(p.stages, stepsStage(steps))
		return p, true, nil
	case *plan.Project:
		p, ok, err := bd.pipelineOf(x.Input)
		if !ok || err != nil {
			return nil, false, err
		}
		st, err := bd.projectStage(x.Exprs)
		if err != nil {
			return nil, false, err
		}
		if !p.projected {
			for _, e := range x.Exprs {
				plan.ColumnsUsed(e, p.after)
			}
			p.projected = true
		}
		p.stages = append(p.stages, st)
		return p, true, nil
	}
	return nil, false, nil
}

// run reads every morsel on the env's workers, applies the stages and hands each
// non-empty batch to sink with the worker's number. It returns the first error.
func (p *pipeline) run(ctx context.Context, sink func(worker int, b *vector.Batch) error) error {
	names, pos := scanColumns(p.scan)
	filters, err := p.filters(ctx)
	if err != nil {
		return err
	}
	sp, err := planScan(ctx, p.bd.env, p.scan, names, filters, &p.stats.Counters)
	if err != nil {
		return err
	}
	if sp.Morsels, err = p.divide(ctx, sp); err != nil {
		return err
	}
	p.order(sp)
	for _, m := range sp.Morsels {
		p.total.Add(m.Rows)
	}
	base := p.readPlan(pos, len(names), 0, nil)
	if p.bd.env.LateMaterialisation == "never" {
		base = readPlan{}
	}
	// A morsel read with the row filter has batch run the lead filter; one read
	// whole runs every stage.
	lateStages := p.stages
	if base.early != nil && p.lead != nil {
		lateStages = lateStages[1:]
	}
	p.implied.init(p, pos, len(names))
	workers := max(1, min(p.bd.env.Threads, len(sp.Morsels)))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	fail := func(err error) {
		once.Do(func() { firstErr = err; cancel() })
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		// The worker's reads reuse the buffers of the batches before: the columns its
		// filters and projections dropped, and with a consumer that keeps nothing of
		// a batch, all of them.
		rc := &source.Recycler{}
		// A worker's panic fails the statement like any error (errs.Safe).
		work := errs.Safe(func() error {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(sp.Morsels) || ctx.Err() != nil {
					return nil
				}
				if p.excluded(sp, sp.Morsels[i]) {
					p.stats.Counters.RowGroupsPruned.Add(1)
					continue
				}
				if sp.BloomExcludes(ctx, sp.Morsels[i]) {
					continue // counted by the plan, once per row group
				}
				// What an object store's read fetches ahead is held from the budget;
				// when the budget cannot hold it, the morsel is read piece by piece.
				mctx, held := ctx, sp.FetchBytes(sp.Morsels[i])
				if err := p.bd.env.Budget.Reserve(held); err != nil {
					mctx, held = storage.NoPrefetch(ctx), 0
				}
				mctx = source.WithRecycler(mctx, rc)
				rp, stages, ok := p.implied.plan(sp, sp.Morsels[i])
				switch {
				case ok:
					if sp.Morsels[i].Whole() {
						p.stats.Counters.RowGroupsFilterProved.Add(1)
					}
				case p.rowFilter(sp, sp.Morsels[i], base.early):
					rp, stages = base, lateStages
				default:
					rp, stages = readPlan{}, p.stages
				}
				early := rp.early
				c := &p.stats.Counters
				err := sp.ReadLate(mctx, sp.Morsels[i], early, func(rb *vector.Batch, late source.Late) error {
					// What the stages hand on may be kept by the sink; nothing else of
					// the batch outlives them. hand is set once the buffers not handed
					// on are back; otherwise (no rows left, an error, or a consumer that
					// keeps nothing) every buffer comes back once the batch is done.
					hand := false
					defer func() {
						if !hand {
							rc.Recycle(nil)
						}
					}()
					// A row group is many batches: a canceled statement stops between them,
					// and a short statement waiting for a processor (an answer from
					// statistics beside long scans) gets one, rather than a time slice later.
					if err := ctx.Err(); err != nil {
						return err
					}
					runtime.Gosched()
					// Selection vectors and the arrays the stages build are lent too:
					// what is handed on is kept below, the rest comes back.
					sctx := lendSelections(ctx, rc)
					b, err := p.batch(sctx, rb, pos, rp, late)
					if early != nil {
						c.RowFilterRowsExamined.Add(int64(rb.Len()))
						if b != nil {
							c.RowFilterRowsAdmitted.Add(int64(b.Len()))
						}
					}
					if err != nil || b == nil {
						if err == nil {
							p.filtered.Add(int64(rb.Len()))
						}
						return err
					}
					in := rb.Len()
					if b, err = runStages(sctx, stages, b); err != nil {
						return err
					}
					p.filtered.Add(int64(in))
					if b != nil {
						p.kept.Add(int64(b.Len()))
					}
					if b == nil {
						return nil
					}
					failPoint(PointScanWorker)
					if !p.recycle {
						if p.compact {
							b = p.consumedOnly(b).Compact()
						}
						// Before the sink: the batch may go on to another goroutine, which
						// may change it.
						rc.RecycleBatch(b.Cols, b.Sel)
						hand = true
					}
					return sink(w, b)
				})
				p.bd.env.Budget.Release(held)
				if err != nil {
					return err
				}
			}
		})
		go func() {
			defer wg.Done()
			if err := work(); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// LateRatio is the rule of late materialisation "auto" (SPEC §8): a row group is read
// with the row filter when the rest of the projection holds at least this many times
// the compressed bytes of the filter's columns — below it, the filter saves too
// little decoding to pay for the second pass over the row group.
const LateRatio = 4

// rowFilter reports whether morsel m is read with the row filter: there are early
// columns (a filter to run first), and the setting forces it or the rule admits it.
func (p *pipeline) rowFilter(sp *source.ScanPlan, m source.Morsel, early []bool) bool {
	if early == nil {
		return false
	}
	switch p.bd.env.LateMaterialisation {
	case "always":
		return true
	case "never":
		return false
	}
	e, l := sp.SplitBytes(m, early)
	if l >= LateRatio*e {
		return true
	}
	// Once the filters have seen a batch's worth of rows, what they keep says what the
	// row filter saves: the rest of the projection's rows they drop. It is worth a
	// second pass when that is at least a LateRatio-th of the filter's columns (a point
	// lookup drops nearly every row, so it reads late whatever its columns' sizes).
	seen := p.filtered.Load()
	if seen < int64(vector.BatchSize) {
		return false
	}
	dropped := 1 - float64(p.kept.Load())/float64(seen)
	return float64(l)*dropped*LateRatio >= float64(e)
}

// scanColumns returns the names of the columns scan reads, and for each scan column
// its position among them, or -1 when the statement needs it not.
func scanColumns(scan *plan.Scan) (names []string, pos []int) {
	pos = make([]int, len(scan.Cols))
	for i := range scan.Cols {
		pos[i] = -1
		if scan.Required == nil || scan.Required[i] {
			pos[i] = len(names)
			names = append(names, scan.Ref.Listing.Schema.Field(i).Name)
		}
	}
	return names, pos
}

// planScan lists what scan reads of columns names under filters: the listing's
// files and row groups that pruning leaves, less the zones the zone planner settled
// from statistics. It counts what it skipped into c; it reads footers, never data.
func planScan(ctx context.Context, env *Env, scan *plan.Scan, names []string, filters []source.Predicate, c *source.Counters) (*source.ScanPlan, error) {
	store := env.Store
	if scan.Ref.Store != nil {
		store = scan.Ref.Store // the table's own storage options
	}
	spec := source.ScanSpec{Columns: names, Filters: filters}
	if ref := scan.Ref; len(filters) > 0 && !env.IgnoreStatistics && ref.Stats != nil {
		// The record's per-file bounds rule files out before their footers are read:
		// all of them when the record is current (found by the catalog's bounds
		// index where it answers the filters), else those of the files it measured
		// that have not changed since.
		if stats.Current(ref.Stats, ref.Version, ref.Rows) {
			spec.Known, spec.Excluded = ref.Stats.IndexedFileMetas(ctx, ref.Listing, filters, ref.Bounds)
		} else {
			cols := make([]string, len(filters))
			for i, f := range filters {
				cols[i] = f.Column
			}
			spec.Known = ref.Stats.UnchangedFileMetas(ref.Listing, cols)
		}
	}
	sp, err := scan.Ref.Listing.Plan(ctx, store, spec, c)
	if err != nil {
		return nil, err
	}
	if z := scan.Zones; z != nil {
		// Zones the planner settled from statistics are not read.
		kept := sp.Morsels[:0:0]
		for _, m := range sp.Morsels {
			none, answered := z.Settled(m.File, m.RowGroup)
			switch {
			case none:
				c.RowGroupsPruned.Add(1)
			case answered:
				c.RowGroupsAnswered.Add(1)
			default:
				kept = append(kept, m)
			}
		}
		sp.Morsels = kept
	}
	return sp, nil
}

// filters returns the scan's pruning predicates: its Filters, and its deferred
// predicates with their values computed now. A deferred value that is NULL prunes
// nothing here (the filter above the scan keeps no row then anyway).
func (p *pipeline) filters(ctx context.Context) ([]source.Predicate, error) {
	if len(p.deferred) == 0 && len(p.extra) == 0 {
		return p.scan.Filters, nil
	}
	out := append(append([]source.Predicate(nil), p.scan.Filters...), p.extra...)
	one := &vector.Batch{Rows: 1}
	for i, ev := range p.deferred {
		arr, err := ev(ctx, one)
		if err != nil {
			return nil, err
		}
		if arr.Len() < 1 || arr.IsNull(0) {
			continue
		}
		d := p.scan.Deferred[i]
		out = append(out, source.Predicate{Column: d.Column, Op: d.Op, Values: []types.Value{types.ValueAt(arr, 0)}})
	}
	return out, nil
}

// divide cuts morsels into ranges of rows (source.ScanPlan.Divide, which keeps a
// morsel whole where reading it in parts costs more than it saves) so that no worker
// is left reading alone at the end of the scan. With fewer morsels than workers (a
// filter that leaves one row group), each is cut into enough parts for every worker.
// With more, the last morsels — one per worker — are each cut in two: the workers
// take the morsels in order, and the last ones are what one worker reads while the
// others have run out (a file of a 122,880-row and a 27,120-row group kept one worker
// on the larger while the other idled). A part re-reads its row group's chunks, and
// decompresses a page the cut falls in on both sides (the parts of a local row group
// of one-page chunks decompress each page once between them instead: see
// source.ScanPlan.Divide): free of fetches on local disk, where the page cache
// serves the second read, but a second fetch from an object store, so there only
// the first rule applies.
func (p *pipeline) divide(ctx context.Context, sp *source.ScanPlan) ([]source.Morsel, error) {
	threads := p.bd.env.Threads
	n := len(sp.Morsels)
	if n == 0 || threads <= 1 {
		return sp.Morsels, nil
	}
	parts, from := 2, n-threads
	if n < threads {
		// As many parts as workers: each boundary between parts costs the pages it
		// cuts through, decompressed on both sides.
		parts, from = (threads+n-1)/n, 0
	}
	out := append([]source.Morsel(nil), sp.Morsels[:from]...)
	for _, m := range sp.Morsels[from:] {
		if m.Rows < 4*vector.BatchSize || (n >= threads && sp.FetchBytes(m) > 0) {
			out = append(out, m)
			continue
		}
		ms, err := sp.Divide(ctx, m, parts, vector.BatchSize)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return out, nil
}

// order puts first the morsels most likely to tighten the dynamic bounds, by their
// row groups' statistics, so that the bounds exclude the most of the rest: for each
// bound, the morsel with the least minimum (for "<") or the greatest maximum (for
// ">"); with one bound, every morsel in that order.
func (p *pipeline) order(sp *source.ScanPlan) {
	if p.bounds == nil || len(sp.Morsels) < 2 {
		return
	}
	// promise[k][i] is how good morsel i is for bound k, read once from its
	// statistics: the minimum for "<", the maximum for ">".
	type promise struct {
		v  types.Value
		ok bool
	}
	promises := make([][]promise, len(p.bounds.list))
	for k, b := range p.bounds.list {
		name := p.scan.Ref.Listing.Schema.Field(b.col).Name
		promises[k] = make([]promise, len(sp.Morsels))
		for i, m := range sp.Morsels {
			if cs, ok := sp.Stats(m, name); ok && cs.HasMinMax {
				v := cs.Max
				if b.op[0] == '<' {
					v = cs.Min
				}
				promises[k][i] = promise{v, true}
			}
		}
	}
	// better reports whether morsel i promises more than morsel j for bound k.
	better := func(k, i, j int) bool {
		x, y := promises[k][i], promises[k][j]
		if !x.ok || !y.ok {
			return x.ok && !y.ok
		}
		c := types.Compare(x.v, y.v)
		if p.bounds.list[k].op[0] == '<' {
			return c < 0
		}
		return c > 0
	}
	order := make([]int, len(sp.Morsels))
	for i := range order {
		order[i] = i
	}
	if len(p.bounds.list) == 1 {
		sort.SliceStable(order, func(a, b int) bool { return better(0, order[a], order[b]) })
	} else {
		for k := range p.bounds.list {
			if k >= len(order) {
				break
			}
			best := k
			for i := k + 1; i < len(order); i++ {
				if better(k, order[i], order[best]) {
					best = i
				}
			}
			m := order[best]
			copy(order[k+1:best+1], order[k:best])
			order[k] = m
		}
	}
	morsels := make([]source.Morsel, len(order))
	for i, k := range order {
		morsels[i] = sp.Morsels[k]
	}
	sp.Morsels = morsels
}

// excluded reports whether the dynamic bounds, as they stand, rule out morsel m by
// its row group's statistics.
func (p *pipeline) excluded(sp *source.ScanPlan, m source.Morsel) bool {
	if p.bounds == nil {
		return false
	}
	for _, b := range p.bounds.list {
		v := b.value.Load()
		if v == nil {
			return false
		}
		name := p.scan.Ref.Listing.Schema.Field(b.col).Name
		if !sp.Excludes(m, source.Predicate{Column: name, Op: b.op, Values: []types.Value{*v}}) {
			return false
		}
	}
	return true
}

// rowBound is the bound rows are filtered by, or nil.
func (p *pipeline) rowBound() *dynamicBound {
	if p.bounds == nil || !p.bounds.rows {
		return nil
	}
	return p.bounds.list[0]
}

// readPlan is how a morsel is read with the row filter: the spec columns decoded
// first (early; nil: every column, the morsel read whole), the scan columns decoded
// just before each step of the lead filter runs, for the rows the steps before it
// kept (waves), the steps, and the spec columns decoded once the steps are done
// (rest; nil: every one not decoded yet).
type readPlan struct {
	early []bool
	waves [][]int
	steps []stage
	rest  []int
}

// readPlan returns the way of reading the n columns of a morsel with the row filter
// when the conjuncts of the lead filter in skip (bit i for conjunct i) are known to
// hold on every row of it: decoded first are the columns the first conjunct left
// runs on, the dynamic bound and the join's key filter use; each later conjunct's
// columns just before it. With skip empty, the plan is nil (read whole) when those
// are none of the columns or all of them. With needed set (the scan columns the
// stages after the lead and the consumer read), the columns decoded last are those
// alone: a column only the skipped conjuncts read is not decoded.
func (p *pipeline) readPlan(pos []int, n int, skip uint64, needed map[int]bool) readPlan {
	used := map[int]bool{}
	if b := p.rowBound(); b != nil {
		used[b.col] = true
	}
	for _, m := range p.members {
		for _, c := range m.cols {
			used[c] = true
		}
	}
	var conjuncts []plan.Expr
	var steps []stage
	if p.lead != nil {
		for i, cj := range plan.Conjuncts(p.lead) {
			if i < 64 && skip&(1<<i) != 0 {
				continue
			}
			conjuncts = append(conjuncts, cj)
			steps = append(steps, p.leadSteps[i])
		}
	}
	waves := make([][]int, len(conjuncts))
	all := map[int]bool{}
	for c := range used {
		all[c] = true
	}
	for i, cj := range conjuncts {
		cols := map[int]bool{}
		plan.ColumnsUsed(cj, cols)
		for c := range cols {
			if all[c] || c >= len(pos) || pos[c] < 0 {
				continue
			}
			all[c] = true
			if i == 0 {
				used[c] = true
			} else {
				waves[i] = append(waves[i], c)
			}
		}
		sort.Ints(waves[i])
	}
	early := make([]bool, n)
	k := 0
	for c := range used {
		if c < len(pos) && pos[c] >= 0 && !early[pos[c]] {
			early[pos[c]] = true
			k++
		}
	}
	if skip == 0 && (k == n || k == 0) {
		return readPlan{}
	}
	rp := readPlan{early: early, waves: waves, steps: steps}
	if needed != nil {
		rp.rest = []int{}
		for c, k := range pos {
			if k >= 0 && needed[c] && !all[c] {
				rp.rest = append(rp.rest, k)
			}
		}
	}
	return rp
}

// positions holds 0, 1, … : the column that carries each row's place in its batch
// through the early filters. It is made on first use, not while every process
// starts.
var positions = sync.OnceValue(func() *array.Int32 {
	v := make([]int32, vector.BatchSize)
	for i := range v {
		v[i] = int32(i)
	}
	return array.NewInt32Data(array.NewData(arrow.PrimitiveTypes.Int32, len(v),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(v))}, nil, 0, 0))
})

// batch arranges a batch read from the source in the scan's column order. With early
// columns, it runs the dynamic bound, the join's key filter and the lead filter on
// them first — each conjunct of the filter after its columns are decoded — and
// returns nil when no row is left; otherwise it decodes the late columns and returns
// every column with the rows left selected (fewer rows than were read when the
// filters compacted them).
func (p *pipeline) batch(ctx context.Context, rb *vector.Batch, pos []int, rp readPlan, late source.Late) (*vector.Batch, error) {
	arrange := func(extra int) []arrow.Array {
		cols := make([]arrow.Array, len(pos), len(pos)+extra)
		for c, k := range pos {
			if k >= 0 {
				cols[c] = rb.Cols[k]
			}
		}
		return cols
	}
	if rp.early == nil {
		// Every column is read at once; the dynamic filters still go first.
		return p.dynamicFilters(ctx, &vector.Batch{Cols: arrange(0), Rows: rb.Rows, Sel: rb.Sel})
	}
	if rb.Rows > positions().Len() {
		return nil, errs.New(errs.Internal, "BUG: a batch of %d rows", rb.Rows)
	}
	cols := append(arrange(1), array.NewSlice(positions(), 0, int64(rb.Rows)))
	fb, err := p.dynamicFilters(ctx, &vector.Batch{Cols: cols, Rows: rb.Rows, Sel: rb.Sel})
	if err != nil || fb == nil {
		return nil, err
	}
	// Columns decoded after a filter hold the rows of fb: when the filters have
	// compacted it (and the positions with it), the rows at its positions alone;
	// otherwise every row, with values for those fb selects.
	decode := func(which []int) error {
		if fb.Rows != rb.Rows {
			return late(which, fb.Cols[len(pos)].(*array.Int32).Int32Values(), true)
		}
		return late(which, fb.Sel, false)
	}
	for i, step := range rp.steps {
		if wave := rp.waves[i]; len(wave) > 0 {
			which := make([]int, len(wave))
			for j, c := range wave {
				which[j] = pos[c]
			}
			if err := decode(which); err != nil {
				return nil, err
			}
			for _, c := range wave {
				if fb.Cols[c] == nil { // a partition column was there from the start
					fb.Cols[c] = rb.Cols[pos[c]]
				}
			}
		}
		var err error
		if fb, err = step(ctx, fb); err != nil || fb.Len() == 0 {
			return nil, err
		}
	}
	if err := decode(rp.rest); err != nil {
		return nil, err
	}
	out := make([]arrow.Array, len(pos))
	for c, k := range pos {
		switch {
		case k < 0:
		case fb.Cols[c] != nil:
			out[c] = fb.Cols[c]
		default:
			out[c] = rb.Cols[k]
		}
	}
	return &vector.Batch{Cols: out, Rows: fb.Rows, Sel: fb.Sel}, nil
}

// dynamicFilters keeps the rows of b (in the scan's column order) that pass the
// dynamic bound and the join's key filter, or returns nil when none does.
func (p *pipeline) dynamicFilters(ctx context.Context, b *vector.Batch) (*vector.Batch, error) {
	if d := p.rowBound(); d != nil {
		if v := d.value.Load(); v != nil {
			var err error
			if b, err = selectCompare(ctx, b, d.col, d.op, *v); err != nil || b.Len() == 0 {
				return nil, err
			}
		}
	}
	for _, m := range p.members {
		keys := make([]arrow.Array, len(m.cols))
		for i, c := range m.cols {
			keys[i] = b.Cols[c]
		}
		if sel, ok := m.selectRows(keys, b.Sel, b.Rows, lentSelection(ctx, b.Len())); ok {
			if len(sel) == 0 {
				return nil, nil
			}
			b = &vector.Batch{Cols: b.Cols, Rows: b.Rows, Sel: sel}
		}
	}
	return b, nil
}

// runStages applies stages to b in order; it returns nil when no row is left.
func runStages(ctx context.Context, stages []stage, b *vector.Batch) (*vector.Batch, error) {
	for _, st := range stages {
		var err error
		if b, err = st(ctx, b); err != nil {
			return nil, err
		}
		if b.Len() == 0 {
			return nil, nil
		}
	}
	return b, nil
}

// operator runs the pipeline in the background and returns its batches in the
// order the workers produce them.
func (p *pipeline) operator() Operator { return &pipelineOp{p: p} }

// expectRows is how many rows the pipeline will hand on in all, extrapolated from
// the share of its rows read so far that were handed on; ok is false until at
// least min rows were read.
func (p *pipeline) expectRows(min int64) (rows int64, ok bool) {
	seen := p.filtered.Load()
	if seen < min || seen == 0 {
		return 0, false
	}
	return int64(float64(p.total.Load()) * float64(p.kept.Load()) / float64(seen)), true
}

type pipelineOp struct {
	p       *pipeline
	started bool
	ch      chan *vector.Batch
	errc    chan error
	cancel  context.CancelFunc
	done    bool
}

func (o *pipelineOp) Next(ctx context.Context) (*vector.Batch, error) {
	if o.done {
		return nil, nil
	}
	if !o.started {
		o.started = true
		rctx, cancel := context.WithCancel(ctx)
		o.cancel = cancel
		o.ch = make(chan *vector.Batch, 2*max(1, o.p.bd.env.Threads))
		o.errc = make(chan error, 1)
		run := errs.Safe(func() error {
			return o.p.run(rctx, func(_ int, b *vector.Batch) error {
				select {
				case o.ch <- b:
					return nil
				case <-rctx.Done():
					return rctx.Err()
				}
			})
		})
		go func() {
			o.errc <- run()
			close(o.ch)
		}()
	}
	select {
	case b, ok := <-o.ch:
		if ok {
			return b, nil
		}
		o.done = true
		if err := <-o.errc; err != nil {
			return nil, err
		}
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (o *pipelineOp) Close() {
	if o.started && !o.done {
		o.cancel()
		for range o.ch {
		}
		<-o.errc
		o.done = true
	}
}

// lentSelectionsKey marks the context of a scan worker's stages: their selection
// vectors and the arrays they build are lent by the worker's Recycler, and come back
// with the batch's buffers unless handed on (the batch's columns and selection,
// when its consumer may keep them; nothing, when it keeps nothing once its sink has
// returned). Without it a selection vector is the batch's to keep.
type lentSelectionsKey struct{}

func lendSelections(ctx context.Context, rc *source.Recycler) context.Context {
	return context.WithValue(ctx, lentSelectionsKey{}, rc)
}

// lender is the Recycler ctx lends from (see lentSelectionsKey), or nil.
func lender(ctx context.Context) *source.Recycler {
	rc, _ := ctx.Value(lentSelectionsKey{}).(*source.Recycler)
	return rc
}

// lentSelection lends room for a selection of n rows, or returns nil where ctx lends
// none.
func lentSelection(ctx context.Context, n int) []int32 {
	if rc := lender(ctx); rc != nil {
		return rc.Selection(n)
	}
	return nil
}

// consumedOnly returns b without the columns its consumer does not read, when it
// said which it reads (consumed).
func (p *pipeline) consumedOnly(b *vector.Batch) *vector.Batch {
	if p.consumed == nil {
		return b
	}
	cols := make([]arrow.Array, len(b.Cols))
	for c := range p.consumed {
		if c < len(cols) {
			cols[c] = b.Cols[c]
		}
	}
	return &vector.Batch{Cols: cols, Rows: b.Rows, Sel: b.Sel}
}

// lentBytes is where ctx lends buffers for the arrays a scan worker's stages build
// from a batch, or nil where it lends none.
func lentBytes(ctx context.Context) func(n int) []byte {
	if rc := lender(ctx); rc != nil {
		return rc.Bytes
	}
	return nil
}

// selection returns room for a selection of n rows: lent (see lentSelection) or new.
func selection(ctx context.Context, n int) []int32 {
	if s := lentSelection(ctx, n); s != nil {
		return s
	}
	return make([]int32, n)
}
