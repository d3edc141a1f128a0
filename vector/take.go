package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
)

// Take gathers arr at positions idx. Positions must be in range; a negative position
// yields NULL.
func Take(arr arrow.Array, idx []int32) arrow.Array {
	hasNeg := false
	for _, i := range idx {
		if i < 0 {
			hasNeg = true
			break
		}
	}
	var ib *array.Int32Builder = array.NewInt32Builder(Allocator)
	defer ib.Release()
	if hasNeg {
		for _, i := range idx {
			if i < 0 {
				ib.AppendNull()
			} else {
				ib.Append(i)
			}
		}
	} else {
		ib.AppendValues(idx, nil)
	}
	indices := ib.NewArray()
	defer indices.Release()
	if arr.DataType().ID() == arrow.NULL {
		return array.NewNull(len(idx))
	}
	out, err := compute.TakeArray(context.Background(), arr, indices)
	if err != nil {
		panic(fmt.Sprintf("BUG: take of %s: %v", arr.DataType(), err))
	}
	return out
}
