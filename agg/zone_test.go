package agg

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// zoneOf computes the partials a statistics record would hold for arr, from its
// values alone.
func zoneOf(arr arrow.Array) Zone {
	z := Zone{Rows: int64(arr.Len()), DistinctExact: -1}
	seen := map[string]bool{}
	h := stats.NewHLL()
	for i := 0; i < arr.Len(); i++ {
		v := types.ValueAt(arr, i)
		if v.Null {
			z.Nulls++
			continue
		}
		seen[v.String()] = true
		h.AddHash(stats.HashValue(v))
		if !z.Bounded || types.Compare(v, z.Min) < 0 {
			z.Min = v
		}
		if !z.Bounded || types.Compare(v, z.Max) > 0 {
			z.Max = v
		}
		z.Bounded = true
	}
	z.Distinct = h
	return z
}

func finalText(t *testing.T, a Accumulator) []string {
	t.Helper()
	res, err := a.Final()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, res.Len())
	for i := range out {
		out[i] = types.ValueAt(res, i).String()
	}
	return out
}

// TestFromZoneEqualsScan checks that folding zones' partials gives what reading
// their rows gives, zone by zone into one group and into several groups.
func TestFromZoneEqualsScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dts := []arrow.DataType{types.Int64, types.Int32, types.Date, types.String, types.Boolean,
		&arrow.Decimal128Type{Precision: 18, Scale: 3}, &arrow.Decimal64Type{Precision: 15, Scale: 2}, types.Timestamp, types.Float64}
	for _, dt := range dts {
		for _, fn := range []string{"count_star", "count", "min", "max", "approx_count_distinct"} {
			spec := Spec{Name: fn, ArgType: dt}
			if fn == "count_star" {
				spec.ArgType = nil
			}
			scan, err := New(spec)
			if err != nil {
				t.Fatal(err)
			}
			stored, _ := New(spec)
			for zone := 0; zone < 6; zone++ {
				nullFrac := []float64{0, 0.2, 1}[zone%3]
				vals := randValues(rng, dt, rng.IntN(200), nullFrac)
				arr := build(dt, vals)
				z := zoneOf(arr)
				g := uint32(zone % 2)
				groups := make([]uint32, arr.Len())
				for i := range groups {
					groups[i] = g
				}
				scan.Resize(int(g) + 1)
				if err := scan.Update(arr, nil, groups); err != nil {
					t.Fatal(err)
				}
				ok, err := stored.FromZone(&z, g)
				if err != nil || !ok {
					t.Fatalf("%s(%s): FromZone refused a complete zone: %v", fn, types.Name(dt), err)
				}
			}
			got, want := finalText(t, stored), finalText(t, scan)
			if len(got) != len(want) {
				t.Fatalf("%s(%s): %d groups from zones, %d scanned", fn, types.Name(dt), len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s(%s) group %d: from zones %s, scanned %s", fn, types.Name(dt), i, got[i], want[i])
				}
			}
		}
	}
}

func TestFromZoneRefusesWhatItCannotKnow(t *testing.T) {
	v := types.IntValue(5)
	cases := []struct {
		fn   string
		zone Zone
	}{
		{"count", Zone{Rows: 10, Nulls: -1, DistinctExact: -1}},
		{"min", Zone{Rows: 10, Nulls: -1, Min: v, Max: v, Bounded: true, DistinctExact: -1}},
		{"max", Zone{Rows: 10, Nulls: 2, DistinctExact: -1}}, // no exact bounds
		{"approx_count_distinct", Zone{Rows: 10, Nulls: 0, DistinctExact: -1}},
		{"approx_percentile", Zone{Rows: 10, Nulls: 0, DistinctExact: -1}},
		{"count_distinct", Zone{Rows: 10, Nulls: 0, DistinctExact: 3}},
		{"sum_distinct", Zone{Rows: 10, Nulls: 0, DistinctExact: 3}},
	}
	for _, c := range cases {
		a, err := New(Spec{Name: c.fn, ArgType: types.Int64, Quantiles: []float64{0.5}})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := a.FromZone(&c.zone, 0); ok || err != nil {
			t.Errorf("%s: FromZone(%+v) = %v, %v", c.fn, c.zone, ok, err)
		}
		if after := finalText(t, a); len(after) != 0 {
			t.Errorf("%s: a refused zone changed the state: %v", c.fn, after)
		}
	}
}

func TestExactDistinctCountAnswersAlone(t *testing.T) {
	a, _ := New(Spec{Name: "approx_count_distinct", ArgType: types.Int64})
	z := Zone{Rows: 100, Nulls: 0, DistinctExact: 37}
	if ok, err := a.FromZone(&z, 0); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got := finalText(t, a); got[0] != "37" {
		t.Fatalf("exact count answered %s", got[0])
	}
	// Without a sketch beside it, an exact count cannot take more values.
	if err := a.Update(vector.FromValues(types.Int64, []types.Value{types.IntValue(1)}), nil, nil); err == nil {
		t.Fatal("an exact-only group took more values")
	}
	// With a sketch, more values turn the group back into an estimate.
	b, _ := New(Spec{Name: "approx_count_distinct", ArgType: types.Int64})
	h := stats.NewHLL()
	for i := int64(0); i < 37; i++ {
		h.AddHash(stats.HashValue(types.IntValue(i)))
	}
	z.Distinct = h
	if ok, _ := b.FromZone(&z, 0); !ok {
		t.Fatal("refused")
	}
	if err := b.Update(vector.FromValues(types.Int64, []types.Value{types.IntValue(1000)}), nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := finalText(t, b); got[0] != "38" {
		t.Fatalf("estimate after one more value: %s", got[0])
	}
}

func TestQuantilesFromZoneMergeSketches(t *testing.T) {
	spec := Spec{Name: "approx_percentile", ArgType: types.Int64, Quantiles: []float64{0.5}}
	scan, _ := New(spec)
	stored, _ := New(spec)
	for zone := 0; zone < 3; zone++ {
		var vals []types.Value
		k := stats.NewKLL()
		for i := 0; i < 50; i++ {
			v := int64(zone*50 + i)
			vals = append(vals, types.IntValue(v))
			k.Add(float64(v))
		}
		if err := scan.Update(vector.FromValues(types.Int64, vals), nil, nil); err != nil {
			t.Fatal(err)
		}
		z := Zone{Rows: 50, Nulls: 0, DistinctExact: -1, Quantiles: k}
		if ok, err := stored.FromZone(&z, 0); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	if got, want := finalText(t, stored), finalText(t, scan); got[0] != want[0] {
		t.Fatalf("median from zones %s, scanned %s", got[0], want[0])
	}
}
