package source

import (
	"bytes"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/types"
)

// TestKeyAppenders checks that the typed encoders of a batch's key columns encode
// rows as the deleted tuples are encoded, NULL included.
func TestKeyAppenders(t *testing.T) {
	mem := memory.DefaultAllocator
	var arrays []arrow.Array
	build := func(dt arrow.DataType, fill func(b array.Builder)) {
		b := array.NewBuilder(mem, dt)
		fill(b)
		b.AppendNull()
		arrays = append(arrays, b.NewArray())
	}
	build(types.Int32, func(b array.Builder) { b.(*array.Int32Builder).AppendValues([]int32{-1, 0, 7}, nil) })
	build(types.Int64, func(b array.Builder) { b.(*array.Int64Builder).AppendValues([]int64{math.MinInt64, 3}, nil) })
	build(types.Date, func(b array.Builder) { b.(*array.Date32Builder).Append(19000) })
	build(types.Time, func(b array.Builder) { b.(*array.Time64Builder).Append(123) })
	build(types.TimestampTZ, func(b array.Builder) { b.(*array.TimestampBuilder).Append(-5) })
	build(types.Boolean, func(b array.Builder) { b.(*array.BooleanBuilder).AppendValues([]bool{true, false}, nil) })
	build(types.Float64, func(b array.Builder) { b.(*array.Float64Builder).AppendValues([]float64{math.NaN(), -0.5}, nil) })
	build(types.Float32, func(b array.Builder) { b.(*array.Float32Builder).AppendValues([]float32{1.5}, nil) })
	build(types.String, func(b array.Builder) { b.(*array.StringBuilder).AppendValues([]string{"", "abc"}, nil) })
	build(types.Binary, func(b array.Builder) { b.(*array.BinaryBuilder).AppendValues([][]byte{{0, 1}}, nil) })
	build(&arrow.Decimal128Type{Precision: 20, Scale: 2}, func(b array.Builder) {
		b.(*array.Decimal128Builder).Append(decimal128.FromI64(-12345))
	})
	for _, a := range arrays {
		app := keyAppender(a)
		for i := range a.Len() {
			got := app(nil, i)
			want := appendValue(nil, types.ValueAt(a, i))
			if !bytes.Equal(got, want) {
				t.Errorf("%s row %d: % x, want % x", a.DataType(), i, got, want)
			}
		}
	}
	d := NewEqualityDelete("d", []int{0})
	d.Add([]types.Value{types.NullOf(types.Int64)})
	d.Add([]types.Value{types.IntValue(7)})
	sel := equalityLive([]*EqualityDelete{d}, [][]arrow.Array{{arrays[0]}}, arrays[0].Len(), nil)
	if len(sel) != 2 || sel[0] != 0 || sel[1] != 1 {
		t.Errorf("live rows %v, want [0 1] (7 and NULL deleted)", sel)
	}
}
