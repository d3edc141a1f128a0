package agg

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// stateFuncs is every aggregate function of the package.
var stateFuncs = []string{
	"count_star", "count", "sum", "avg", "min", "max", "count_distinct", "sum_distinct", "avg_distinct",
	"approx_count_distinct", "approx_percentile", "var_samp", "var_pop", "stddev_samp", "stddev_pop", "sem",
	"skewness", "kurtosis", "kurtosis_pop", "product", "fsum", "bool_and", "bool_or", "count_if", "bit_and",
	"bit_or", "bit_xor", "first", "last", "any_value", "list", "string_agg", "mode", "histogram",
	"quantile_disc", "quantile_cont", "median", "weighted_avg", "arg_min", "arg_max", "corr", "covar_samp",
	"covar_pop", "regr_slope", "regr_intercept", "regr_r2", "regr_count", "regr_avgx", "regr_avgy",
	"regr_sxx", "regr_syy", "regr_sxy",
}

// Argument types beyond testTypes: an interval and nested values.
var (
	stateInterval = arrow.FixedWidthTypes.MonthDayNanoInterval
	stateList     = arrow.ListOf(arrow.PrimitiveTypes.Int64)
	stateStruct   = arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true})
	stateMap   = arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64)
	stateTypes = append(append(append([]arrow.DataType{}, testTypes...), stateInterval, stateList, stateStruct, stateMap,
		arrow.LargeListOf(arrow.BinaryTypes.String), arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64)),
		stateOdd...)
	// stateOdd are types sources normalise away (to DATE, INTERVAL, BLOB) that an
	// aggregate may still be given.
	stateOdd = []arrow.DataType{arrow.FixedWidthTypes.Date64, arrow.FixedWidthTypes.Duration_us,
		&arrow.FixedSizeBinaryType{ByteWidth: 3}, arrow.BinaryTypes.LargeBinary}
)

// TestEveryAggregateIsSerializable: every function over every argument type it
// accepts, with two arguments where it takes two, and with DISTINCT and ORDER BY
// inside the call, has a byte form of its state.
func TestEveryAggregateIsSerializable(t *testing.T) {
	check := func(s Spec) {
		t.Helper()
		if _, err := ResultType(s); err != nil {
			return
		}
		if !Serializable(s) {
			t.Errorf("%s (distinct %v, %d order keys) has no byte form of its state", s, s.Distinct, len(s.Order))
		}
	}
	n := 0
	for _, fn := range stateFuncs {
		if fn == "count_star" {
			check(Spec{Name: fn})
			continue
		}
		for _, dt := range stateTypes {
			s := Spec{Name: fn, ArgType: dt, Quantiles: []float64{0.5}}
			if TwoArguments(fn) {
				for _, by := range stateTypes {
					s.ArgTypes = []arrow.DataType{by}
					check(s)
				}
				n++
				continue
			}
			check(s)
			distinct := s
			distinct.Distinct = true
			check(distinct)
			for _, key := range stateTypes {
				ordered := s
				ordered.Order = []OrderKey{{Type: key, Desc: true}}
				check(ordered)
			}
			n++
		}
	}
	if n < 500 {
		t.Fatalf("only %d specs checked", n)
	}
}

// stateSpecs are the aggregates whose round trip is tested: every function and
// type of TestAggregates, every function of the package over the argument types its
// binder gives it (DOUBLE for the statistics, BOOLEAN for bool_* and count_if), the
// row-keeping and distinct ones over every type they accept, with their options,
// two arguments, DISTINCT and ORDER BY inside the call, and nested values.
func stateSpecs(t *testing.T) []Spec {
	var specs []Spec
	add := func(s Spec) {
		t.Helper()
		if _, err := ResultType(s); err != nil {
			return
		}
		if !Serializable(s) {
			t.Errorf("%s has no byte form of its state", s)
			return
		}
		specs = append(specs, s)
	}
	add(Spec{Name: "count_star"})
	for _, fn := range testFuncs[1:] {
		for _, dt := range testTypes {
			add(Spec{Name: fn, ArgType: dt})
		}
	}
	f64, i32, str := arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String
	for _, dt := range stateTypes {
		for _, fn := range []string{"first", "last", "any_value", "list", "mode", "histogram", "median",
			"sum_distinct", "avg_distinct", "bit_and", "bit_or", "bit_xor"} {
			add(Spec{Name: fn, ArgType: dt})
		}
		add(Spec{Name: "quantile_disc", ArgType: dt, Quantiles: []float64{0.3}})
		add(Spec{Name: "quantile_disc", ArgType: dt, Quantiles: []float64{0.1, 0.6}, List: true, FromTop: true})
		add(Spec{Name: "quantile_cont", ArgType: dt, Quantiles: []float64{0, 0.25, 0.9}, List: true})
		add(Spec{Name: "min", ArgType: dt})
		add(Spec{Name: "max", ArgType: dt})
		add(Spec{Name: "count_distinct", ArgType: dt})
	}
	for _, fn := range []string{"var_samp", "var_pop", "stddev_samp", "stddev_pop", "sem", "skewness", "kurtosis",
		"kurtosis_pop", "product", "fsum"} {
		add(Spec{Name: fn, ArgType: f64})
	}
	for name := range comoment {
		add(Spec{Name: name, ArgType: f64, ArgTypes: []arrow.DataType{f64}})
	}
	for _, fn := range []string{"bool_and", "bool_or", "count_if"} {
		add(Spec{Name: fn, ArgType: arrow.FixedWidthTypes.Boolean})
	}
	dec64 := &arrow.Decimal64Type{Precision: 15, Scale: 2}
	dec128 := &arrow.Decimal128Type{Precision: 30, Scale: 3}
	for _, fn := range []string{"arg_min", "arg_max"} {
		for _, pair := range [][2]arrow.DataType{{str, i32}, {arrow.PrimitiveTypes.Int64, f64}, {dec128, str},
			{stateInterval, dec64}, {dec64, stateList}, {str, stateStruct}, {arrow.FixedWidthTypes.Boolean, arrow.FixedWidthTypes.Date32}} {
			add(Spec{Name: fn, ArgType: pair[0], ArgTypes: []arrow.DataType{pair[1]}})
		}
	}
	add(Spec{Name: "weighted_avg", ArgType: f64, ArgTypes: []arrow.DataType{f64}})
	add(Spec{Name: "string_agg", ArgType: str, Sep: ";"})
	add(Spec{Name: "string_agg", ArgType: arrow.BinaryTypes.LargeString, Sep: ", "})
	// DISTINCT and ORDER BY inside the call.
	for _, s := range []Spec{
		{Name: "string_agg", ArgType: str, Sep: ",", Order: []OrderKey{{Type: i32, Desc: true}}},
		{Name: "list", ArgType: i32, Distinct: true},
		{Name: "list", ArgType: stateStruct, Order: []OrderKey{{Type: stateList}, {Type: f64, Desc: true, NullsFirst: true}}},
		{Name: "first", ArgType: str, Order: []OrderKey{{Type: f64, NullsFirst: true}}},
		{Name: "sum", ArgType: i32, Distinct: true},
		{Name: "avg", ArgType: dec64, Distinct: true, Order: []OrderKey{{Type: dec64}}},
		{Name: "count", ArgType: str, Distinct: true, Order: []OrderKey{{Type: str}}},
		{Name: "count", ArgType: stateMap, Distinct: true},
		{Name: "arg_min", ArgType: str, ArgTypes: []arrow.DataType{i32}, Distinct: true},
		{Name: "corr", ArgType: f64, ArgTypes: []arrow.DataType{f64}, Order: []OrderKey{{Type: stateInterval}}},
		{Name: "quantile_cont", ArgType: f64, Quantiles: []float64{0.5}, Distinct: true},
	} {
		add(s)
	}
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String} {
		add(Spec{Name: "approx_count_distinct", ArgType: dt})
	}
	add(Spec{Name: "approx_percentile", ArgType: dec128, Quantiles: []float64{0.5}})
	add(Spec{Name: "approx_percentile", ArgType: arrow.PrimitiveTypes.Int64, Quantiles: []float64{0.1, 0.9}, List: true})
	if len(specs) < 300 {
		t.Fatalf("only %d specs to test", len(specs))
	}
	// Every kind is among them.
	kinds := map[string]bool{}
	for _, s := range specs {
		a, _ := New(s)
		st, _ := unwrapState(a)
		kinds[st.stateKind()] = true
	}
	for _, k := range []string{"count", "sum_int", "sum_float", "sum_decimal128", "sum_decimal64", "min_max_int",
		"min_max_float", "min_max_value", "approx_count_distinct", "approx_quantile", "variance", "covariance",
		"shape", "weighted_avg", "float_fold", "bool", "bit", "pick", "count_distinct", "sum_avg_distinct",
		"histogram", "collect", "ordered"} {
		if !kinds[k] {
			t.Errorf("no aggregate of kind %s is tested", k)
		}
		delete(kinds, k)
	}
	for k := range kinds {
		t.Errorf("kind %s is not in the list of kinds", k)
	}
	return specs
}

// stateBatch is one Update of an aggregate: a column per argument and ORDER BY key.
type stateBatch struct {
	args   []arrow.Array
	sel    []int32
	groups []uint32
}

// specTypes is the type of each column an Update of s reads.
func specTypes(s Spec) []arrow.DataType {
	var ts []arrow.DataType
	if s.ArgType != nil {
		ts = append(ts, s.ArgType)
	} else {
		ts = append(ts, arrow.PrimitiveTypes.Int64) // count_star reads any column
	}
	ts = append(ts, s.ArgTypes...)
	for _, k := range s.Order {
		ts = append(ts, k.Type)
	}
	return ts
}

// stateBatches draws nBatches updates of s over groups groups: plain, dictionary and
// sliced columns, with and without NULLs, through selections. The statistics see no
// NaN, which makes them an error.
func stateBatches(rng *rand.Rand, s Spec, nBatches, groups int) []stateBatch {
	ts := specTypes(s)
	finite := momentFuncs[s.Name] || shapeFuncs[s.Name] || comoment[s.Name] || s.Name == "weighted_avg"
	var out []stateBatch
	for b := 0; b < nBatches; b++ {
		n := rng.IntN(300)
		nullFrac := 0.15
		if b%3 == 0 {
			nullFrac = 0
		}
		cols := make([]arrow.Array, len(ts))
		for c, dt := range ts {
			cols[c] = stateColumn(rng, dt, n, nullFrac, finite, s.Name != "approx_percentile")
		}
		sb := selectedBatch(rng, make([]any, n), nil, rng.IntN(2) == 0, 4, groups)
		out = append(out, stateBatch{args: cols, sel: sb.sel, groups: sb.groups})
	}
	return out
}

// stateColumn draws n values of dt: a plain array, a slice of a longer one, or (if
// dict and dt is neither nested nor an interval) a dictionary array.
func stateColumn(rng *rand.Rand, dt arrow.DataType, n int, nullFrac float64, finite, dict bool) arrow.Array {
	if types.IsNested(dt) || dt.ID() == arrow.INTERVAL_MONTH_DAY_NANO || slices.ContainsFunc(stateOdd, func(o arrow.DataType) bool {
		return arrow.TypeEqual(o, dt)
	}) {
		b := array.NewBuilder(memory.DefaultAllocator, dt)
		defer b.Release()
		for range n + 3 {
			appendRandom(rng, b, nullFrac)
		}
		arr := b.NewArray()
		if rng.IntN(2) == 0 {
			return array.NewSlice(arr, 3, int64(n+3))
		}
		return array.NewSlice(arr, 0, int64(n))
	}
	vals := randValues(rng, dt, n, nullFrac)
	if finite {
		for i, v := range vals {
			if f, ok := v.(float64); ok && math.IsNaN(f) {
				vals[i] = 0.5
			}
		}
	}
	switch rng.IntN(3) {
	case 0:
		if dict {
			return buildDict(rng, dt, vals)
		}
		return build(dt, vals)
	case 1:
		return build(dt, vals)
	}
	padded := build(dt, append([]any{nil, nil, nil}, vals...))
	return array.NewSlice(padded, 3, int64(3+n))
}

// appendRandom appends a random value (of few distinct ones, so that some repeat)
// or, with probability nullFrac, a NULL to b.
func appendRandom(rng *rand.Rand, b array.Builder, nullFrac float64) {
	if rng.Float64() < nullFrac {
		b.AppendNull()
		return
	}
	switch x := b.(type) {
	case *array.MapBuilder:
		x.Append(true)
		for i := range rng.IntN(3) {
			x.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprint("k", i))
			appendRandom(rng, x.ItemBuilder(), 0.1)
		}
	case array.ListLikeBuilder:
		x.Append(true)
		size := rng.IntN(4)
		if fl, ok := x.(*array.FixedSizeListBuilder); ok {
			size = int(fl.Type().(*arrow.FixedSizeListType).Len())
		}
		for range size {
			appendRandom(rng, x.ValueBuilder(), 0.1)
		}
	case *array.StructBuilder:
		x.Append(true)
		for f := range x.NumField() {
			appendRandom(rng, x.FieldBuilder(f), 0.1)
		}
	case *array.Int64Builder:
		x.Append(int64(rng.IntN(5) - 2))
	case *array.Int32Builder:
		x.Append(int32(rng.IntN(5)))
	case *array.Float64Builder:
		x.Append(float64(rng.IntN(9)) / 4)
	case *array.StringBuilder:
		x.Append(fmt.Sprint("s", rng.IntN(4)))
	case *array.MonthDayNanoIntervalBuilder:
		x.Append(arrow.MonthDayNanoInterval{Months: int32(rng.IntN(3)), Days: int32(rng.IntN(40)), Nanoseconds: rng.Int64N(1e12)})
	case *array.Date64Builder:
		x.Append(arrow.Date64(rng.Int64N(40000) * 86400000))
	case *array.DurationBuilder:
		x.Append(arrow.Duration(rng.Int64N(1e9) - 5e8))
	case *array.FixedSizeBinaryBuilder:
		x.Append([]byte{byte(rng.IntN(3)), 0, byte(rng.IntN(2))})
	case *array.BinaryBuilder:
		x.Append([]byte{byte(rng.IntN(4)), 'b'})
	default:
		panic(fmt.Sprintf("no random values for %T", b))
	}
}

func feedState(t *testing.T, acc Accumulator, batches []stateBatch) {
	t.Helper()
	for _, b := range batches {
		if err := UpdateArgs(acc, b.args, b.sel, b.groups); err != nil {
			t.Fatalf("Update: %v", err)
		}
	}
}

// roundTrip encodes a's state, decodes it as spec's and returns the decoded
// accumulator, failing t when either step fails or the decoded state encodes to
// other bytes.
func roundTrip(t *testing.T, spec Spec, a Accumulator) Accumulator {
	t.Helper()
	enc, err := EncodeState(a)
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

// TestStateRoundTrip: for every aggregate with a byte form, two partial states
// encoded, decoded and merged give the result of merging the originals, and a
// decoded state encodes to the same bytes.
func TestStateRoundTrip(t *testing.T) {
	for i, spec := range stateSpecs(t) {
		t.Run(fmt.Sprintf("%d/%s", i, spec), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(len(spec.Name)), uint64(i)))
			const groups = 13
			batches := stateBatches(rng, spec, 8, groups)
			half := len(batches) / 2
			part := func(bs []stateBatch, n int) Accumulator {
				a, err := New(spec)
				if err != nil {
					t.Fatal(err)
				}
				a.Resize(n)
				feedState(t, a, bs)
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
			round := func(x Accumulator) Accumulator { return roundTrip(t, spec, x) }
			got := merged(round(a), round(b), round(empty))
			if d := sameArrays(got, want); d != "" {
				t.Fatalf("merged decoded states: %s", d)
			}
			// A decoded state finalises alone as the original does, and goes on
			// folding rows as the original does.
			fa, _ := a.Final()
			ra := round(a)
			fr, err := ra.Final()
			if err != nil {
				t.Fatal(err)
			}
			if d := sameArrays(fr, fa); d != "" {
				t.Fatalf("decoded state's own result: %s", d)
			}
			for _, x := range []Accumulator{a, ra} {
				feedState(t, x, batches[half:])
			}
			fa, _ = a.Final()
			if fr, err = ra.Final(); err != nil {
				t.Fatal(err)
			}
			if d := sameArrays(fr, fa); d != "" {
				t.Fatalf("decoded state updated: %s", d)
			}
		})
	}
}

// TestStateOfDistinctModes: a count_distinct keyed by value alone (every row in
// group 0), by group and value packed in one word, and by both unpacked, travels
// and is read back in the same mode.
func TestStateOfDistinctModes(t *testing.T) {
	dt := arrow.PrimitiveTypes.Int64
	spec := Spec{Name: "count_distinct", ArgType: dt}
	vals := []any{int64(3), int64(1), int64(3), int64(7), nil, int64(1)}
	for _, tc := range []struct {
		name   string
		groups []uint32
		big    bool
	}{{"single", nil, false}, {"packed", []uint32{0, 1, 1, 2, 0, 2}, false}, {"pairs", []uint32{0, 1, 1, 2, 0, 2}, true}} {
		rows := vals
		if tc.big {
			rows = append(append([]any{}, vals...), int64(-5))
			tc.groups = append(tc.groups, 1)
		}
		a, _ := New(spec)
		a.Resize(3)
		if err := a.Update(build(dt, rows), nil, tc.groups); err != nil {
			t.Fatal(err)
		}
		dec := roundTrip(t, spec, a)
		x, y := a.(*distinctAcc), dec.(*distinctAcc)
		if (x.single != nil) != (y.single != nil) || (x.packed != nil) != (y.packed != nil) || (x.pairs != nil) != (y.pairs != nil) {
			t.Errorf("%s: decoded in another mode", tc.name)
		}
		want, _ := a.Final()
		got, _ := dec.Final()
		if d := sameArrays(got, want); d != "" {
			t.Errorf("%s: %s", tc.name, d)
		}
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
	dec := roundTrip(t, spec, a)
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

// badStateSpecs are aggregates of every layout: fixed-size state, sketches, and
// values columns of strings, decimals, nested values, distinct sets and rows.
var badStateSpecs = []Spec{
	{Name: "sum", ArgType: arrow.PrimitiveTypes.Int64},
	{Name: "approx_count_distinct", ArgType: arrow.BinaryTypes.String},
	{Name: "min", ArgType: arrow.PrimitiveTypes.Float32},
	{Name: "sum", ArgType: &arrow.Decimal64Type{Precision: 15, Scale: 2}},
	{Name: "min", ArgType: arrow.BinaryTypes.String},
	{Name: "max", ArgType: &arrow.Decimal128Type{Precision: 30, Scale: 3}},
	{Name: "max", ArgType: stateList},
	{Name: "count_distinct", ArgType: arrow.BinaryTypes.String},
	{Name: "count_distinct", ArgType: arrow.PrimitiveTypes.Int64},
	{Name: "sum_distinct", ArgType: arrow.PrimitiveTypes.Int32},
	{Name: "histogram", ArgType: arrow.BinaryTypes.String},
	{Name: "list", ArgType: stateInterval},
	{Name: "mode", ArgType: stateStruct},
	{Name: "string_agg", ArgType: arrow.BinaryTypes.String, Sep: ",", Order: []OrderKey{{Type: stateMap}}},
	{Name: "arg_max", ArgType: stateInterval, ArgTypes: []arrow.DataType{stateList}},
	{Name: "var_samp", ArgType: arrow.PrimitiveTypes.Float64},
	{Name: "bool_or", ArgType: arrow.FixedWidthTypes.Boolean},
}

// encodedState is the encoding of a state of spec over groups groups.
func encodedState(t *testing.T, rng *rand.Rand, spec Spec, groups int) []byte {
	t.Helper()
	a, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	a.Resize(groups)
	feedState(t, a, stateBatches(rng, spec, 3, groups))
	enc, err := EncodeState(a)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// TestStateRejectsBadBytes: a state cut anywhere, with bytes appended, of another
// kind or version, or not a state at all, is refused with CORRUPT_SOURCE, never a
// panic; an aggregate without a byte form says so.
func TestStateRejectsBadBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, spec := range badStateSpecs {
		enc := encodedState(t, rng, spec, 5)
		bad := [][]byte{append(append([]byte{}, enc...), 0), []byte("LPS"), []byte("XYZ\x01\x00\x00")}
		for n := range len(enc) {
			bad = append(bad, enc[:n])
		}
		v2 := append([]byte{}, enc...)
		v2[3] = stateVersion + 1
		bad = append(bad, v2)
		for i, b := range bad {
			if _, err := DecodeState(spec, b); errs.CodeOf(err) != errs.CorruptSource {
				t.Fatalf("%s: bad state %d (%d bytes): %v, want CORRUPT_SOURCE", spec, i, len(b), err)
			}
		}
		other := Spec{Name: "count_star"}
		if spec.Name != other.Name {
			if _, err := DecodeState(other, enc); errs.CodeOf(err) != errs.CorruptSource {
				t.Fatalf("a %s state read as count_star: %v, want CORRUPT_SOURCE", spec, err)
			}
		}
	}
	// A count past the bytes is refused before anything is allocated for it: a
	// values column of 2^40 strings, a row store of 2^40 rows.
	huge := stateForm.Writer()
	huge.Bytes([]byte("min_max_value"))
	huge.Uvarint(1)
	huge.Bool(true)
	huge.Uvarint(1 << 40)
	if _, err := DecodeState(Spec{Name: "min", ArgType: arrow.BinaryTypes.String}, huge.B); errs.CodeOf(err) != errs.CorruptSource {
		t.Fatalf("a column of 2^40 strings: %v, want CORRUPT_SOURCE", err)
	}
	huge = stateForm.Writer()
	huge.Bytes([]byte("collect"))
	huge.Uvarint(1)
	huge.Uvarint(1 << 40)
	if _, err := DecodeState(Spec{Name: "list", ArgType: arrow.PrimitiveTypes.Int8}, huge.B); errs.CodeOf(err) != errs.CorruptSource {
		t.Fatalf("2^40 rows: %v, want CORRUPT_SOURCE", err)
	}
	// A type without a values column form leaves its aggregate without a byte form.
	view := Spec{Name: "count", ArgType: arrow.BinaryTypes.StringView, Distinct: true}
	if _, err := ResultType(view); err != nil {
		t.Fatal(err)
	}
	if Serializable(view) {
		t.Fatalf("%s has a byte form; pick an aggregate without one", view)
	}
	a, _ := New(view)
	if _, err := EncodeState(a); errs.CodeOf(err) != errs.Analysis {
		t.Errorf("%s's state encoded: %v, want ANALYSIS_ERROR", view, err)
	}
	if _, err := DecodeState(view, []byte("LPS\x01")); errs.CodeOf(err) != errs.Analysis {
		t.Errorf("%s's state decoded: %v, want ANALYSIS_ERROR", view, err)
	}
}

// TestStateSurvivesCorruption: every cut of a valid state and random changes to its
// bytes decode to an error or to a state that finalises, merges and encodes; none
// panics.
func TestStateSurvivesCorruption(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, spec := range badStateSpecs {
		enc := encodedState(t, rng, spec, 4)
		try := func(b []byte) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("%s: %x: panic: %v", spec, b, p)
				}
			}()
			dec, err := DecodeState(spec, b)
			if err != nil {
				if errs.CodeOf(err) != errs.CorruptSource {
					t.Fatalf("%s: %v, want CORRUPT_SOURCE", spec, err)
				}
				return
			}
			dec.Final() // an error (say, a statistic out of range) is an answer
			into, _ := New(spec)
			n, _ := unwrapState(dec)
			into.Resize(n.stateGroups())
			mapping := make([]uint32, n.stateGroups())
			for g := range mapping {
				mapping[g] = uint32(g)
			}
			if err := into.Merge(dec, mapping); err != nil {
				t.Fatalf("%s: merge: %v", spec, err)
			}
			into.Final()
			if _, err := EncodeState(dec); err != nil {
				t.Fatalf("%s: encode: %v", spec, err)
			}
		}
		for n := range len(enc) {
			try(enc[:n])
		}
		for range 400 {
			b := append([]byte{}, enc...)
			for range 1 + rng.IntN(3) {
				i := 4 + rng.IntN(len(b)-4) // the header is checked whole
				switch rng.IntN(3) {
				case 0:
					b[i] ^= 1 << rng.IntN(8)
				case 1:
					b[i] = byte(rng.IntN(256))
				default:
					b[i] = 0xff
				}
			}
			try(b)
		}
	}
}
