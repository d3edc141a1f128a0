package types

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestListValueString(t *testing.T) {
	b := array.NewListBuilder(memory.DefaultAllocator, arrow.BinaryTypes.String)
	defer b.Release()
	vb := b.ValueBuilder().(*array.StringBuilder)
	b.Append(true)
	vb.AppendValues([]string{"a", "", "b c", " d", "null", "x,y", `it's`, `back\slash`, "日本"}, nil)
	vb.AppendNull()
	b.Append(true) // empty list
	b.AppendNull()
	arr := b.NewArray()
	defer arr.Release()
	want := []string{
		`[a, '', b c, ' d', 'null', 'x,y', 'it\'s', back\slash, 日本, NULL]`,
		`[]`,
		`NULL`,
	}
	for i, w := range want {
		if got := ValueAt(arr, i).String(); got != w {
			t.Errorf("row %d: %s, want %s", i, got, w)
		}
	}

	ib := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Float64)
	defer ib.Release()
	ib.Append(true)
	ib.ValueBuilder().(*array.Float64Builder).AppendValues([]float64{1.5, 2}, nil)
	farr := ib.NewArray()
	defer farr.Release()
	if got := ValueAt(farr, 0).String(); got != "[1.5, 2.0]" {
		t.Errorf("doubles: %s", got)
	}
}
