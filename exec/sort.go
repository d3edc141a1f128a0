package exec

import (
	"bytes"
	"cmp"
	"context"
	gosort "slices"

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
	// bound, when the first key is a column of the scan below, passes the top-N's
	// worst kept key to the scan, which then reads only rows that can beat it.
	bound *dynamicBound
}

func (bd *builder) buildSort(x *plan.Sort, limit int64) (Operator, error) {
	s := &sortOp{bd: bd, node: x, limit: limit, res: reservation{budget: bd.env.Budget}}
	for _, k := range x.Keys {
		if t := k.E.Type(); !types.IsOrderable(t) && t.ID() != arrow.NULL && t.ID() != arrow.INTERVAL_MONTH_DAY_NANO && !kernels.NestedOrderable(t) {
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
	if po, ok := in.(*pipelineOp); ok && limit >= 0 && limit <= topNMax && !x.Keys[0].NullsFirst && types.IsOrderable(x.Keys[0].E.Type()) {
		if scan, col, ok := plan.ScanColumn(x.Input, x.Keys[0].E); ok && scan == po.p.scan {
			s.bound = &dynamicBound{col: col, op: keepOp(x.Keys[0])}
			po.p.bounds = &dynamicBounds{list: []*dynamicBound{s.bound}, rows: true}
		}
	}
	return s, nil
}

// keepOp is the comparison with the worst kept key that a row's first sort key k
// must pass to stay a top-N candidate.
func keepOp(k plan.SortKey) string {
	if k.Desc {
		return ">="
	}
	return "<="
}

// topNMax is the largest LIMIT for which a sort keeps only its best rows as it reads.
const topNMax = 100_000

func (s *sortOp) Next(ctx context.Context) (*vector.Batch, error) {
	if !s.done {
		s.done = true
		var all *vector.Batch
		var err error
		if s.limit >= 0 && s.limit <= topNMax {
			all, err = s.topN(ctx)
		} else {
			all, err = drain(ctx, s.in, len(s.node.Input.Columns()), &s.res)
		}
		s.in.Close()
		if err != nil {
			return nil, err
		}
		if all.Rows == 0 {
			return nil, nil
		}
		// The ordering, then the sorted copy of the rows, are held with the rows.
		if err := s.res.resize(s.res.held + 4*int64(all.Rows)); err != nil {
			return nil, err
		}
		perm, _, err := s.order(ctx, all)
		if err != nil {
			return nil, err
		}
		if err := s.res.resize(s.res.held + batchSize(all)*int64(len(perm))/int64(all.Rows)); err != nil {
			return nil, err
		}
		// The rows are gathered in sort order a batch at a time: gathering millions
		// takes a while, and a canceled statement stops between batches.
		for lo := 0; lo < len(perm); lo += vector.BatchSize {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			hi := min(lo+vector.BatchSize, len(perm))
			s.out = append(s.out, (&vector.Batch{Cols: all.Cols, Rows: all.Rows, Sel: perm[lo:hi]}).Compact())
		}
	}
	if len(s.out) == 0 {
		return nil, nil
	}
	b := s.out[0]
	s.out = s.out[1:]
	return b, nil
}

// order returns the positions of b's rows in sort order, cut to the limit, and the
// first sort key's values. Ties keep their input order.
func (s *sortOp) order(ctx context.Context, b *vector.Batch) ([]int32, arrow.Array, error) {
	cmps := make([]func(i, j int) int, len(s.keys))
	var first arrow.Array
	for i, k := range s.keys {
		a, err := k(ctx, b)
		if err != nil {
			return nil, nil, err
		}
		a = kernels.Decode(a)
		if i == 0 {
			first = a
		}
		cmps[i] = comparator(a, s.node.Keys[i])
	}
	failPoint(PointSort)
	perm := vector.Identity(b.Rows)
	// An unstable sort with the position as the last key is a stable sort, and
	// pattern-defeating quicksort is much faster than a merge-based stable sort.
	// Sorting millions of rows takes seconds: a canceled statement interrupts it.
	it := &interrupt{ctx: ctx}
	if err := it.run(func() {
		gosort.SortFunc(perm, func(x, y int32) int {
			it.tick()
			for _, c := range cmps {
				if r := c(int(x), int(y)); r != 0 {
					return r
				}
			}
			return cmp.Compare(x, y)
		})
	}); err != nil {
		return nil, nil, err
	}
	if s.limit >= 0 && int64(len(perm)) > s.limit {
		perm = perm[:s.limit]
	}
	return perm, first, nil
}

// topN reads the input keeping only candidates for the first limit rows: batches are
// buffered, and whenever limit rows have arrived since the last cut the buffer is
// ordered and cut to limit rows, so memory stays proportional to the limit and each
// row costs a logarithmic share of the sorting. Once limit rows are kept, the worst of
// them bounds the first sort key: rows that cannot reach it are dropped as they
// arrive, before they are copied, and the scan below drops them before decoding
// their other columns (a dynamic filter). Cutting as soon as limit rows arrived keeps
// that bound tight.
func (s *sortOp) topN(ctx context.Context) (*vector.Batch, error) {
	width := len(s.node.Input.Columns())
	every := max(int(s.limit), 1) // rows to arrive between cuts
	first := s.node.Keys[0]
	op := keepOp(first)
	var bound *types.Value
	var buf []*vector.Batch
	rows, rowsKept := 0, 0 // rows buffered, and of those the ones the last cut kept
	cut := func() error {
		all, err := concatBatches(ctx, buf, width)
		if err != nil {
			return err
		}
		perm, keys, err := s.order(ctx, all)
		if err != nil {
			return err
		}
		// With NULLS LAST a NULL never beats a value, so the worst kept value bounds
		// every later row; with NULLS FIRST (or a NULL worst value) there is no bound.
		bound = nil
		if s.limit > 0 && int64(len(perm)) == s.limit && !first.NullsFirst {
			if v := types.ValueAt(keys, int(perm[len(perm)-1])); !v.Null {
				bound = &v
				if s.bound != nil {
					s.bound.value.Store(bound)
				}
			}
		}
		// Keep the buffer in input order so that ties still resolve by arrival.
		gosort.Sort(perm)
		kept := (&vector.Batch{Cols: all.Cols, Rows: all.Rows, Sel: perm}).Compact()
		buf, rows, rowsKept = []*vector.Batch{kept}, kept.Rows, kept.Rows
		return s.res.resize(batchSize(kept))
	}
	for {
		b, err := s.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b == nil {
			break
		}
		if b.Len() == 0 {
			continue
		}
		if bound != nil {
			var k arrow.Array
			b, err = onKeptRows(b, func(b *vector.Batch) (err error) {
				k, err = s.keys[0](ctx, b)
				return err
			})
			if err != nil {
				return nil, err
			}
			mask, err := kernels.CompareConst(op, k, *bound)
			if err != nil {
				return nil, err
			}
			if b, err = selectTrue(b, mask); err != nil {
				return nil, err
			}
			if b.Len() == 0 {
				continue
			}
		}
		b = b.Compact()
		buf = append(buf, b)
		rows += b.Rows
		if rows-rowsKept >= every {
			if err := cut(); err != nil {
				return nil, err
			}
		}
	}
	return concatBatches(ctx, buf, width)
}

func batchSize(b *vector.Batch) int64 {
	var n int64
	for _, c := range b.Cols {
		if c != nil {
			n += heldSize(c)
		}
	}
	return n
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
	if kernels.NestedOrderable(a.DataType()) {
		// Nested values sort as their order-preserving encodings do.
		a = kernels.NestedKeys(a)
	}
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
	case *array.MonthDayNanoInterval:
		v := x.MonthDayNanoIntervalValues()
		return func(i, j int) int { return types.CompareInterval(v[i], v[j]) }
	}
	return func(i, j int) int { return types.Compare(types.ValueAt(a, i), types.ValueAt(a, j)) }
}
