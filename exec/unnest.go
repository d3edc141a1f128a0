package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/vector"
)

// unnestOp repeats its input's rows once per element of their lists. It works a
// batch at a time: for each output batch it builds one index of the input rows to
// repeat and one index per list into the list's child array, and gathers every
// column with vector.Take. An output batch holds at most vector.BatchSize rows, a
// row with a longer list continuing in the next, so the operator holds one input
// batch and one output batch whatever the lists' lengths.
type unnestOp struct {
	in    Operator
	node  *plan.Unnest
	lstOf []int // for each column, its position in node.Lists, or -1

	cur  *vector.Batch
	lsts []array.ListLike // the current batch's lists; nil for a NULL-typed column
	row  int              // next input row of cur
	elem int              // next element of that row
}

var _ Operator = (*unnestOp)(nil)

func (bd *builder) buildUnnest(x *plan.Unnest) (Operator, error) {
	in, err := bd.build(x.Input)
	if err != nil {
		return nil, err
	}
	lstOf := make([]int, len(x.Cols))
	for i := range lstOf {
		lstOf[i] = -1
	}
	for j, k := range x.Lists {
		lstOf[k] = j
	}
	return &unnestOp{in: in, node: x, lstOf: lstOf}, nil
}

// rowLen is the number of rows input row i unnests into: its longest list.
func (u *unnestOp) rowLen(i int) int {
	n := 0
	for _, l := range u.lsts {
		if l == nil || l.IsNull(i) {
			continue
		}
		s, e := l.ValueOffsets(i)
		n = max(n, int(e-s))
	}
	return n
}

func (u *unnestOp) next(ctx context.Context) error {
	for {
		b, err := u.in.Next(ctx)
		if err != nil || b == nil {
			u.cur = nil
			return err
		}
		if b.Len() == 0 {
			continue
		}
		b = b.Compact()
		u.cur, u.row, u.elem = b, 0, 0
		u.lsts = u.lsts[:0]
		for _, k := range u.node.Lists {
			c := b.Cols[k]
			if c.DataType().ID() == arrow.NULL {
				u.lsts = append(u.lsts, nil)
				continue
			}
			l, ok := c.(array.ListLike)
			if !ok {
				return errs.New(errs.Internal, "unnest of a %s column", c.DataType())
			}
			u.lsts = append(u.lsts, l)
		}
		return nil
	}
}

func (u *unnestOp) Next(ctx context.Context) (*vector.Batch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, errs.New(errs.Canceled, "statement canceled: %w", err)
		}
		if u.cur == nil || u.row >= u.cur.Rows {
			if err := u.next(ctx); err != nil {
				return nil, err
			}
			if u.cur == nil {
				return nil, nil
			}
		}
		rep := make([]int32, 0, vector.BatchSize)
		elems := make([][]int32, len(u.lsts))
		for u.row < u.cur.Rows && len(rep) < vector.BatchSize {
			n := u.rowLen(u.row)
			take := min(n-u.elem, vector.BatchSize-len(rep))
			for j, l := range u.lsts {
				var s, e int64
				if l != nil && !l.IsNull(u.row) {
					s, e = l.ValueOffsets(u.row)
				}
				for k := u.elem; k < u.elem+take; k++ {
					if int64(k) < e-s {
						elems[j] = append(elems[j], int32(s)+int32(k))
					} else {
						elems[j] = append(elems[j], -1)
					}
				}
			}
			for k := 0; k < take; k++ {
				rep = append(rep, int32(u.row))
			}
			u.elem += take
			if u.elem >= n {
				u.row, u.elem = u.row+1, 0
			}
		}
		if len(rep) == 0 {
			continue
		}
		cols := make([]arrow.Array, len(u.cur.Cols))
		for i, c := range u.cur.Cols {
			switch j := u.lstOf[i]; {
			case j >= 0 && j < len(u.node.Ordinal) && u.node.Ordinal[j]:
				cols[i] = elementPositions(elems[j], rep, u.lsts[j])
			case j >= 0:
				if l := u.lsts[j]; l != nil {
					cols[i] = vector.Take(l.ListValues(), elems[j])
				} else {
					cols[i] = array.NewNull(len(rep))
				}
			case c != nil:
				cols[i] = vector.Take(c, rep)
			}
		}
		return &vector.Batch{Cols: cols, Rows: len(rep)}, nil
	}
}

func (u *unnestOp) Close() { u.in.Close() }

// elementPositions is the 1-based position in its list of each gathered element (elems
// indexes the list's child array; rep the row each came from), NULL for padding.
func elementPositions(elems, rep []int32, l array.ListLike) arrow.Array {
	b := array.NewInt64Builder(vector.Allocator)
	defer b.Release()
	b.Reserve(len(elems))
	for k, e := range elems {
		if e < 0 || l == nil {
			b.AppendNull()
			continue
		}
		s, _ := l.ValueOffsets(int(rep[k]))
		b.Append(int64(e) - s + 1)
	}
	return b.NewArray()
}
