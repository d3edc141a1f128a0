package vector

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/float16"

	"github.com/loredb/lore/types"
)

// FromValues builds an array of type dt from boxed values. It is for small or
// non-hot results (window functions, constants); hot paths build typed slices.
func FromValues(dt arrow.DataType, vals []types.Value) arrow.Array {
	b := types.NewBuilder(Allocator, dt)
	defer b.Release()
	b.Reserve(len(vals))
	for _, v := range vals {
		AppendValue(b, v)
	}
	return b.NewArray()
}

// AppendValue appends v to b, whose type must be v's type (NULLs of any type fit).
func AppendValue(b array.Builder, v types.Value) {
	if v.Null {
		b.AppendNull()
		return
	}
	switch x := b.(type) {
	case *array.BooleanBuilder:
		x.Append(v.I != 0)
	case *array.Int8Builder:
		x.Append(int8(v.I))
	case *array.Int16Builder:
		x.Append(int16(v.I))
	case *array.Int32Builder:
		x.Append(int32(v.I))
	case *array.Int64Builder:
		x.Append(v.I)
	case *array.Uint8Builder:
		x.Append(uint8(v.U))
	case *array.Uint16Builder:
		x.Append(uint16(v.U))
	case *array.Uint32Builder:
		x.Append(uint32(v.U))
	case *array.Uint64Builder:
		x.Append(v.U)
	case *array.Float16Builder:
		x.Append(float16.New(float32(v.F)))
	case *array.Float32Builder:
		x.Append(float32(v.F))
	case *array.Float64Builder:
		x.Append(v.F)
	case *array.StringBuilder:
		x.Append(v.S)
	case *array.LargeStringBuilder:
		x.Append(v.S)
	case *array.BinaryBuilder:
		x.Append([]byte(v.S))
	case *array.Date32Builder:
		x.Append(arrow.Date32(v.I))
	case *array.TimestampBuilder:
		x.Append(arrow.Timestamp(v.I))
	case *array.Time64Builder:
		x.Append(arrow.Time64(v.I))
	case *array.Time32Builder:
		x.Append(arrow.Time32(v.I))
	case *array.Decimal128Builder:
		x.Append(v.D)
	case *array.Decimal64Builder:
		x.Append(decimal.Decimal64(v.D.LowBits()))
	case *array.MonthDayNanoIntervalBuilder:
		x.Append(v.Iv)
	case *array.NullBuilder:
		x.AppendNull()
	default:
		panic(fmt.Sprintf("BUG: cannot append a value to a %T", b))
	}
}
