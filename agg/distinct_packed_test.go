package agg

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/types"
)

// TestCountDistinctPackedAndUnpacked: count_distinct over integer values that fit
// beside their group in a word and values that do not (negative, past 2^32), in
// batches that switch between them, with selections, NULLs and merges of
// accumulators in either form, equals a count kept in a map.
func TestCountDistinctPackedAndUnpacked(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const groups = 40
	for _, dt := range []arrow.DataType{types.Int64, types.Int32, arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Int16} {
		for trial := 0; trial < 30; trial++ {
			want := map[[2]int64]bool{}
			spec := Spec{Name: "count_distinct", ArgType: dt}
			// Accumulators 1 and 2 number the groups perm[g]; the merge maps them back.
			perm := r.Perm(groups)
			mapping := make([]uint32, groups)
			for gi, p := range perm {
				mapping[p] = uint32(gi)
			}
			accs := make([]Accumulator, 3)
			for i := range accs {
				accs[i], _ = New(spec)
				accs[i].Resize(groups)
			}
			for batch := 0; batch < 12; batch++ {
				wide := r.IntN(4) == 0 && trial%3 != 0 // some trials stay packed throughout
				n := 1 + r.IntN(300)
				vals := make([]int64, n)
				valid := make([]bool, n)
				gs := make([]uint32, n)
				for i := range vals {
					vals[i] = int64(r.IntN(50))
					if wide {
						switch {
						case dt == types.Int64 && r.IntN(2) == 0:
							vals[i] = 1<<33 + int64(r.IntN(5))
						case dt != arrow.PrimitiveTypes.Uint64:
							vals[i] = -int64(r.IntN(5)) - 1
						default:
							vals[i] = 1<<40 + int64(r.IntN(5))
						}
					}
					valid[i] = r.IntN(10) != 0
					gs[i] = uint32(r.IntN(groups))
				}
				arr := intArray(t, dt, vals, valid)
				var sel []int32
				if r.IntN(2) == 0 {
					for i := 0; i < n; i++ {
						if r.IntN(3) != 0 {
							sel = append(sel, int32(i))
						}
					}
				}
				rows := sel
				if sel == nil {
					for i := 0; i < n; i++ {
						rows = append(rows, int32(i))
					}
				}
				g := make([]uint32, len(rows))
				for k, i := range rows {
					g[k] = gs[i]
					if valid[i] {
						want[[2]int64{int64(gs[i]), vals[i]}] = true
					}
				}
				if len(rows) == 0 {
					continue
				}
				if batch%3 != 0 {
					for k := range g {
						g[k] = uint32(perm[g[k]])
					}
				}
				if err := accs[batch%3].Update(arr, sel, g); err != nil {
					t.Fatal(err)
				}
			}
			// One more in the ungrouped form: every row in its group 0, which is
			// group mapping[0] of the others.
			solo, _ := New(spec)
			solo.Resize(groups)
			soloVals := make([]int64, 20)
			for i := range soloVals {
				soloVals[i] = int64(r.IntN(60))
				if trial%4 == 0 {
					soloVals[i] -= 30
				}
				want[[2]int64{int64(mapping[0]), soloVals[i]}] = true
			}
			allValid := make([]bool, len(soloVals))
			for i := range allValid {
				allValid[i] = true
			}
			if err := solo.Update(intArray(t, dt, soloVals, allValid), nil, make([]uint32, len(soloVals))); err != nil {
				t.Fatal(err)
			}
			accs = append(accs, solo)
			for _, o := range accs[1:] {
				if err := accs[0].Merge(o, mapping); err != nil {
					t.Fatal(err)
				}
			}
			out, err := accs[0].Final()
			if err != nil {
				t.Fatal(err)
			}
			counts := make([]int64, groups)
			for k := range want {
				counts[k[0]]++
			}
			got := out.(*array.Int64).Int64Values()
			for gi := range counts {
				if got[gi] != counts[gi] {
					t.Fatalf("%s trial %d: group %d counts %d distinct values, want %d", dt, trial, gi, got[gi], counts[gi])
				}
			}
		}
	}
}

// intArray makes an array of the integer type dt.
func intArray(t *testing.T, dt arrow.DataType, vals []int64, valid []bool) arrow.Array {
	t.Helper()
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	for i, v := range vals {
		if !valid[i] {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.Int64Builder:
			bb.Append(v)
		case *array.Int32Builder:
			bb.Append(int32(v))
		case *array.Int16Builder:
			bb.Append(int16(v))
		case *array.Uint64Builder:
			bb.Append(uint64(v))
		default:
			t.Fatalf("no builder for %s", dt)
		}
	}
	return b.NewArray()
}
