package exec

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
)

// nullable is a plan node of one BIGINT column k (nil entries NULL) and a BIGINT v.
func nullable(k []*int64, v []int64) *plan.Stored {
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	defer kb.Release()
	for _, x := range k {
		if x == nil {
			kb.AppendNull()
		} else {
			kb.Append(*x)
		}
	}
	vb := array.NewInt64Builder(memory.DefaultAllocator)
	defer vb.Release()
	vb.AppendValues(v, nil)
	return &plan.Stored{Cols: []plan.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}},
		Arrays: []arrow.Array{kb.NewArray(), vb.NewArray()}, Rows: len(k)}
}

// A join with NullEq keys matches a NULL key with a NULL key, built on either side;
// the same join without it matches only equal values.
func TestNullEqJoinMatchesNulls(t *testing.T) {
	one, two := int64(1), int64(2)
	for _, buildLeft := range []bool{false, true} {
		for _, nullEq := range []bool{false, true} {
			l := nullable([]*int64{&one, nil, &two}, []int64{10, 20, 30})
			r := nullable([]*int64{nil, &two}, []int64{200, 300})
			j := &plan.Join{Kind: plan.LeftJoin, Left: l, Right: r, NullEq: nullEq, BuildLeft: buildLeft,
				LeftKeys:  []plan.Expr{&plan.ColRef{Idx: 0, T: types.Int64}},
				RightKeys: []plan.Expr{&plan.ColRef{Idx: 0, T: types.Int64}},
				Cols:      append(l.Columns(), r.Columns()...)}
			recs, err := Run(context.Background(), &Env{Budget: NewBudget(1 << 30), Threads: 2}, j)
			if err != nil {
				t.Fatal(err)
			}
			got := map[int64]int64{} // left v → right v, 0 when unmatched
			for _, rec := range recs {
				lv, rv := rec.Column(1).(*array.Int64), rec.Column(3).(*array.Int64)
				for i := 0; i < int(rec.NumRows()); i++ {
					got[lv.Value(i)] = 0
					if rv.IsValid(i) {
						got[lv.Value(i)] = rv.Value(i)
					}
				}
			}
			want := map[int64]int64{10: 0, 20: 0, 30: 300}
			if nullEq {
				want[20] = 200
			}
			if len(got) != len(want) {
				t.Fatalf("build left %v, null-equal %v: rows %v, want %v", buildLeft, nullEq, got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("build left %v, null-equal %v: rows %v, want %v", buildLeft, nullEq, got, want)
					break
				}
			}
		}
	}
}
