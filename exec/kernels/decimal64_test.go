package kernels

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// decimals builds an array of dt from unscaled values; nil is NULL.
func decimals(dt arrow.DataType, vals ...any) arrow.Array {
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		vector.AppendValue(b, types.Value{Type: dt, D: decimal128.FromI64(v.(int64))})
	}
	return b.NewArray()
}

// One precision has one type: 64 bits up to 18 digits, 128 above.
func TestDecimalWidths(t *testing.T) {
	for p, want := range map[int32]arrow.Type{1: arrow.DECIMAL64, 18: arrow.DECIMAL64, 19: arrow.DECIMAL128, 38: arrow.DECIMAL128} {
		if got := types.Decimal(p, 0).ID(); got != want {
			t.Errorf("DECIMAL(%d,0) is %s, want %s", p, got, want)
		}
	}
	for _, name := range []string{"DECIMAL(15,2)", "NUMERIC(18,4)", "DECIMAL(20,2)"} {
		dt, err := types.Parse(name)
		if err != nil || types.Name(dt) != name && name != "NUMERIC(18,4)" {
			t.Errorf("%s parses to %v (%v)", name, dt, err)
		}
	}
	// Inside nested types decimals are 128-bit.
	dt, err := types.Parse("DECIMAL(15,2)[]")
	if err != nil || dt.(*arrow.ListType).Elem().ID() != arrow.DECIMAL128 {
		t.Errorf("DECIMAL(15,2)[] is %v (%v)", dt, err)
	}
}

// Widening keeps values, NULLs and the offset of a slice; narrowing back gives the
// same values; casts between widths, scales, strings, integers and floats agree
// with the 128-bit casts; a value that does not fit is an error, not a wrap.
func TestDecimal64Casts(t *testing.T) {
	d64 := types.Decimal(15, 2)
	a := array.NewSlice(decimals(d64, int64(1025), nil, int64(-1), int64(999_999_999_999_999), int64(0)), 1, 5)
	wide := WidenDecimal(a)
	if wide.DataType().ID() != arrow.DECIMAL128 || wide.Len() != 4 || !wide.IsNull(0) {
		t.Fatalf("widened %v", wide)
	}
	for i := range a.Len() {
		if types.ValueAt(a, i) != (types.Value{Type: d64, D: types.ValueAt(wide, i).D, Null: a.IsNull(i)}) && !a.IsNull(i) {
			t.Errorf("row %d: %v widened to %v", i, types.ValueAt(a, i), types.ValueAt(wide, i))
		}
	}
	back, err := Cast(wide, d64)
	if err != nil || back.DataType().ID() != arrow.DECIMAL64 || joined(back) != joined(a) {
		t.Fatalf("narrowed back: %v (%v), want %s", back, err, joined(a))
	}
	for _, c := range []struct {
		to   arrow.DataType
		want string
	}{
		{types.String, "NULL,-0.01,9999999999999.99,0.00"},
		{types.Float64, "NULL,-0.01,9999999999999.99,0.0"},
		{types.Decimal(18, 3), "NULL,-0.010,9999999999999.990,0.000"},
		{types.Decimal(30, 2), "NULL,-0.01,9999999999999.99,0.00"},
	} {
		got, err := Cast(a, c.to)
		if err != nil || joined(got) != c.want || !arrow.TypeEqual(got.DataType(), c.to) {
			t.Errorf("CAST AS %s: %s of %v (%v), want %s", types.Name(c.to), joined(got), got, err, c.want)
		}
	}
	if _, err := Cast(a, types.Decimal(5, 2)); err == nil {
		t.Error("9999999999999.99 cast to DECIMAL(5,2): no error")
	}
	s := mk(t, types.String, "12.5", "-0.25")
	got, err := Cast(s, types.Decimal(10, 2))
	if err != nil || got.DataType().ID() != arrow.DECIMAL64 || joined(got) != "12.50,-0.25" {
		t.Errorf("strings cast to DECIMAL(10,2): %v (%v)", got, err)
	}
	if _, err := Cast(mk(t, types.String, "123456789012345678901"), types.Decimal(18, 0)); err == nil || errs.CodeOf(err) == errs.Internal {
		t.Errorf("a 21-digit string cast to DECIMAL(18,0): %v", err)
	}
}

// Comparisons of 64-bit decimals with each other, with 128-bit decimals, and with
// constants in and beyond 64 bits give what the 128-bit comparison gives.
func TestDecimal64Compare(t *testing.T) {
	d64 := types.Decimal(12, 2)
	a := decimals(d64, int64(-5), int64(0), nil, int64(700))
	b := decimals(d64, int64(-5), int64(1), int64(3), int64(-700))
	for _, op := range []string{"=", "<", ">="} {
		fn, err := Resolve(op, []arrow.DataType{d64, d64})
		if err != nil {
			t.Fatal(err)
		}
		got, err := fn.Eval([]arrow.Array{a, b}, a.Len())
		if err != nil {
			t.Fatal(err)
		}
		want, err := fn.Eval([]arrow.Array{WidenDecimal(a), WidenDecimal(b)}, a.Len())
		if err != nil {
			t.Fatal(err)
		}
		if joined(got) != joined(want) {
			t.Errorf("%s: %s in 64 bits, %s in 128", op, joined(got), joined(want))
		}
	}
	huge := types.Value{Type: types.Decimal(38, 2), D: decimal128.New(1, 0)} // 2^64 hundredths
	got, err := CompareConst("<", a, huge)
	if err != nil || joined(got) != "true,true,NULL,true" {
		t.Errorf("a < 2^64/100: %s (%v)", joined(got), err)
	}
	sel, ok := SelectConst(">", a, types.Value{Type: d64, D: decimal128.FromI64(0)}, nil, nil)
	if !ok || len(sel) != 1 || sel[0] != 3 {
		t.Errorf("SelectConst a > 0: %v %v", sel, ok)
	}
}

// Arithmetic whose result exceeds its 64-bit result type's precision is an error.
func TestDecimal64ArithmeticOverflow(t *testing.T) {
	d := types.Decimal(18, 0)
	a := decimals(d, int64(999_999_999_999_999_999))
	fn, err := Resolve("+", []arrow.DataType{d, d})
	if err != nil {
		t.Fatal(err)
	}
	out, err := fn.Eval([]arrow.Array{a, a}, 1)
	if err != nil || joined(out) != "1999999999999999998" || out.DataType().ID() != arrow.DECIMAL128 {
		t.Errorf("DECIMAL(18,0) + DECIMAL(18,0) = %s of %v (%v)", joined(out), out.DataType(), err)
	}
	neg, err := Resolve("neg", []arrow.DataType{d})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := neg.Eval([]arrow.Array{a}, 1); err != nil || joined(out) != "-999999999999999999" {
		t.Errorf("-DECIMAL(18,0): %s (%v)", joined(out), err)
	}
}
