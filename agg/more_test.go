package agg

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/types"
)

// moreInputs are random argument columns for the aggregates of functions.go, with
// NULLs, over few distinct values so that ties and modes occur.
type moreInputs struct {
	f1, f2 arrow.Array // DOUBLE
	i      arrow.Array // INTEGER
	s      arrow.Array // VARCHAR
	b      arrow.Array // BOOLEAN
	groups []uint32
}

func makeMoreInputs(rng *rand.Rand, n, groups int) moreInputs {
	mem := memory.DefaultAllocator
	f1, f2 := array.NewFloat64Builder(mem), array.NewFloat64Builder(mem)
	ib, sb, bb := array.NewInt32Builder(mem), array.NewStringBuilder(mem), array.NewBooleanBuilder(mem)
	in := moreInputs{groups: make([]uint32, n)}
	for r := 0; r < n; r++ {
		in.groups[r] = uint32(rng.Intn(groups))
		null := func() bool { return rng.Intn(8) == 0 }
		if null() {
			f1.AppendNull()
		} else {
			f1.Append(float64(rng.Intn(50)) + 1e6)
		}
		if null() {
			f2.AppendNull()
		} else {
			f2.Append(rng.NormFloat64() * 100)
		}
		if null() {
			ib.AppendNull()
		} else {
			ib.Append(int32(rng.Intn(20) - 5))
		}
		if null() {
			sb.AppendNull()
		} else {
			sb.Append(fmt.Sprintf("s%d", rng.Intn(7)))
		}
		if null() {
			bb.AppendNull()
		} else {
			bb.Append(rng.Intn(5) != 0)
		}
	}
	in.f1, in.f2, in.i, in.s, in.b = f1.NewArray(), f2.NewArray(), ib.NewArray(), sb.NewArray(), bb.NewArray()
	return in
}

// moreCases are the specs under test and the columns each reads.
func moreCases(in moreInputs) []struct {
	spec Spec
	cols []arrow.Array
} {
	type c = struct {
		spec Spec
		cols []arrow.Array
	}
	f, i, s, b := types.Float64, types.Int32, types.String, types.Boolean
	var out []c
	for _, name := range []string{"var_samp", "var_pop", "stddev_samp", "stddev_pop", "product", "fsum",
		"sem", "skewness", "kurtosis", "kurtosis_pop"} {
		out = append(out, c{Spec{Name: name, ArgType: f}, []arrow.Array{in.f1}})
	}
	for name := range comoment {
		out = append(out, c{Spec{Name: name, ArgType: f, ArgTypes: []arrow.DataType{f}}, []arrow.Array{in.f2, in.f1}})
	}
	for _, name := range []string{"bool_and", "bool_or", "count_if"} {
		out = append(out, c{Spec{Name: name, ArgType: b}, []arrow.Array{in.b}})
	}
	for _, name := range []string{"bit_and", "bit_or", "bit_xor", "first", "last", "any_value", "mode", "median", "list"} {
		out = append(out, c{Spec{Name: name, ArgType: i}, []arrow.Array{in.i}})
	}
	out = append(out,
		c{Spec{Name: "string_agg", ArgType: s, Sep: ";"}, []arrow.Array{in.s}},
		c{Spec{Name: "mode", ArgType: s}, []arrow.Array{in.s}},
		c{Spec{Name: "quantile_disc", ArgType: s, Quantiles: []float64{0.3}}, []arrow.Array{in.s}},
		c{Spec{Name: "quantile_cont", ArgType: f, Quantiles: []float64{0, 0.25, 0.9}, List: true}, []arrow.Array{in.f2}},
		c{Spec{Name: "arg_min", ArgType: s, ArgTypes: []arrow.DataType{i}}, []arrow.Array{in.s, in.i}},
		c{Spec{Name: "weighted_avg", ArgType: f, ArgTypes: []arrow.DataType{f}}, []arrow.Array{in.f2, in.f1}},
		c{Spec{Name: "arg_max", ArgType: i, ArgTypes: []arrow.DataType{f}}, []arrow.Array{in.i, in.f2}},
		// DISTINCT and ORDER BY inside the call.
		c{Spec{Name: "string_agg", ArgType: s, Sep: ",", Order: []OrderKey{{Type: i, Desc: true}}}, []arrow.Array{in.s, in.i}},
		c{Spec{Name: "list", ArgType: i, Distinct: true}, []arrow.Array{in.i}},
		c{Spec{Name: "first", ArgType: s, Order: []OrderKey{{Type: f, NullsFirst: true}}}, []arrow.Array{in.s, in.f2}},
		c{Spec{Name: "sum", ArgType: i, Distinct: true}, []arrow.Array{in.i}},
		c{Spec{Name: "count", ArgType: s, Distinct: true, Order: []OrderKey{{Type: s}}}, []arrow.Array{in.s, in.s}},
		c{Spec{Name: "arg_min", ArgType: s, ArgTypes: []arrow.DataType{i}, Distinct: true}, []arrow.Array{in.s, in.i}},
	)
	return out
}

// sameArrays compares two results cell by cell, floats to a relative 1e-9.
func sameArrays(a, b arrow.Array) string {
	if a.Len() != b.Len() {
		return fmt.Sprintf("%d rows, want %d", a.Len(), b.Len())
	}
	for r := 0; r < a.Len(); r++ {
		if fa, ok := a.(*array.Float64); ok {
			fb := b.(*array.Float64)
			if fa.IsNull(r) != fb.IsNull(r) {
				return fmt.Sprintf("row %d: NULL differs", r)
			}
			x, y := fa.Value(r), fb.Value(r)
			if fa.IsValid(r) && !(x == y || (math.IsNaN(x) && math.IsNaN(y)) || math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y))) {
				return fmt.Sprintf("row %d: %v, want %v", r, x, y)
			}
			continue
		}
		if x, y := a.ValueStr(r), b.ValueStr(r); x != y {
			return fmt.Sprintf("row %d: %s, want %s", r, x, y)
		}
	}
	return ""
}

func slice(cols []arrow.Array, i, j int) []arrow.Array {
	out := make([]arrow.Array, len(cols))
	for k, c := range cols {
		out[k] = array.NewSlice(c, int64(i), int64(j))
	}
	return out
}

// Each aggregate folded in one pass equals the merge of its parts folded apart,
// grouped and ungrouped, and Final leaves the state as it was.
func TestMoreAggregatesMergeEqualsOnePass(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	const n, groups = 3000, 9
	in := makeMoreInputs(rng, n, groups)
	for _, tc := range moreCases(in) {
		for _, grouped := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/grouped=%v", tc.spec, grouped), func(t *testing.T) {
				var g []uint32
				if grouped {
					g = in.groups
				}
				one := mustNew(t, tc.spec, grouped, groups)
				if err := UpdateArgs(one, tc.cols, nil, g); err != nil {
					t.Fatal(err)
				}
				want, err := one.Final()
				if err != nil {
					t.Fatal(err)
				}
				// Three parts, the middle one through a selection, merged in order.
				cuts := []int{0, 1000, 2200, n}
				merged := mustNew(t, tc.spec, grouped, groups)
				// Each part merged into a second accumulator too: Merge leaves it as
				// it was.
				twice := mustNew(t, tc.spec, grouped, groups)
				for p := 0; p+1 < len(cuts); p++ {
					part := mustNew(t, tc.spec, grouped, groups)
					cols := slice(tc.cols, cuts[p], cuts[p+1])
					var pg []uint32
					if grouped {
						pg = g[cuts[p]:cuts[p+1]]
					}
					var sel []int32
					if p == 1 {
						for k := 0; k < cuts[2]-cuts[1]; k++ {
							sel = append(sel, int32(k))
						}
					}
					if err := UpdateArgs(part, cols, sel, pg); err != nil {
						t.Fatal(err)
					}
					mapping := make([]uint32, groups)
					for k := range mapping {
						mapping[k] = uint32(k)
					}
					if err := merged.Merge(part, mapping); err != nil {
						t.Fatal(err)
					}
					if err := twice.Merge(part, mapping); err != nil {
						t.Fatal(err)
					}
				}
				got, err := merged.Final()
				if err != nil {
					t.Fatal(err)
				}
				if d := sameArrays(got, want); d != "" {
					t.Errorf("merged parts: %s", d)
				}
				if got, err = twice.Final(); err != nil {
					t.Fatal(err)
				}
				if d := sameArrays(got, want); d != "" {
					t.Errorf("parts merged a second time: %s", d)
				}
				again, err := one.Final()
				if err != nil {
					t.Fatal(err)
				}
				if d := sameArrays(again, want); d != "" {
					t.Errorf("a second Final: %s", d)
				}
			})
		}
	}
}

func mustNew(t *testing.T, s Spec, grouped bool, groups int) Accumulator {
	t.Helper()
	acc, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	if grouped {
		acc.Resize(groups)
	} else {
		acc.Resize(1)
	}
	return acc
}

// The results of the statistical aggregates against formulas computed directly.
func TestMomentsAgainstDirectFormulas(t *testing.T) {
	xs := []float64{1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16}
	ys := []float64{2, 4, 5, 9}
	col := func(v []float64) arrow.Array {
		b := array.NewFloat64Builder(memory.DefaultAllocator)
		b.AppendValues(v, nil)
		return b.NewArray()
	}
	x, y := col(xs), col(ys)
	mean := func(v []float64) float64 {
		s := 0.0
		for _, e := range v {
			s += e - 1e9
		}
		return s/float64(len(v)) + 1e9
	}
	mx, my := mean(xs), mean(ys)
	var sxx, syy, sxy float64
	for k := range xs {
		sxx += (xs[k] - mx) * (xs[k] - mx)
		syy += (ys[k] - my) * (ys[k] - my)
		sxy += (xs[k] - mx) * (ys[k] - my)
	}
	n := float64(len(xs))
	for _, tc := range []struct {
		name string
		args []arrow.Array
		want float64
	}{
		{"var_samp", []arrow.Array{x}, sxx / (n - 1)},
		{"var_pop", []arrow.Array{x}, sxx / n},
		{"stddev_samp", []arrow.Array{x}, math.Sqrt(sxx / (n - 1))},
		{"covar_pop", []arrow.Array{y, x}, sxy / n},
		{"covar_samp", []arrow.Array{y, x}, sxy / (n - 1)},
		{"corr", []arrow.Array{y, x}, sxy / math.Sqrt(sxx*syy)},
		{"regr_slope", []arrow.Array{y, x}, sxy / sxx},
		{"regr_intercept", []arrow.Array{y, x}, my - sxy/sxx*mx},
		{"regr_r2", []arrow.Array{y, x}, sxy * sxy / (sxx * syy)},
		{"regr_sxx", []arrow.Array{y, x}, sxx},
		{"regr_syy", []arrow.Array{y, x}, syy},
		{"regr_sxy", []arrow.Array{y, x}, sxy},
		{"regr_avgx", []arrow.Array{y, x}, mx},
		{"regr_avgy", []arrow.Array{y, x}, my},
	} {
		s := Spec{Name: tc.name, ArgType: types.Float64}
		if len(tc.args) == 2 {
			s.ArgTypes = []arrow.DataType{types.Float64}
		}
		acc := mustNew(t, s, false, 1)
		if err := UpdateArgs(acc, tc.args, nil, nil); err != nil {
			t.Fatal(err)
		}
		res, err := acc.Final()
		if err != nil {
			t.Fatal(err)
		}
		got := res.(*array.Float64).Value(0)
		if math.Abs(got-tc.want) > 1e-9*math.Max(1, math.Abs(tc.want)) {
			t.Errorf("%s = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The rows an ordered or distinct aggregate folds, against results written out.
func TestOrderedAndDistinctResults(t *testing.T) {
	mem := memory.DefaultAllocator
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"a", "b", "a", "", "c", "b"}, []bool{true, true, true, false, true, true})
	ib := array.NewInt32Builder(mem)
	ib.AppendValues([]int32{3, 1, 2, 9, 0, 0}, []bool{true, true, true, true, false, true})
	s, n := sb.NewArray(), ib.NewArray()
	groups := []uint32{0, 1, 0, 1, 0, 1}
	for _, tc := range []struct {
		spec Spec
		cols []arrow.Array
		want []string
	}{
		{Spec{Name: "string_agg", ArgType: types.String, Sep: ",", Order: []OrderKey{{Type: types.Int32}}},
			[]arrow.Array{s, n}, []string{"a,a,c", "b,b"}},
		{Spec{Name: "string_agg", ArgType: types.String, Sep: ",", Order: []OrderKey{{Type: types.Int32, Desc: true, NullsFirst: true}}},
			[]arrow.Array{s, n}, []string{"c,a,a", "b,b"}},
		{Spec{Name: "string_agg", ArgType: types.String, Sep: "-", Distinct: true, Order: []OrderKey{{Type: types.String, Desc: true}}},
			[]arrow.Array{s, s}, []string{"c-a", "b"}},
		{Spec{Name: "first", ArgType: types.String, Order: []OrderKey{{Type: types.Int32, Desc: true}}},
			[]arrow.Array{s, n}, []string{"a", "(null)"}},
		{Spec{Name: "last", ArgType: types.Int32, Order: []OrderKey{{Type: types.String, NullsFirst: true}}},
			[]arrow.Array{n, s}, []string{"(null)", "0"}},
		{Spec{Name: "list", ArgType: types.String, Distinct: true}, []arrow.Array{s}, []string{`["a","c"]`, `["b",null]`}},
		{Spec{Name: "count", ArgType: types.String, Distinct: true}, []arrow.Array{s}, []string{"2", "1"}},
	} {
		acc := mustNew(t, tc.spec, true, 2)
		if err := UpdateArgs(acc, tc.cols, nil, groups); err != nil {
			t.Fatal(err)
		}
		res, err := acc.Final()
		if err != nil {
			t.Fatal(err)
		}
		for g, want := range tc.want {
			if got := res.ValueStr(g); got != want && !(want == "(null)" && res.IsNull(g)) {
				t.Errorf("%s group %d = %s, want %s", tc.spec, g, got, want)
			}
		}
	}
}

// A statistic that comes out infinite or NaN is an error, as in DuckDB; a correlation
// of a constant column is NaN (a division of zeros), not an error.
func TestStatisticsOutOfRange(t *testing.T) {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	b.AppendValues([]float64{1, math.Inf(1), 3}, nil)
	inf := b.NewArray()
	b.AppendValues([]float64{2, 2, 2}, nil)
	flat := b.NewArray()
	for _, tc := range []struct {
		spec Spec
		args []arrow.Array
	}{
		{Spec{Name: "stddev_samp", ArgType: types.Float64}, []arrow.Array{inf}},
		{Spec{Name: "var_pop", ArgType: types.Float64}, []arrow.Array{inf}},
		{Spec{Name: "corr", ArgType: types.Float64, ArgTypes: []arrow.DataType{types.Float64}}, []arrow.Array{flat, inf}},
		{Spec{Name: "covar_samp", ArgType: types.Float64, ArgTypes: []arrow.DataType{types.Float64}}, []arrow.Array{inf, flat}},
	} {
		acc := mustNew(t, tc.spec, false, 1)
		if err := UpdateArgs(acc, tc.args, nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := acc.Final(); err == nil {
			t.Errorf("%s of an infinity: no error", tc.spec)
		}
	}
	acc := mustNew(t, Spec{Name: "corr", ArgType: types.Float64, ArgTypes: []arrow.DataType{types.Float64}}, false, 1)
	if err := UpdateArgs(acc, []arrow.Array{flat, flat}, nil, nil); err != nil {
		t.Fatal(err)
	}
	res, err := acc.Final()
	if err != nil || !math.IsNaN(res.(*array.Float64).Value(0)) {
		t.Errorf("corr of a constant column = %v, %v; want NaN", res, err)
	}
}

// The discrete quantile's position is DuckDB's, the product of a decimal fraction and
// the count taken as exact.
func TestDiscreteIndex(t *testing.T) {
	for _, c := range []struct {
		n    int
		q    float64
		want int
	}{{10, 0.21, 2}, {10, 0.5, 4}, {10, 0.05, 0}, {715, 0.4, 285}, {5, 0, 0}, {5, 1, 4}, {1, 0.5, 0}} {
		if got := discreteIndex(c.n, c.q); got != c.want {
			t.Errorf("discreteIndex(%d, %v) = %d, want %d", c.n, c.q, got, c.want)
		}
	}
}
