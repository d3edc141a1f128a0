package kernels

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/types"
)

func TestThreeValuedLogic(t *testing.T) {
	// Every pair of (true, false, NULL).
	a := mk(t, types.Boolean, true, true, true, false, false, false, nil, nil, nil)
	b := mk(t, types.Boolean, true, false, nil, true, false, nil, true, false, nil)
	if got := mustCall(t, "and", a, b); got != "true,false,NULL,false,false,false,NULL,false,NULL" {
		t.Errorf("AND: %s", got)
	}
	if got := mustCall(t, "or", a, b); got != "true,true,true,true,false,NULL,true,NULL,NULL" {
		t.Errorf("OR: %s", got)
	}
	if got := mustCall(t, "not", a); got != "false,false,false,true,true,true,NULL,NULL,NULL" {
		t.Errorf("NOT: %s", got)
	}
	// Untyped NULL coerces to BOOLEAN.
	if got := mustCall(t, "and", ConstArray(types.NullOf(types.Null), 2), mk(t, types.Boolean, false, true)); got != "false,NULL" {
		t.Errorf("NULL AND x: %s", got)
	}
	// Slices with bit offsets.
	long := mk(t, types.Boolean, true, false, true, false, true, false, true, false, true, nil, true)
	sl := array.NewSlice(long, 3, 11)
	if got := mustCall(t, "not", sl); got != "true,false,true,false,true,false,NULL,false" {
		t.Errorf("NOT of slice: %s", got)
	}
	if got := mustCall(t, "or", sl, array.NewSlice(long, 2, 10)); got != "true,true,true,true,true,true,true,true" {
		t.Errorf("OR of slices: %s", got)
	}
	if got := mustCall(t, "and", sl, array.NewSlice(long, 2, 10)); got != "false,false,false,false,false,false,NULL,NULL" {
		t.Errorf("AND of slices: %s", got)
	}
}

func TestIsNull(t *testing.T) {
	x := mk(t, types.Int64, 1, nil, 3)
	if got := mustCall(t, "is_null", x); got != "false,true,false" {
		t.Errorf("IS NULL: %s", got)
	}
	if got := mustCall(t, "is_not_null", x); got != "true,false,true" {
		t.Errorf("IS NOT NULL: %s", got)
	}
	if got := mustCall(t, "is_null", dict(t, "a", nil)); got != "false,true" {
		t.Errorf("IS NULL of dictionary: %s", got)
	}
	if got := mustCall(t, "is_null", ConstArray(types.NullOf(types.Null), 2)); got != "true,true" {
		t.Errorf("NULL IS NULL: %s", got)
	}
}

func TestIfElse(t *testing.T) {
	cond := mk(t, types.Boolean, true, false, nil, true).(*array.Boolean)
	cases := []struct {
		then, els arrow.Array
		want      string
	}{
		{mk(t, types.Int64, 1, 2, 3, nil), mk(t, types.Int64, 10, 20, 30, 40), "1,20,30,NULL"},
		{mk(t, types.Float64, 1.5, 2, 3, 4), mk(t, types.Float64, nil, nil, 9, 9), "1.5,NULL,9.0,4.0"},
		{mk(t, types.String, "a", "b", "c", "d"), mk(t, types.String, "x", nil, "z", "w"), "a,NULL,z,d"},
		{dict(t, "a", "b", "c", "d"), mk(t, types.String, "x", "y", "z", "w"), "a,y,z,d"},
		{mk(t, types.Boolean, false, true, true, true), mk(t, types.Boolean, true, false, nil, true), "false,false,NULL,true"},
		{mk(t, dec(5, 2), "1.00", "2", "3", "4"), mk(t, dec(5, 2), "9", "8.5", "7", "6"), "1.00,8.50,7.00,4.00"},
		{mk(t, types.Date, "2024-01-01", nil, nil, nil), mk(t, types.Date, "2000-01-01", "2000-01-02", nil, "2000-01-04"), "2024-01-01,2000-01-02,NULL,NULL"},
		{ConstArray(types.NullOf(types.Null), 4), mk(t, types.Int32, 1, 2, 3, 4), "NULL,2,3,NULL"},
		{mk(t, types.Binary), mk(t, types.Binary), ""},
	}
	for _, c := range cases {
		cd := cond
		if c.then.Len() == 0 {
			cd = mk(t, types.Boolean).(*array.Boolean)
		}
		out := IfElse(cd, c.then, c.els)
		if got := joined(out); got != c.want {
			t.Errorf("IfElse(%s): %s, want %s", c.then.DataType(), got, c.want)
		}
	}
	// Types without a typed path (BLOB) go through concatenate-and-gather.
	bb := array.NewBinaryBuilder(defaultMem, arrow.BinaryTypes.Binary)
	bb.AppendValues([][]byte{[]byte("t1"), []byte("t2"), []byte("t3"), []byte("t4")}, nil)
	eb := array.NewBinaryBuilder(defaultMem, arrow.BinaryTypes.Binary)
	eb.AppendValues([][]byte{[]byte("e1"), []byte("e2"), []byte("e3"), []byte("e4")}, nil)
	if got := joined(IfElse(cond, bb.NewArray(), eb.NewArray())); got != "t1,e2,e3,t4" {
		t.Errorf("IfElse BLOB: %s", got)
	}
}

func TestCoalesceNullIfGreatest(t *testing.T) {
	a := mk(t, types.Int32, nil, 1, nil, nil)
	b := mk(t, types.Int64, 2, 5, nil, nil)
	c := mk(t, types.Int64, 3, 6, 7, nil)
	out, f, err := evalCall(t, "coalesce", a, b, c)
	if err != nil || joined(out) != "2,1,7,NULL" || !arrow.TypeEqual(f.Result, types.Int64) {
		t.Errorf("coalesce: %s %v", joined(out), err)
	}
	if got := mustCall(t, "coalesce", mk(t, types.String, nil, "x"), ConstArray(types.NullOf(types.Null), 2), constStr("d", 2)); got != "d,x" {
		t.Errorf("coalesce strings: %s", got)
	}
	if got := mustCall(t, "nullif", mk(t, types.Int64, 1, 2, nil), mk(t, types.Int64, 1, 3, 1)); got != "NULL,2,NULL" {
		t.Errorf("nullif: %s", got)
	}
	if got := mustCall(t, "nullif", mk(t, types.String, "a", "b"), ConstArray(types.NullOf(types.Null), 2)); got != "a,b" {
		t.Errorf("nullif(x, NULL): %s", got)
	}
	if got := mustCall(t, "greatest", a, b, c); got != "3,6,7,NULL" {
		t.Errorf("greatest: %s", got)
	}
	if got := mustCall(t, "least", a, b, c); got != "2,1,7,NULL" {
		t.Errorf("least: %s", got)
	}
	if got := mustCall(t, "greatest", mk(t, types.Date, "2024-01-01"), mk(t, types.Timestamp, "2023-12-31 10:00:00")); got != "2024-01-01 00:00:00" {
		t.Errorf("greatest date/timestamp: %s", got)
	}
	if got := mustCall(t, "greatest", mk(t, types.Float64, 1.0, nil), mk(t, types.Float64, 0.0/zero(), 2.0)); got != "nan,2.0" {
		t.Errorf("greatest NaN: %s", got)
	}
	wantErr(t, "coalesce", "no function matches coalesce(BIGINT, VARCHAR)", mk(t, types.Int64, 1), mk(t, types.String, "a"))
}

func zero() float64 { return 0 }

func TestIfElseMixedTypes(t *testing.T) {
	cond := mk(t, types.Boolean, true, false).(*array.Boolean)
	out := IfElse(cond, mk(t, types.Int32, 1, 2), mk(t, types.Float64, 0.5, 1.5))
	if joined(out) != "1.0,1.5" || !arrow.TypeEqual(out.DataType(), types.Float64) {
		t.Errorf("IfElse(INTEGER, DOUBLE): %s of %s", joined(out), out.DataType())
	}
}
