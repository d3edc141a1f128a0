package agg

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/loredb/lore/errs"
)

// stateSpecs are the aggregates whose partial states have a byte form: every
// function and type of TestAggregates that has one, and the sketches.
func stateSpecs(t *testing.T) []Spec {
	var specs []Spec
	for _, fn := range testFuncs {
		for _, dt := range testTypes {
			s := Spec{Name: fn, ArgType: dt}
			if fn == "count_star" {
				if dt != testTypes[0] {
					continue
				}
				s.ArgType = nil
			}
			if _, err := ResultType(s); err == nil && Serializable(s) {
				specs = append(specs, s)
			}
		}
	}
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String} {
		specs = append(specs, Spec{Name: "approx_count_distinct", ArgType: dt})
	}
	specs = append(specs, Spec{Name: "approx_percentile", ArgType: &arrow.Decimal128Type{Precision: 30, Scale: 3}, Quantiles: []float64{0.5}},
		Spec{Name: "approx_percentile", ArgType: arrow.PrimitiveTypes.Int64, Quantiles: []float64{0.1, 0.9}, List: true})
	// The ones a distributed aggregate needs first must be among them.
	for _, want := range []Spec{
		{Name: "count_star"}, {Name: "count", ArgType: arrow.BinaryTypes.String},
		{Name: "sum", ArgType: arrow.PrimitiveTypes.Int64}, {Name: "avg", ArgType: arrow.PrimitiveTypes.Float64},
		{Name: "sum", ArgType: &arrow.Decimal64Type{Precision: 15, Scale: 2}},
		{Name: "avg", ArgType: &arrow.Decimal128Type{Precision: 30, Scale: 3}},
		{Name: "min", ArgType: arrow.PrimitiveTypes.Int32}, {Name: "max", ArgType: arrow.PrimitiveTypes.Float64},
		{Name: "max", ArgType: arrow.FixedWidthTypes.Date32},
	} {
		if !Serializable(want) {
			t.Errorf("%s(%v) has no byte form of its state", want.Name, want.ArgType)
		}
	}
	return specs
}

// TestStateRoundTrip: for every aggregate with a byte form, two partial states
// encoded, decoded and merged give the result of merging the originals, and a
// decoded state encodes to the same bytes.
func TestStateRoundTrip(t *testing.T) {
	for _, spec := range stateSpecs(t) {
		t.Run(fmt.Sprintf("%s/%v", spec.Name, spec.ArgType), func(t *testing.T) {
			dt := spec.ArgType
			if dt == nil {
				dt = arrow.PrimitiveTypes.Int64
			}
			rng := rand.New(rand.NewPCG(uint64(len(spec.Name)), uint64(dt.ID())))
			const groups = 13
			batches := makeBatches(rng, dt, 8, groups)
			if spec.Name == "approx_percentile" {
				// Its input comes decoded: the plan never hands it dictionaries.
				for i, b := range batches {
					if b.arg.DataType().ID() == arrow.DICTIONARY {
						batches[i].arg = build(dt, b.vals)
					}
				}
			}
			half := len(batches) / 2
			part := func(bs []batch, n int) Accumulator {
				a, err := New(spec)
				if err != nil {
					t.Fatal(err)
				}
				a.Resize(n)
				feed(t, a, bs, false)
				return a
			}
			// The second part has fewer groups, and a state with none is one too.
			a, empty := part(batches[:half], groups), part(nil, 0)
			for i := range batches[half:] {
				for k, g := range batches[half+i].groups {
					batches[half+i].groups[k] = g % (groups - 3)
				}
			}
			b := part(batches[half:], groups-3)
			mapping := make([]uint32, groups)
			for j := range mapping {
				mapping[j] = uint32((j * 5) % groups) // a permutation: 5 and 13 are coprime
			}
			merged := func(x, y, z Accumulator) arrow.Array {
				out, _ := New(spec)
				out.Resize(groups)
				for _, m := range []struct {
					acc Accumulator
					n   int
				}{{x, groups}, {y, groups - 3}, {z, 0}} {
					if err := out.Merge(m.acc, mapping[:m.n]); err != nil {
						t.Fatal(err)
					}
				}
				res, err := out.Final()
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			want := merged(a, b, empty)
			round := func(x Accumulator) Accumulator {
				enc, err := EncodeState(x)
				if err != nil {
					t.Fatal(err)
				}
				dec, err := DecodeState(spec, enc)
				if err != nil {
					t.Fatal(err)
				}
				again, err := EncodeState(dec)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(enc, again) {
					t.Fatalf("a decoded state encodes to other bytes (%d, was %d)", len(again), len(enc))
				}
				return dec
			}
			got := merged(round(a), round(b), round(empty))
			if d := sameArrays(got, want); d != "" {
				t.Fatalf("merged decoded states: %s", d)
			}
			// A decoded state finalises alone as the original does.
			fa, _ := a.Final()
			fr, err := round(a).Final()
			if err != nil {
				t.Fatal(err)
			}
			if d := sameArrays(fr, fa); d != "" {
				t.Fatalf("decoded state's own result: %s", d)
			}
		})
	}
}

// TestStateOfAWidenedSum: a 64-bit decimal sum that left 64 bits travels as its
// 128-bit sums and keeps summing past 64 bits where it is decoded.
func TestStateOfAWidenedSum(t *testing.T) {
	dt := &arrow.Decimal64Type{Precision: 18, Scale: 0}
	spec := Spec{Name: "sum", ArgType: dt}
	big := make([]any, 11)
	for i := range big {
		big[i] = decimal128.FromI64(900_000_000_000_000_000)
	}
	a, _ := New(spec)
	if err := a.Update(build(dt, big), nil, nil); err != nil {
		t.Fatal(err)
	}
	enc, err := EncodeState(a)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := DecodeState(spec, enc)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []Accumulator{a, dec} {
		if err := x.Update(build(dt, big[:1]), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	want, errA := a.Final()
	got, errB := dec.Final()
	if (errA == nil) != (errB == nil) {
		t.Fatalf("final: %v, want %v", errB, errA)
	}
	if errA == nil {
		if d := sameArrays(got, want); d != "" {
			t.Fatal(d)
		}
	}
}

// TestStateRejectsBadBytes: a state cut anywhere, with bytes appended, of another
// kind or version, or not a state at all, is refused with CORRUPT_SOURCE, never a
// panic; an aggregate without a byte form says so.
func TestStateRejectsBadBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, spec := range []Spec{
		{Name: "sum", ArgType: arrow.PrimitiveTypes.Int64},
		{Name: "approx_count_distinct", ArgType: arrow.BinaryTypes.String},
		{Name: "min", ArgType: arrow.PrimitiveTypes.Float32},
		{Name: "sum", ArgType: &arrow.Decimal64Type{Precision: 15, Scale: 2}},
	} {
		a, _ := New(spec)
		a.Resize(5)
		feed(t, a, makeBatches(rng, spec.ArgType, 3, 5), false)
		enc, err := EncodeState(a)
		if err != nil {
			t.Fatal(err)
		}
		bad := [][]byte{append(append([]byte{}, enc...), 0), []byte("LPS"), []byte("XYZ\x01\x00\x00")}
		for n := range len(enc) {
			bad = append(bad, enc[:n])
		}
		v2 := append([]byte{}, enc...)
		v2[3] = stateVersion + 1
		bad = append(bad, v2)
		for i, b := range bad {
			if _, err := DecodeState(spec, b); errs.CodeOf(err) != errs.CorruptSource {
				t.Fatalf("%s: bad state %d (%d bytes): %v, want CORRUPT_SOURCE", spec.Name, i, len(b), err)
			}
		}
		other := Spec{Name: "count_star"}
		if spec.Name != other.Name {
			if _, err := DecodeState(other, enc); errs.CodeOf(err) != errs.CorruptSource {
				t.Fatalf("a %s state read as count_star: %v, want CORRUPT_SOURCE", spec.Name, err)
			}
		}
	}
	distinct := Spec{Name: "count_distinct", ArgType: arrow.PrimitiveTypes.Int64}
	if Serializable(distinct) {
		t.Skip("count_distinct has a byte form now; pick an aggregate without one")
	}
	a, _ := New(distinct)
	if _, err := EncodeState(a); errs.CodeOf(err) != errs.Analysis {
		t.Errorf("count_distinct's state encoded: %v, want ANALYSIS_ERROR", err)
	}
}
