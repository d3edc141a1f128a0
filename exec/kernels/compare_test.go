package kernels

import (
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/types"
)

var allOps = []string{"=", "<>", "<", "<=", ">", ">="}

// refCompare is the reference result of a op b through types.Compare.
func refCompare(op string, a, b types.Value) string {
	if a.Null || b.Null {
		return "NULL"
	}
	c := types.Compare(a, b)
	r := map[string]bool{"=": c == 0, "<>": c != 0, "<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op]
	return types.BoolValue(r).String()
}

// CompareConst and the = < … functions agree with types.Compare on every row,
// for every type and operator, including NULL, NaN and -0.
func TestCompareAgainstReference(t *testing.T) {
	cols := []arrow.Array{
		mk(t, types.Int64, math.MinInt64, -1, 0, 1, math.MaxInt64, nil),
		mk(t, types.Int32, -5, 0, 5, nil),
		mk(t, types.Int8, -128, 0, 127),
		mk(t, types.Uint64, uint64(math.MaxUint64), 0, 1, nil),
		mk(t, types.Uint16, 0, 65535),
		mk(t, types.Float64, math.NaN(), math.Inf(-1), -0.0, 0.0, 1.5, math.Inf(1), nil),
		mk(t, types.Float32, float64(float32(math.NaN())), -1.0, 0.0, 2.5),
		mk(t, types.String, "", "a", "ab", "b", "é", "z", nil),
		mk(t, types.Date, "1969-12-31", "1970-01-01", "2024-02-29", nil),
		mk(t, types.Timestamp, "1969-12-31 23:59:59.999999", "1970-01-01 00:00:00", "2024-01-01 00:00:00.000001", nil),
		mk(t, dec(20, 4), "-99.5", "0", "0.0001", "12345678901234.5678", nil),
		mk(t, types.Boolean, false, true, nil),
		mk(t, types.Interval, "1 month", "30 days", "29 days", "1 day 01:00:00", nil),
	}
	for _, col := range cols {
		n := col.Len()
		for j := 0; j < n; j++ {
			c := types.ValueAt(col, j)
			for _, op := range allOps {
				got, err := CompareConst(op, col, c)
				if err != nil {
					t.Fatalf("%s %s: %v", col.DataType(), op, err)
				}
				cv := ConstArray(c, n)
				viaFn := mustCall(t, op, col, cv)
				for i := 0; i < n; i++ {
					want := refCompare(op, types.ValueAt(col, i), c)
					if g := types.ValueAt(got, i).String(); g != want {
						t.Errorf("%s: CompareConst(%s %s %s) = %s, want %s", types.Name(col.DataType()), types.ValueAt(col, i), op, c, g, want)
					}
				}
				if viaFn != joined(got) {
					t.Errorf("%s: %s via function %s, via CompareConst %s", types.Name(col.DataType()), op, viaFn, joined(got))
				}
			}
		}
	}
}

func TestCompareFloatSpecials(t *testing.T) {
	col := mk(t, types.Float64, math.NaN(), -0.0, 0.0, 1.0)
	cases := []struct {
		op   string
		v    float64
		want string
	}{
		{"=", math.NaN(), "true,false,false,false"},
		{">", 1e308, "true,false,false,false"},
		{"<", math.NaN(), "false,true,true,true"},
		{"=", 0.0, "false,true,true,false"},
		{"=", math.Copysign(0, -1), "false,true,true,false"},
		{"<>", math.NaN(), "false,true,true,true"},
		{">=", math.Inf(1), "true,false,false,false"},
	}
	for _, c := range cases {
		got, err := CompareConst(c.op, col, types.FloatValue(c.v))
		if err != nil {
			t.Fatal(err)
		}
		if joined(got) != c.want {
			t.Errorf("x %s %v = %s, want %s", c.op, c.v, joined(got), c.want)
		}
	}
}

func TestCompareConstDictionary(t *testing.T) {
	d := dict(t, "b", "a", nil, "c", "b", "a")
	plain := Decode(d)
	for _, op := range allOps {
		for _, c := range []string{"a", "b", "bb", ""} {
			got, err := CompareConst(op, d, types.StringValue(c))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := CompareConst(op, plain, types.StringValue(c))
			if joined(got) != joined(want) {
				t.Errorf("dict %s %q = %s, plain gives %s", op, c, joined(got), joined(want))
			}
		}
	}
	// Without NULLs and longer than a byte of output (the unrolled gather).
	rows := []any{}
	for i := 0; i < 21; i++ {
		rows = append(rows, []string{"x", "y", "z"}[i*7%3])
	}
	d2 := dict(t, rows...)
	for _, op := range allOps {
		got, _ := CompareConst(op, d2, types.StringValue("y"))
		want, _ := CompareConst(op, Decode(d2), types.StringValue("y"))
		if joined(got) != joined(want) || got.NullN() != 0 {
			t.Errorf("dict without NULLs %s: %s, plain %s", op, joined(got), joined(want))
		}
	}
	// A dictionary whose values contain NULL.
	b := array.NewStringBuilder(defaultMem)
	b.AppendValues([]string{"x", ""}, []bool{true, false})
	vals := b.NewArray()
	ib := array.NewInt32Builder(defaultMem)
	ib.AppendValues([]int32{0, 1, 0}, nil)
	nd := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: types.String}, ib.NewArray(), vals)
	got, _ := CompareConst("=", nd, types.StringValue("x"))
	if joined(got) != "true,NULL,true" {
		t.Errorf("dictionary with NULL value: %s", joined(got))
	}
}

func TestCompareConstNullsAndEmpty(t *testing.T) {
	got, err := CompareConst("=", mk(t, types.Int64, 1, 2), types.NullOf(types.Int64))
	if err != nil || joined(got) != "NULL,NULL" {
		t.Errorf("compare with NULL: %s, %v", joined(got), err)
	}
	got, err = CompareConst("<", mk(t, types.Int64), types.IntValue(3))
	if err != nil || got.Len() != 0 {
		t.Errorf("empty: %v, %v", got, err)
	}
	if _, err := CompareConst("~", mk(t, types.Int64, 1), types.IntValue(3)); err == nil {
		t.Error("unknown operator accepted")
	}
	// Offsets: a slice compares its own rows.
	arr := mk(t, types.Int64, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	sl := array.NewSlice(arr, 3, 10)
	got, _ = CompareConst(">", sl, types.IntValue(6))
	if joined(got) != "false,false,false,true,true,true,true" {
		t.Errorf("slice: %s", joined(got))
	}
	s := array.NewSlice(mk(t, types.String, "x", "y", "z", nil, "y"), 1, 5)
	got, _ = CompareConst("=", s, types.StringValue("y"))
	if joined(got) != "true,false,NULL,true" {
		t.Errorf("string slice: %s", joined(got))
	}
}

// Comparisons resolve through the common type: INTEGER = BIGINT, DATE < TIMESTAMP.
func TestCompareCoercion(t *testing.T) {
	if got := mustCall(t, "=", mk(t, types.Int32, 1, 2, nil), mk(t, types.Int64, 1, 3, 1)); got != "true,false,NULL" {
		t.Errorf("INTEGER = BIGINT: %s", got)
	}
	if got := mustCall(t, "<", mk(t, types.Date, "2024-01-01", "2024-01-02"), mk(t, types.Timestamp, "2024-01-01 00:00:01", "2024-01-01 23:00:00")); got != "true,false" {
		t.Errorf("DATE < TIMESTAMP: %s", got)
	}
	if got := mustCall(t, ">=", mk(t, types.Int64, 3, 2), mk(t, types.Float64, 2.5, math.NaN())); got != "true,false" {
		t.Errorf("BIGINT >= DOUBLE: %s", got)
	}
	if got := mustCall(t, "=", mk(t, dec(10, 2), "1.50"), mk(t, dec(5, 1), "1.5")); got != "true" {
		t.Errorf("DECIMAL scales: %s", got)
	}
	if got := mustCall(t, "=", mk(t, types.Uint64, uint64(math.MaxUint64)), mk(t, types.Int64, -1)); got != "false" {
		t.Errorf("UBIGINT = BIGINT: %s", got)
	}
	if got := mustCall(t, "=", ConstArray(types.NullOf(types.Null), 2), mk(t, types.Int64, 1, 2)); got != "NULL,NULL" {
		t.Errorf("NULL = BIGINT: %s", got)
	}
	// Dictionary compared with a constant column through the function.
	if got := mustCall(t, "<>", dict(t, "a", "b", nil, "a"), constStr("a", 4)); got != "false,true,NULL,false" {
		t.Errorf("dictionary <> constant: %s", got)
	}
}

func TestDistinctFrom(t *testing.T) {
	a := mk(t, types.Int64, 1, 1, nil, nil)
	b := mk(t, types.Int64, 1, 2, 1, nil)
	if got := mustCall(t, "is_distinct_from", a, b); got != "false,true,true,false" {
		t.Errorf("IS DISTINCT FROM: %s", got)
	}
	if got := mustCall(t, "is_not_distinct_from", a, b); got != "true,false,false,true" {
		t.Errorf("IS NOT DISTINCT FROM: %s", got)
	}
	if got := mustCall(t, "is_distinct_from", mk(t, types.Float64, math.NaN()), mk(t, types.Float64, math.NaN())); got != "false" {
		t.Errorf("NaN IS DISTINCT FROM NaN: %s", got)
	}
}

// A constant of another type than the column still compares exactly.
func TestCompareConstMixedTypes(t *testing.T) {
	col := mk(t, types.Int32, -5, 0, 7, nil)
	cases := []struct {
		op   string
		v    types.Value
		want string
	}{
		{"<", types.IntValue(3_000_000_000), "true,true,true,NULL"},
		{">", types.IntValue(-3_000_000_000), "true,true,true,NULL"},
		{"=", types.IntValue(7), "false,false,true,NULL"},
		{"<", types.FloatValue(0.5), "true,true,false,NULL"},
		{"=", types.FloatValue(7), "false,false,true,NULL"},
		{">=", types.Value{Type: dec(5, 2), D: mustDec(t, "-4.99", 5, 2)}, "false,true,true,NULL"},
	}
	for _, c := range cases {
		got, err := CompareConst(c.op, col, c.v)
		if err != nil {
			t.Fatalf("%s %s: %v", c.op, c.v, err)
		}
		if joined(got) != c.want {
			t.Errorf("INTEGER %s %s = %s, want %s", c.op, c.v, joined(got), c.want)
		}
	}
	ts := mk(t, types.Timestamp, "2024-01-01 00:00:00", "2024-01-01 12:00:00")
	got, err := CompareConst(">=", ts, types.DateValue(int32(mustDays(t, "2024-01-01"))))
	if err != nil || joined(got) != "true,true" {
		t.Errorf("TIMESTAMP >= DATE: %s %v", joined(got), err)
	}
	if _, err := CompareConst("=", col, types.StringValue("x")); err == nil {
		t.Error("INTEGER = VARCHAR constant accepted")
	}
}

func TestCompareConstSlicedDictionary(t *testing.T) {
	rows := make([]any, 40)
	for i := range rows {
		rows[i] = string(rune('a' + i%26))
	}
	d := dict(t, rows...)
	sl := array.NewSlice(d, 30, 33) // 3 rows over a 26-value dictionary
	got, err := CompareConst("<=", sl, types.StringValue("f"))
	if err != nil || joined(got) != "true,true,false" {
		t.Errorf("sliced dictionary: %s %v", joined(got), err)
	}
}

// SelectConst selects the rows where CompareConst is true, over every row and over
// a selection, or declines; a decimal constant of another precision and the same
// scale is taken.
func TestSelectConstMatchesCompareConst(t *testing.T) {
	cols := []arrow.Array{
		mk(t, types.Int64, math.MinInt64, -1, 0, 1, math.MaxInt64, nil, 7),
		mk(t, types.Int32, -5, 0, 5, nil, 5, 9),
		mk(t, types.Int8, -128, 0, 127, 3),
		mk(t, types.Uint64, uint64(math.MaxUint64), 0, 1, nil),
		mk(t, types.Date, "1969-12-31", "1970-01-01", "2024-02-29", nil, "2024-02-29"),
		mk(t, types.Timestamp, "1969-12-31 23:59:59.999999", "1970-01-01 00:00:00", nil),
		mk(t, dec(15, 2), "-99.50", "0", "0.07", "0.05", "123456789.12", nil, "0.06"),
		mk(t, dec(20, 4), "-99.5", "0", "0.0001"),
		mk(t, types.Float64, 1.5, math.NaN(), 0.0),
		mk(t, types.String, "a", "b"),
	}
	for _, col := range cols {
		n := col.Len()
		consts := make([]types.Value, 0, n+1)
		for j := 0; j < n; j++ {
			if c := types.ValueAt(col, j); !c.Null {
				consts = append(consts, c)
			}
		}
		if d, ok := col.DataType().(*arrow.Decimal128Type); ok && d.Precision == 15 {
			// 0.06 as DECIMAL(3,2), as a literal is typed.
			consts = append(consts, types.ValueAt(mk(t, dec(3, 2), "0.06"), 0))
		}
		for _, c := range consts {
			for _, op := range allOps {
				mask, err := CompareConst(op, col, c)
				if err != nil {
					t.Fatal(err)
				}
				for _, sel := range [][]int32{nil, {0, 2, int32(n - 1)}} {
					got, ok := SelectConst(op, col, c, sel, nil)
					wantOK := !types.IsFloat(col.DataType()) && !types.IsString(col.DataType()) &&
						!(types.IsDecimal(col.DataType()) && col.DataType().ID() == arrow.DECIMAL128)
					if ok != wantOK {
						t.Fatalf("%s %s %s: ok %v, want %v", types.Name(col.DataType()), op, c, ok, wantOK)
					}
					if !ok {
						continue
					}
					var want []int32
					rows := sel
					if rows == nil {
						for i := 0; i < n; i++ {
							rows = append(rows, int32(i))
						}
					}
					for _, i := range rows {
						if mask.IsValid(int(i)) && mask.Value(int(i)) {
							want = append(want, i)
						}
					}
					if fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
						t.Errorf("%s %s %s over %v: %v, want %v", types.Name(col.DataType()), op, c, sel, got, want)
					}
				}
			}
		}
	}
}
