package kernels

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

func wantErr(t *testing.T, name, msg string, args ...arrow.Array) {
	t.Helper()
	_, _, err := evalCall(t, name, args...)
	if err == nil {
		t.Fatalf("%s(%v) succeeded, want error %q", name, len(args), msg)
	}
	if !errors.Is(err, errs.ErrAnalysis) {
		t.Errorf("%s: error %v has code %s", name, err, errs.CodeOf(err))
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: error %q does not mention %q", name, err, msg)
	}
}

func TestArithmeticInt(t *testing.T) {
	a := mk(t, types.Int64, 7, -7, 7, nil, 0, math.MinInt64)
	b := mk(t, types.Int64, 2, 2, -2, 1, 5, 1)
	cases := []struct{ op, want string }{
		{"+", "9,-5,5,NULL,5,-9223372036854775807"},
		{"-", "5,-9,9,NULL,-5,-9223372036854775808"[0:0] + "5,-9,9,NULL,-5," + "-9223372036854775809"[0:0]},
		{"*", "14,-14,-14,NULL,0,-9223372036854775808"},
		{"/", "3.5,-3.5,-3.5,NULL,0.0,-9.223372036854776e+18"},
		{"//", "3,-3,-3,NULL,0,-9223372036854775808"},
		{"%", "1,-1,1,NULL,0,0"},
	}
	for _, c := range cases {
		if c.op == "-" {
			wantErr(t, "-", "out of range", a, b) // MinInt64 - 1
			continue
		}
		if got := mustCall(t, c.op, a, b); got != c.want {
			t.Errorf("a %s b = %s, want %s", c.op, got, c.want)
		}
	}
	// INTEGER + INTEGER is computed as BIGINT: no overflow at 32 bits.
	out, f, err := evalCall(t, "+", mk(t, types.Int32, math.MaxInt32), mk(t, types.Int32, 1))
	if err != nil || joined(out) != "2147483648" || !arrow.TypeEqual(f.Result, types.Int64) {
		t.Errorf("INTEGER + INTEGER: %v %v %v", joined(out), f, err)
	}
}

func TestArithmeticOverflowAndZero(t *testing.T) {
	wantErr(t, "+", "out of range", mk(t, types.Int64, math.MaxInt64), mk(t, types.Int64, 1))
	wantErr(t, "-", "out of range", mk(t, types.Int64, math.MinInt64), mk(t, types.Int64, 1))
	wantErr(t, "*", "out of range", mk(t, types.Int64, 1<<32), mk(t, types.Int64, 1<<31))
	wantErr(t, "*", "out of range", mk(t, types.Int64, math.MinInt64), mk(t, types.Int64, -1))
	wantErr(t, "//", "out of range", mk(t, types.Int64, math.MinInt64), mk(t, types.Int64, -1))
	wantErr(t, "-", "out of range", mk(t, types.Uint64, 1), mk(t, types.Uint64, 2))
	wantErr(t, "neg", "out of range", mk(t, types.Int64, math.MinInt64))
	// Products just inside the range are fine, and overflow in a NULL row is not.
	if got := mustCall(t, "*", mk(t, types.Int64, -(1<<62), 3037000499), mk(t, types.Int64, 2, 3037000499)); got != "-9223372036854775808,9223372030926249001" {
		t.Errorf("edge products: %s", got)
	}
	x := mk(t, types.Int64, 1, math.MaxInt64)
	y := mk(t, types.Int64, 1, nil)
	if got := mustCall(t, "+", x, y); got != "2,NULL" {
		t.Errorf("overflow in NULL row: %s", got)
	}
	// Division by zero: NULL for // and %, IEEE for /.
	if got := mustCall(t, "//", mk(t, types.Int64, 5, 5), mk(t, types.Int64, 0, 2)); got != "NULL,2" {
		t.Errorf("5 // 0: %s", got)
	}
	if got := mustCall(t, "%", mk(t, types.Int32, 5), mk(t, types.Int32, 0)); got != "NULL" {
		t.Errorf("5 %% 0: %s", got)
	}
	if got := mustCall(t, "/", mk(t, types.Int64, 1, -1, 0), mk(t, types.Int64, 0, 0, 0)); got != "inf,-inf,nan" {
		t.Errorf("x / 0: %s", got)
	}
	if got := mustCall(t, "%", mk(t, dec(5, 2), "1.00"), mk(t, dec(5, 2), "0.00")); got != "NULL" {
		t.Errorf("decimal %% 0: %s", got)
	}
}

func TestArithmeticFloatAndMixed(t *testing.T) {
	out, f, err := evalCall(t, "+", mk(t, types.Int32, 1, 2), mk(t, types.Float64, 0.5, math.NaN()))
	if err != nil || joined(out) != "1.5,nan" || !arrow.TypeEqual(f.Args[0], types.Float64) {
		t.Errorf("INTEGER + DOUBLE: %s %v", joined(out), err)
	}
	out, f, _ = evalCall(t, "*", mk(t, types.Float32, 1.5), mk(t, types.Float32, 2.0))
	if joined(out) != "3.0" || !arrow.TypeEqual(f.Result, types.Float32) {
		t.Errorf("FLOAT * FLOAT: %s %s", joined(out), f.Result)
	}
	if got := mustCall(t, "-", mk(t, types.Float64, 0.0), mk(t, types.Float64, 0.0)); got != "0.0" {
		t.Errorf("0-0: %s", got)
	}
	if got := mustCall(t, "neg", mk(t, types.Float64, 0.0, nil)); got != "-0.0,NULL" {
		t.Errorf("neg 0.0: %s", got)
	}
	if got := mustCall(t, "%", mk(t, types.Float64, 5.5, -5.5), mk(t, types.Float64, 2, 2)); got != "1.5,-1.5" {
		t.Errorf("float mod: %s", got)
	}
	// Unsigned arithmetic stays unsigned.
	out, f, _ = evalCall(t, "+", mk(t, types.Uint8, 200), mk(t, types.Uint8, 100))
	if joined(out) != "300" || !arrow.TypeEqual(f.Result, types.Uint64) {
		t.Errorf("UTINYINT + UTINYINT: %s %s", joined(out), f.Result)
	}
	// Empty input.
	if got := mustCall(t, "+", mk(t, types.Int64), mk(t, types.Int64)); got != "" {
		t.Errorf("empty: %q", got)
	}
}

func TestArithmeticDecimal(t *testing.T) {
	a := mk(t, dec(15, 2), "10.25", "-0.01", nil)
	b := mk(t, dec(15, 2), "0.75", "0.01", "1")
	cases := []struct {
		op, want string
		res      arrow.DataType
	}{
		{"+", "11.00,0.00,NULL", dec(16, 2)},
		{"-", "9.50,-0.02,NULL", dec(16, 2)},
		{"*", "7.6875,-0.0001,NULL", dec(30, 4)},
		{"/", "13.666666666666666,-1.0,NULL", types.Float64},
		{"%", "0.50,-0.00,NULL"[0:0] + "0.50,0.00,NULL", dec(15, 2)},
	}
	for _, c := range cases {
		out, f, err := evalCall(t, c.op, a, b)
		if err != nil {
			t.Fatalf("%s: %v", c.op, err)
		}
		if joined(out) != c.want || !arrow.TypeEqual(f.Result, c.res) {
			t.Errorf("DECIMAL %s: %s of %s, want %s of %s", c.op, joined(out), types.Name(f.Result), c.want, types.Name(c.res))
		}
	}
	// Mixed scales and an integer: l_extendedprice * (1 - l_discount).
	one := mk(t, types.Int32, 1, 1)
	disc := mk(t, dec(15, 2), "0.04", "0.10")
	out, f, err := evalCall(t, "-", one, disc)
	if err != nil || joined(out) != "0.96,0.90" {
		t.Fatalf("1 - discount: %s %v", joined(out), err)
	}
	price := mk(t, dec(15, 2), "21168.23", "45983.16")
	out2, _, err := evalCall(t, "*", price, out)
	if err != nil || joined(out2) != "20321.5008,41384.8440" {
		t.Errorf("price * (1 - discount): %s %v (%s)", joined(out2), err, types.Name(f.Result))
	}
	// Wide decimals beyond 64 bits.
	w := mk(t, dec(38, 0), "99999999999999999999999999999999999999")
	wantErr(t, "+", "out of range", w, mk(t, dec(38, 0), "1"))
	big := mk(t, dec(30, 0), "123456789012345678901234567890")
	if got := mustCall(t, "-", big, mk(t, dec(30, 0), "23456789012345678901234567890")); got != "100000000000000000000000000000" {
		t.Errorf("wide subtraction: %s", got)
	}
	if got := mustCall(t, "*", mk(t, dec(20, 0), "12345678901234567890"), mk(t, dec(3, 0), "100")); got != "1234567890123456789000" {
		t.Errorf("wide multiplication: %s", got)
	}
	if got := mustCall(t, "neg", mk(t, dec(5, 2), "1.50", nil)); got != "-1.50,NULL" {
		t.Errorf("neg decimal: %s", got)
	}
}

func TestTemporalArithmetic(t *testing.T) {
	d := mk(t, types.Date, "2024-02-28", "2024-01-31", nil, "1970-01-01")
	cases := []struct {
		name string
		args []arrow.Array
		want string
		res  arrow.DataType
	}{
		{"+", []arrow.Array{d, mk(t, types.Int32, 1, 1, 1, -1)}, "2024-02-29,2024-02-01,NULL,1969-12-31", types.Date},
		{"+", []arrow.Array{mk(t, types.Int64, 1, 1, 1, 1), d}, "2024-02-29,2024-02-01,NULL,1970-01-02", types.Date},
		{"-", []arrow.Array{d, mk(t, types.Int64, 365, 31, 0, 1)}, "2023-02-28,2023-12-31,NULL,1969-12-31", types.Date},
		{"-", []arrow.Array{d, mk(t, types.Date, "2024-01-01", "2024-02-29", "2024-01-01", "1971-01-01")}, "58,-29,NULL,-365", types.Int64},
		{"+", []arrow.Array{d, ConstArray(types.Value{Type: types.Interval, Iv: arrow.MonthDayNanoInterval{Months: 1}}, 4)},
			"2024-03-28 00:00:00,2024-02-29 00:00:00,NULL,1970-02-01 00:00:00", types.Timestamp},
		{"-", []arrow.Array{mk(t, types.Timestamp, "2024-03-31 10:00:00", "1970-01-01 00:00:00"), mk(t, types.Interval, "1 month 1 day 01:00:00", "00:00:00.000001")},
			"2024-02-28 09:00:00,1969-12-31 23:59:59.999999", types.Timestamp},
		{"+", []arrow.Array{mk(t, types.Interval, "2 hours"), mk(t, types.TimestampTZ, "2024-01-01 23:00:00")}, "2024-01-02 01:00:00+00", types.TimestampTZ},
		{"-", []arrow.Array{mk(t, types.Timestamp, "2024-01-02 03:00:00", "2024-01-01 00:00:00"), mk(t, types.Timestamp, "2024-01-01 00:00:00", "2024-01-02 03:00:00.5")},
			"1 day 03:00:00,-1 day -03:00:00.5", types.Interval},
		{"-", []arrow.Array{mk(t, types.Timestamp, "2024-01-02 00:00:00"), mk(t, types.Date, "2024-01-01")}, "1 day", types.Interval},
		{"+", []arrow.Array{mk(t, types.Interval, "1 day"), mk(t, types.Interval, "1 month 02:00:00")}, "1 month 1 day 02:00:00", types.Interval},
		{"neg", []arrow.Array{mk(t, types.Interval, "1 month 2 days")}, "-1 month -2 days", types.Interval},
	}
	for _, c := range cases {
		out, f, err := evalCall(t, c.name, c.args...)
		if err != nil {
			t.Errorf("%s %v: %v", c.name, c.want, err)
			continue
		}
		if joined(out) != c.want || !arrow.TypeEqual(f.Result, c.res) {
			t.Errorf("%s(%s): %s of %s, want %s of %s", c.name, joinedArgs(c.args), joined(out), types.Name(f.Result), c.want, types.Name(c.res))
		}
	}
	wantErr(t, "+", "out of range", mk(t, types.Date, "2024-01-01"), mk(t, types.Int64, math.MaxInt32))
	wantErr(t, "*", "operator does not exist: DATE * BIGINT", mk(t, types.Date, "2024-01-01"), mk(t, types.Int64, 2))
}

func joinedArgs(args []arrow.Array) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = joined(a)
	}
	return strings.Join(parts, " | ")
}

func TestArithmeticDictionaryAndConstants(t *testing.T) {
	// Dictionary of integers (not strings) with a constant: evaluated per value.
	vals := mk(t, types.Int64, 10, 20)
	ib := array.NewInt8Builder(defaultMem)
	ib.AppendValues([]int8{0, 1, 1, 0}, []bool{true, true, false, true})
	d := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: types.Int64}, ib.NewArray(), vals)
	if got := mustCall(t, "+", d, constInt(1, 4)); got != "11,21,NULL,11" {
		t.Errorf("dictionary + 1: %s", got)
	}
	if got := mustCall(t, "*", d, mk(t, types.Int64, 1, 2, 3, 4)); got != "10,40,NULL,40" {
		t.Errorf("dictionary * column: %s", got)
	}
}

func TestTimestampIntervalOverflow(t *testing.T) {
	// TIMESTAMP_NS ± INTERVAL is computed as a TIMESTAMP in microseconds, as DuckDB
	// does, so it reaches past 2262.
	ns := &arrow.TimestampType{Unit: arrow.Nanosecond}
	out, f, err := evalCall(t, "+", mk(t, ns, "2262-01-01 00:00:00.000000001"), mk(t, types.Interval, "1 year"))
	if err != nil || joined(out) != "2263-01-01 00:00:00" || !arrow.TypeEqual(f.Result, types.Timestamp) {
		t.Errorf("TIMESTAMP_NS + 1 year: %s %v", joined(out), err)
	}
	wantErr(t, "+", "out of range", mk(t, ns, "2000-01-01 00:00:00"), mk(t, types.Interval, "2000000000 days"))
	wantErr(t, "+", "out of range", mk(t, types.Timestamp, "2000-01-01 00:00:00"), mk(t, types.Interval, "2000000000 days"))
	wantErr(t, "-", "out of range", mk(t, types.Timestamp, "2000-01-01 00:00:00"), mk(t, types.Interval, "2000000000 months"))
}

// Decimal arithmetic on operands of at most 18 digits (the TPC-H money columns) takes
// a typed fast path; it must agree with exact big-integer arithmetic, NULLs, slices
// and all.
func TestSmallDecimalArithmetic(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n = 2000
	// Operands stored in 64 bits, in 128 bits with at most 18 digits' values, and
	// one of each.
	for _, tc := range []struct{ xt, yt arrow.DataType }{
		{dec(15, 2), dec(15, 2)},
		{dec(20, 2), dec(20, 2)},
		{dec(15, 2), dec(20, 2)},
	} {
		smallArithmetic(t, r, tc.xt, tc.yt)
	}
}

func smallArithmetic(t *testing.T, r *rand.Rand, xt, yt arrow.DataType) {
	const n = 2000
	xb := array.NewBuilder(memory.DefaultAllocator, xt)
	yb := array.NewBuilder(memory.DefaultAllocator, yt)
	xs, ys := make([]int64, n), make([]int64, n)
	for i := 0; i < n; i++ {
		xs[i] = r.Int64N(2e14) - 1e14
		ys[i] = r.Int64N(2e14) - 1e14
		if i%13 == 0 {
			xb.AppendNull()
		} else {
			vector.AppendValue(xb, types.Value{Type: xt, D: decimal128.FromI64(xs[i])})
		}
		vector.AppendValue(yb, types.Value{Type: yt, D: decimal128.FromI64(ys[i])})
	}
	x, y := array.NewSlice(xb.NewArray(), 1, n), array.NewSlice(yb.NewArray(), 1, n)
	for _, op := range []string{"+", "-", "*"} {
		fn, err := Resolve(op, []arrow.DataType{xt, yt})
		if err != nil {
			t.Fatal(err)
		}
		out, err := fn.Eval([]arrow.Array{x, y}, x.Len())
		if err != nil {
			t.Fatal(err)
		}
		if !arrow.TypeEqual(out.DataType(), fn.Result) {
			t.Fatalf("%s %s %s: result of %s, declared %s", types.Name(xt), op, types.Name(yt), out.DataType(), fn.Result)
		}
		res := out
		for i := 0; i < x.Len(); i++ {
			if x.IsNull(i) != res.IsNull(i) {
				t.Fatalf("%s row %d: NULL mismatch", op, i)
			}
			if x.IsNull(i) {
				continue
			}
			a, b := big.NewInt(xs[i+1]), big.NewInt(ys[i+1])
			want := new(big.Int)
			switch op {
			case "+":
				want.Add(a, b)
			case "-":
				want.Sub(a, b)
			case "*":
				want.Mul(a, b)
			}
			if got := types.ValueAt(res, i).D.BigInt(); got.Cmp(want) != 0 {
				t.Fatalf("%s row %d: %s, want %s", op, i, got, want)
			}
		}
	}
}

// Arithmetic through a Scratch makes the same arrays as without, byte for byte, NULL
// rows included, though the lent values hold what earlier batches left: every
// operator of every type the scratch kernels take, over NULLs, zeros (NULL results of
// // and %), 64- and 128-bit decimals and sliced arguments, batch after batch.
func TestArithmeticThroughScratchEqualsFresh(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	d64 := &arrow.Decimal128Type{Precision: 15, Scale: 2}
	d128 := &arrow.Decimal128Type{Precision: 30, Scale: 2}
	var s Scratch
	for _, typ := range []arrow.DataType{types.Int64, types.Float64, types.Float32, d64, d128} {
		for _, op := range []string{"+", "-", "*", "/", "//", "%"} {
			fn, err := Resolve(op, []arrow.DataType{typ, typ})
			if err != nil {
				continue // not every operator takes every type
			}
			if fn.EvalInto == nil {
				t.Fatalf("%s over %s: no EvalInto", op, types.Name(typ))
			}
			for batch := range 4 {
				const n = 1500
				xb, yb := array.NewBuilder(memory.DefaultAllocator, typ), array.NewBuilder(memory.DefaultAllocator, typ)
				for i := range n {
					v := func(k int64) types.Value {
						if types.IsDecimal(typ) {
							return types.Value{Type: typ, D: decimal128.FromI64(k)}
						}
						if types.IsFloat(typ) {
							return types.Value{Type: typ, F: float64(k) / 4}
						}
						return types.Value{Type: typ, I: k}
					}
					if i%11 == batch {
						xb.AppendNull()
					} else {
						vector.AppendValue(xb, v(r.Int64N(20000)-10000))
					}
					if i%7 == 0 {
						vector.AppendValue(yb, v(0))
					} else {
						vector.AppendValue(yb, v(r.Int64N(200)-100))
					}
				}
				x, y := array.NewSlice(xb.NewArray(), int64(batch), n), array.NewSlice(yb.NewArray(), int64(batch), n)
				fresh, errF := fn.Eval([]arrow.Array{x, y}, x.Len())
				lent, errL := fn.EvalInto([]arrow.Array{x, y}, x.Len(), &s)
				if (errF == nil) != (errL == nil) {
					t.Fatalf("%s over %s: errors %v and %v", op, types.Name(typ), errF, errL)
				}
				if errF != nil {
					continue
				}
				if fresh.Len() != lent.Len() || fresh.NullN() != lent.NullN() {
					t.Fatalf("%s over %s, batch %d: %d rows, %d NULL against %d, %d", op, types.Name(typ), batch, lent.Len(), lent.NullN(), fresh.Len(), fresh.NullN())
				}
				for i := range fresh.Len() {
					if fresh.IsNull(i) != lent.IsNull(i) {
						t.Fatalf("%s over %s, batch %d: row %d NULL differs", op, types.Name(typ), batch, i)
					}
				}
				fb, lb := fresh.Data().Buffers()[1].Bytes(), lent.Data().Buffers()[1].Bytes()
				if string(fb) != string(lb) {
					t.Fatalf("%s over %s, batch %d: values under NULL rows differ", op, types.Name(typ), batch)
				}
				// The next batch's values come from memory this one scribbled on.
				for i := range lb {
					lb[i] = 0xa5
				}
				s.Reset()
			}
		}
	}
}
