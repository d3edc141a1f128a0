package exec

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// aggState is one worker's partial aggregation: a key table (when grouping) and one
// accumulator per aggregate. Partial states of workers merge with Merge.
type aggState struct {
	keys   *kernels.KeyTable
	accs   []agg.Accumulator
	groups int
	ids    []uint32
	filter *kernels.KeyTable // a reader of the aggregate's keyFilter
	kids   []uint32
	// oneGroup counts the accumulators that fold one group's rows faster
	// (agg.OneGroup); byGroup holds a batch's rows sorted by group for them.
	oneGroup int
	byGroup  []int32
	// fsel and fids hold the rows, and their groups, that pass a FILTER.
	fsel []int32
	fids []uint32
}

type hashAggregate struct {
	bd   *builder
	node *plan.Aggregate
	// exprs are the group keys, then the arguments and FILTER conditions; argAt[i]
	// is aggregate i's argument in it, or -1, and filterAt[i] its condition, or -1.
	exprs    *exprList
	argAt    []int
	filterAt []int
	// moreAt[i] are the further inputs of aggregate i, after its argument.
	moreAt   [][]int
	specs    []agg.Spec
	keyTypes []arrow.DataType
	res      reservation
	out      []*vector.Batch
	// parts are merged partitions not yet emitted: each is turned into batches
	// when the ones before it are handed on, and let go.
	parts   []*aggState
	started bool
	mu      sync.Mutex
	// keyFilter, when set (by a join that probes this aggregate's groups, see
	// hashJoin.filterProbeAggregate), holds the only keys whose groups matter: rows
	// whose group columns filterCols are not among them are skipped.
	keyFilter  *kernels.KeyTable
	filterCols []int
	// filterRes holds the memory of the filter the keys give the scan under the
	// input (narrowInput).
	filterRes reservation
	// computed: a group key or argument is more than a column.
	computed bool
	// spilling, once the groups outgrew the budget, takes the rest of the input
	// (aggregate_spill.go); frozen are the states that take no new group, and
	// tasks what is left to do to finish.
	spilling atomic.Pointer[aggSpill]
	frozen   []*frozenState
	tasks    []aggTask
	// radix is whether the workers' groups are partitioned (aggregate_radix.go).
	radix atomic.Int32
	// keep, set by Partial, makes finish keep the merged state in kept rather than
	// finish it into rows.
	keep bool
	kept *aggState
}

func (bd *builder) buildAggregate(x *plan.Aggregate) (Operator, error) {
	h := &hashAggregate{bd: bd, node: x, res: reservation{budget: bd.env.Budget}, filterRes: reservation{budget: bd.env.Budget}}
	// The keys, then the arguments (COUNT(*) has none), in one list: what they
	// compute in common is computed once.
	exprs := make([]plan.Expr, 0, len(x.Groups)+len(x.Aggs))
	for _, g := range x.Groups {
		if !kernels.ValidKeyType(g.Type()) {
			return nil, errs.New(errs.Analysis, "cannot group by a value of type %s", g.Type())
		}
		exprs = append(exprs, g)
		h.keyTypes = append(h.keyTypes, g.Type())
		h.noteInput(g)
	}
	for i := range x.Aggs {
		a := &x.Aggs[i]
		h.argAt = append(h.argAt, -1)
		if a.Arg != nil {
			h.argAt[i] = len(exprs)
			exprs = append(exprs, a.Arg)
			h.noteInput(a.Arg)
		}
		// The further inputs of an aggregate of several (agg.MultiArg).
		var more []int
		for _, e := range a.Inputs()[min(1, len(a.Inputs())):] {
			more = append(more, len(exprs))
			exprs = append(exprs, e)
			h.noteInput(e)
		}
		h.moreAt = append(h.moreAt, more)
		h.filterAt = append(h.filterAt, -1)
		if a.Filter != nil {
			h.filterAt[i] = len(exprs)
			exprs = append(exprs, a.Filter)
			h.computed = true
		}
		h.specs = append(h.specs, a.Spec())
	}
	var err error
	if h.exprs, err = bd.compileList(exprs); err != nil {
		return nil, err
	}
	return h, nil
}

// noteInput records whether a group key or argument e is computed.
func (h *hashAggregate) noteInput(e plan.Expr) {
	if _, ok := e.(*plan.ColRef); !ok {
		h.computed = true
	}
}

func (h *hashAggregate) newState() (*aggState, error) {
	s := &aggState{}
	if len(h.node.Groups) > 0 {
		s.keys = kernels.NewKeyTable(h.keyTypes)
		if h.keyFilter != nil {
			s.filter = h.keyFilter.Reader()
		}
	}
	for _, sp := range h.specs {
		acc, err := agg.New(sp)
		if err != nil {
			return nil, err
		}
		if len(h.node.Groups) == 0 {
			acc.Resize(1)
		}
		if _, ok := acc.(agg.OneGroup); ok {
			s.oneGroup++
		}
		s.accs = append(s.accs, acc)
	}
	return s, nil
}

// update folds one batch into s.
func (h *hashAggregate) update(ctx context.Context, s *aggState, b *vector.Batch) error {
	b, keys, args, filters, err := h.prepare(ctx, s.filter, &s.kids, b)
	if b == nil || err != nil {
		return err
	}
	return h.foldState(s, b, keys, args, filters)
}

// prepare evaluates the group keys, arguments and FILTER conditions of b and drops
// the rows the key filter (read through filter, with scratch kids) rules out. It
// returns the batch whose rows are to be folded (nil when none is).
func (h *hashAggregate) prepare(ctx context.Context, filter *kernels.KeyTable, kids *[]uint32, b *vector.Batch) (_ *vector.Batch, keys []arrow.Array, args [][]arrow.Array, filters []arrow.Array, err error) {
	failPoint(PointAggregateUpdate)
	// Computed keys and arguments are not evaluated for many rows no one reads.
	if b.Sel != nil && h.computed && len(b.Sel)*4 < b.Rows {
		b = b.Compact()
	}
	b, err = onKeptRows(b, func(b *vector.Batch) (err error) {
		keys, args, filters, err = h.evaluate(ctx, b)
		return err
	})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if filter == nil || len(h.node.Groups) == 0 {
		return b, keys, args, filters, nil
	}
	n := b.Len()
	fkeys := make([]arrow.Array, len(h.filterCols))
	for k, c := range h.filterCols {
		fkeys[k] = keys[c]
	}
	*kids = grow(*kids, n)
	fids := (*kids)[:n]
	filter.Find(fkeys, b.Sel, fids)
	sel := make([]int32, 0, n)
	for k, id := range fids {
		if id == kernels.NotFound {
			continue
		}
		if b.Sel == nil {
			sel = append(sel, int32(k))
		} else {
			sel = append(sel, b.Sel[k])
		}
	}
	if len(sel) == 0 {
		return nil, nil, nil, nil, nil
	}
	return &vector.Batch{Cols: b.Cols, Rows: b.Rows, Sel: sel}, keys, args, filters, nil
}

// foldState folds the rows of b, whose keys, arguments and FILTER conditions are
// evaluated, into s.
func (h *hashAggregate) foldState(s *aggState, b *vector.Batch, keys []arrow.Array, args [][]arrow.Array, filters []arrow.Array) error {
	var ids []uint32
	if s.keys != nil {
		n := b.Len()
		if cap(s.ids) < n {
			s.ids = make([]uint32, n)
		}
		ids = s.ids[:n]
		s.keys.Insert(keys, b.Sel, ids)
		if s.keys.Len() > s.groups {
			s.groups = s.keys.Len()
			for _, acc := range s.accs {
				acc.Resize(s.groups)
			}
		}
	}
	if ids != nil && s.groups <= fewGroups && len(ids) >= 16*s.groups && s.oneGroup > 1 {
		return h.updateByGroup(s, b, args, filters, ids)
	}
	for i, acc := range s.accs {
		if filters[i] != nil {
			if err := s.updateFiltered(acc, args[i], filters[i], b, ids); err != nil {
				return err
			}
			continue
		}
		in := args[i]
		if b.Sel == nil && ids == nil && in == nil {
			// COUNT(*) of every row learns the count from a null array of that length,
			// which holds no buffer.
			in = []arrow.Array{array.NewNull(b.Rows)}
		}
		if err := fold(acc, in, b.Sel, ids); err != nil {
			return err
		}
	}
	return nil
}

// fewGroups is the most groups a state may have for updateByGroup.
const fewGroups = 16

// updateByGroup folds a batch whose rows fall in few groups: it sorts the rows by
// group once, and the accumulators that fold one group's rows faster than mixed
// ones (agg.OneGroup) take each group's in turn.
func (h *hashAggregate) updateByGroup(s *aggState, b *vector.Batch, args [][]arrow.Array, filters []arrow.Array, ids []uint32) error {
	var at [fewGroups + 1]int
	for _, g := range ids {
		at[g+1]++
	}
	for g := 1; g <= s.groups; g++ {
		at[g] += at[g-1]
	}
	start := at
	s.byGroup = grow(s.byGroup, len(ids))
	rows := s.byGroup[:len(ids)]
	for k, g := range ids {
		r := int32(k)
		if b.Sel != nil {
			r = b.Sel[k]
		}
		rows[at[g]] = r
		at[g]++
	}
	for i, acc := range s.accs {
		if filters[i] != nil {
			if err := s.updateFiltered(acc, args[i], filters[i], b, ids); err != nil {
				return err
			}
			continue
		}
		og, ok := acc.(agg.OneGroup)
		if !ok || len(args[i]) > 1 {
			if err := fold(acc, args[i], b.Sel, ids); err != nil {
				return err
			}
			continue
		}
		var arg arrow.Array
		if len(args[i]) == 1 {
			arg = args[i][0]
		}
		for g := 0; g < s.groups; g++ {
			if start[g] == start[g+1] {
				continue
			}
			if err := og.UpdateGroup(arg, rows[start[g]:start[g+1]], uint32(g)); err != nil {
				return err
			}
		}
	}
	return nil
}

// updateFiltered folds into acc the rows of b (their groups ids, nil when
// ungrouped) on which the FILTER condition cond is true; NULL counts as false.
func (s *aggState) updateFiltered(acc agg.Accumulator, in []arrow.Array, cond arrow.Array, b *vector.Batch, ids []uint32) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	s.fsel = grow(s.fsel, n)[:0]
	if ids != nil {
		s.fids = grow(s.fids, n)[:0]
	}
	if c, ok := cond.(*array.Boolean); ok {
		for k := 0; k < n; k++ {
			r := k
			if b.Sel != nil {
				r = int(b.Sel[k])
			}
			if c.IsValid(r) && c.Value(r) {
				s.fsel = append(s.fsel, int32(r))
				if ids != nil {
					s.fids = append(s.fids, ids[k])
				}
			}
		}
	} else if cond.DataType().ID() != arrow.NULL {
		return errs.New(errs.Internal, "BUG: FILTER condition of type %s", cond.DataType())
	}
	if ids != nil {
		return fold(acc, in, s.fsel, s.fids)
	}
	return fold(acc, in, s.fsel, nil)
}

// fold folds rows into acc: its one argument (none for COUNT(*)) goes to Update,
// several to agg.UpdateArgs.
func fold(acc agg.Accumulator, in []arrow.Array, sel []int32, groups []uint32) error {
	switch len(in) {
	case 0:
		return acc.Update(nil, sel, groups)
	case 1:
		return acc.Update(in[0], sel, groups)
	}
	return agg.UpdateArgs(acc, in, sel, groups)
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// evaluate computes the group keys, the inputs of each aggregate (nil for COUNT(*)) and the FILTER
// conditions (nil when none) of b, every one before any state changes, so that a
// batch can be evaluated again.
func (h *hashAggregate) evaluate(ctx context.Context, b *vector.Batch) (keys []arrow.Array, args [][]arrow.Array, filters []arrow.Array, err error) {
	if b, err = h.exprs.extend(ctx, b); err != nil {
		return nil, nil, nil, err
	}
	keys = make([]arrow.Array, len(h.node.Groups))
	for i := range keys {
		if keys[i], err = h.exprs.exprs[i](ctx, b); err != nil {
			return nil, nil, nil, err
		}
	}
	args = make([][]arrow.Array, len(h.argAt))
	filters = make([]arrow.Array, len(h.argAt))
	// Every aggregate's inputs share one backing array, of the exact size, so that
	// the slices into it stay valid.
	n := 0
	for i, at := range h.argAt {
		if at >= 0 {
			n += 1 + len(h.moreAt[i])
		}
	}
	flat := make([]arrow.Array, 0, n)
	for i, at := range h.argAt {
		if at < 0 {
			continue
		}
		from := len(flat)
		for k := -1; k < len(h.moreAt[i]); k++ {
			e := at
			if k >= 0 {
				e = h.moreAt[i][k]
			}
			a, err := h.exprs.exprs[e](ctx, b)
			if err != nil {
				return nil, nil, nil, err
			}
			flat = append(flat, a)
		}
		args[i] = flat[from:len(flat):len(flat)]
	}
	for i := range h.argAt {
		if at := h.filterAt[i]; at >= 0 {
			if filters[i], err = h.exprs.exprs[at](ctx, b); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return keys, args, filters, nil
}

func (s *aggState) memory() int64 { return stateMemory(s.keys, s.accs) }

// stateMemory is the memory a key table (nil when ungrouped) and accumulators hold.
func stateMemory(keys *kernels.KeyTable, accs []agg.Accumulator) int64 {
	var n int64
	if keys != nil {
		n += keys.MemoryUsage()
	}
	for _, a := range accs {
		n += a.MemoryUsage()
	}
	return n
}

// merge folds other into s.
func (h *hashAggregate) merge(s, other *aggState) error {
	var mapping []uint32
	if s.keys != nil {
		mapping = s.keys.Merge(other.keys)
		if s.keys.Len() > s.groups {
			s.groups = s.keys.Len()
			for _, acc := range s.accs {
				acc.Resize(s.groups)
			}
		}
	} else {
		mapping = []uint32{0}
	}
	for i, acc := range s.accs {
		if err := acc.Merge(other.accs[i], mapping); err != nil {
			return err
		}
	}
	return nil
}

func (h *hashAggregate) compute(ctx context.Context) error {
	var final *aggState
	var parts []*aggState
	if p, ok, err := h.bd.pipelineOf(h.node.Input); err != nil {
		return err
	} else if ok {
		bounds := h.runningBounds(p)
		p.recycle = h.keepsNoInput()
		p.consumed = map[int]bool{}
		for _, e := range h.node.InputExprs() {
			plan.ColumnsUsed(e, p.consumed)
		}
		if err := h.filterRes.resize(h.narrowInput(ctx, p)); err != nil {
			return err
		}
		if final, parts, err = h.inParallel(ctx, func(sink func(w int, b *vector.Batch) error) error {
			return p.run(ctx, sink)
		}, bounds); err != nil {
			return err
		}
	} else {
		in, err := h.buildInput()
		if err != nil {
			return err
		}
		defer in.Close()
		// An input the workers make (a join whose probe side they read, a UNION ALL
		// of scans, with the filters and projections above) feeds them: each folds
		// its own batches into its own partial state.
		run, p, ok, err := parallelSource(ctx, in)
		if err != nil {
			return err
		}
		if ok {
			if err := h.filterRes.resize(h.narrowInput(ctx, p)); err != nil {
				return err
			}
			// Joins probed by the workers hand what they make from a batch to this
			// aggregate before the scan's sink returns: when none of them keeps it
			// either, the scan may reuse all of its buffers.
			if p != nil && h.keepsNoInput() && handsOnOnly(in) {
				p.recycle = true
			}
			if final, parts, err = h.inParallel(ctx, func(sink func(w int, b *vector.Batch) error) error {
				return run(ctx, sink)
			}, nil); err != nil {
				return err
			}
		} else if final, err = h.sequential(ctx, in); err != nil {
			return err
		}
	}
	return h.finish(ctx, final, parts)
}

// finish hands on the groups of the merged state final or of the merged partitions
// parts, after the zones' partials, or begins the spilled part of the work.
func (h *hashAggregate) finish(ctx context.Context, final *aggState, parts []*aggState) error {
	if parts != nil {
		if h.spilling.Load() == nil && !h.keep {
			h.parts = parts
			return h.emitPart()
		}
		var err error
		if final, err = h.collapse(parts); err != nil {
			return err
		}
	}
	if final == nil {
		s, err := h.newState()
		if err != nil {
			return err
		}
		final = s
	}
	if seeds := h.node.Seeds; seeds != nil {
		// The partials of the zones the scan skipped, merged like a worker's.
		mapping := []uint32{0}
		groups := 1
		if final.keys != nil {
			n := h.node.SeedKeys[0].Len()
			mapping = make([]uint32, n)
			final.keys.Insert(h.node.SeedKeys, nil, mapping)
			groups = final.keys.Len()
			final.groups = groups
		}
		for i, acc := range final.accs {
			acc.Resize(groups)
			if err := acc.Merge(seeds[i], mapping); err != nil {
				return err
			}
		}
	}
	if h.keep {
		h.kept = final
		return nil
	}
	if sp := h.spilling.Load(); sp != nil {
		h.spilling.Store(nil)
		if err := h.startSpill(final, sp); err != nil {
			return err
		}
		return h.nextSpilled(ctx)
	}
	if len(h.node.Sets) > 0 {
		out, err := h.groupingSets(final)
		h.out = out
		return err
	}
	cols := make([]arrow.Array, 0, len(h.node.Groups)+len(h.specs))
	rows := 1
	if final.keys != nil {
		cols = append(cols, final.keys.Keys()...)
		rows = final.keys.Len()
	}
	for _, acc := range final.accs {
		a, err := acc.Final()
		if err != nil {
			return err
		}
		cols = append(cols, a)
	}
	if rows == 0 {
		return nil
	}
	h.out = slices(&vector.Batch{Cols: cols, Rows: rows})
	return nil
}

// keepsNoInput reports whether the aggregate keeps nothing of a batch once it has
// folded it in: its keys are copied into its key tables, and its aggregates are
// counts, sums, averages and extremes of fixed-width values, whose states are
// numbers. (An extreme of strings, a list, a DISTINCT or an ordered aggregate may
// keep values that point into the batch.)
func (h *hashAggregate) keepsNoInput() bool {
	for _, sp := range h.specs {
		if sp.Distinct || len(sp.Order) > 0 || len(sp.ArgTypes) > 0 {
			return false
		}
		switch sp.Name {
		case "count_star":
			continue
		case "count", "sum", "avg", "min", "max":
		default:
			return false
		}
		if sp.ArgType == nil {
			return false
		}
		switch t := types.Unwrap(sp.ArgType); {
		case types.IsInteger(t), types.IsFloat(t), types.IsDecimal(t):
		case t.ID() == arrow.DATE32 || t.ID() == arrow.TIMESTAMP || t.ID() == arrow.BOOL:
		default:
			return false
		}
	}
	return true
}

// emitPart turns the next merged partition that holds groups into the batches to
// hand on, and lets it go: the groups of a partition exist as a table and as
// batches at once, not those of all of them.
func (h *hashAggregate) emitPart() error {
	for len(h.out) == 0 && len(h.parts) > 0 {
		s := h.parts[0]
		h.parts[0], h.parts = nil, h.parts[1:]
		if s == nil || s.keys.Len() == 0 {
			continue
		}
		cols := append([]arrow.Array(nil), s.keys.Keys()...)
		for _, acc := range s.accs {
			a, err := acc.Final()
			if err != nil {
				return err
			}
			cols = append(cols, a)
		}
		h.out = slices(&vector.Batch{Cols: cols, Rows: s.keys.Len()})
	}
	return nil
}

func (h *hashAggregate) Next(ctx context.Context) (*vector.Batch, error) {
	if !h.started {
		h.started = true
		if err := h.compute(ctx); err != nil {
			return nil, err
		}
	}
	if len(h.out) == 0 && len(h.parts) > 0 {
		if err := h.emitPart(); err != nil {
			return nil, err
		}
	}
	if len(h.out) == 0 && len(h.tasks) > 0 {
		if err := h.nextSpilled(ctx); err != nil {
			return nil, err
		}
	}
	if len(h.out) == 0 {
		return nil, nil
	}
	b := h.out[0]
	h.out = h.out[1:]
	return b, nil
}

func (h *hashAggregate) Close() {
	h.out, h.parts = nil, nil
	h.closeSpill()
	h.res.release()
	h.filterRes.release()
}

// inParallel folds the batches that run hands to its sink, one partial state per
// worker, and returns the merged state (nil when no batch came), or, when the
// workers partitioned their groups, the merged partitions, whose keys are disjoint.
func (h *hashAggregate) inParallel(ctx context.Context, run func(sink func(w int, b *vector.Batch) error) error, bounds []*dynamicBound) (*aggState, []*aggState, error) {
	states := make([]*aggState, max(1, h.bd.env.Threads))
	radix := make([]*radixState, len(states))
	mem := make([]int64, len(states))
	// When the states keep nothing of what they fold in, each worker's computed keys
	// and arguments take their values from its scratch, back for the next batch.
	var scratch []*kernels.Scratch
	if h.keepsNoInput() {
		scratch = make([]*kernels.Scratch, len(states))
		for w := range scratch {
			scratch[w] = &kernels.Scratch{}
		}
	}
	var memMu sync.Mutex
	err := run(func(w int, b *vector.Batch) error {
		if sp := h.spilling.Load(); sp != nil {
			return sp.add(ctx, b)
		}
		ctx := ctx
		if scratch != nil {
			ctx = withScratch(ctx, scratch[w])
			defer scratch[w].Reset()
		}
		if states[w] == nil && radix[w] == nil {
			if h.partitioned(ctx, b) {
				radix[w] = h.newRadixState()
			} else {
				s, err := h.newState()
				if err != nil {
					return err
				}
				states[w] = s
			}
		}
		var m int64
		var groups int
		if r := radix[w]; r != nil {
			if err := h.updateRadix(ctx, r, b); err != nil {
				return err
			}
			m, groups = r.memory(), r.groups()
		} else {
			if err := h.update(ctx, states[w], b); err != nil {
				return err
			}
			if err := tightenBounds(bounds, states[w].accs); err != nil {
				return err
			}
			m, groups = states[w].memory(), groupsOf(states[w])
		}
		memMu.Lock()
		defer memMu.Unlock()
		mem[w] = m
		var total int64
		for _, x := range mem {
			total += x
		}
		err := h.res.resize(total)
		if h.shouldFreeze(total, h.res.held, groups, err) {
			// From here on rows go to partition files; the states are frozen.
			h.spilling.CompareAndSwap(nil, h.newAggSpill(0))
			return nil
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if h.radix.Load() == radixPartitioned {
		parts, err := h.mergeRadix(ctx, radix)
		return nil, parts, err
	}
	var final *aggState
	for i, s := range states {
		if s == nil {
			continue
		}
		if final == nil {
			final = s
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if err := h.merge(final, s); err != nil {
			return nil, nil, err
		}
		states[i] = nil // merged: its memory may go
	}
	return final, nil, nil
}

// runningBounds hands the scan of an ungrouped aggregate made only of MIN and MAX
// over its columns the values seen so far as bounds (a row group whose statistics
// cannot beat them is not read; with one aggregate, rows that cannot are dropped
// before the other columns are decoded). The partials of zones answered from
// statistics give the first values. It returns the bounds, in the aggregates'
// order, or nil.
func (h *hashAggregate) runningBounds(p *pipeline) []*dynamicBound {
	if len(h.node.Groups) > 0 || len(h.node.Aggs) == 0 || p.bounds != nil {
		return nil
	}
	list := make([]*dynamicBound, len(h.node.Aggs))
	for i, a := range h.node.Aggs {
		if sp := h.specs[i]; sp.Distinct || len(sp.Order) > 0 {
			// Kept rows, whose Final (which tightens the bound) sorts them all.
			return nil
		}
		op := ""
		switch h.specs[i].Name {
		case "min":
			op = "<"
		case "max":
			op = ">"
		default:
			return nil
		}
		scan, col, ok := plan.ScanColumn(h.node.Input, a.Arg)
		if !ok || scan != p.scan {
			return nil
		}
		list[i] = &dynamicBound{col: col, op: op}
	}
	if h.node.Seeds != nil {
		if err := tightenBounds(list, h.node.Seeds); err != nil {
			return nil
		}
	}
	p.bounds = &dynamicBounds{list: list, rows: len(list) == 1}
	return list
}

// tightenBounds tightens each bound to the value its accumulator holds.
func tightenBounds(bounds []*dynamicBound, accs []agg.Accumulator) error {
	for i, b := range bounds {
		a, err := accs[i].Final()
		if err != nil {
			return err
		}
		if a.Len() > 0 {
			if v := types.ValueAt(a, 0); !v.Null {
				b.tighten(v)
			}
		}
	}
	return nil
}

// sequential folds every batch of in into one state.
func (h *hashAggregate) sequential(ctx context.Context, in Operator) (*aggState, error) {
	final, err := h.newState()
	if err != nil {
		return nil, err
	}
	for {
		b, err := in.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b == nil {
			return final, nil
		}
		if b.Len() == 0 {
			continue
		}
		if sp := h.spilling.Load(); sp != nil {
			if err := sp.add(ctx, b); err != nil {
				return nil, err
			}
			continue
		}
		if err := h.update(ctx, final, b); err != nil {
			return nil, err
		}
		if err := h.res.resize(final.memory()); h.shouldFreeze(final.memory(), h.res.held, groupsOf(final), err) {
			h.spilling.Store(h.newAggSpill(0))
		} else if err != nil {
			return nil, err
		}
	}
}

// buildInput builds the aggregate's input, telling a join directly below it which
// of its columns the aggregate reads (a projection between tells it itself), so
// that it gathers only those.
func (h *hashAggregate) buildInput() (Operator, error) {
	in, err := h.bd.build(h.node.Input)
	if err != nil {
		return nil, err
	}
	readsOnly(in, h.readExprs()...)
	return in, nil
}

// readExprs are the expressions the aggregate reads of its input.
func (h *hashAggregate) readExprs() []plan.Expr {
	exprs := append([]plan.Expr(nil), h.node.Groups...)
	for _, a := range h.node.Aggs {
		exprs = append(exprs, a.Inputs()...)
		if a.Filter != nil {
			exprs = append(exprs, a.Filter)
		}
	}
	return exprs
}
