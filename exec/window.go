package exec

import (
	"context"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/vector"
)

// windowOp holds its input, and for each window function orders the rows by
// partition and order keys, computes the function over each row's frame, and
// appends the results as columns in the input's row order.
type windowOp struct {
	bd   *builder
	node *plan.Window
	in   Operator
	res  reservation
	out  []*vector.Batch
	done bool
	// spill, when the input did not fit the budget, evaluates the functions a few
	// partitions at a time over the input sorted on disk.
	spill *windowSpill
}

func (bd *builder) buildWindow(x *plan.Window) (Operator, error) {
	in, err := bd.build(x.Input)
	if err != nil {
		return nil, err
	}
	return &windowOp{bd: bd, node: x, in: in, res: reservation{budget: bd.env.Budget}}, nil
}

func (w *windowOp) Next(ctx context.Context) (*vector.Batch, error) {
	if !w.done {
		w.done = true
		if err := w.start(ctx); err != nil {
			return nil, err
		}
	}
	if w.spill != nil {
		return w.spill.next(ctx)
	}
	if len(w.out) == 0 {
		return nil, nil
	}
	b := w.out[0]
	w.out = w.out[1:]
	return b, nil
}

// start reads the input and computes the functions over it in memory, or, when it
// does not fit the budget, sets up the spilling evaluation.
func (w *windowOp) start(ctx context.Context) error {
	batches, spill, err := w.read(ctx)
	if err != nil {
		w.in.Close()
		return err
	}
	if spill {
		w.spill, err = w.startSpill(batches)
		return err
	}
	w.in.Close()
	all, err := w.input(ctx, batches)
	if err != nil {
		return err
	}
	if all.Rows == 0 {
		return nil
	}
	results, err := w.results(ctx, all, w.node.Funcs, &w.res)
	if err != nil {
		return err
	}
	// The input's batches go on with their slices of the results.
	w.out = withResults(batches, results)
	return nil
}

// results computes funcs over all, whose rows are whole partitions, and returns
// their columns in all's row order. What they hold is reserved in res.
func (w *windowOp) results(ctx context.Context, all *vector.Batch, funcs []plan.WindowCall, res *reservation) ([]arrow.Array, error) {
	var results []arrow.Array
	// A function whose window orders the rows as the one before it does (q51's
	// two running maxima) takes that function's ordering instead of sorting again.
	var prev *windowOrder
	for i, f := range funcs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if i == 0 || !sameOrdering(funcs[i-1], f) {
			prev = nil
		}
		// While it is computed a function holds, per row, its ordering, peers,
		// frame and result index; an aggregate's states reserve on their own.
		held := res.held
		work := int64(all.Rows) * windowRowBytes
		if err := res.grow(work); err != nil {
			return nil, err
		}
		it := &interrupt{ctx: ctx}
		if prev == nil {
			var err error
			if prev, err = w.order(ctx, it, all, f); err != nil {
				return nil, err
			}
		}
		c, err := w.compute(ctx, it, all, f, prev, res)
		if err != nil {
			return nil, err
		}
		if err := res.resize(held + heldSize(c)); err != nil {
			return nil, err
		}
		results = append(results, c)
	}
	return results, nil
}

// input returns one batch of all the rows of the input's batches. That batch holds
// only the columns the functions read: the others are not copied, as the results
// are appended to the input's own batches.
func (w *windowOp) input(ctx context.Context, batches []*vector.Batch) (*vector.Batch, error) {
	held := w.res.held
	all, err := concatBatches(ctx, readColumns(batches, windowColumns(w.node.Funcs)), len(w.node.Input.Columns()))
	if err != nil {
		return nil, err
	}
	if len(batches) > 1 {
		// The concatenated columns are copies.
		if err := w.res.resize(held + batchSize(all)); err != nil {
			return nil, err
		}
	}
	return all, nil
}

// readColumns returns batches with only the columns in used (all when used is
// nil), the others nil.
func readColumns(batches []*vector.Batch, used map[int]bool) []*vector.Batch {
	read := make([]*vector.Batch, len(batches))
	for k, b := range batches {
		cols := b.Cols
		if used != nil {
			cols = make([]arrow.Array, len(b.Cols))
			for i := range used {
				if i < len(cols) {
					cols[i] = b.Cols[i]
				}
			}
		}
		read[k] = &vector.Batch{Cols: cols, Rows: b.Rows}
	}
	return read
}

// withResults returns batches, in order, each with its slice of the results (one
// column per function over all their rows) appended.
func withResults(batches []*vector.Batch, results []arrow.Array) []*vector.Batch {
	out := make([]*vector.Batch, len(batches))
	off := int64(0)
	for k, b := range batches {
		cols := append(b.Cols[:len(b.Cols):len(b.Cols)], make([]arrow.Array, len(results))...)
		for i, c := range results {
			cols[len(b.Cols)+i] = array.NewSlice(c, off, off+int64(b.Rows))
		}
		out[k] = &vector.Batch{Cols: cols, Rows: b.Rows}
		off += int64(b.Rows)
	}
	return out
}

// windowColumns returns the input columns funcs read, or nil when one of their
// expressions may read columns that are not column references in it (a subquery,
// a lambda), and so all are kept.
func windowColumns(funcs []plan.WindowCall) map[int]bool {
	used := map[int]bool{}
	for _, f := range funcs {
		for _, e := range f.Exprs() {
			plain := true
			plan.WalkExpr(e, func(x plan.Expr) {
				switch x.(type) {
				case *plan.ColRef, *plan.Literal, *plan.Call, *plan.Cast, *plan.Case, *plan.InList:
				default:
					plain = false
				}
			})
			if !plain {
				return nil
			}
			plan.ColumnsUsed(e, used)
		}
	}
	return used
}

// windowRowBytes is what computing a window function holds per row: its place in
// the ordering, its peers' bounds, its frame's spans, its frame's number, the index
// its result is gathered from, its FILTER bit, a ranking function's two values, a
// RANGE frame's three keys (or the index of IGNORE NULLS, or lag's default), and
// while it is sorted its normalized key (two words, for most keys) and the radix
// sort's second key and row buffers.
const windowRowBytes = 4 + 2*4 + 6*4 + 4 + 4 + 1 + 2*8 + 3*8 + 2*8 + 2*8 + 4

func (w *windowOp) Close() {
	if w.spill != nil {
		w.spill.close()
	}
	w.in.Close()
	w.out = nil
	w.res.release()
}

func (w *windowOp) eval(ctx context.Context, b *vector.Batch, e plan.Expr) (arrow.Array, error) {
	ev, err := w.bd.compile(e)
	if err != nil {
		return nil, err
	}
	a, err := ev(ctx, b)
	if err != nil {
		return nil, err
	}
	return kernels.Decode(a), nil
}

// windowOrder is the rows of a window in window order: partitions one after the
// other, each ordered by the ORDER BY keys. Positions index perm.
type windowOrder struct {
	perm []int32
	// parts are the partitions' first positions, then n.
	parts []int32
	// peerStart and peerEnd bound each position's peers (the rows of its partition
	// that order equal to it).
	peerStart, peerEnd []int32
}

// order sorts the rows of all by f's partition and order keys.
func (w *windowOp) order(ctx context.Context, it *interrupt, all *vector.Batch, f plan.WindowCall) (*windowOrder, error) {
	n := all.Rows
	var cols []arrow.Array
	var keys []plan.SortKey
	for _, p := range f.Partition {
		a, err := w.eval(ctx, all, p)
		if err != nil {
			return nil, err
		}
		cols, keys = append(cols, a), append(keys, plan.SortKey{})
	}
	for _, k := range f.Order {
		a, err := w.eval(ctx, all, k.E)
		if err != nil {
			return nil, err
		}
		cols, keys = append(cols, a), append(keys, k)
	}
	failPoint(PointWindow)
	// Ordering and computing millions of rows takes seconds: a canceled statement
	// interrupts them.
	var perm []int32
	var samePart, samePeer func(a, b int32) bool
	if err := it.run(func() {
		if sk := normalizeKeys(cols, keys, len(f.Partition), n); sk != nil {
			perm = sk.sort(it, n)
			samePart = func(a, b int32) bool { return sk.equal(a, b, 0, sk.split) }
			samePeer = func(a, b int32) bool { return sk.equal(a, b, sk.split, len(sk.words)) }
			return
		}
		var cmps, orderCmps []func(i, j int) int
		for i, a := range cols {
			c := comparator(a, keys[i])
			if i < len(f.Partition) {
				cmps = append(cmps, c)
			} else {
				orderCmps = append(orderCmps, c)
			}
		}
		same := func(cs []func(i, j int) int, a, b int32) bool {
			for _, c := range cs {
				if c(int(a), int(b)) != 0 {
					return false
				}
			}
			return true
		}
		perm = vector.Identity(n)
		ranks := sortWindowRows(it, perm, cols[:len(f.Partition)], cmps, orderCmps)
		samePart = func(a, b int32) bool {
			if ranks != nil {
				return ranks[a] == ranks[b]
			}
			return same(cmps, a, b)
		}
		samePeer = func(a, b int32) bool { return same(orderCmps, a, b) }
	}); err != nil {
		return nil, err
	}
	o := &windowOrder{perm: perm, peerStart: make([]int32, n), peerEnd: make([]int32, n)}
	err := it.run(func() {
		for lo := 0; lo < n; {
			hi := lo + 1
			for hi < n && samePart(perm[lo], perm[hi]) {
				it.tick()
				hi++
			}
			o.parts = append(o.parts, int32(lo))
			for i := lo; i < hi; {
				j := i + 1
				for j < hi && samePeer(perm[i], perm[j]) {
					it.tick()
					j++
				}
				for k := i; k < j; k++ {
					o.peerStart[k], o.peerEnd[k] = int32(i), int32(j)
				}
				i = j
			}
			lo = hi
		}
	})
	o.parts = append(o.parts, int32(n))
	return o, err
}

// sameOrdering reports whether windows a and b sort the rows alike: the same
// columns partition them and the same columns, directions and NULL placements
// order them. Only column references are compared, which are evaluated alike every
// time.
func sameOrdering(a, b plan.WindowCall) bool {
	sameCol := func(x, y plan.Expr) bool {
		cx, ok1 := x.(*plan.ColRef)
		cy, ok2 := y.(*plan.ColRef)
		return ok1 && ok2 && cx.Idx == cy.Idx
	}
	if len(a.Partition) != len(b.Partition) || len(a.Order) != len(b.Order) {
		return false
	}
	for i := range a.Partition {
		if !sameCol(a.Partition[i], b.Partition[i]) {
			return false
		}
	}
	for i, k := range a.Order {
		l := b.Order[i]
		if !sameCol(k.E, l.E) || k.Desc != l.Desc || k.NullsFirst != l.NullsFirst {
			return false
		}
	}
	return true
}

// compute evaluates one window function over all rows, ordered by o.
func (w *windowOp) compute(ctx context.Context, it *interrupt, all *vector.Batch, f plan.WindowCall, o *windowOrder, res *reservation) (arrow.Array, error) {
	switch f.Func {
	case "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile":
		return w.ranking(ctx, it, all, f, o)
	case "lead", "lag":
		return w.shift(ctx, it, all, f, o)
	}
	fr, err := w.frames(ctx, it, all, f, o)
	if err != nil {
		return nil, err
	}
	switch f.Func {
	case "first_value", "last_value", "nth_value":
		return w.pick(ctx, it, all, f, o, fr)
	}
	if f.Agg == nil {
		return nil, errs.New(errs.Internal, "BUG: window function %s", f.Func)
	}
	var args []arrow.Array
	for _, e := range windowAggInputs(f) {
		a, err := w.eval(ctx, all, e)
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	if len(args) == 0 {
		// COUNT(*) reads no column; its accumulator is given one of NULLs.
		args = []arrow.Array{array.NewNull(all.Rows)}
	}
	var keep []bool
	if f.Agg.Filter != nil {
		c, err := w.eval(ctx, all, f.Agg.Filter)
		if err != nil {
			return nil, err
		}
		keep = trueRows(c)
	}
	growing := f.Frame.Start.Kind == plan.UnboundedPreceding && f.Frame.Exclude == plan.ExcludeNoOthers
	return windowAggregate(it, res, f.Agg.Spec(), args, keep, o, fr, growing)
}

// trueRows reports, per row of a BOOLEAN column, whether it is true (not false, not
// NULL).
func trueRows(c arrow.Array) []bool {
	out := make([]bool, c.Len())
	if b, ok := c.(*array.Boolean); ok {
		for i := range out {
			out[i] = b.IsValid(i) && b.Value(i)
		}
	}
	return out
}

// span is a run of positions [s, e); empty when e <= s.
type span struct{ s, e int32 }

// frameSpans is one row's frame: up to three ascending, disjoint spans (a frame
// with an EXCLUDE clause has a hole or two).
type frameSpans [3]span

// frames computes every position's frame.
func (w *windowOp) frames(ctx context.Context, it *interrupt, all *vector.Batch, f plan.WindowCall, o *windowOrder) ([]frameSpans, error) {
	n := len(o.perm)
	fr := f.Frame
	// A RANGE bound with an offset finds the first row whose key reaches the row's
	// key moved by the offset: the keys and the moved keys go in one array so that
	// one comparator orders them.
	var cmp func(i, j int) int
	var keys arrow.Array
	if fr.Key != nil {
		parts := []arrow.Array{}
		for _, e := range []plan.Expr{fr.Key, fr.StartVal, fr.EndVal} {
			if e == nil {
				parts = append(parts, array.NewNull(n))
				continue
			}
			a, err := w.eval(ctx, all, e)
			if err != nil {
				return nil, err
			}
			if a.DataType().ID() == arrow.NULL {
				a = array.MakeArrayOfNull(vector.Allocator, fr.Key.Type(), n)
			}
			parts = append(parts, a)
		}
		for i := 1; i < 3; i++ {
			if parts[i].DataType().ID() == arrow.NULL {
				parts[i] = array.MakeArrayOfNull(vector.Allocator, parts[0].DataType(), n)
			}
		}
		c, err := array.Concatenate(parts, vector.Allocator)
		if err != nil {
			return nil, errs.New(errs.Internal, "BUG: window frame keys: %v", err)
		}
		keys = c
		cmp = comparator(c, plan.SortKey{Desc: f.Order[0].Desc, NullsFirst: f.Order[0].NullsFirst})
	}
	out := make([]frameSpans, n)
	err := it.run(func() {
		for pi := 0; pi+1 < len(o.parts); pi++ {
			ps, pe := o.parts[pi], o.parts[pi+1]
			// The positions whose key is not NULL, for RANGE offsets.
			nlo, nhi := ps, pe
			if keys != nil {
				for nlo < pe && keys.IsNull(int(o.perm[nlo])) {
					nlo++
				}
				for nhi > nlo && keys.IsNull(int(o.perm[nhi-1])) {
					nhi--
				}
			}
			// groupOf numbers the peer groups of the partition for GROUPS frames;
			// groupStart lists their first positions, then pe.
			var groupOf, groupStart []int32
			if fr.Groups {
				groupOf = make([]int32, pe-ps)
				for p := ps; p < pe; p++ {
					if o.peerStart[p] == p {
						groupStart = append(groupStart, p)
					}
					groupOf[p-ps] = int32(len(groupStart) - 1)
				}
				groupStart = append(groupStart, pe)
			}
			ng := int64(len(groupStart) - 1)
			bound := func(p int32, b plan.FrameBound, start bool) int32 {
				it.tick()
				switch b.Kind {
				case plan.UnboundedPreceding:
					return ps
				case plan.UnboundedFollowing:
					return pe
				case plan.CurrentRow:
					switch {
					case fr.Rows && start:
						return p
					case fr.Rows:
						return p + 1
					case start:
						return o.peerStart[p]
					}
					return o.peerEnd[p]
				}
				d := min(b.N, int64(n)+1)
				if b.Kind == plan.Preceding {
					d = -d
				}
				switch {
				case fr.Rows:
					at := int64(p) + d
					if !start {
						at++
					}
					return int32(min(max(at, int64(ps)), int64(pe)))
				case fr.Groups:
					g := int64(groupOf[p-ps]) + d
					if start {
						return groupStart[min(max(g, 0), ng)]
					}
					return groupStart[min(max(g+1, 0), ng)]
				}
				// RANGE: a row with a NULL key has its peers as its frame's offset
				// bounds.
				r := int(o.perm[p])
				if keys.IsNull(r) {
					if start {
						return o.peerStart[p]
					}
					return o.peerEnd[p]
				}
				target := n + r
				if !start {
					target = 2*n + r
				}
				if keys.IsNull(target) {
					if start {
						return o.peerStart[p]
					}
					return o.peerEnd[p]
				}
				k := sort.Search(int(nhi-nlo), func(k int) bool {
					it.tick()
					c := cmp(int(o.perm[nlo+int32(k)]), target)
					if start {
						return c >= 0
					}
					return c > 0
				})
				return nlo + int32(k)
			}
			for p := ps; p < pe; p++ {
				s := bound(p, fr.Start, true)
				e := max(bound(p, fr.End, false), s)
				a, b := o.peerStart[p], o.peerEnd[p]
				switch fr.Exclude {
				case plan.ExcludeNoOthers:
					out[p] = frameSpans{{s, e}}
				case plan.ExcludeCurrentRow:
					out[p] = frameSpans{{s, min(e, p)}, {max(s, p+1), e}}
				case plan.ExcludeGroup:
					out[p] = frameSpans{{s, min(e, a)}, {max(s, b), e}}
				case plan.ExcludeTies:
					out[p] = frameSpans{{s, min(e, a)}, {max(s, p), min(e, p+1)}, {max(s, b), e}}
				}
				for k := range out[p] {
					if out[p][k].e < out[p][k].s {
						out[p][k].e = out[p][k].s
					}
				}
			}
		}
	})
	return out, err
}

// ranking computes row_number, rank, dense_rank, percent_rank, cume_dist and ntile,
// which depend only on the row's place among its partition's rows and peers.
func (w *windowOp) ranking(ctx context.Context, it *interrupt, all *vector.Batch, f plan.WindowCall, o *windowOrder) (arrow.Array, error) {
	n := len(o.perm)
	var buckets *array.Int64
	if f.Func == "ntile" {
		a, err := w.eval(ctx, all, f.Args[0])
		if err != nil {
			return nil, err
		}
		if buckets, err = int64Column(a); err != nil {
			return nil, err
		}
	}
	ints := make([]int64, n)
	floats := make([]float64, n)
	var valid []bool
	var err error
	if stop := it.run(func() {
		for pi := 0; pi+1 < len(o.parts); pi++ {
			ps, pe := o.parts[pi], o.parts[pi+1]
			size := int64(pe - ps)
			dense := int64(0)
			for p := ps; p < pe; p++ {
				it.tick()
				r := o.perm[p]
				if o.peerStart[p] == p {
					dense++
				}
				rank := int64(o.peerStart[p]-ps) + 1
				switch f.Func {
				case "row_number":
					ints[r] = int64(p-ps) + 1
				case "rank":
					ints[r] = rank
				case "dense_rank":
					ints[r] = dense
				case "percent_rank":
					if size > 1 {
						floats[r] = float64(rank-1) / float64(size-1)
					}
				case "cume_dist":
					floats[r] = float64(o.peerEnd[p]-ps) / float64(size)
				case "ntile":
					if buckets.IsNull(int(r)) {
						if valid == nil {
							valid = make([]bool, n)
							for i := range valid {
								valid[i] = true
							}
						}
						valid[r] = false
						continue
					}
					k := buckets.Value(int(r))
					if k <= 0 {
						err = errs.New(errs.Analysis, "argument of ntile must be greater than zero")
						return
					}
					ints[r] = ntile(int64(p-ps), size, k)
				}
			}
		}
	}); stop != nil {
		return nil, stop
	}
	if err != nil {
		return nil, err
	}
	switch f.Func {
	case "percent_rank", "cume_dist":
		return fixedColumn(arrow.PrimitiveTypes.Float64, floats, nil), nil
	}
	return fixedColumn(arrow.PrimitiveTypes.Int64, ints, valid), nil
}

// ntile is the bucket (1..k) of the row at index i of a partition of size rows: the
// first size%k buckets hold one row more than the others.
func ntile(i, size, k int64) int64 {
	k = min(k, size)
	small := size / k
	large := size - k*small // buckets of small+1 rows
	if first := large * (small + 1); i >= first {
		return 1 + large + (i-first)/small
	}
	return 1 + i/(small+1)
}

// int64Column reads an integer argument as BIGINT.
func int64Column(a arrow.Array) (*array.Int64, error) {
	if x, ok := a.(*array.Int64); ok {
		return x, nil
	}
	if a.DataType().ID() == arrow.NULL {
		return array.MakeArrayOfNull(vector.Allocator, arrow.PrimitiveTypes.Int64, a.Len()).(*array.Int64), nil
	}
	return nil, errs.New(errs.Internal, "BUG: window argument of type %s, not BIGINT", a.DataType())
}

// fixedColumn builds an Int64 or Float64 column; valid nil means no NULLs.
func fixedColumn[T int64 | float64](dt arrow.DataType, vals []T, valid []bool) arrow.Array {
	b := array.NewBuilder(vector.Allocator, dt)
	defer b.Release()
	switch x := b.(type) {
	case *array.Int64Builder:
		x.AppendValues(any(vals).([]int64), valid)
	case *array.Float64Builder:
		x.AppendValues(any(vals).([]float64), valid)
	}
	return b.NewArray()
}

// nonNulls indexes the positions whose value is not NULL: count[p] is how many
// positions before p are, at[k] is the k-th of them. IGNORE NULLS finds its rows
// with them in constant time.
type nonNulls struct {
	count []int32
	at    []int32
}

func newNonNulls(arg arrow.Array, perm []int32) *nonNulls {
	nn := &nonNulls{count: make([]int32, len(perm)+1)}
	for p, r := range perm {
		if arg.IsValid(int(r)) {
			nn.at = append(nn.at, int32(p))
		}
		nn.count[p+1] = int32(len(nn.at))
	}
	return nn
}

// shift computes lead and lag: the value Args[0] rows on (lead) or back (lag) in the
// partition, or the default Args[1] (NULL without one) past its ends.
func (w *windowOp) shift(ctx context.Context, it *interrupt, all *vector.Batch, f plan.WindowCall, o *windowOrder) (arrow.Array, error) {
	n := len(o.perm)
	arg, err := w.eval(ctx, all, f.Arg)
	if err != nil {
		return nil, err
	}
	off, err := w.eval(ctx, all, f.Args[0])
	if err != nil {
		return nil, err
	}
	offsets, err := int64Column(off)
	if err != nil {
		return nil, err
	}
	src := arg
	hasDefault := len(f.Args) > 1
	if hasDefault {
		def, err := w.eval(ctx, all, f.Args[1])
		if err != nil {
			return nil, err
		}
		if def.DataType().ID() == arrow.NULL {
			def = array.MakeArrayOfNull(vector.Allocator, arg.DataType(), n)
		}
		if src, err = array.Concatenate([]arrow.Array{arg, def}, vector.Allocator); err != nil {
			return nil, errs.New(errs.Internal, "BUG: %s default: %v", f.Func, err)
		}
	}
	var nn *nonNulls
	if f.IgnoreNulls {
		nn = newNonNulls(arg, o.perm)
	}
	idx := make([]int32, n)
	if stop := it.run(func() {
		for pi := 0; pi+1 < len(o.parts); pi++ {
			ps, pe := o.parts[pi], o.parts[pi+1]
			for p := ps; p < pe; p++ {
				it.tick()
				r := o.perm[p]
				if offsets.IsNull(int(r)) {
					idx[r] = -1
					continue
				}
				d := offsets.Value(int(r))
				if f.Func == "lag" {
					d = -d
				}
				at := int64(-1)
				switch {
				case d == 0:
					at = int64(p)
				case nn == nil:
					if q := int64(p) + d; q >= int64(ps) && q < int64(pe) {
						at = q
					}
				case d > 0:
					if k := int64(nn.count[p+1]) + d - 1; k < int64(nn.count[pe]) {
						at = int64(nn.at[k])
					}
				default:
					if k := int64(nn.count[p]) + d; k >= int64(nn.count[ps]) {
						at = int64(nn.at[k])
					}
				}
				switch {
				case at >= 0:
					idx[r] = o.perm[at]
				case hasDefault:
					idx[r] = int32(n) + r
				default:
					idx[r] = -1
				}
			}
		}
	}); stop != nil {
		return nil, stop
	}
	return vector.Take(src, idx), nil
}

// pick computes first_value, last_value and nth_value: one row of the frame.
func (w *windowOp) pick(ctx context.Context, it *interrupt, all *vector.Batch, f plan.WindowCall, o *windowOrder, fr []frameSpans) (arrow.Array, error) {
	n := len(o.perm)
	arg, err := w.eval(ctx, all, f.Arg)
	if err != nil {
		return nil, err
	}
	var nth *array.Int64
	if f.Func == "nth_value" {
		a, err := w.eval(ctx, all, f.Args[0])
		if err != nil {
			return nil, err
		}
		if nth, err = int64Column(a); err != nil {
			return nil, err
		}
	}
	var nn *nonNulls
	if f.IgnoreNulls {
		nn = newNonNulls(arg, o.perm)
	}
	// size is the number of rows of a span the function can pick; kth the k-th
	// (from 0) of them.
	size := func(sp span) int64 {
		if nn == nil {
			return int64(sp.e - sp.s)
		}
		return int64(nn.count[sp.e] - nn.count[sp.s])
	}
	kth := func(sp span, k int64) int32 {
		if nn == nil {
			return sp.s + int32(k)
		}
		return nn.at[int64(nn.count[sp.s])+k]
	}
	idx := make([]int32, n)
	var err2 error
	if stop := it.run(func() {
		for p := range o.perm {
			it.tick()
			r := o.perm[p]
			idx[r] = -1
			spans := fr[p]
			switch f.Func {
			case "first_value":
				for _, sp := range spans {
					if size(sp) > 0 {
						idx[r] = o.perm[kth(sp, 0)]
						break
					}
				}
			case "last_value":
				for k := len(spans) - 1; k >= 0; k-- {
					if m := size(spans[k]); m > 0 {
						idx[r] = o.perm[kth(spans[k], m-1)]
						break
					}
				}
			case "nth_value":
				if nth.IsNull(int(r)) {
					continue
				}
				// A position below 1 picks nothing, as in DuckDB.
				k := nth.Value(int(r)) - 1
				if k < 0 {
					continue
				}
				for _, sp := range spans {
					if m := size(sp); k < m {
						idx[r] = o.perm[kth(sp, k)]
						break
					} else {
						k -= m
					}
				}
			}
		}
	}); stop != nil {
		return nil, stop
	}
	if err2 != nil {
		return nil, err2
	}
	return vector.Take(arg, idx), nil
}

// windowAggInputs are the expressions an aggregate window function reads per row,
// in the order its accumulator takes them.
func windowAggInputs(f plan.WindowCall) []plan.Expr {
	return f.Agg.Inputs()
}

// windowUpdate folds rows sel of the aggregate's inputs (one array each) into
// groups of acc.
func windowUpdate(acc agg.Accumulator, args []arrow.Array, sel []int32, groups []uint32) error {
	return agg.UpdateArgs(acc, args, sel, groups)
}

// windowBlock is the number of consecutive rows whose partial state is one leaf of
// a sliding frame's segment tree: frame ends inside a block fold their rows one by
// one, whole blocks and runs of blocks merge as states.
const windowBlock = 32

// windowAggregate computes an aggregate over every position's frame with
// accumulators of spec. Positions with the same frame as the one before (peers in
// a RANGE frame) share a result. Growing frames (all starting at their partition's
// first row) fold each row once into a running state that each frame copies; other
// frames fold the rows at their ends and merge the partial states of the blocks
// between from a segment tree, so a frame of w rows costs O(windowBlock + log w),
// not O(w). Rows whose keep is false (FILTER) are not aggregated.
func windowAggregate(it *interrupt, res *reservation, spec agg.Spec, args []arrow.Array, keep []bool, o *windowOrder, fr []frameSpans, growing bool) (arrow.Array, error) {
	n := len(o.perm)
	fid := make([]int32, n)
	frames := 0
	for p := range fr {
		if p == 0 || fr[p] != fr[p-1] {
			frames++
		}
		fid[p] = int32(frames - 1)
	}
	out, err := agg.New(spec)
	if err != nil {
		return nil, err
	}
	out.Resize(frames)
	// The result's states and the tree's are reserved as they grow.
	held, treeHeld := int64(0), int64(0)
	reserve := func() error {
		m := out.MemoryUsage() + treeHeld
		if err := res.grow(m - held); err != nil {
			return err
		}
		held = m
		return nil
	}
	reserveTree := func(m int64) error {
		treeHeld = m
		return reserve()
	}
	var sel []int32
	var groups []uint32
	// add queues positions [s, e) for group g; flush folds the queue.
	add := func(s, e int32, g uint32) {
		for p := s; p < e; p++ {
			it.tick()
			r := o.perm[p]
			if keep == nil || keep[r] {
				sel = append(sel, r)
				groups = append(groups, g)
			}
		}
	}
	flush := func(a agg.Accumulator, ungrouped bool) error {
		if len(sel) == 0 {
			return nil
		}
		g := groups
		if ungrouped {
			g = nil
		}
		err := windowUpdate(a, args, sel, g)
		sel, groups = sel[:0], groups[:0]
		return err
	}
	mapping := []uint32{0}
	var err2 error
	stop := it.run(func() {
		if growing {
			err2 = runningFrames(spec, out, o, fr, fid, add, flush, mapping)
			return
		}
		var tree *aggTree
		for _, f := range fr {
			for _, sp := range f {
				if sp.e-sp.s >= 2*windowBlock {
					tree, err2 = buildAggTree(spec, args, keep, o.perm, it, reserveTree)
					break
				}
			}
			if tree != nil || err2 != nil {
				break
			}
		}
		if err2 != nil {
			return
		}
		for p := range fr {
			it.tick()
			if p > 0 && fid[p] == fid[p-1] {
				continue
			}
			g := uint32(fid[p])
			for _, sp := range fr[p] {
				if sp.e <= sp.s {
					continue
				}
				bs := (sp.s + windowBlock - 1) / windowBlock
				be := sp.e / windowBlock
				if tree == nil || bs >= be {
					add(sp.s, sp.e, g)
					continue
				}
				// The rows before the first whole block, the blocks, the rows after
				// the last: in order, for the aggregates whose result depends on it.
				add(sp.s, bs*windowBlock, g)
				if err2 = flush(out, false); err2 != nil {
					return
				}
				mapping[0] = g
				if err2 = tree.merge(out, int(bs), int(be), mapping); err2 != nil {
					return
				}
				add(be*windowBlock, sp.e, g)
			}
			if len(sel) >= 1<<13 {
				if err2 = flush(out, false); err2 != nil {
					return
				}
			}
			if p&(1<<12-1) == 0 {
				if err2 = reserve(); err2 != nil {
					return
				}
			}
		}
		err2 = flush(out, false)
	})
	if stop != nil {
		return nil, stop
	}
	if err2 != nil {
		return nil, err2
	}
	if err := reserve(); err != nil {
		return nil, err
	}
	vals, err := out.Final()
	if err != nil {
		return nil, err
	}
	idx := make([]int32, n)
	for p, r := range o.perm {
		idx[r] = fid[p]
	}
	return vector.Take(vals, idx), nil
}

// runningFrames computes growing frames: per partition one accumulator folds each
// row once, and each frame's group of out takes a copy of its state (a Merge into
// the empty group).
func runningFrames(spec agg.Spec, out agg.Accumulator, o *windowOrder, fr []frameSpans, fid []int32,
	add func(s, e int32, g uint32), flush func(a agg.Accumulator, ungrouped bool) error, mapping []uint32) error {
	for pi := 0; pi+1 < len(o.parts); pi++ {
		ps, pe := o.parts[pi], o.parts[pi+1]
		run, err := agg.New(spec)
		if err != nil {
			return err
		}
		run.Resize(1)
		added := ps
		for p := ps; p < pe; p++ {
			if p > ps && fid[p] == fid[p-1] {
				continue
			}
			if e := fr[p][0].e; e > added {
				add(added, e, 0)
				if err := flush(run, true); err != nil {
					return err
				}
				added = e
			}
			mapping[0] = uint32(fid[p])
			if err := out.Merge(run, mapping); err != nil {
				return err
			}
		}
	}
	return nil
}

// aggTree is a segment tree of one-group partial states: leaf size+b holds block b's
// rows (windowBlock positions), node i the merge of nodes 2i and 2i+1. Nodes past
// the last block are nil.
type aggTree struct {
	size  int
	nodes []agg.Accumulator
}

// buildAggTree folds every block's kept rows into a leaf and merges the leaves up.
func buildAggTree(spec agg.Spec, args []arrow.Array, keep []bool, perm []int32, it *interrupt, reserve func(int64) error) (*aggTree, error) {
	nb := (len(perm) + windowBlock - 1) / windowBlock
	size := 1
	for size < nb {
		size <<= 1
	}
	t := &aggTree{size: size, nodes: make([]agg.Accumulator, 2*size)}
	var mem int64
	one := func() (agg.Accumulator, error) {
		a, err := agg.New(spec)
		if err != nil {
			return nil, err
		}
		a.Resize(1)
		return a, nil
	}
	sel := make([]int32, 0, windowBlock)
	for b := 0; b < nb; b++ {
		a, err := one()
		if err != nil {
			return nil, err
		}
		sel = sel[:0]
		for p := b * windowBlock; p < min((b+1)*windowBlock, len(perm)); p++ {
			it.tick()
			if r := perm[p]; keep == nil || keep[r] {
				sel = append(sel, r)
			}
		}
		if len(sel) > 0 {
			if err := windowUpdate(a, args, sel, nil); err != nil {
				return nil, err
			}
		}
		t.nodes[size+b] = a
		mem += a.MemoryUsage()
	}
	zero := []uint32{0}
	for i := size - 1; i >= 1; i-- {
		l, r := t.nodes[2*i], t.nodes[2*i+1]
		if l == nil {
			continue
		}
		it.tick()
		a, err := one()
		if err != nil {
			return nil, err
		}
		if err := a.Merge(l, zero); err != nil {
			return nil, err
		}
		if r != nil {
			if err := a.Merge(r, zero); err != nil {
				return nil, err
			}
		}
		t.nodes[i] = a
		mem += a.MemoryUsage()
		if i&1023 == 0 {
			if err := reserve(mem); err != nil {
				return nil, err
			}
		}
	}
	return t, reserve(mem)
}

// merge folds the states of blocks [bs, be) into out's group mapping[0], left to
// right.
func (t *aggTree) merge(out agg.Accumulator, bs, be int, mapping []uint32) error {
	var right [64]int
	nr := 0
	l, r := bs+t.size, be+t.size
	for l < r {
		if l&1 == 1 {
			if err := out.Merge(t.nodes[l], mapping); err != nil {
				return err
			}
			l++
		}
		if r&1 == 1 {
			r--
			right[nr] = r
			nr++
		}
		l >>= 1
		r >>= 1
	}
	for k := nr - 1; k >= 0; k-- {
		if err := out.Merge(t.nodes[right[k]], mapping); err != nil {
			return err
		}
	}
	return nil
}
