package exec

import (
	"context"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/vector"
)

// The window sort orders rows as a stable sort by partition then order keys does
// (NULL keys, ties kept in input order), while comparing the partition columns a
// number of times proportional to the rows, not to rows × log(rows).
func TestSortWindowRows(t *testing.T) {
	const n = 20000
	rng := rand.New(rand.NewSource(1))
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	fb := array.NewFloat64Builder(memory.DefaultAllocator)
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	words := []string{"Books", "Music", "Home", "Sports", "Shoes"}
	for range n {
		if rng.Intn(50) == 0 {
			sb.AppendNull()
		} else {
			sb.Append(words[rng.Intn(len(words))])
		}
		switch rng.Intn(3) {
		case 0:
			fb.Append(0)
		case 1:
			fb.Append(math.Copysign(0, -1)) // -0 is the same partition as +0
		default:
			fb.Append(float64(rng.Intn(20)))
		}
		ib.Append(int64(rng.Intn(10)))
	}
	part1, part2, ord := sb.NewArray(), fb.NewArray(), ib.NewArray()
	parts := []arrow.Array{part1, part2}

	calls := 0
	var cmps []func(i, j int) int
	for _, a := range parts {
		c := comparator(a, plan.SortKey{})
		cmps = append(cmps, func(i, j int) int { calls++; return c(i, j) })
	}
	orderCmps := []func(i, j int) int{comparator(ord, plan.SortKey{Desc: true})}

	perm := vector.Identity(n)
	it := &interrupt{ctx: context.Background()}
	if err := it.run(func() { sortWindowRows(it, perm, parts, cmps, orderCmps) }); err != nil {
		t.Fatal(err)
	}
	partCalls := calls

	want := vector.Identity(n)
	all := append(append([]func(i, j int) int(nil), cmps...), orderCmps...)
	sort.SliceStable(want, func(a, b int) bool {
		for _, c := range all {
			if r := c(int(want[a]), int(want[b])); r != 0 {
				return r < 0
			}
		}
		return false
	})
	for i := range want {
		if perm[i] != want[i] {
			t.Fatalf("row %d: %d, a stable sort gives %d", i, perm[i], want[i])
		}
	}
	// About 100 distinct partitions: sorting them and ranking them costs a few
	// thousand comparisons; comparing every pair of rows the sort looks at cost
	// several hundred thousand.
	if partCalls > 4*n {
		t.Errorf("%d calls of the partition comparators for %d rows", partCalls, n)
	}
}
