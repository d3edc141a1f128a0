package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// iterationOverhead is what one iteration of a recursive query holds besides its
// rows' bytes (its batch and arrays): counted so that a recursion that adds a row
// at a time still reaches the statement's memory limit.
const iterationOverhead = 1 << 10

// recursiveOp runs a WITH RECURSIVE query: the anchor, then the recursive part over
// the rows the previous run added, until a run adds none. Every row produced is held
// under the statement's budget, and the loop stops between iterations when the
// statement is canceled, so a recursion without end fails with RESOURCE_EXHAUSTED or
// ends on cancel.
type recursiveOp struct {
	bd   *builder
	node *plan.RecursiveCTE
	res  reservation
	out  []*vector.Batch
	next int
	done bool
	// seen holds every row produced so far, for UNION (nil for UNION ALL).
	seen *kernels.KeyTable
}

func (o *recursiveOp) Next(ctx context.Context) (*vector.Batch, error) {
	if !o.done {
		o.done = true
		if err := o.run(ctx); err != nil {
			return nil, err
		}
	}
	if o.next >= len(o.out) {
		return nil, nil
	}
	b := o.out[o.next]
	o.next++
	return &vector.Batch{Cols: append([]arrow.Array(nil), b.Cols...), Rows: b.Rows}, nil
}

func (o *recursiveOp) run(ctx context.Context) error {
	width := len(o.node.Cols)
	if !o.node.All {
		kt := make([]arrow.DataType, width)
		for i, c := range o.node.Cols {
			kt[i] = types.Unwrap(c.Type)
		}
		o.seen = kernels.NewKeyTable(kt)
	}
	rows, err := o.drainNew(ctx, o.node.Anchor)
	if err != nil {
		return err
	}
	steps, subs := sharedUnder(o.node.Step)
	for rows.Rows > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		o.out = append(o.out, slices(rows)...)
		o.bd.setWork(o.node.Work, rows)
		// What the recursive part shares, and the scalar subqueries it computes once,
		// are computed again over the new work table.
		o.bd.forgetShared(steps)
		o.bd.forgetSubqueries(subs)
		if rows, err = o.drainNew(ctx, o.node.Step); err != nil {
			return err
		}
	}
	o.bd.setWork(o.node.Work, nil)
	return nil
}

// drainNew runs n and returns its rows, without those produced before under UNION,
// holding them under the budget.
func (o *recursiveOp) drainNew(ctx context.Context, n plan.Node) (*vector.Batch, error) {
	op, err := o.bd.build(n)
	if err != nil {
		return nil, err
	}
	defer op.Close()
	tmp := reservation{budget: o.res.budget}
	b, err := drain(ctx, op, len(o.node.Cols), &tmp)
	tmp.release()
	if err != nil {
		return nil, err
	}
	if o.seen != nil && b.Rows > 0 {
		before, next := o.seen.MemoryUsage(), uint32(o.seen.Len())
		ids := make([]uint32, b.Rows)
		cols := make([]arrow.Array, len(b.Cols))
		for i, c := range b.Cols {
			cols[i] = kernels.Decode(c)
		}
		o.seen.Insert(cols, nil, ids)
		// Ids are given in order of first appearance: a row is new when its id is
		// the next one not given before.
		sel := make([]int32, 0, b.Rows)
		for r, id := range ids {
			if id == next {
				sel = append(sel, int32(r))
				next++
			}
		}
		if err := o.res.grow(o.seen.MemoryUsage() - before); err != nil {
			return nil, err
		}
		if len(sel) < b.Rows {
			b = (&vector.Batch{Cols: b.Cols, Rows: b.Rows, Sel: sel}).Compact()
		}
	}
	if err := o.res.grow(batchSize(b) + iterationOverhead); err != nil {
		return nil, err
	}
	return b, nil
}

func (o *recursiveOp) Close() {
	o.out = nil
	o.res.release()
}

// setWork makes b the rows w reads (nil: none).
func (bd *builder) setWork(w *plan.WorkTable, b *vector.Batch) {
	bd.mu.Lock()
	defer bd.mu.Unlock()
	if bd.work == nil {
		bd.work = map[*plan.WorkTable]*vector.Batch{}
	}
	bd.work[w] = b
}

func (bd *builder) buildWorkTable(w *plan.WorkTable) Operator {
	bd.mu.Lock()
	defer bd.mu.Unlock()
	var parts []*vector.Batch
	if b := bd.work[w]; b != nil && b.Rows > 0 {
		parts = slices(b)
	}
	return &workOp{parts: parts}
}

// workOp reads a work table.
type workOp struct {
	parts []*vector.Batch
	next  int
}

func (o *workOp) Next(ctx context.Context) (*vector.Batch, error) {
	if o.next >= len(o.parts) {
		return nil, nil
	}
	b := o.parts[o.next]
	o.next++
	return &vector.Batch{Cols: append([]arrow.Array(nil), b.Cols...), Rows: b.Rows}, nil
}

func (o *workOp) Close() {}

// sharedUnder lists the shared plans n reads, and the scalar subqueries of its
// expressions and theirs.
func sharedUnder(n plan.Node) (out []*plan.Shared, subs []*plan.Subquery) {
	seen := map[plan.Node]bool{}
	var walk func(plan.Node)
	walk = func(n plan.Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		switch x := n.(type) {
		case *plan.Shared:
			out = append(out, x)
			walk(x.Input)
		case *plan.RecursiveCTE:
			walk(x.Anchor)
			walk(x.Step)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
		plan.ForEachSubquery(n, walk)
		subs = append(subs, plan.ScalarSubqueries(n)...)
	}
	walk(n)
	return out, subs
}

// forgetSubqueries drops the values computed for the scalar subqueries ss, which
// are computed again when next read.
func (bd *builder) forgetSubqueries(ss []*plan.Subquery) {
	bd.mu.Lock()
	defer bd.mu.Unlock()
	for _, s := range ss {
		delete(bd.subqueries, s)
	}
}

// forgetShared drops the rows computed for the shared plans ss, which are computed
// again when next read.
func (bd *builder) forgetShared(ss []*plan.Shared) {
	bd.mu.Lock()
	defer bd.mu.Unlock()
	for _, s := range ss {
		if r := bd.shared[s]; r != nil {
			r.res.release()
			delete(bd.shared, s)
		}
	}
}
