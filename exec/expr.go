package exec

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// evaluator computes an expression over every physical row of a batch. Evaluators
// are safe for concurrent use by the workers of a pipeline.
type evaluator func(ctx context.Context, b *vector.Batch) (arrow.Array, error)

var comparisons = map[string]bool{"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true}

// compile turns a bound expression into an evaluator.
func (bd *builder) compile(e plan.Expr) (evaluator, error) {
	switch x := e.(type) {
	case *plan.ColRef:
		idx := x.Idx
		return func(_ context.Context, b *vector.Batch) (arrow.Array, error) {
			if idx >= len(b.Cols) || b.Cols[idx] == nil {
				panic(fmt.Sprintf("BUG: column %d (%s) was not produced", idx, x.Name))
			}
			return b.Cols[idx], nil
		}, nil
	case *plan.Unused:
		return func(context.Context, *vector.Batch) (arrow.Array, error) { return nil, nil }, nil
	case *plan.Literal:
		// Arrays are never written once made, so every batch shares one array of the
		// value (a slice of it when the batch is shorter). The array is as long as
		// the first batch: a full one over a scan, one row over a single row, where a
		// statement of thousands of constants would otherwise hold a batch-sized
		// array for each.
		v := x.V
		var made atomic.Pointer[arrow.Array]
		return func(_ context.Context, b *vector.Batch) (arrow.Array, error) {
			if p := made.Load(); p != nil && (*p).Len() >= b.Rows {
				if (*p).Len() == b.Rows {
					return *p, nil
				}
				return array.NewSlice(*p, 0, int64(b.Rows)), nil
			}
			a := kernels.ConstArray(v, b.Rows)
			made.Store(&a)
			if a.Len() == b.Rows {
				return a, nil
			}
			return array.NewSlice(a, 0, int64(b.Rows)), nil
		}, nil
	case *plan.Cast:
		in, err := bd.compile(x.E)
		if err != nil {
			return nil, err
		}
		to := x.To
		return func(ctx context.Context, b *vector.Batch) (arrow.Array, error) {
			a, err := in(ctx, b)
			if err != nil {
				return nil, err
			}
			return kernels.Cast(a, to)
		}, nil
	case *plan.Call:
		if x.Fn.Name == "try" && len(x.Args) == 1 {
			return bd.compileTry(x)
		}
		if comparisons[x.Fn.Name] && len(x.Args) == 2 {
			if lit, ok := x.Args[1].(*plan.Literal); ok && !lit.V.Null {
				left, err := bd.compile(x.Args[0])
				if err != nil {
					return nil, err
				}
				op, v := x.Fn.Name, lit.V
				return func(ctx context.Context, b *vector.Batch) (arrow.Array, error) {
					a, err := left(ctx, b)
					if err != nil {
						return nil, err
					}
					return kernels.CompareConst(op, a, v)
				}, nil
			}
		}
		args := make([]evaluator, len(x.Args))
		for i, a := range x.Args {
			ev, err := bd.compile(a)
			if err != nil {
				return nil, err
			}
			args[i] = ev
		}
		fn := x.Fn
		return func(ctx context.Context, b *vector.Batch) (arrow.Array, error) {
			vals := make([]arrow.Array, len(args))
			for i, a := range args {
				v, err := a(ctx, b)
				if err != nil {
					return nil, err
				}
				vals[i] = v
			}
			if fn.EvalSized != nil {
				return bd.evalSized(fn, vals, b.Rows)
			}
			if fn.EvalInto != nil {
				if s := scratchOf(ctx); s != nil {
					return fn.EvalInto(vals, b.Rows, s)
				}
			}
			return fn.Eval(vals, b.Rows)
		}, nil
	case *plan.Case:
		type branch struct{ cond, then evaluator }
		branches := make([]branch, len(x.Whens))
		for i, w := range x.Whens {
			c, err := bd.compile(w.Cond)
			if err != nil {
				return nil, err
			}
			t, err := bd.compile(w.Then)
			if err != nil {
				return nil, err
			}
			branches[i] = branch{c, t}
		}
		els, err := bd.compile(x.Else)
		if err != nil {
			return nil, err
		}
		if mayFail(x) {
			thens := make([]evaluator, 0, len(branches)+1)
			conds := make([]evaluator, 0, len(branches))
			for _, br := range branches {
				conds = append(conds, br.cond)
				thens = append(thens, br.then)
			}
			return caseByRows(conds, append(thens, els), x.T), nil
		}
		return func(ctx context.Context, b *vector.Batch) (arrow.Array, error) {
			out, err := els(ctx, b)
			if err != nil {
				return nil, err
			}
			// Later branches first, so that the first true condition wins.
			for i := len(branches) - 1; i >= 0; i-- {
				c, err := branches[i].cond(ctx, b)
				if err != nil {
					return nil, err
				}
				t, err := branches[i].then(ctx, b)
				if err != nil {
					return nil, err
				}
				out = kernels.IfElse(c.(*array.Boolean), t, out)
			}
			return out, nil
		}, nil
	case *plan.InList:
		return bd.compileInList(x)
	case *plan.Subquery:
		return bd.compileSubquery(x)
	case *plan.InSubquery:
		return bd.compileInSubquery(x)
	case *plan.ListLambda, *plan.LambdaParam:
		return bd.compileLambda(x)
	}
	return nil, errs.New(errs.Internal, "cannot evaluate expression %s", e)
}

func (bd *builder) compileInList(x *plan.InList) (evaluator, error) {
	t := x.E.Type()
	eq, err := kernels.Resolve("=", []arrow.DataType{t, t})
	if err != nil {
		return nil, err
	}
	or, err := kernels.Resolve("or", []arrow.DataType{types.Boolean, types.Boolean})
	if err != nil {
		return nil, err
	}
	not, err := kernels.Resolve("not", []arrow.DataType{types.Boolean})
	if err != nil {
		return nil, err
	}
	subject, err := bd.compile(x.E)
	if err != nil {
		return nil, err
	}
	items := make([]evaluator, len(x.List))
	consts := make([]*types.Value, len(x.List))
	for i, it := range x.List {
		if lit, ok := it.(*plan.Literal); ok && !lit.V.Null {
			v := lit.V
			consts[i] = &v
			continue
		}
		if items[i], err = bd.compile(it); err != nil {
			return nil, err
		}
	}
	negate := x.Not
	return func(ctx context.Context, b *vector.Batch) (arrow.Array, error) {
		s, err := subject(ctx, b)
		if err != nil {
			return nil, err
		}
		var acc arrow.Array
		for i := range items {
			var m arrow.Array
			if consts[i] != nil {
				if m, err = kernels.CompareConst("=", s, *consts[i]); err != nil {
					return nil, err
				}
			} else {
				v, err := items[i](ctx, b)
				if err != nil {
					return nil, err
				}
				if m, err = eq.Eval([]arrow.Array{s, v}, b.Rows); err != nil {
					return nil, err
				}
			}
			if acc == nil {
				acc = m
			} else if acc, err = or.Eval([]arrow.Array{acc, m}, b.Rows); err != nil {
				return nil, err
			}
		}
		if negate {
			return not.Eval([]arrow.Array{acc}, b.Rows)
		}
		return acc, nil
	}, nil
}

// compileSubquery evaluates an uncorrelated scalar subquery once, on first use, for
// every expression of the statement that reads it.
func (bd *builder) compileSubquery(x *plan.Subquery) (evaluator, error) {
	bd.mu.Lock()
	defer bd.mu.Unlock()
	if ev, ok := bd.subqueries[x]; ok {
		return ev, nil
	}
	if bd.subqueries == nil {
		bd.subqueries = map[*plan.Subquery]evaluator{}
	}
	ev := bd.subqueryOnce(x)
	bd.subqueries[x] = ev
	return ev, nil
}

func (bd *builder) subqueryOnce(x *plan.Subquery) evaluator {
	var once sync.Once
	var val types.Value
	var verr error
	return func(ctx context.Context, b *vector.Batch) (arrow.Array, error) {
		once.Do(func() {
			val = types.NullOf(x.T)
			recs, err := bd.run(ctx, x.Plan, false)
			if err != nil {
				verr = err
				return
			}
			n := 0
			for _, r := range recs {
				for i := 0; i < int(r.NumRows()); i++ {
					if n == 0 {
						val = types.ValueAt(r.Column(0), i)
					}
					n++
				}
			}
			if n > 1 {
				verr = errs.New(errs.Analysis, kernels.MultipleRowsMessage)
			}
		})
		if verr != nil {
			return nil, verr
		}
		return kernels.ConstArray(val, b.Rows), nil
	}
}

// selectTrue narrows b's selection to the rows where mask is true (not NULL).
func selectTrue(ctx context.Context, b *vector.Batch, mask arrow.Array) (*vector.Batch, error) {
	m, ok := mask.(*array.Boolean)
	if !ok {
		return nil, errs.New(errs.Internal, "BUG: filter produced %s", mask.DataType())
	}
	// Branch-free over the value and validity bitmaps: every row is written, and the
	// count advances by its bit.
	vals := m.Data().Buffers()[1].Bytes()
	var valid []byte
	if m.NullN() > 0 {
		valid = m.NullBitmapBytes()
	}
	off := m.Data().Offset()
	bit := func(j int) int {
		v := int(vals[j>>3]>>(j&7)) & 1
		if valid != nil {
			v &= int(valid[j>>3]>>(j&7)) & 1
		}
		return v
	}
	sel := selection(ctx, b.Len())
	n := 0
	if b.Sel == nil {
		for i := 0; i < b.Rows; i++ {
			sel[n] = int32(i)
			n += bit(off + i)
		}
	} else {
		for _, i := range b.Sel {
			sel[n] = i
			n += bit(off + int(i))
		}
	}
	return keep(ctx, b, sel[:n]), nil
}

// selectPerEntry keeps the rows of b by a condition on column col alone, judged once
// per entry of the column's dictionary: pass computes the condition over the
// dictionary's values, and a row is kept when it is TRUE for the row's entry. ok is
// false, and nothing done, where col is not a dictionary array with no NULL index and
// no more entries than b has rows (a slice of a large dictionary is cheaper row by
// row).
func selectPerEntry(ctx context.Context, b *vector.Batch, col int, pass func(dict arrow.Array) (arrow.Array, error)) (*vector.Batch, bool, error) {
	d, isDict := b.Cols[col].(*array.Dictionary)
	if !isDict || d.Indices().NullN() > 0 || d.Dictionary().Len() > b.Len() {
		return nil, false, nil
	}
	res, err := pass(d.Dictionary())
	if err != nil {
		return nil, true, err
	}
	m, isBool := res.(*array.Boolean)
	if !isBool || m.Len() != d.Dictionary().Len() {
		return nil, true, errs.New(errs.Internal, "BUG: a filter over a dictionary produced %s", res.DataType())
	}
	kept := make([]byte, m.Len())
	for e := range kept {
		if m.IsValid(e) && m.Value(e) {
			kept[e] = 1
		}
	}
	entries, _ := kernels.DictEntries(d, nil)
	sel := selection(ctx, b.Len())
	n := selectEntries(entries, b.Sel, b.Rows, kept, sel)
	return keep(ctx, b, sel[:n]), true, nil
}

// selectEntries writes into out the rows of sel (nil: rows 0..rows-1) whose entry
// entries[i] is kept (kept[e] is 0 or 1), in order, and returns how many: branch-free,
// every row written and the count advanced by its entry's flag.
func selectEntries(entries []int32, sel []int32, rows int, kept []byte, out []int32) int {
	n := 0
	if sel == nil {
		out = out[:rows]
		for i, e := range entries[:rows] {
			out[n] = int32(i)
			n += int(kept[e])
		}
		return n
	}
	out = out[:len(sel)]
	for _, i := range sel {
		out[n] = i
		n += int(kept[entries[i]])
	}
	return n
}

// keep returns b with the rows sel (a subset of its selection, in order) selected:
// b itself when that is every row, compacted when they are few, so that later
// expressions touch fewer rows — into buffers the scan lends, where its consumer
// keeps nothing of a batch (lentBytes).
func keep(ctx context.Context, b *vector.Batch, sel []int32) *vector.Batch {
	if b.Sel == nil && len(sel) == b.Rows {
		return b
	}
	out := &vector.Batch{Cols: b.Cols, Rows: b.Rows, Sel: sel}
	if len(sel)*4 < b.Rows {
		return out.CompactInto(lentBytes(ctx))
	}
	return out
}

// selectCompare keeps the rows of b where column col op v is true: in one pass when
// kernels.SelectConst takes the column's type, once per entry of a dictionary,
// through a mask otherwise.
func selectCompare(ctx context.Context, b *vector.Batch, col int, op string, v types.Value) (*vector.Batch, error) {
	if sel, ok := kernels.SelectConst(op, b.Cols[col], v, b.Sel, lentSelection(ctx, b.Len())); ok {
		return keep(ctx, b, sel), nil
	}
	if out, ok, err := selectPerEntry(ctx, b, col, func(dict arrow.Array) (arrow.Array, error) {
		return kernels.CompareConst(op, dict, v)
	}); ok || err != nil {
		return out, err
	}
	mask, err := kernels.CompareConst(op, b.Cols[col], v)
	if err != nil {
		return nil, err
	}
	return selectTrue(ctx, b, mask)
}

// compileInSubquery reads the subquery once into a key table and tests membership
// with SQL's rules: NULL when not found and either the value or some element is NULL.
func (bd *builder) compileInSubquery(x *plan.InSubquery) (evaluator, error) {
	subject, err := bd.compile(x.E)
	if err != nil {
		return nil, err
	}
	t := x.E.Type()
	var once sync.Once
	var set *kernels.KeyTable
	var hasNull, empty bool
	var serr error
	negate := x.Not
	return func(ctx context.Context, b *vector.Batch) (arrow.Array, error) {
		once.Do(func() {
			recs, err := bd.run(ctx, x.Plan, false)
			if err != nil {
				serr = err
				return
			}
			set = kernels.NewKeyTable([]arrow.DataType{types.Unwrap(t)})
			empty = true
			for _, r := range recs {
				col := r.Column(0)
				if col.NullN() > 0 {
					hasNull = true
				}
				if col.Len() > 0 {
					empty = false
				}
				ids := make([]uint32, col.Len())
				set.Insert([]arrow.Array{col}, nil, ids)
			}
		})
		if serr != nil {
			return nil, serr
		}
		s, err := subject(ctx, b)
		if err != nil {
			return nil, err
		}
		ids := make([]uint32, b.Rows)
		set.Find([]arrow.Array{s}, nil, ids)
		out := array.NewBooleanBuilder(vector.Allocator)
		defer out.Release()
		out.Reserve(b.Rows)
		for i := 0; i < b.Rows; i++ {
			switch {
			case empty:
				out.UnsafeAppend(negate)
			case s.IsValid(i) && ids[i] != kernels.NotFound:
				out.UnsafeAppend(!negate)
			case s.IsNull(i) || hasNull:
				out.UnsafeAppendBoolToBitmap(false)
			default:
				out.UnsafeAppend(negate)
			}
		}
		return out.NewArray(), nil
	}, nil
}

// caseByRows evaluates a CASE whose branches could fail: each row is assigned to the
// first branch whose condition holds, each branch is evaluated only on its rows, and
// the results are gathered back into row order. results has one more entry than
// conds: the ELSE.
func caseByRows(conds, results []evaluator, t arrow.DataType) evaluator {
	return func(ctx context.Context, b *vector.Batch) (arrow.Array, error) {
		b = b.Compact()
		n := b.Rows
		branch := make([]int, n)
		for i := range branch {
			branch[i] = -1
		}
		remaining := n
		for k, c := range conds {
			if remaining == 0 {
				break
			}
			var rows []int32
			for i, br := range branch {
				if br < 0 {
					rows = append(rows, int32(i))
				}
			}
			sub := (&vector.Batch{Cols: b.Cols, Rows: n, Sel: rows}).Compact()
			m, err := c(ctx, sub)
			if err != nil {
				return nil, err
			}
			mb := m.(*array.Boolean)
			for j, r := range rows {
				if mb.IsValid(j) && mb.Value(j) {
					branch[r] = k
					remaining--
				}
			}
		}
		parts := make([]arrow.Array, 0, len(results))
		pos := make([]int32, n)
		offset := 0
		for k, ev := range results {
			want := k
			if k == len(results)-1 {
				want = -1
			}
			var rows []int32
			for i, br := range branch {
				if br == want {
					rows = append(rows, int32(i))
				}
			}
			if len(rows) == 0 {
				continue
			}
			a, err := ev(ctx, (&vector.Batch{Cols: b.Cols, Rows: n, Sel: rows}).Compact())
			if err != nil {
				return nil, err
			}
			for j, r := range rows {
				pos[r] = int32(offset + j)
			}
			offset += len(rows)
			parts = append(parts, kernels.Decode(a))
		}
		if len(parts) == 0 {
			return kernels.ConstArray(types.NullOf(t), 0), nil
		}
		all, err := array.Concatenate(parts, vector.Allocator)
		if err != nil {
			return nil, errs.New(errs.Internal, "cannot assemble CASE: %w", err)
		}
		return vector.Take(all, pos), nil
	}
}

// scratchKey marks the context of an evaluation whose results are dead once its
// batch is done: functions that can take their results' values from the
// kernels.Scratch it carries do (see hashAggregate.inParallel).
type scratchKey struct{}

// withScratch returns ctx whose evaluations lend from s; a nil s ends the lending.
func withScratch(ctx context.Context, s *kernels.Scratch) context.Context {
	if s == nil && scratchOf(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, scratchKey{}, s)
}

func scratchOf(ctx context.Context) *kernels.Scratch {
	s, _ := ctx.Value(scratchKey{}).(*kernels.Scratch)
	return s
}
