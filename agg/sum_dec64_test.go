package agg

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// TestSum64WidensOnOverflow feeds SUM of DECIMAL(18,2) values whose sums stay within
// 64 bits, leave them part way through a batch, or only when two halves are merged,
// and checks every result against the 128-bit accumulator over the same input.
func TestSum64WidensOnOverflow(t *testing.T) {
	dt := &arrow.Decimal64Type{Precision: 18, Scale: 2}
	spec := Spec{Name: "sum", ArgType: dt}
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 40 {
		const groups = 5
		mode := trial % 3 // 0: within 64 bits; 1: past them in a batch; 2: in the merge
		vals := make([]any, 3000)
		for i := range vals {
			if rng.IntN(10) == 0 {
				continue // NULL
			}
			var x int64
			switch mode {
			case 0:
				x = rng.Int64N(2e15) - 1e15
			case 1:
				x = 999_999_999_999_999_999 - rng.Int64N(1000)
				if rng.IntN(5) == 0 {
					x = -x
				}
			case 2:
				// About 270 values a group in each half: each half's sums stay
				// under 2^63, the merged ones do not.
				x = 22_000_000_000_000_000 + rng.Int64N(1000)
			}
			vals[i] = decimal128.FromI64(x)
		}
		arr := build(dt, vals)
		ids := make([]uint32, len(vals))
		for i := range ids {
			ids[i] = uint32(rng.IntN(groups))
		}
		narrow, err := New(spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := narrow.(*dec64SumAcc); !ok {
			t.Fatalf("SUM of %s is a %T", dt, narrow)
		}
		wide := &decSumAcc{spec: spec, scale: 2}
		// Two halves in accumulators of their own, merged: the first grouped, the
		// second one group at a time.
		half := len(vals) / 2
		first, second := array.NewSlice(arr, 0, int64(half)), array.NewSlice(arr, int64(half), int64(len(vals)))
		for _, acc := range []Accumulator{narrow, wide} {
			acc.Resize(groups)
			if err := acc.Update(first, nil, ids[:half]); err != nil {
				t.Fatal(err)
			}
		}
		other, _ := New(spec)
		otherWide := &decSumAcc{spec: spec, scale: 2}
		for _, acc := range []Accumulator{other, otherWide} {
			acc.Resize(groups)
			for g := range uint32(groups) {
				var sel []int32
				for i := half; i < len(vals); i++ {
					if ids[i] == g {
						sel = append(sel, int32(i-half))
					}
				}
				if len(sel) == 0 {
					continue
				}
				if err := acc.(OneGroup).UpdateGroup(second, sel, g); err != nil {
					t.Fatal(err)
				}
			}
		}
		mapping := []uint32{4, 3, 2, 1, 0}
		if err := narrow.Merge(other, mapping); err != nil {
			t.Fatal(err)
		}
		if err := wide.Merge(otherWide, mapping); err != nil {
			t.Fatal(err)
		}
		// A zone's stored sum, near the limit too.
		z := &Zone{Rows: 3, Nulls: 0, Sum: "29999999999999999.97"}
		for _, acc := range []Accumulator{narrow, wide} {
			if ok, err := acc.FromZone(z, 2); !ok || err != nil {
				t.Fatalf("FromZone: %v %v", ok, err)
			}
		}
		got, err := narrow.Final()
		if err != nil {
			t.Fatal(err)
		}
		want, err := wide.Final()
		if err != nil {
			t.Fatal(err)
		}
		if !array.Equal(got, want) {
			t.Fatalf("trial %d: 64-bit sums %v, 128-bit sums %v", trial, got, want)
		}
		if widened := narrow.(*dec64SumAcc).wide != nil; widened != (mode != 0) {
			t.Errorf("trial %d: widened %v, want %v", trial, widened, mode != 0)
		}
		if mode == 2 && other.(*dec64SumAcc).wide != nil {
			t.Errorf("trial %d: a half's sums left 64 bits", trial)
		}
	}
}
