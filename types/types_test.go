package types

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestNamesRoundTrip(t *testing.T) {
	for _, dt := range []arrow.DataType{Boolean, Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64,
		Float32, Float64, String, Binary, Date, Timestamp, TimestampTZ, Interval,
		Decimal(15, 2), Decimal(25, 2), &arrow.TimestampType{Unit: arrow.Nanosecond},
		arrow.ListOf(Int64)} {
		back, err := Parse(Name(dt))
		if err != nil || !arrow.TypeEqual(back, dt) {
			t.Errorf("%s: Parse(Name) = %v, %v", dt, back, err)
		}
	}
	for name, want := range map[string]arrow.DataType{"int": Int32, "varchar(10)": String, "numeric(10)": &arrow.Decimal64Type{Precision: 10}, "decimal(30,2)": &arrow.Decimal128Type{Precision: 30, Scale: 2},
		"double precision": Float64, "TIMESTAMPTZ": TimestampTZ, "text": String} {
		if got, err := Parse(name); err != nil || !arrow.TypeEqual(got, want) {
			t.Errorf("Parse(%q) = %v, %v", name, got, err)
		}
	}
	for _, bad := range []string{"decimal(40,2)", "decimal(5,6)", "nosuchtype", "varchar(x"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) should fail", bad)
		}
	}
}

func TestValueText(t *testing.T) {
	d := func(s string, scale int32) Value {
		n, _ := decimal128.FromString(s, 18, scale)
		return Value{Type: &arrow.Decimal128Type{Precision: 18, Scale: scale}, D: n}
	}
	cases := []struct {
		v    Value
		want string
	}{
		{IntValue(-42), "-42"},
		{FloatValue(3), "3.0"},
		{FloatValue(0.1), "0.1"},
		{FloatValue(1e20), "1e+20"},
		{FloatValue(math.NaN()), "nan"},
		{FloatValue(math.Inf(-1)), "-inf"},
		{d("-0.05", 2), "-0.05"},
		{d("12.5", 2), "12.50"},
		{DateValue(-1), "1969-12-31"},
		{Value{Type: Timestamp, I: 1_500_000}, "1970-01-01 00:00:01.5"},
		{Value{Type: Timestamp, I: -1}, "1969-12-31 23:59:59.999999"},
		{Value{Type: TimestampTZ, I: 0}, "1970-01-01 00:00:00+00"},
		{Value{Type: Interval, Iv: arrow.MonthDayNanoInterval{Months: 14, Days: 3, Nanoseconds: 3_723_000_000_000}}, "1 year 2 months 3 days 01:02:03"},
		{BoolValue(true), "true"},
		{NullOf(Int64), "NULL"},
		{Value{Type: Binary, S: "a\x00"}, `a\x00`},
	}
	for _, c := range cases {
		if got := c.v.String(); got != c.want {
			t.Errorf("%s: got %q, want %q", Name(c.v.Type), got, c.want)
		}
	}
}

func TestCompareAndValueAt(t *testing.T) {
	if CompareFloat(math.NaN(), math.Inf(1)) != 1 || CompareFloat(math.Copysign(0, -1), 0) != 0 || CompareFloat(math.NaN(), math.NaN()) != 0 {
		t.Fatal("float order: NaN greatest, -0 = +0")
	}
	b := array.NewStringBuilder(memory.DefaultAllocator)
	b.AppendValues([]string{"b", "a"}, nil)
	b.AppendNull()
	arr := b.NewArray()
	if Compare(ValueAt(arr, 0), ValueAt(arr, 1)) != 1 || !ValueAt(arr, 2).Null {
		t.Fatal("string values")
	}
	if v := ValueAt(array.NewNull(3), 1); !v.Null {
		t.Fatal("a NULL-typed array holds NULLs")
	}
}

// TestParseNested reads the names of lists, fixed-size arrays, structs and maps,
// nested in each other, back to the names DuckDB gives them.
func TestParseNested(t *testing.T) {
	for in, want := range map[string]string{
		"INTEGER[]":                              "INTEGER[]",
		"int[][]":                                "INTEGER[][]",
		`STRUCT(a INTEGER, "b c" VARCHAR)`:       `STRUCT(a INTEGER, "b c" VARCHAR)`,
		"struct(Ab int[], s struct(x double))[]": "STRUCT(Ab INTEGER[], s STRUCT(x DOUBLE))[]",
		"MAP(VARCHAR, INTEGER)":                  "MAP(VARCHAR, INTEGER)",
		"map(int, struct(a decimal(10, 2)))":     "MAP(INTEGER, STRUCT(a DECIMAL(10,2)))",
	} {
		dt, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if got := Name(dt); got != want {
			t.Errorf("Parse(%q) = %s, want %s", in, got, want)
		}
	}
	for _, bad := range []string{"STRUCT()", "STRUCT(a)", "MAP(INTEGER)", "STRUCT(a INT, a INT)", "INTEGER[x]", "STRUCT(a NOSUCH)", "INTEGER[3]"} {
		if dt, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = %s, want an error", bad, Name(dt))
		}
	}
}
