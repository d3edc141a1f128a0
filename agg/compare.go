package agg

import (
	"cmp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/types"
)

// rowOrder returns a comparison of two non-NULL rows of a plain (not dictionary)
// array, typed once for the array; floats order NaN greatest, as types.Compare does.
func rowOrder(arr arrow.Array) func(i, j int) int {
	if kernels.NestedOrderable(arr.DataType()) {
		// Nested values order as their order-preserving encodings.
		arr = kernels.NestedKeys(arr)
	}
	switch a := arr.(type) {
	case *array.Int8:
		return ordered(a.Int8Values())
	case *array.Int16:
		return ordered(a.Int16Values())
	case *array.Int32:
		return ordered(a.Int32Values())
	case *array.Int64:
		return ordered(a.Int64Values())
	case *array.Uint8:
		return ordered(a.Uint8Values())
	case *array.Uint16:
		return ordered(a.Uint16Values())
	case *array.Uint32:
		return ordered(a.Uint32Values())
	case *array.Uint64:
		return ordered(a.Uint64Values())
	case *array.Float32:
		v := a.Float32Values()
		return func(i, j int) int { return types.CompareFloat(float64(v[i]), float64(v[j])) }
	case *array.Float64:
		v := a.Float64Values()
		return func(i, j int) int { return types.CompareFloat(v[i], v[j]) }
	case *array.Date32:
		return ordered(a.Date32Values())
	case *array.Timestamp:
		return ordered(a.TimestampValues())
	case *array.String:
		return func(i, j int) int { return strings.Compare(a.Value(i), a.Value(j)) }
	case *array.Boolean:
		return func(i, j int) int {
			return cmp.Compare(b2i(a.Value(i)), b2i(a.Value(j)))
		}
	case *array.Decimal128:
		return func(i, j int) int { return a.Value(i).Cmp(a.Value(j)) }
	}
	return func(i, j int) int { return types.Compare(types.ValueAt(arr, i), types.ValueAt(arr, j)) }
}

func ordered[T cmp.Ordered](v []T) func(i, j int) int {
	return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// keyOrder compares rows i and j of arr as an ORDER BY key does, NULLs placed by
// nullsFirst and the order reversed by desc.
func keyOrder(arr arrow.Array, desc, nullsFirst bool) func(i, j int) int {
	less := rowOrder(arr)
	return func(i, j int) int {
		ni, nj := arr.IsNull(i), arr.IsNull(j)
		switch {
		case ni && nj:
			return 0
		case ni:
			if nullsFirst {
				return -1
			}
			return 1
		case nj:
			if nullsFirst {
				return 1
			}
			return -1
		}
		c := less(i, j)
		if desc {
			c = -c
		}
		return c
	}
}
