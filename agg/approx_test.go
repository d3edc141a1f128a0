package agg

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// The sketches' partial-state property: two halves updated apart and merged give the
// same estimates as one pass (HyperLogLog exactly; KLL within its rank error), per
// group, and NULLs are ignored.
func TestApproxAccumulatorsMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 40_000
	vals := make([]types.Value, n)
	groups := make([]uint32, n)
	for i := range vals {
		groups[i] = uint32(i % 3)
		if i%17 == 0 {
			vals[i] = types.NullOf(types.Int64)
			continue
		}
		vals[i] = types.IntValue(int64(r.IntN(5000 * (int(groups[i]) + 1))))
	}
	arr := vector.FromValues(types.Int64, vals)
	half := func(s Spec) (Accumulator, Accumulator) {
		whole, _ := New(s)
		whole.Resize(3)
		if err := whole.Update(arr, nil, groups); err != nil {
			t.Fatal(err)
		}
		a, _ := New(s)
		b, _ := New(s)
		a.Resize(3)
		b.Resize(3)
		if err := a.Update(array.NewSlice(arr, 0, n/2), nil, groups[:n/2]); err != nil {
			t.Fatal(err)
		}
		if err := b.Update(array.NewSlice(arr, n/2, n), nil, groups[n/2:]); err != nil {
			t.Fatal(err)
		}
		if err := a.Merge(b, []uint32{0, 1, 2}); err != nil {
			t.Fatal(err)
		}
		return whole, a
	}
	whole, merged := half(Spec{Name: "approx_count_distinct", ArgType: types.Int64})
	w, _ := whole.Final()
	m, _ := merged.Final()
	for g := 0; g < 3; g++ {
		exact := 0
		seen := map[int64]bool{}
		for i, v := range vals {
			if groups[i] == uint32(g) && !v.Null && !seen[v.I] {
				seen[v.I] = true
				exact++
			}
		}
		wg, mg := types.ValueAt(w, g).I, types.ValueAt(m, g).I
		if wg != mg || float64(wg) < float64(exact)*0.94 || float64(wg) > float64(exact)*1.06 {
			t.Errorf("group %d: whole %d, merged %d, exact %d", g, wg, mg, exact)
		}
	}
	spec := Spec{Name: "approx_percentile", ArgType: types.Int64, Quantiles: []float64{0, 0.5, 1}, List: true}
	if rt, err := ResultType(spec); err != nil || !arrow.TypeEqual(rt, arrow.ListOf(types.Int64)) {
		t.Fatalf("result type %v %v", rt, err)
	}
	whole, merged = half(spec)
	w, _ = whole.Final()
	m, _ = merged.Final()
	for g := 0; g < 3; g++ {
		wl, ml := w.(*array.List), m.(*array.List)
		ws, _ := wl.ValueOffsets(g)
		ms, _ := ml.ValueOffsets(g)
		wv, mv := wl.ListValues().(*array.Int64), ml.ListValues().(*array.Int64)
		if wv.Value(int(ws)) != mv.Value(int(ms)) || wv.Value(int(ws)+2) != mv.Value(int(ms)+2) {
			t.Errorf("group %d: min/max differ after merge", g)
		}
		med, mmed := float64(wv.Value(int(ws)+1)), float64(mv.Value(int(ms)+1))
		span := 5000 * float64(g+1)
		if d := med - mmed; d > 0.05*span || d < -0.05*span {
			t.Errorf("group %d: medians %v and %v differ by more than the rank error allows", g, med, mmed)
		}
	}
	empty, _ := New(Spec{Name: "approx_percentile", ArgType: types.Float64, Quantiles: []float64{0.5}})
	empty.Resize(1)
	if out, _ := empty.Final(); !out.IsNull(0) {
		t.Error("a percentile of no values is NULL")
	}
}
