package kernels

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/types"
)

// bindBitCount binds bit_count(x) of an integer: the number of one bits in x's own
// width (bit_count(-1::TINYINT) is 8, of -1::INTEGER 32), as TINYINT.
func bindBitCount(c *call) (*Function, error) {
	if len(c.args) != 1 || !intish(c.args[0]) {
		return nil, c.mismatch()
	}
	t := c.args[0]
	if isNullType(t) {
		t = types.Int32
	}
	return newFunction(c, []arrow.DataType{t}, types.Int8, func(in []arrow.Array, n int) (arrow.Array, error) {
		out := make([]int8, n)
		switch a := in[0].(type) {
		case *array.Int8:
			countBits(out, a.Int8Values(), func(v int8) int { return bits.OnesCount8(uint8(v)) })
		case *array.Int16:
			countBits(out, a.Int16Values(), func(v int16) int { return bits.OnesCount16(uint16(v)) })
		case *array.Int32:
			countBits(out, a.Int32Values(), func(v int32) int { return bits.OnesCount32(uint32(v)) })
		case *array.Int64:
			countBits(out, a.Int64Values(), func(v int64) int { return bits.OnesCount64(uint64(v)) })
		case *array.Uint8:
			countBits(out, a.Uint8Values(), func(v uint8) int { return bits.OnesCount8(v) })
		case *array.Uint16:
			countBits(out, a.Uint16Values(), func(v uint16) int { return bits.OnesCount16(v) })
		case *array.Uint32:
			countBits(out, a.Uint32Values(), func(v uint32) int { return bits.OnesCount32(v) })
		case *array.Uint64:
			countBits(out, a.Uint64Values(), func(v uint64) int { return bits.OnesCount64(v) })
		}
		valid, nulls := copyValidity(in[0])
		return fixedArray(types.Int8, out, valid, nulls), nil
	}, true), nil
}

func countBits[T integer](out []int8, vals []T, count func(T) int) {
	for i, v := range vals {
		out[i] = int8(count(v))
	}
}
