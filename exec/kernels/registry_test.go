package kernels

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

func TestResolveTyping(t *testing.T) {
	dictStr := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: types.String}
	cases := []struct {
		name   string
		args   []arrow.DataType
		want   []arrow.DataType
		result arrow.DataType
	}{
		{"+", []arrow.DataType{types.Int32, types.Float64}, []arrow.DataType{types.Float64, types.Float64}, types.Float64},
		{"+", []arrow.DataType{types.Int32, types.Int16}, []arrow.DataType{types.Int64, types.Int64}, types.Int64},
		{"/", []arrow.DataType{types.Int32, types.Int32}, []arrow.DataType{types.Float64, types.Float64}, types.Float64},
		{"//", []arrow.DataType{types.Int32, types.Int32}, []arrow.DataType{types.Int64, types.Int64}, types.Int64},
		{"/", []arrow.DataType{dec(15, 2), types.Int32}, []arrow.DataType{types.Float64, types.Float64}, types.Float64},
		{"+", []arrow.DataType{types.Null, types.Int32}, []arrow.DataType{types.Int64, types.Int64}, types.Int64},
		{"+", []arrow.DataType{dec(15, 2), dec(10, 4)}, []arrow.DataType{dec(17, 4), dec(10, 4)}, dec(18, 4)},
		{"=", []arrow.DataType{types.Int32, types.Int64}, []arrow.DataType{types.Int64, types.Int64}, types.Boolean},
		{"<", []arrow.DataType{types.Date, types.Timestamp}, []arrow.DataType{types.Timestamp, types.Timestamp}, types.Boolean},
		{"=", []arrow.DataType{dictStr, types.String}, []arrow.DataType{types.String, types.String}, types.Boolean},
		{"=", []arrow.DataType{types.Null, types.Date}, []arrow.DataType{types.Date, types.Date}, types.Boolean},
		{"lower", []arrow.DataType{types.Null}, []arrow.DataType{types.String}, types.String},
		{"LOWER", []arrow.DataType{dictStr}, []arrow.DataType{types.String}, types.String},
		{"substr", []arrow.DataType{types.String, types.Int32, types.Int8}, []arrow.DataType{types.String, types.Int64, types.Int64}, types.String},
		{"coalesce", []arrow.DataType{types.Int32, types.Null, dec(10, 2)}, []arrow.DataType{dec(12, 2), dec(12, 2), dec(12, 2)}, dec(12, 2)},
		{"neg", []arrow.DataType{types.Int32}, []arrow.DataType{types.Int64}, types.Int64},
		{"and", []arrow.DataType{types.Boolean, types.Null}, []arrow.DataType{types.Boolean, types.Boolean}, types.Boolean},
		{"date_part", []arrow.DataType{types.String, types.Date}, []arrow.DataType{types.String, types.Date}, types.Int64},
		{"-", []arrow.DataType{types.Date, types.Interval}, []arrow.DataType{types.Timestamp, types.Interval}, types.Timestamp},
		{"||", []arrow.DataType{types.String, types.Int32}, []arrow.DataType{types.String, types.String}, types.String},
		{"like", []arrow.DataType{arrow.BinaryTypes.LargeString, types.String}, []arrow.DataType{types.String, types.String}, types.Boolean},
	}
	for _, c := range cases {
		f, err := Resolve(c.name, c.args)
		if err != nil {
			t.Errorf("Resolve(%s, %v): %v", c.name, c.args, err)
			continue
		}
		if len(f.Args) != len(c.want) {
			t.Errorf("Resolve(%s): %d args", c.name, len(f.Args))
			continue
		}
		for i := range c.want {
			if !arrow.TypeEqual(f.Args[i], c.want[i]) {
				t.Errorf("Resolve(%s, %v): arg %d is %s, want %s", c.name, c.args, i, types.Name(f.Args[i]), types.Name(c.want[i]))
			}
		}
		if !arrow.TypeEqual(f.Result, c.result) {
			t.Errorf("Resolve(%s, %v): result %s, want %s", c.name, c.args, types.Name(f.Result), types.Name(c.result))
		}
	}
}

func TestResolveErrors(t *testing.T) {
	cases := []struct {
		name string
		args []arrow.DataType
		msg  string
	}{
		{"lower", []arrow.DataType{types.Int32}, "no function matches lower(INTEGER)"},
		{"+", []arrow.DataType{types.String, types.Int32}, "operator does not exist: VARCHAR + INTEGER"},
		{"neg", []arrow.DataType{types.String}, "operator does not exist: -VARCHAR"},
		{"=", []arrow.DataType{types.String, types.Int64}, "operator does not exist: VARCHAR = BIGINT"},
		{"and", []arrow.DataType{types.Int64, types.Boolean}, "operator does not exist: BIGINT AND BOOLEAN"},
		{"substr", []arrow.DataType{types.String}, "no function matches substr(VARCHAR)"},
		{"no_such_function", nil, "function no_such_function does not exist"},
		{"date_trunc", []arrow.DataType{types.String, types.Int64}, "no function matches date_trunc(VARCHAR, BIGINT)"},
		{"like", []arrow.DataType{types.Int64, types.String}, "operator does not exist: BIGINT LIKE VARCHAR"},
	}
	for _, c := range cases {
		_, err := Resolve(c.name, c.args)
		if err == nil {
			t.Errorf("Resolve(%s, %v) succeeded", c.name, c.args)
			continue
		}
		if !errors.Is(err, errs.ErrAnalysis) {
			t.Errorf("Resolve(%s): code %s", c.name, errs.CodeOf(err))
		}
		if err.Error() != c.msg {
			t.Errorf("Resolve(%s, %v) error %q, want %q", c.name, c.args, err, c.msg)
		}
	}
	part := types.StringValue("fortnight")
	if _, err := ResolveConst("date_trunc", []arrow.DataType{types.String, types.Date}, []*types.Value{&part}); err == nil {
		t.Error("date_trunc with unknown constant part resolved")
	}
}

// Eval casts arguments that were not cast by the caller, and accepts large strings.
func TestEvalConformsArguments(t *testing.T) {
	f, err := Resolve("+", []arrow.DataType{types.Int32, types.Float64})
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.Eval([]arrow.Array{mk(t, types.Int32, 1), mk(t, types.Float64, 0.5)}, 1)
	if err != nil || joined(out) != "1.5" {
		t.Errorf("uncast arguments: %s %v", joined(out), err)
	}
	lb := array.NewLargeStringBuilder(defaultMem)
	lb.AppendValues([]string{"ABC", "x"}, []bool{true, false})
	if got := mustCall(t, "lower", lb.NewArray()); got != "abc,NULL" {
		t.Errorf("lower(large string): %s", got)
	}
	if _, err := f.Eval([]arrow.Array{mk(t, types.Int32, 1)}, 1); err == nil {
		t.Error("wrong argument count accepted")
	}
	// A strict function over a NULL-typed argument: NULL rows of the declared type.
	if got := mustCall(t, "upper", ConstArray(types.NullOf(types.Null), 2)); got != "NULL,NULL" {
		t.Errorf("upper(NULL): %s", got)
	}
}

func TestConstArray(t *testing.T) {
	vals := []types.Value{
		types.IntValue(-3), types.FloatValue(1.5), types.StringValue("héllo"), types.BoolValue(true), types.DateValue(19000),
		{Type: types.Timestamp, I: 1}, {Type: dec(5, 2), D: mustDec(t, "1.25", 5, 2)}, {Type: types.Uint16, U: 65535},
		{Type: types.Interval, Iv: arrow.MonthDayNanoInterval{Months: 1, Days: 2, Nanoseconds: 3000}},
		{Type: types.Int8, I: -8}, {Type: types.Float32, F: 0.5}, types.NullOf(types.String), types.NullOf(types.Int64),
	}
	for _, v := range vals {
		for _, n := range []int{0, 1, 9} {
			a := ConstArray(v, n)
			if a.Len() != n || !arrow.TypeEqual(a.DataType(), v.Type) {
				t.Fatalf("ConstArray(%s, %d): %d rows of %s", v, n, a.Len(), a.DataType())
			}
			for i := 0; i < n; i++ {
				if got := types.ValueAt(a, i).String(); got != v.String() {
					t.Errorf("ConstArray(%s)[%d] = %s", v, i, got)
				}
			}
			if !constantValue(a) {
				t.Errorf("constantValue(ConstArray(%s)) = false", v)
			}
		}
	}
	if constantValue(mk(t, types.Int64, 1, 2)) || constantValue(mk(t, types.String, "a", "b")) || constantValue(mk(t, types.Int64, 1, nil)) {
		t.Error("non-constant arrays reported constant")
	}
	if got := joined(Decode(dict(t, "a", nil, "b", "a"))); got != "a,NULL,b,a" {
		t.Errorf("Decode: %s", got)
	}
}

func TestKnown(t *testing.T) {
	for _, name := range []string{"lower", "LOWER", "+", "date_trunc", "coalesce", "now"} {
		if !Known(name) {
			t.Errorf("Known(%q) = false", name)
		}
	}
	for _, name := range []string{"sum", "count", "row_number", "nosuch"} {
		if Known(name) {
			t.Errorf("Known(%q) = true", name)
		}
	}
}
