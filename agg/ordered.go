package agg

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// orderedAcc is an aggregate with DISTINCT or ORDER BY inside the call: it keeps
// every row's arguments and keys (a rowStore, so that workers' partials merge by
// appending), and at Final feeds a fresh accumulator of the plain function each
// group's rows sorted by the keys, without repeated argument values under DISTINCT.
// Rows of equal keys keep the order they came in.
type orderedAcc struct {
	spec   Spec // with Distinct and Order
	inner  Spec // the plain function
	nargs  int
	store  rowStore
	groups int
}

var _ MultiArg = (*orderedAcc)(nil)

func newOrdered(s Spec) *orderedAcc {
	inner := s
	inner.Distinct, inner.Order = false, nil
	var ts []arrow.DataType
	if s.ArgType != nil {
		ts = append(ts, s.ArgType)
	}
	ts = append(ts, s.ArgTypes...)
	nargs := len(ts)
	for _, k := range s.Order {
		ts = append(ts, k.Type)
	}
	return &orderedAcc{spec: s, inner: inner, nargs: nargs, store: newRowStore(ts)}
}

func (a *orderedAcc) Resize(n int) { a.groups = max(a.groups, n) }

func (a *orderedAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	if Arity(a.spec) != 1 {
		return needsArgs(a.spec)
	}
	return a.UpdateArgs([]arrow.Array{arg}, sel, groups)
}

func (a *orderedAcc) UpdateArgs(args []arrow.Array, sel []int32, groups []uint32) error {
	if groups == nil && a.groups == 0 {
		a.Resize(1)
	}
	a.store.add(args, spanOf(args[0], sel, groups))
	return nil
}

func (a *orderedAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*orderedAcc](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, o.groups, a.groups); err != nil {
		return err
	}
	a.store.merge(&o.store, mapping)
	return nil
}

func (a *orderedAcc) MemoryUsage() int64 { return a.store.memoryUsage() }

func (a *orderedAcc) FromZone(*Zone, uint32) (bool, error) { return false, nil }

func (a *orderedAcc) Final() (arrow.Array, error) {
	cols, order, start, err := a.store.rows(a.groups)
	if err != nil {
		return nil, err
	}
	var cmps []func(i, j int) int
	for k, key := range a.spec.Order {
		cmps = append(cmps, keyOrder(cols[a.nargs+k], key.Desc, key.NullsFirst))
	}
	var same []func(i, j int) int // equality of the arguments, NULL equal to NULL
	if a.spec.Distinct {
		for c := 0; c < a.nargs; c++ {
			same = append(same, keyOrder(cols[c], false, false))
		}
		// Equal arguments must sort next to each other to be dropped: the keys
		// (which DISTINCT takes among the arguments) come first, then the arguments.
		cmps = append(cmps, same...)
	}
	sel := make([]int32, 0, len(order))
	groups := make([]uint32, 0, len(order))
	for g := 0; g < a.groups; g++ {
		rows := order[start[g]:start[g+1]]
		if len(cmps) > 0 {
			slices.SortStableFunc(rows, func(x, y int32) int {
				for _, c := range cmps {
					if r := c(int(x), int(y)); r != 0 {
						return r
					}
				}
				return 0
			})
		}
		for k, r := range rows {
			if same != nil && k > 0 && allEqual(same, int(rows[k-1]), int(r)) {
				continue
			}
			sel = append(sel, r)
			groups = append(groups, uint32(g))
		}
	}
	inner, err := New(a.inner)
	if err != nil {
		return nil, err
	}
	inner.Resize(a.groups)
	if err := UpdateArgs(inner, cols[:a.nargs], sel, groups); err != nil {
		return nil, err
	}
	return inner.Final()
}

func allEqual(same []func(i, j int) int, i, j int) bool {
	for _, c := range same {
		if c(i, j) != 0 {
			return false
		}
	}
	return true
}
