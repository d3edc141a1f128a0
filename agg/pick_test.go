package agg

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func fromJSON(t *testing.T, dt arrow.DataType, js string) arrow.Array {
	t.Helper()
	a, _, err := array.FromJSON(memory.DefaultAllocator, dt, strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestPickKeepsRows: first, last, any_value, arg_min and arg_max keep nested values
// and the types sources normalise away, across batches and groups, and give them
// back exactly; a kept nested value is a row of its own, not a slice of its batch.
func TestPickKeepsRows(t *testing.T) {
	list := arrow.ListOf(arrow.PrimitiveTypes.Int64)
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "b", Type: list, Nullable: true})
	i32 := arrow.PrimitiveTypes.Int32
	type batch struct {
		vals, by string
		groups   []uint32
	}
	cases := []struct {
		dt      arrow.DataType
		batches [2]batch
		want    map[string]string // function: the result's rows, by ValueStr
	}{
		{list, [2]batch{
			{`[null, [1, 2], [3]]`, `[5, 1, 9]`, []uint32{0, 1, 0}},
			{`[[4, 5, 6], [], null]`, `[0, 7, 2]`, []uint32{1, 0, 1}},
		}, map[string]string{
			"first": "(null) [1,2]", "last": "[] (null)", "any_value": "[3] [1,2]",
			"arg_min": "[] [4,5,6]", "arg_max": "[3] [1,2]",
		}},
		{st, [2]batch{
			{`[{"a": 1, "b": [1]}, null, {"a": 3, "b": null}]`, `[2, 8, 1]`, []uint32{0, 1, 0}},
			{`[{"a": 4, "b": []}, {"a": null, "b": [7, 8]}, null]`, `[9, 0, 5]`, []uint32{1, 0, 1}},
		}, map[string]string{
			"first": `{"a":1,"b":[1]} (null)`, "last": `{"a":null,"b":[7,8]} (null)`,
			"any_value": `{"a":1,"b":[1]} {"a":4,"b":[]}`, "arg_min": `{"a":null,"b":[7,8]} {"a":4,"b":[]}`,
			"arg_max": `{"a":1,"b":[1]} {"a":4,"b":[]}`,
		}},
		{arrow.FixedWidthTypes.Date64, [2]batch{
			{`[86400000, null, 172800000]`, `[1, 2, 3]`, []uint32{0, 1, 0}},
			{`[0, -86400000, null]`, `[0, 1, 9]`, []uint32{1, 0, 1}},
		}, map[string]string{
			"first": "1970-01-02 (null)", "last": "1969-12-31 (null)", "any_value": "1970-01-02 1970-01-01",
			"arg_min": "1970-01-02 1970-01-01", "arg_max": "1970-01-03 1970-01-01", // ties: the earlier row
		}},
		{arrow.FixedWidthTypes.Duration_us, [2]batch{
			{`[5, null, -7]`, `[1, 2, 3]`, []uint32{0, 1, 0}},
			{`[0, 11, null]`, `[0, 1, 9]`, []uint32{1, 0, 1}},
		}, map[string]string{
			"first": "5us (null)", "last": "11us (null)", "any_value": "5us 0us",
			"arg_min": "5us 0us", "arg_max": "-7us 0us",
		}},
		{&arrow.FixedSizeBinaryType{ByteWidth: 2}, [2]batch{
			{`["AAE=", null, "AgI="]`, `[1, 2, 3]`, []uint32{0, 1, 0}},
			{`["AwM=", "BAQ=", null]`, `[0, 1, 9]`, []uint32{1, 0, 1}},
		}, map[string]string{
			"first": "AAE= (null)", "last": "BAQ= (null)", "any_value": "AAE= AwM=",
			"arg_min": "AAE= AwM=", "arg_max": "AgI= AwM=",
		}},
	}
	for _, c := range cases {
		for _, name := range []string{"first", "last", "any_value", "arg_min", "arg_max"} {
			spec := Spec{Name: name, ArgType: c.dt}
			if name == "arg_min" || name == "arg_max" {
				spec.ArgTypes = []arrow.DataType{i32}
			}
			if _, err := ResultType(spec); err != nil {
				t.Errorf("%s: %v", spec, err)
				continue
			}
			acc, err := New(spec)
			if err != nil {
				t.Fatal(err)
			}
			acc.Resize(2)
			for _, b := range c.batches {
				args := []arrow.Array{fromJSON(t, c.dt, b.vals)}
				if spec.ArgTypes != nil {
					args = append(args, fromJSON(t, i32, b.by))
				}
				if err := UpdateArgs(acc, args, nil, b.groups); err != nil {
					t.Fatalf("%s: %v", spec, err)
				}
			}
			if p, ok := acc.(*pickAcc); ok {
				for g, v := range p.val {
					if v.A != nil && (v.A.Data().Offset() != 0 || v.A.Len() != 1) {
						t.Errorf("%s: group %d keeps a slice of its batch", spec, g)
					}
				}
			}
			out, err := acc.Final()
			if err != nil {
				t.Fatalf("%s: %v", spec, err)
			}
			if !arrow.TypeEqual(out.DataType(), c.dt) {
				t.Errorf("%s: result of type %s", spec, out.DataType())
			}
			var got []string
			for r := range out.Len() {
				got = append(got, out.ValueStr(r))
			}
			if g := strings.Join(got, " "); g != c.want[name] {
				t.Errorf("%s = %s, want %s", spec, g, c.want[name])
			}
		}
	}
}
