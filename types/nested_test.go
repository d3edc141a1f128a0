package types

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The text forms below are DuckDB's (v1.5) casts of the same values to VARCHAR.
func TestFormatNested(t *testing.T) {
	mem := memory.DefaultAllocator
	lb := array.NewListBuilder(mem, arrow.BinaryTypes.String)
	vb := lb.ValueBuilder().(*array.StringBuilder)
	lb.Append(true)
	for _, s := range []string{"a", "", "x,y", "a b", " a", "null", "a'b", `a\b`, "ü"} {
		vb.Append(s)
	}
	vb.AppendNull()
	lb.Append(true) // []
	lb.AppendNull()
	list := lb.NewArray()
	defer list.Release()

	mb := array.NewMapBuilder(mem, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64, false)
	mb.Append(true)
	mb.KeyBuilder().(*array.StringBuilder).AppendValues([]string{"a", "k y"}, nil)
	mb.ItemBuilder().(*array.Int64Builder).AppendValues([]int64{1, 0}, []bool{true, false})
	m := mb.NewArray()
	defer m.Release()

	st := arrow.StructOf(arrow.Field{Name: "a b", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true})
	sb := array.NewStructBuilder(mem, st)
	sb.Append(true)
	sb.FieldBuilder(0).(*array.Int32Builder).Append(1)
	fl := sb.FieldBuilder(1).(*array.ListBuilder)
	fl.Append(true)
	fl.ValueBuilder().(*array.Float64Builder).AppendValues([]float64{1.5, 2}, nil)
	s := sb.NewArray()
	defer s.Release()

	for _, c := range []struct {
		arr  arrow.Array
		row  int
		want string
	}{
		{list, 0, `[a, '', 'x,y', a b, ' a', 'null', 'a\'b', a\b, ü, NULL]`},
		{list, 1, `[]`},
		{list, 2, `NULL`},
		{m, 0, `{a=1, k y=NULL}`},
		{s, 0, `{'a b': 1, 'l': [1.5, 2.0]}`},
	} {
		if got := ValueAt(c.arr, c.row).String(); got != c.want {
			t.Errorf("%s row %d: got %s, want %s", c.arr.DataType(), c.row, got, c.want)
		}
	}
}
