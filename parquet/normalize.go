package parquet

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// normalType is the Lore type a column the library reads as dt is delivered in (see
// the package doc). Nested types are left as they are.
func normalType(dt arrow.DataType) arrow.DataType {
	switch t := dt.(type) {
	case arrow.ExtensionType:
		return normalType(t.StorageType())
	case *arrow.DictionaryType:
		return normalType(t.ValueType)
	case *arrow.TimestampType:
		if t.Unit == arrow.Second || t.Unit == arrow.Millisecond {
			return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: t.TimeZone}
		}
		return dt
	case *arrow.Decimal32Type:
		return types.Decimal(t.Precision, t.Scale)
	case *arrow.Decimal64Type:
		return types.Decimal(t.Precision, t.Scale)
	case *arrow.Decimal128Type:
		return types.Decimal(t.Precision, t.Scale)
	case *arrow.Decimal256Type:
		if t.Precision <= 38 {
			return types.Decimal(t.Precision, t.Scale)
		}
		// Wider decimals have no Lore type; like DuckDB, read them as doubles.
		return types.Float64
	}
	switch dt.ID() {
	case arrow.DATE64:
		return types.Date
	case arrow.FLOAT16:
		return types.Float32
	case arrow.LARGE_STRING, arrow.STRING_VIEW:
		return types.String
	case arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return types.Binary
	}
	return dt
}

// normalize converts arr to want, its normalised type.
func normalize(arr arrow.Array, want arrow.DataType) (arrow.Array, error) {
	have := arr.DataType()
	if arrow.TypeEqual(have, want) {
		return arr, nil
	}
	switch a := arr.(type) {
	case array.ExtensionArray:
		return normalize(a.Storage(), want)
	case *array.Dictionary:
		// A dictionary of the wanted string or binary type stays a dictionary (its
		// values normalised); anything else is expanded.
		if vt := a.Dictionary().DataType(); (types.IsString(want) && types.IsString(vt)) || (types.IsBinary(want) && types.IsBinary(vt)) {
			if arrow.TypeEqual(vt, want) {
				return arr, nil
			}
			dict, err := normalize(a.Dictionary(), want)
			if err != nil {
				return nil, err
			}
			dt := &arrow.DictionaryType{IndexType: a.Indices().DataType(), ValueType: want}
			return array.NewDictionaryArray(dt, a.Indices(), dict), nil
		}
		plain, err := compute.TakeArray(context.Background(), a.Dictionary(), a.Indices())
		if err != nil {
			return nil, err
		}
		return normalize(plain, want)
	case *array.Timestamp:
		to, ok := want.(*arrow.TimestampType)
		if !ok {
			break
		}
		from := have.(*arrow.TimestampType).Unit
		return mapInt64(arr, want, func(v int64) (int64, bool) { return rescale(v, from, to.Unit) })
	case *array.Date64:
		if want.ID() != arrow.DATE32 {
			break
		}
		b := array.NewDate32Builder(memory.DefaultAllocator)
		defer b.Release()
		b.Reserve(a.Len())
		for i := 0; i < a.Len(); i++ {
			if a.IsNull(i) {
				b.AppendNull()
				continue
			}
			ms := int64(a.Value(i))
			d := ms / 86400000
			if ms%86400000 < 0 {
				d--
			}
			b.Append(arrow.Date32(d))
		}
		return b.NewArray(), nil
	case *array.Float16:
		if want.ID() != arrow.FLOAT32 {
			break
		}
		b := array.NewFloat32Builder(memory.DefaultAllocator)
		defer b.Release()
		b.Reserve(a.Len())
		for i := 0; i < a.Len(); i++ {
			if a.IsNull(i) {
				b.AppendNull()
			} else {
				b.Append(a.Value(i).Float32())
			}
		}
		return b.NewArray(), nil
	case *array.LargeString:
		return toString(a, a.Value), nil
	case *array.StringView:
		return toString(a, a.Value), nil
	case *array.LargeBinary:
		return toBinary(a, a.Value), nil
	case *array.BinaryView:
		return toBinary(a, a.Value), nil
	case *array.FixedSizeBinary:
		switch {
		case types.IsUUID(want):
			return fixedToUUID(a)
		case want.ID() == arrow.INTERVAL_MONTH_DAY_NANO:
			return fixedToInterval(a)
		}
		return toBinary(a, a.Value), nil
	case *array.Decimal128:
		if want.ID() == arrow.DECIMAL64 {
			return narrowDecimal(a, want)
		}
	case *array.Decimal32:
		if want.ID() == arrow.DECIMAL64 {
			out := make([]int64, a.Len())
			for i := range out {
				out[i] = int64(a.Value(i))
			}
			return vector.Decimal64Array(a, want, out), nil
		}
	case *array.Decimal256:
		if want.ID() == arrow.DECIMAL64 {
			wide, err := normalize(arr, types.Wide(want))
			if err != nil {
				return nil, err
			}
			return narrowDecimal(wide.(*array.Decimal128), want)
		}
		if want.ID() == arrow.FLOAT64 {
			scale := have.(*arrow.Decimal256Type).Scale
			b := array.NewFloat64Builder(memory.DefaultAllocator)
			defer b.Release()
			b.Reserve(a.Len())
			for i := 0; i < a.Len(); i++ {
				if a.IsNull(i) {
					b.AppendNull()
				} else {
					b.Append(a.Value(i).ToFloat64(scale))
				}
			}
			return b.NewArray(), nil
		}
		if want.ID() != arrow.DECIMAL128 {
			break
		}
		b := array.NewDecimal128Builder(memory.DefaultAllocator, want.(*arrow.Decimal128Type))
		defer b.Release()
		b.Reserve(a.Len())
		for i := 0; i < a.Len(); i++ {
			if a.IsNull(i) {
				b.AppendNull()
				continue
			}
			// Precision at most 38 fits in the low 128 bits.
			w := a.Value(i).Array()
			b.Append(decimal128.New(int64(w[1]), w[0]))
		}
		return b.NewArray(), nil
	}
	return nil, fmt.Errorf("cannot convert %s to %s", have, want)
}

// mapInt64 rewrites the int64 values of a fixed-width array into a new array of type
// want, keeping its validity. ok false from conv (an overflow) is an error.
func mapInt64(arr arrow.Array, want arrow.DataType, conv func(int64) (int64, bool)) (arrow.Array, error) {
	d := arr.Data()
	off, n := d.Offset(), d.Len()
	in := arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())
	// Keep the same offset so the validity bitmap can be shared as it is.
	out := make([]int64, off+n)
	for i := off; i < off+n; i++ {
		if arr.IsNull(i - off) {
			continue
		}
		v, ok := conv(in[i])
		if !ok {
			return nil, fmt.Errorf("value %d out of range for %s", in[i], want)
		}
		out[i] = v
	}
	buf := memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(out))
	nd := array.NewData(want, n, []*memory.Buffer{d.Buffers()[0], buf}, nil, d.NullN(), off)
	defer nd.Release()
	return array.MakeFromData(nd), nil
}

func toString(a arrow.Array, value func(int) string) arrow.Array {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.Reserve(a.Len())
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			b.AppendNull()
		} else {
			b.Append(value(i))
		}
	}
	return b.NewArray()
}

func toBinary(a arrow.Array, value func(int) []byte) arrow.Array {
	b := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
	defer b.Release()
	b.Reserve(a.Len())
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			b.AppendNull()
		} else {
			b.Append(value(i))
		}
	}
	return b.NewArray()
}

// narrowDecimal converts a 128-bit decimal array to the 64-bit decimal type want
// (of the same scale). A value with more digits than 64 bits hold — which the
// file's precision rules out, unless the file is wrong — is an error.
func narrowDecimal(a *array.Decimal128, want arrow.DataType) (arrow.Array, error) {
	out, v, ok := vector.NarrowDecimal(a, want)
	if !ok {
		return nil, fmt.Errorf("decimal value %s does not fit %s", v.ToString(want.(arrow.DecimalType).GetScale()), types.Name(want))
	}
	return out, nil
}
