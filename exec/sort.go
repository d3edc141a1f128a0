package exec

import (
	"bytes"
	"cmp"
	"context"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// sortOp holds its whole input, orders it and returns it in batches. With a limit
// (ORDER BY … LIMIT n) only the first n rows are returned.
type sortOp struct {
	bd    *builder
	node  *plan.Sort
	in    Operator
	keys  []evaluator
	limit int64
	res   reservation
	out   []*vector.Batch
	done  bool
}

func (bd *builder) buildSort(x *plan.Sort, limit int64) (Operator, error) {
	s := &sortOp{bd: bd, node: x, limit: limit, res: reservation{budget: bd.env.Budget}}
	for _, k := range x.Keys {
		if !types.IsOrderable(k.E.Type()) && k.E.Type().ID() != arrow.NULL {
			return nil, errs.New(errs.Analysis, "cannot order by a value of type %s", types.Name(k.E.Type()))
		}
		ev, err := bd.compile(k.E)
		if err != nil {
			return nil, err
		}
		s.keys = append(s.keys, ev)
	}
	in, err := bd.build(x.Input)
	if err != nil {
		return nil, err
	}
	s.in = in
	return s, nil
}

func (s *sortOp) Next(ctx context.Context) (*vector.Batch, error) {
	if !s.done {
		s.done = true
		all, err := drain(ctx, s.in, len(s.node.Input.Columns()), &s.res)
		s.in.Close()
		if err != nil {
			return nil, err
		}
		if all.Rows == 0 {
			return nil, nil
		}
		keys := make([]arrow.Array, len(s.keys))
		for i, k := range s.keys {
			a, err := k(ctx, all)
			if err != nil {
				return nil, err
			}
			keys[i] = kernels.Decode(a)
		}
		perm := vector.Identity(all.Rows)
		cmps := make([]func(i, j int) int, len(keys))
		for i, k := range keys {
			cmps[i] = comparator(k, s.node.Keys[i])
		}
		sort.SliceStable(perm, func(a, b int) bool {
			for _, c := range cmps {
				if r := c(int(perm[a]), int(perm[b])); r != 0 {
					return r < 0
				}
			}
			return false
		})
		if s.limit >= 0 && int64(len(perm)) > s.limit {
			perm = perm[:s.limit]
		}
		sorted := &vector.Batch{Cols: all.Cols, Rows: all.Rows, Sel: perm}
		s.out = slices(sorted.Compact())
	}
	if len(s.out) == 0 {
		return nil, nil
	}
	b := s.out[0]
	s.out = s.out[1:]
	return b, nil
}

func (s *sortOp) Close() {
	s.in.Close()
	s.out = nil
	s.res.release()
}

// comparator orders rows i and j of a by key k, nulls placed as k asks.
func comparator(a arrow.Array, k plan.SortKey) func(i, j int) int {
	base := valueComparator(a)
	sign := 1
	if k.Desc {
		sign = -1
	}
	nullSign := 1
	if k.NullsFirst {
		nullSign = -1
	}
	return func(i, j int) int {
		ni, nj := a.IsNull(i), a.IsNull(j)
		switch {
		case ni && nj:
			return 0
		case ni:
			return nullSign
		case nj:
			return -nullSign
		}
		return sign * base(i, j)
	}
}

// valueComparator compares two non-null rows of a, typed once per column.
func valueComparator(a arrow.Array) func(i, j int) int {
	switch x := a.(type) {
	case *array.Int8:
		v := x.Int8Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Int16:
		v := x.Int16Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Int32:
		v := x.Int32Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Int64:
		v := x.Int64Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Uint8:
		v := x.Uint8Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Uint16:
		v := x.Uint16Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Uint32:
		v := x.Uint32Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Uint64:
		v := x.Uint64Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Float32:
		v := x.Float32Values()
		return func(i, j int) int { return types.CompareFloat(float64(v[i]), float64(v[j])) }
	case *array.Float64:
		v := x.Float64Values()
		return func(i, j int) int { return types.CompareFloat(v[i], v[j]) }
	case *array.Date32:
		v := x.Date32Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Timestamp:
		v := x.TimestampValues()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.String:
		return func(i, j int) int { return cmp.Compare(x.Value(i), x.Value(j)) }
	case *array.Binary:
		return func(i, j int) int { return bytes.Compare(x.Value(i), x.Value(j)) }
	case *array.Boolean:
		return func(i, j int) int {
			bi, bj := x.Value(i), x.Value(j)
			switch {
			case bi == bj:
				return 0
			case bj:
				return -1
			}
			return 1
		}
	case *array.Decimal128:
		return func(i, j int) int { return x.Value(i).Cmp(x.Value(j)) }
	}
	return func(i, j int) int { return types.Compare(types.ValueAt(a, i), types.ValueAt(a, j)) }
}
