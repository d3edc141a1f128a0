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
// non-hot results (window functions, constants); hot paths build typed slices. A
// nested value is taken from the row it carries (types.Value.A).
func FromValues(dt arrow.DataType, vals []types.Value) arrow.Array {
	if types.IsNested(dt) {
		return fromRows(dt, vals)
	}
	b := types.NewBuilder(Allocator, dt)
	defer b.Release()
	b.Reserve(len(vals))
	for _, v := range vals {
		AppendValue(b, v)
	}
	return b.NewArray()
}

// fromRows joins the rows nested values carry, a run of NULLs as one array of NULLs.
func fromRows(dt arrow.DataType, vals []types.Value) arrow.Array {
	var parts, made []arrow.Array
	nulls := 0
	flush := func() {
		if nulls > 0 {
			a := array.MakeArrayOfNull(Allocator, dt, nulls)
			parts, made, nulls = append(parts, a), append(made, a), 0
		}
	}
	for _, v := range vals {
		if v.Null {
			nulls++
			continue
		}
		if v.A == nil || v.A.Len() != 1 || !arrow.TypeEqual(v.A.DataType(), dt) {
			panic(fmt.Sprintf("BUG: a %s value without its row of that type", dt))
		}
		flush()
		parts = append(parts, v.A)
	}
	flush()
	if len(parts) == 0 {
		return array.MakeArrayOfNull(Allocator, dt, 0)
	}
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0]
	}
	out, err := array.Concatenate(parts, Allocator)
	if err != nil {
		panic(fmt.Sprintf("BUG: joining %s rows: %v", dt, err))
	}
	for _, a := range made {
		a.Release()
	}
	return out
}

// KeptValue is types.ValueAt for a value kept past its batch: a nested value
// carries a copy of its row, not a slice of arr that would keep all of arr alive.
func KeptValue(arr arrow.Array, i int) types.Value {
	v := types.ValueAt(arr, i)
	if v.A != nil {
		row := Take(v.A, []int32{0})
		v.A.Release()
		v.A = row
	}
	return v
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
	case *array.FixedSizeBinaryBuilder:
		x.Append([]byte(v.S))
	case *array.Date32Builder:
		x.Append(arrow.Date32(v.I))
	case *array.Date64Builder:
		// types.ValueAt reads a DATE64 as a DATE, in days.
		x.Append(arrow.Date64(v.I * 86400000))
	case *array.DurationBuilder:
		x.Append(arrow.Duration(v.I))
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
