package agg

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/types"
)

// TestHistogramMerge checks that histograms built on separate accumulators and
// merged into groups in another order count exactly what one accumulator counts.
func TestHistogramMerge(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	const rows, groups = 2000, 5
	b := array.NewInt64Builder(memory.DefaultAllocator)
	gs := make([]uint32, rows)
	for r := 0; r < rows; r++ {
		gs[r] = uint32(rng.Intn(groups))
		if rng.Intn(10) == 0 {
			b.AppendNull()
		} else {
			b.Append(int64(rng.Intn(30)))
		}
	}
	arg := b.NewArray()
	spec := Spec{Name: "histogram", ArgType: types.Int64}
	whole, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	whole.Resize(groups)
	if err := whole.Update(arg, nil, gs); err != nil {
		t.Fatal(err)
	}
	// Two halves, each on its own accumulator whose group j is the target's
	// group groups-1-j, merged into a third.
	merged, _ := New(spec)
	merged.Resize(groups)
	mapping := make([]uint32, groups)
	for j := range mapping {
		mapping[j] = uint32(groups - 1 - j)
	}
	for _, half := range [][2]int{{0, rows / 3}, {rows / 3, rows}} {
		part, _ := New(spec)
		part.Resize(groups)
		var sel []int32
		var pg []uint32
		for r := half[0]; r < half[1]; r++ {
			sel = append(sel, int32(r))
			pg = append(pg, uint32(groups-1)-gs[r])
		}
		if err := part.Update(arg, sel, pg); err != nil {
			t.Fatal(err)
		}
		if err := merged.Merge(part, mapping); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := whole.Final()
	got, _ := merged.Final()
	for g := 0; g < groups; g++ {
		w, h := fmt.Sprint(types.ValueAt(want, g)), fmt.Sprint(types.ValueAt(got, g))
		if w != h || w == "" {
			t.Errorf("group %d: merged %s, want %s", g, h, w)
		}
	}
	if s := fmt.Sprint(types.ValueAt(want, 0)); len(s) < 10 {
		t.Errorf("group 0 histogram %q is too short to hold the counts", s)
	}
}
