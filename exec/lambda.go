package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// compileLambda compiles a lambda function or a parameter of a lambda in its body.
//
// A lambda's body is computed once per batch over all the batch's elements: its
// batch holds the input's columns the body reads and the parameters of the lambdas
// around it, gathered to each element's row, followed by its own parameters (the
// elements, their positions). list_reduce computes the body once per position,
// for every list that long at once.
func (bd *builder) compileLambda(e plan.Expr) (evaluator, error) {
	if p, ok := e.(*plan.LambdaParam); ok {
		k := p.FromEnd
		return func(_ context.Context, b *vector.Batch) (arrow.Array, error) {
			return b.Cols[len(b.Cols)-k], nil
		}, nil
	}
	x := e.(*plan.ListLambda)
	list, err := bd.compile(x.List)
	if err != nil {
		return nil, err
	}
	body, err := bd.compile(x.Body)
	if err != nil {
		return nil, err
	}
	var init, cond evaluator
	if x.Cond != nil {
		if cond, err = bd.compile(x.Cond); err != nil {
			return nil, err
		}
	}
	if x.Init != nil {
		if init, err = bd.compile(x.Init); err != nil {
			return nil, err
		}
	}
	used := map[int]bool{}
	plan.ColumnsUsed(x.Body, used)
	if x.Cond != nil {
		plan.ColumnsUsed(x.Cond, used)
	}
	lf := &lambdaFn{x: x, body: body, cond: cond, used: used}
	return func(ctx context.Context, b *vector.Batch) (arrow.Array, error) {
		arr, err := list(ctx, b)
		if err != nil {
			return nil, err
		}
		la, ok := kernels.Decode(arr).(*array.List)
		if !ok {
			return nil, errs.New(errs.Internal, "%s of a %s column", x.Name, types.Name(arr.DataType()))
		}
		if x.Kind == plan.LambdaReduce {
			var iv arrow.Array
			if init != nil {
				if iv, err = init(ctx, b); err != nil {
					return nil, err
				}
			}
			return lf.reduce(ctx, b, la, iv)
		}
		return lf.elementwise(ctx, b, la)
	}, nil
}

// lambdaFn is a compiled lambda function.
type lambdaFn struct {
	x    *plan.ListLambda
	body evaluator
	cond evaluator    // a comprehension's IF; nil without one
	used map[int]bool // the input's columns the body (and the IF) reads
}

// gather returns the columns of the batch for the body over the rows rows of b: the
// columns the body reads and the enclosing lambdas' parameters, gathered to rows,
// and room for the lambda's own parameters after them.
func (f *lambdaFn) gather(b *vector.Batch, rows []int32) []arrow.Array {
	w := len(b.Cols)
	cols := make([]arrow.Array, w+f.x.Params)
	for c := range f.used {
		if c < w && b.Cols[c] != nil {
			cols[c] = vector.Take(b.Cols[c], rows)
		}
	}
	for c := w - f.x.Outer; c < w; c++ {
		cols[c] = vector.Take(b.Cols[c], rows)
	}
	return cols
}

// run computes the body (or ev of type t) over cols, n rows, as an array without a
// dictionary.
func (f *lambdaFn) run(ctx context.Context, cols []arrow.Array, n int) (arrow.Array, error) {
	return f.runExpr(ctx, f.body, f.x.Body.Type(), cols, n)
}

func (f *lambdaFn) runExpr(ctx context.Context, ev evaluator, t arrow.DataType, cols []arrow.Array, n int) (arrow.Array, error) {
	if n == 0 {
		return kernels.ConstArray(types.NullOf(t), 0), nil
	}
	out, err := ev(ctx, &vector.Batch{Cols: cols, Rows: n})
	if err != nil {
		return nil, err
	}
	return kernels.Decode(out), nil
}

// elementwise computes list_transform and list_filter: the body over every
// element of every list at once, and the lists rebuilt from its results.
func (f *lambdaFn) elementwise(ctx context.Context, b *vector.Batch, la *array.List) (arrow.Array, error) {
	n := la.Len()
	offs := la.Offsets()
	base := la.Data().Offset()
	var elems, rows []int32
	var pos []int64
	for r := 0; r < n; r++ {
		if la.IsNull(r) {
			continue
		}
		s, e := offs[base+r], offs[base+r+1]
		for j := s; j < e; j++ {
			elems = append(elems, j)
			rows = append(rows, int32(r))
			pos = append(pos, int64(j-s+1))
		}
	}
	cols := f.gather(b, rows)
	w := len(b.Cols)
	values := vector.Take(la.ListValues(), elems)
	cols[w] = values
	if f.x.Params > 1 {
		cols[w+1] = array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, len(pos),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(pos))}, nil, 0, 0))
	}
	if f.x.Kind == plan.LambdaFilter || f.cond != nil {
		cond := f.body
		if f.cond != nil {
			cond = f.cond
		}
		out, err := f.runExpr(ctx, cond, types.Boolean, cols, len(elems))
		if err != nil {
			return nil, err
		}
		keep, ok := out.(*array.Boolean)
		if !ok {
			return nil, errs.New(errs.Internal, "%s: the lambda gave %s, not BOOLEAN", f.x.Name, types.Name(out.DataType()))
		}
		counts := make([]int32, n)
		var kept []int32
		for j := range elems {
			if keep.IsValid(j) && keep.Value(j) {
				kept = append(kept, int32(j))
				counts[rows[j]]++
			}
		}
		if f.x.Kind == plan.LambdaFilter {
			return rebuildList(la, la.DataType(), counts, vector.Take(values, kept)), nil
		}
		// A comprehension computes its body for the kept elements only.
		for c, a := range cols {
			if a != nil {
				cols[c] = vector.Take(a, kept)
			}
		}
		out, err = f.run(ctx, cols, len(kept))
		if err != nil {
			return nil, err
		}
		return rebuildList(la, f.x.T, counts, out), nil
	}
	out, err := f.run(ctx, cols, len(elems))
	if err != nil {
		return nil, err
	}
	counts := make([]int32, n)
	for _, r := range rows {
		counts[r]++
	}
	return rebuildList(la, f.x.T, counts, out), nil
}

// rebuildList makes a list of type t with la's NULL rows whose row r holds the next
// counts[r] values of child.
func rebuildList(la *array.List, t arrow.DataType, counts []int32, child arrow.Array) arrow.Array {
	n := len(counts)
	offs := make([]int32, n+1)
	var valid []byte
	nulls := la.NullN()
	if nulls > 0 {
		valid = make([]byte, bitutil.BytesForBits(int64(n)))
	}
	for r, c := range counts {
		offs[r+1] = offs[r] + c
		if valid != nil && la.IsValid(r) {
			bitutil.SetBit(valid, r)
		}
	}
	var vb *memory.Buffer
	if valid != nil {
		vb = memory.NewBufferBytes(valid)
	}
	data := array.NewData(t, n, []*memory.Buffer{vb, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs))},
		[]arrow.ArrayData{child.Data()}, nulls, 0)
	return array.MakeFromData(data)
}

// reduce computes list_reduce position by position: at each position the body
// folds the next element into the accumulated value of every list that long at
// once; a list's value is final when it has no more elements.
func (f *lambdaFn) reduce(ctx context.Context, b *vector.Batch, la *array.List, initial arrow.Array) (arrow.Array, error) {
	n := la.Len()
	offs := la.Offsets()
	base := la.Data().Offset()
	values := la.ListValues()
	// live are the rows still folding, starts their first elements, lens their
	// lengths; acc holds their accumulated values, in the same order.
	var live, starts, lens []int32
	for r := 0; r < n; r++ {
		if la.IsNull(r) {
			continue
		}
		s, e := offs[base+r], offs[base+r+1]
		if e == s && initial == nil {
			return nil, errs.New(errs.Analysis, "%s of an empty list needs an initial value", f.x.Name)
		}
		live, starts, lens = append(live, int32(r)), append(starts, s), append(lens, e-s)
	}
	var acc arrow.Array
	p := int32(1)
	if initial != nil {
		acc = vector.Take(kernels.Decode(initial), live)
	} else {
		acc = vector.Take(values, starts)
		p = 2
	}
	// Each finished piece of values and the rows it holds, for the result.
	var pieces []arrow.Array
	var pieceRows [][]int32
	for len(live) > 0 {
		// The rows with no element at position p are done.
		var done, keep []int32
		for i, l := range lens {
			if l < p {
				done = append(done, int32(i))
			} else {
				keep = append(keep, int32(i))
			}
		}
		if len(done) > 0 {
			rows := make([]int32, len(done))
			for k, i := range done {
				rows[k] = live[i]
			}
			pieces, pieceRows = append(pieces, vector.Take(acc, done)), append(pieceRows, rows)
			if len(keep) == 0 {
				break
			}
			acc = vector.Take(acc, keep)
			live, starts, lens = pick(live, keep), pick(starts, keep), pick(lens, keep)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cols := f.gather(b, live)
		w := len(b.Cols)
		elems := make([]int32, len(live))
		for i, s := range starts {
			elems[i] = s + p - 1
		}
		cols[w] = acc
		cols[w+1] = vector.Take(values, elems)
		if f.x.Params > 2 {
			cols[w+2] = kernels.ConstArray(types.Value{Type: types.Int64, I: int64(p)}, len(live))
		}
		next, err := f.run(ctx, cols, len(live))
		if err != nil {
			return nil, err
		}
		acc = next
		p++
	}
	// Each row's value is at its place in the pieces put end to end; NULL lists
	// take -1, which gathers NULL.
	at := make([]int32, n)
	for i := range at {
		at[i] = -1
	}
	k := int32(0)
	for i, rows := range pieceRows {
		for j, r := range rows {
			at[r] = k + int32(j)
		}
		k += int32(pieces[i].Len())
	}
	if len(pieces) == 0 {
		return kernels.ConstArray(types.NullOf(f.x.T), n), nil
	}
	all := pieces[0]
	if len(pieces) > 1 {
		var err error
		if all, err = array.Concatenate(pieces, memory.DefaultAllocator); err != nil {
			return nil, errs.New(errs.Internal, "%s: %v", f.x.Name, err)
		}
	}
	return vector.Take(all, at), nil
}

// pick returns s at the positions idx.
func pick(s []int32, idx []int32) []int32 {
	out := make([]int32, len(idx))
	for k, i := range idx {
		out[k] = s[i]
	}
	return out
}
