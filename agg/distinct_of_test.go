package agg

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// Sum and avg of distinct values: split input merged equals the whole, and
// duplicates within a group count once while equal values in other groups count there.
func TestSumAvgDistinctMerge(t *testing.T) {
	vals := []types.Value{types.IntValue(5), types.IntValue(5), types.IntValue(7), types.NullOf(types.Int64),
		types.IntValue(5), types.IntValue(9), types.IntValue(7), types.IntValue(1)}
	groups := []uint32{0, 0, 0, 0, 1, 1, 0, 1}
	arr := vector.FromValues(types.Int64, vals)
	want := map[string][]string{"sum_distinct": {"12", "15"}, "avg_distinct": {"6.0", "5.0"}}
	for name, w := range want {
		spec := Spec{Name: name, ArgType: types.Int64}
		whole, err := New(spec)
		if err != nil {
			t.Fatal(err)
		}
		whole.Resize(2)
		if err := whole.Update(arr, nil, groups); err != nil {
			t.Fatal(err)
		}
		a, _ := New(spec)
		b, _ := New(spec)
		a.Resize(2)
		b.Resize(2)
		if err := a.Update(array.NewSlice(arr, 0, 4), nil, groups[:4]); err != nil {
			t.Fatal(err)
		}
		// b numbers the groups the other way round; the mapping puts them back.
		swapped := []uint32{1 - groups[4], 1 - groups[5], 1 - groups[6], 1 - groups[7]}
		if err := b.Update(array.NewSlice(arr, 4, 8), nil, swapped); err != nil {
			t.Fatal(err)
		}
		if err := a.Merge(b, []uint32{1, 0}); err != nil {
			t.Fatal(err)
		}
		for _, acc := range []Accumulator{whole, a} {
			out, err := acc.Final()
			if err != nil {
				t.Fatal(err)
			}
			for g := range w {
				if got := types.ValueAt(out, g).String(); got != w[g] {
					t.Errorf("%s group %d = %s, want %s", name, g, got, w[g])
				}
			}
		}
	}
	if _, err := ResultType(Spec{Name: "sum_distinct", ArgType: types.String}); err == nil {
		t.Error("sum(DISTINCT VARCHAR) should be refused")
	}
}
