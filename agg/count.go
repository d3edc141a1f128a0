package agg

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// countAcc is count_star (every row) and count (non-NULL rows): one int64 per group.
type countAcc struct {
	star   bool
	counts []int64
	rows   rows
}

var _ Accumulator = (*countAcc)(nil)

func (a *countAcc) Resize(n int) { a.counts = extend(a.counts, n) }

func (a *countAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	ensureGroup0(a, len(a.counts), groups)
	if a.star {
		n := len(groups)
		switch {
		case groups != nil:
		case sel != nil:
			n = len(sel)
		case arg != nil:
			n = arg.Len()
		default:
			return errs.New(errs.Internal, "BUG: count_star of every row without a column to count")
		}
		countGroups(a.counts, groups, n)
		return nil
	}
	_, _, g, n := a.rows.resolve(arg, sel, groups)
	countGroups(a.counts, g, n)
	return nil
}

func (a *countAcc) UpdateGroup(arg arrow.Array, sel []int32, g uint32) error {
	n := len(sel)
	if !a.star {
		_, _, _, n = a.rows.resolve(arg, sel, nil)
	}
	a.counts[g] += int64(n)
	return nil
}

// countGroups adds one per row to its group (n rows to group 0 when groups is nil).
func countGroups(counts []int64, groups []uint32, n int) {
	if groups == nil {
		counts[0] += int64(n)
		return
	}
	for _, g := range groups[:n] {
		counts[g]++
	}
}

func (a *countAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*countAcc](other, Spec{Name: "count"})
	if err != nil {
		return err
	}
	if err := checkMapping(Spec{Name: "count"}, mapping, len(o.counts), len(a.counts)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.counts)] {
		a.counts[g] += o.counts[j]
	}
	return nil
}

func (a *countAcc) Final() (arrow.Array, error) {
	return fixedArray(types.Int64, append([]int64(nil), a.counts...), nil), nil
}

func (a *countAcc) MemoryUsage() int64 {
	return int64(8*cap(a.counts)) + a.rows.memoryUsage()
}
