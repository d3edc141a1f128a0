package exec

import (
	"context"
	"sort"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
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
		all, err := drain(ctx, w.in, len(w.node.Input.Columns()), &w.res)
		w.in.Close()
		if err != nil {
			return nil, err
		}
		if all.Rows == 0 {
			return nil, nil
		}
		cols := append([]arrow.Array(nil), all.Cols...)
		for _, f := range w.node.Funcs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			// While it is computed a function holds, per row, its ordering, the
			// bounds of the row's peers and its value; then its column.
			work := int64(all.Rows) * windowRowBytes
			if err := w.res.grow(work); err != nil {
				return nil, err
			}
			c, err := w.compute(ctx, all, f)
			if err != nil {
				return nil, err
			}
			if err := w.res.resize(w.res.held - work + heldSize(c)); err != nil {
				return nil, err
			}
			cols = append(cols, c)
		}
		w.out = slices(&vector.Batch{Cols: cols, Rows: all.Rows})
	}
	if len(w.out) == 0 {
		return nil, nil
	}
	b := w.out[0]
	w.out = w.out[1:]
	return b, nil
}

// windowRowBytes is what computing a window function holds per row: its place in
// the ordering, its peers' bounds and its value.
const windowRowBytes = 4 + 2*8 + int64(unsafe.Sizeof(types.Value{}))

func (w *windowOp) Close() {
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

// compute evaluates one window function over all rows.
func (w *windowOp) compute(ctx context.Context, all *vector.Batch, f plan.WindowCall) (arrow.Array, error) {
	n := all.Rows
	var parts, orders []arrow.Array
	var cmps []func(i, j int) int
	for _, p := range f.Partition {
		a, err := w.eval(ctx, all, p)
		if err != nil {
			return nil, err
		}
		parts = append(parts, a)
		cmps = append(cmps, comparator(a, plan.SortKey{}))
	}
	var orderCmps []func(i, j int) int
	for _, k := range f.Order {
		a, err := w.eval(ctx, all, k.E)
		if err != nil {
			return nil, err
		}
		orders = append(orders, a)
		orderCmps = append(orderCmps, comparator(a, k))
	}
	failPoint(PointWindow)
	perm := vector.Identity(n)
	all2 := append(append([]func(i, j int) int(nil), cmps...), orderCmps...)
	// Ordering and computing millions of rows takes seconds: a canceled statement
	// interrupts them.
	it := &interrupt{ctx: ctx}
	if err := it.run(func() {
		sort.SliceStable(perm, func(a, b int) bool {
			it.tick()
			for _, c := range all2 {
				if r := c(int(perm[a]), int(perm[b])); r != 0 {
					return r < 0
				}
			}
			return false
		})
	}); err != nil {
		return nil, err
	}
	var arg arrow.Array
	if f.Arg != nil {
		var err error
		if arg, err = w.eval(ctx, all, f.Arg); err != nil {
			return nil, err
		}
	}
	out := make([]types.Value, n)
	same := func(cs []func(i, j int) int, a, b int32) bool {
		for _, c := range cs {
			if c(int(a), int(b)) != 0 {
				return false
			}
		}
		return true
	}
	for lo := 0; lo < n; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := lo + 1
		for hi < n && same(cmps, perm[lo], perm[hi]) {
			hi++
		}
		rows := perm[lo:hi]
		// peerEnd[i]: one past the last row that orders equal to row i.
		peerStart := make([]int, len(rows))
		peerEnd := make([]int, len(rows))
		for i := 0; i < len(rows); {
			j := i + 1
			for j < len(rows) && same(orderCmps, rows[i], rows[j]) {
				j++
			}
			for k := i; k < j; k++ {
				peerStart[k], peerEnd[k] = i, j
			}
			i = j
		}
		var err error
		if stop := it.run(func() { err = windowPartition(f, rows, peerStart, peerEnd, arg, out, it) }); stop != nil {
			return nil, stop
		}
		if err != nil {
			return nil, err
		}
		lo = hi
	}
	return vector.FromValues(f.T, out), nil
}

// windowPartition computes f for the rows of one partition (in window order),
// ticking it for every frame value it adds.
func windowPartition(f plan.WindowCall, rows []int32, peerStart, peerEnd []int, arg arrow.Array, out []types.Value, it *interrupt) error {
	n := len(rows)
	switch f.Func {
	case "row_number":
		for i, r := range rows {
			out[r] = types.IntValue(int64(i + 1))
		}
		return nil
	case "rank":
		for i, r := range rows {
			out[r] = types.IntValue(int64(peerStart[i] + 1))
		}
		return nil
	case "dense_rank":
		rank := int64(0)
		for i, r := range rows {
			if peerStart[i] == i {
				rank++
			}
			out[r] = types.IntValue(rank)
		}
		return nil
	}
	bounds := func(i int) (int, int) {
		var s, e int
		fr := f.Frame
		switch fr.Start.Kind {
		case plan.UnboundedPreceding:
			s = 0
		case plan.Preceding:
			s = frameBack(i, fr.Start.N)
		case plan.CurrentRow:
			s = i
			if !fr.Rows {
				s = peerStart[i]
			}
		case plan.Following:
			s = frameAhead(i, fr.Start.N, n)
		}
		switch fr.End.Kind {
		case plan.UnboundedFollowing:
			e = n
		case plan.Following:
			e = frameAhead(i+1, fr.End.N, n)
		case plan.CurrentRow:
			e = i + 1
			if !fr.Rows {
				e = peerEnd[i]
			}
		case plan.Preceding:
			e = frameBack(i+1, fr.End.N)
		}
		return max(s, 0), min(e, n)
	}
	if f.Frame.Start.Kind == plan.UnboundedPreceding {
		// Frames that all start at the partition's first row grow monotonically: one
		// running accumulator serves every row.
		var acc windowAcc
		acc.init(f, arg)
		added := 0
		for i, r := range rows {
			_, e := bounds(i)
			for ; added < e; added++ {
				it.tick()
				if err := acc.add(int(rows[added])); err != nil {
					return err
				}
			}
			out[r] = acc.result()
		}
		return nil
	}
	for i, r := range rows {
		s, e := bounds(i)
		var acc windowAcc
		acc.init(f, arg)
		for k := s; k < e; k++ {
			it.tick()
			if err := acc.add(int(rows[k])); err != nil {
				return err
			}
		}
		out[r] = acc.result()
	}
	return nil
}

// frameAhead returns row i moved d rows on (d ≥ 0), at most limit. An offset as
// large as 9223372036854775807 FOLLOWING means "to the end", not an overflow.
func frameAhead(i int, d int64, limit int) int {
	if d >= int64(limit-i) {
		return limit
	}
	return i + int(d)
}

// frameBack returns row i moved d rows back (d ≥ 0), at least 0.
func frameBack(i int, d int64) int {
	if d >= int64(i) {
		return 0
	}
	return i - int(d)
}

// windowAcc aggregates boxed values over one frame.
type windowAcc struct {
	fn    string
	arg   arrow.Array
	t     arrow.DataType
	count int64
	val   types.Value
	has   bool
	fsum  float64
}

func (a *windowAcc) init(f plan.WindowCall, arg arrow.Array) {
	*a = windowAcc{fn: f.Func, arg: arg, t: f.T}
}

func (a *windowAcc) add(row int) error {
	if a.fn == "count_star" {
		a.count++
		return nil
	}
	if a.arg.IsNull(row) {
		return nil
	}
	v := types.ValueAt(a.arg, row)
	a.count++
	switch a.fn {
	case "count":
	case "min":
		if !a.has || types.Compare(v, a.val) < 0 {
			a.val = v
		}
	case "max":
		if !a.has || types.Compare(v, a.val) > 0 {
			a.val = v
		}
	case "sum", "avg":
		dt := types.Unwrap(v.Type)
		switch {
		case types.IsSigned(dt):
			if a.has {
				s := a.val.I + v.I
				if (v.I > 0 && s < a.val.I) || (v.I < 0 && s > a.val.I) {
					return errs.New(errs.Analysis, "SUM overflowed BIGINT")
				}
				v.I = s
			}
			a.fsum += float64(types.ValueAt(a.arg, row).I)
		case types.IsUnsigned(dt):
			if a.has {
				v.U += a.val.U
			}
			a.fsum += float64(types.ValueAt(a.arg, row).U)
		case types.IsFloat(dt):
			if a.has {
				v.F += a.val.F
			}
			a.fsum = v.F
		case types.IsDecimal(dt):
			a.fsum += decimalFloat(v)
			if a.has {
				v.D = v.D.Add(a.val.D)
			}
		}
		a.val = v
	default:
		return errs.New(errs.Internal, "window function %s", a.fn)
	}
	a.has = true
	return nil
}

func (a *windowAcc) result() types.Value {
	switch a.fn {
	case "count", "count_star":
		return types.IntValue(a.count)
	case "avg":
		if a.count == 0 {
			return types.NullOf(a.t)
		}
		return types.FloatValue(a.fsum / float64(a.count))
	}
	if !a.has {
		return types.NullOf(a.t)
	}
	v := a.val
	if a.fn == "sum" {
		dt := types.Unwrap(v.Type)
		switch {
		case types.IsSigned(dt):
			return types.Value{Type: a.t, I: v.I}
		case types.IsUnsigned(dt):
			if a.t.ID() == arrow.INT64 {
				return types.Value{Type: a.t, I: int64(v.U)}
			}
			return types.Value{Type: a.t, U: v.U}
		case types.IsFloat(dt):
			return types.Value{Type: a.t, F: v.F}
		}
		return types.Value{Type: a.t, D: v.D}
	}
	return types.Value{Type: a.t, I: v.I, U: v.U, F: v.F, S: v.S, D: v.D, Iv: v.Iv}
}

func decimalFloat(v types.Value) float64 {
	scale := v.Type.(arrow.DecimalType).GetScale()
	return v.D.ToFloat64(scale)
}
