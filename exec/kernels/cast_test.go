package kernels

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

func mustCast(t *testing.T, arr arrow.Array, to arrow.DataType) string {
	t.Helper()
	out, err := Cast(arr, to)
	if err != nil {
		t.Fatalf("Cast(%s → %s): %v", arr.DataType(), types.Name(to), err)
	}
	if !arrow.TypeEqual(types.Unwrap(out.DataType()), to) {
		t.Fatalf("Cast result type %s, want %s", out.DataType(), types.Name(to))
	}
	if out.Len() != arr.Len() {
		t.Fatalf("Cast changed length %d → %d", arr.Len(), out.Len())
	}
	return joined(out)
}

func castErr(t *testing.T, arr arrow.Array, to arrow.DataType, wantMsg string) {
	t.Helper()
	_, err := Cast(arr, to)
	if err == nil {
		t.Fatalf("Cast(%s → %s) succeeded, want error %q", joined(arr), types.Name(to), wantMsg)
	}
	if !errors.Is(err, errs.ErrAnalysis) {
		t.Errorf("Cast error %v has code %s, want ANALYSIS_ERROR", err, errs.CodeOf(err))
	}
	if !strings.Contains(err.Error(), wantMsg) {
		t.Errorf("Cast error %q does not mention %q", err, wantMsg)
	}
}

func TestCastNumeric(t *testing.T) {
	cases := []struct {
		in   arrow.Array
		to   arrow.DataType
		want string
	}{
		{mk(t, types.Int32, 1, nil, -5), types.Int64, "1,NULL,-5"},
		{mk(t, types.Int64, 127, -128), types.Int8, "127,-128"},
		{mk(t, types.Int64, 0, 255), types.Uint8, "0,255"},
		{mk(t, types.Uint64, uint64(math.MaxUint64)), types.Float64, "1.8446744073709552e+19"},
		{mk(t, types.Float64, 2.5, -2.5, 0.49999, 1.5, -0.5), types.Int32, "2,-2,0,2,0"}, // half to even, as DuckDB casts
		{mk(t, types.Float64, 1.5, nil), types.Float32, "1.5,NULL"},
		{mk(t, types.Int32, 42), dec(5, 2), "42.00"},
		{mk(t, types.Float64, 1.005, -2.345), dec(10, 2), "1.00,-2.35"},
		{mk(t, dec(10, 3), "1.235", "-1.235", "9.999"), dec(5, 2), "1.24,-1.24,10.00"},
		{mk(t, dec(10, 2), "12.5", "-12.5", "12.49"), types.Int64, "13,-13,12"},
		{mk(t, dec(10, 2), "12.25"), types.Float64, "12.25"},
		{mk(t, dec(10, 2), "1.5"), dec(20, 6), "1.500000"},
		{mk(t, types.Boolean, true, false, nil), types.Int32, "1,0,NULL"},
		{mk(t, types.Int64, 0, 7, -1), types.Boolean, "false,true,true"},
		{mk(t, types.Int64, math.MaxInt64), types.Uint64, "9223372036854775807"},
		{mk(t, types.Uint64, uint64(1)<<63), dec(20, 0), "9223372036854775808"},
	}
	for _, c := range cases {
		if got := mustCast(t, c.in, c.to); got != c.want {
			t.Errorf("Cast(%s AS %s) = %s, want %s", joined(c.in), types.Name(c.to), got, c.want)
		}
	}
}

func TestCastNumericErrors(t *testing.T) {
	castErr(t, mk(t, types.Int64, 1, 128), types.Int8, "128")
	castErr(t, mk(t, types.Int64, -1), types.Uint32, "-1")
	castErr(t, mk(t, types.Uint64, uint64(math.MaxUint64)), types.Int64, "18446744073709551615")
	castErr(t, mk(t, types.Float64, math.NaN()), types.Int32, "nan")
	castErr(t, mk(t, types.Float64, 1e19), types.Int64, "out of range")
	castErr(t, mk(t, dec(10, 2), "1234.5"), dec(5, 2), "1234.50")
	castErr(t, mk(t, types.Float64, 1e300), types.Float32, "out of range")
	// NULL rows never fail, whatever garbage their slot holds.
	in := mk(t, types.Int64, 1, nil)
	if got := mustCast(t, in, types.Int8); got != "1,NULL" {
		t.Errorf("got %s", got)
	}
}

func TestCastToString(t *testing.T) {
	cases := []struct {
		in   arrow.Array
		want string
	}{
		{mk(t, types.Int64, -42, nil), "-42,NULL"},
		{mk(t, types.Uint8, 200), "200"},
		{mk(t, types.Float64, 1.5, 2.0, math.Inf(-1), 1e20), "1.5,2.0,-inf,1e+20"},
		{mk(t, types.Float32, 0.1), "0.1"},
		{mk(t, types.Boolean, true, false), "true,false"},
		{mk(t, dec(5, 2), "-0.05", "123.40"), "-0.05,123.40"},
		{mk(t, types.Date, "2024-02-29", "1969-12-31", "0001-01-01"), "2024-02-29,1969-12-31,0001-01-01"},
		{mk(t, types.Timestamp, "2024-01-02 03:04:05.123456", "1969-12-31 23:59:59.999999"), "2024-01-02 03:04:05.123456,1969-12-31 23:59:59.999999"},
		{mk(t, types.TimestampTZ, "2024-01-02 03:04:05"), "2024-01-02 03:04:05+00"},
		{mk(t, types.Interval, "1 year 2 months 3 days 04:05:06"), "1 year 2 months 3 days 04:05:06"},
	}
	for _, c := range cases {
		got := mustCast(t, c.in, types.String)
		if got != c.want {
			t.Errorf("Cast(%s AS VARCHAR) = %s, want %s", c.in.DataType(), got, c.want)
		}
		// The text is exactly types.Value.String of each row.
		if got != joined(c.in) {
			t.Errorf("Cast(%s AS VARCHAR) = %s, Value.String gives %s", c.in.DataType(), got, joined(c.in))
		}
	}
}

func TestCastFromString(t *testing.T) {
	cases := []struct {
		in   []any
		to   arrow.DataType
		want string
	}{
		{[]any{" 42 ", "-7", nil, "1.5"}, types.Int32, "42,-7,NULL,2"},
		{[]any{"18446744073709551615"}, types.Uint64, "18446744073709551615"},
		{[]any{"1.25", " -3e2 ", "inf", "nan"}, types.Float64, "1.25,-300.0,inf,nan"},
		{[]any{"true", "F", "yes", "no", "1", "0", "T"}, types.Boolean, "true,false,true,false,true,false,true"},
		{[]any{"1.005", "-2.5", "7", ".5"}, dec(6, 2), "1.01,-2.50,7.00,0.50"},
		{[]any{"12345678901234567890.123456789"}, dec(38, 9), "12345678901234567890.123456789"},
		{[]any{"2024-02-29", " 1970-01-01 ", "1900-03-01"}, types.Date, "2024-02-29,1970-01-01,1900-03-01"},
		{[]any{"2024-01-02 03:04:05", "2024-01-02T03:04:05.5Z", "2024-01-02 03:04:05+02:00", "2024-01-02", "1969-12-31 23:59:59.000001"}, types.Timestamp,
			"2024-01-02 03:04:05,2024-01-02 03:04:05.5,2024-01-02 01:04:05,2024-01-02 00:00:00,1969-12-31 23:59:59.000001"},
		{[]any{"2024-01-02 03:04:05.123456789"}, &arrow.TimestampType{Unit: arrow.Nanosecond}, "2024-01-02 03:04:05.123456789"},
		{[]any{"2024-01-02 03:04:05+00"}, types.TimestampTZ, "2024-01-02 03:04:05+00"},
		{[]any{"1 day", "2 hours", "3 months", "1 year 2 days", "10 minutes", "00:30:00", "-1 day", "1.5 seconds", "2 weeks"}, types.Interval,
			"1 day,02:00:00,3 months,1 year 2 days,00:10:00,00:30:00,-1 day,00:00:01.5,14 days"},
	}
	for _, c := range cases {
		got := mustCast(t, mk(t, types.String, c.in...), c.to)
		if got != c.want {
			t.Errorf("Cast(%v AS %s) = %s, want %s", c.in, types.Name(c.to), got, c.want)
		}
	}
}

func TestCastFromStringErrors(t *testing.T) {
	castErr(t, mk(t, types.String, "abc"), types.Int32, "could not convert string 'abc' to INTEGER")
	castErr(t, mk(t, types.String, "300"), types.Int8, "out of range")
	castErr(t, mk(t, types.String, "2023-02-29"), types.Date, "2023-02-29")
	castErr(t, mk(t, types.String, "2024-13-01"), types.Date, "2024-13-01")
	castErr(t, mk(t, types.String, "2024-01-01 25:00:00"), types.Timestamp, "25:00")
	castErr(t, mk(t, types.String, "maybe"), types.Boolean, "maybe")
	castErr(t, mk(t, types.String, "1 fortnight"), types.Interval, "fortnight")
	castErr(t, mk(t, types.String, "123.456"), dec(4, 2), "123.456")
	castErr(t, mk(t, types.String, "1e400"), types.Float64, "1e400")
}

func TestCastTemporal(t *testing.T) {
	tsMS := &arrow.TimestampType{Unit: arrow.Millisecond}
	tsS := &arrow.TimestampType{Unit: arrow.Second}
	cases := []struct {
		in   arrow.Array
		to   arrow.DataType
		want string
	}{
		{mk(t, types.Date, "2024-02-29", "1969-12-31", nil), types.Timestamp, "2024-02-29 00:00:00,1969-12-31 00:00:00,NULL"},
		{mk(t, types.Timestamp, "2024-02-29 23:59:59.999999", "1969-12-31 23:59:59.5"), types.Date, "2024-02-29,1969-12-31"},
		{mk(t, types.Timestamp, "1969-12-31 23:59:59.9995"), tsMS, "1969-12-31 23:59:59.999"},
		// Nanoseconds are truncated; microseconds to a coarser unit round to the
		// nearest tick, half away from zero (DuckDB).
		{mk(t, &arrow.TimestampType{Unit: arrow.Nanosecond}, "2024-01-01 00:00:00.123456789"), types.Timestamp, "2024-01-01 00:00:00.123456"},
		{mk(t, types.Timestamp, "2024-05-10 11:06:33.846", "2024-05-10 11:06:33.4", "1969-12-31 23:59:58.5", "1969-12-31 23:59:59.6"), tsS,
			"2024-05-10 11:06:34,2024-05-10 11:06:33,1969-12-31 23:59:58,1970-01-01 00:00:00"},
		{mk(t, tsS, "2024-01-01 00:00:01"), types.Timestamp, "2024-01-01 00:00:01"},
		{mk(t, types.Timestamp, "2024-01-01 10:00:00"), types.TimestampTZ, "2024-01-01 10:00:00+00"},
		{mk(t, types.TimestampTZ, "2024-01-01 10:00:00"), types.Timestamp, "2024-01-01 10:00:00"},
		{mk(t, types.Date, "2024-01-01"), types.TimestampTZ, "2024-01-01 00:00:00+00"},
	}
	for _, c := range cases {
		if got := mustCast(t, c.in, c.to); got != c.want {
			t.Errorf("Cast(%s AS %s) = %s, want %s", joined(c.in), types.Name(c.to), got, c.want)
		}
	}
	castErr(t, mk(t, types.Date, "3000-01-01"), &arrow.TimestampType{Unit: arrow.Nanosecond}, "out of range")
}

// Values survive VARCHAR and back, and a widening and back.
func TestCastRoundTrip(t *testing.T) {
	arrays := []arrow.Array{
		mk(t, types.Int64, math.MinInt64, math.MaxInt64, 0, nil),
		mk(t, types.Int8, -128, 127),
		mk(t, types.Uint64, uint64(math.MaxUint64), 0),
		mk(t, types.Float64, 0.1, -1e-300, 1.7976931348623157e308, math.Inf(1), nil),
		mk(t, types.Float32, 0.1, 3.4028235e38),
		mk(t, dec(38, 10), "-1234567890123456789012345678.0123456789", "0.0000000001"),
		mk(t, dec(9, 3), "123456.789", "-0.001"),
		mk(t, types.Date, "0001-01-01", "9999-12-31", "1600-02-29"),
		mk(t, types.Timestamp, "1900-01-01 00:00:00.000001", "2262-04-11 23:47:16.854775"),
		mk(t, &arrow.TimestampType{Unit: arrow.Nanosecond}, "1678-01-01 00:12:43.145224193"),
		mk(t, types.Interval, "1 year 2 months 3 days 04:05:06.789", "-2 days", "00:00:00.000001"),
		mk(t, types.Boolean, true, false, nil),
	}
	for _, a := range arrays {
		s, err := Cast(a, types.String)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Cast(s, a.DataType())
		if err != nil {
			t.Fatalf("%s: VARCHAR back: %v", a.DataType(), err)
		}
		if joined(back) != joined(a) {
			t.Errorf("%s round trip through VARCHAR: %s → %s", a.DataType(), joined(a), joined(back))
		}
	}
	wide := []struct{ from, via arrow.DataType }{
		{types.Int32, types.Int64}, {types.Int32, types.Float64}, {types.Int32, dec(12, 2)},
		{types.Uint32, types.Int64}, {dec(9, 3), dec(20, 6)}, {dec(9, 3), types.Float64},
		{types.Date, types.Timestamp}, {types.Float32, types.Float64},
	}
	for _, w := range wide {
		src, err := Cast(mk(t, types.String, "1", "-2", nil, "100"), w.from)
		if err != nil {
			// unsigned cannot hold -2
			src, _ = Cast(mk(t, types.String, "1", "2", nil, "100"), w.from)
		}
		if w.from.ID() == arrow.DATE32 {
			src = mk(t, types.Date, "2024-02-29", nil, "1960-01-01")
		}
		mid, err := Cast(src, w.via)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Cast(mid, w.from)
		if err != nil {
			t.Fatal(err)
		}
		if joined(back) != joined(src) {
			t.Errorf("%s via %s: %s → %s", types.Name(w.from), types.Name(w.via), joined(src), joined(back))
		}
	}
}

func TestCastDictionaryAndNull(t *testing.T) {
	d := dict(t, "1", "2", nil, "1")
	out, err := Cast(d, types.Int64)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.DataType().(*arrow.DictionaryType); !ok {
		t.Errorf("dictionary cast lost its encoding: %s", out.DataType())
	}
	if got := joined(out); got != "1,2,NULL,1" {
		t.Errorf("got %s", got)
	}
	if got := mustCast(t, ConstArray(types.NullOf(types.Null), 3), types.Date); got != "NULL,NULL,NULL" {
		t.Errorf("NULL cast: %s", got)
	}
	if got := mustCast(t, mk(t, types.Int64), types.String); got != "" {
		t.Errorf("empty cast: %q", got)
	}
	// A slice (non-zero offset) casts its own rows.
	sl := mk(t, types.Int32, 1, 2, nil, 4).(interface{ Len() int })
	_ = sl
}

func TestCanCast(t *testing.T) {
	yes := [][2]arrow.DataType{
		{types.Int32, types.String}, {types.String, types.Date}, {types.String, types.Interval},
		{types.Date, types.Timestamp}, {types.Timestamp, types.TimestampTZ}, {types.Boolean, types.Int64},
		{types.Float64, dec(10, 2)}, {types.Null, types.Date}, {types.Interval, types.String},
		{arrow.ListOf(types.Int64), types.String}, {types.String, arrow.ListOf(types.Int64)},
		{arrow.ListOf(types.Int64), arrow.ListOf(types.String)},
	}
	no := [][2]arrow.DataType{
		{types.Date, types.Int64}, {types.Interval, types.Int64}, {types.Int64, types.Date},
		{arrow.ListOf(types.Date), arrow.ListOf(types.Int64)}, {arrow.ListOf(types.Int64), types.Int64},
	}
	for _, p := range yes {
		if !CanCast(p[0], p[1]) {
			t.Errorf("CanCast(%s, %s) = false", types.Name(p[0]), types.Name(p[1]))
		}
	}
	for _, p := range no {
		if CanCast(p[0], p[1]) {
			t.Errorf("CanCast(%s, %s) = true", types.Name(p[0]), types.Name(p[1]))
		}
	}
}

func TestParseLiteral(t *testing.T) {
	cases := []struct {
		s    string
		to   arrow.DataType
		want string
	}{
		{"2024-01-01", types.Date, "2024-01-01"},
		{"2024-01-01 12:30:00", types.Timestamp, "2024-01-01 12:30:00"},
		{"1 day", types.Interval, "1 day"},
		{"42", types.Int64, "42"},
		{"3.14", dec(5, 2), "3.14"},
		{"hello", types.String, "hello"},
	}
	for _, c := range cases {
		v, err := ParseLiteral(c.s, c.to)
		if err != nil {
			t.Errorf("ParseLiteral(%q, %s): %v", c.s, types.Name(c.to), err)
			continue
		}
		if v.String() != c.want || !arrow.TypeEqual(v.Type, c.to) {
			t.Errorf("ParseLiteral(%q, %s) = %s of %s", c.s, types.Name(c.to), v, types.Name(v.Type))
		}
	}
	if _, err := ParseLiteral("2024-02-30", types.Date); !errors.Is(err, errs.ErrAnalysis) {
		t.Errorf("bad date literal: %v", err)
	}
}
