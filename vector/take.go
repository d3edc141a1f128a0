package vector

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// arrowTake gathers with Arrow's take kernel: the reference, and the path for the
// types Take has no loop of its own for.
func arrowTake(arr arrow.Array, idx []int32) arrow.Array {
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

// Take gathers arr at positions idx into a new array. Positions must be in range; a
// negative position yields NULL. Fixed-width columns, 32-bit-offset strings and
// dictionaries (whose indices are gathered and dictionary shared) take typed loops
// over the raw buffers; other types take Arrow's kernel.
func Take(arr arrow.Array, idx []int32) arrow.Array { return TakeInto(arr, idx, nil) }

// TakeInto is Take whose fixed-width values, gathered from rows that are all there
// (no negative index), go into room(bytes) when room is set: a buffer lent by the
// caller, not cleared, which the gather fills whole.
func TakeInto(arr arrow.Array, idx []int32, room func(n int) []byte) arrow.Array {
	data := arr.Data()
	n := len(idx)
	hasNeg := false
	for _, i := range idx {
		if i < 0 {
			hasNeg = true
			break
		}
	}
	switch dt := arr.DataType().(type) {
	case *arrow.DictionaryType:
		d := arr.(*array.Dictionary)
		ind := TakeInto(d.Indices(), idx, room)
		out := array.NewDictionaryArray(dt, ind, d.Dictionary())
		ind.Release()
		return out
	case *arrow.StringType, *arrow.BinaryType:
		return gatherStrings(arr, idx, hasNeg)
	case *arrow.BooleanType:
		validity, nulls := gatherValidity(arr, idx, hasNeg)
		vals := make([]byte, bitutil.BytesForBits(int64(n)))
		src := data.Buffers()[1].Bytes()
		off := data.Offset()
		for k, i := range idx {
			if i >= 0 && bitutil.BitIsSet(src, off+int(i)) {
				bitutil.SetBit(vals, k)
			}
		}
		return newArray(arr.DataType(), n, nulls, validity, memory.NewBufferBytes(vals))
	case arrow.FixedWidthDataType:
		bits := dt.BitWidth()
		if bits%8 != 0 || len(data.Buffers()) != 2 || data.Buffers()[1] == nil {
			break
		}
		width := bits / 8
		validity, nulls := gatherValidity(arr, idx, hasNeg)
		src := data.Buffers()[1].Bytes()[data.Offset()*width:]
		var out []byte
		if room != nil && !hasNeg && n > 0 {
			out = room(n * width)[:n*width]
		} else {
			out = make([]byte, n*width)
		}
		switch width {
		case 1:
			gatherFixed(out, src, idx)
		case 2:
			gatherFixed(asSlice[uint16](out), asSlice[uint16](src), idx)
		case 4:
			gatherFixed(asSlice[uint32](out), asSlice[uint32](src), idx)
		case 8:
			gatherFixed(asSlice[uint64](out), asSlice[uint64](src), idx)
		case 16:
			gatherFixed(asSlice[[2]uint64](out), asSlice[[2]uint64](src), idx)
		default:
			return arrowTake(arr, idx)
		}
		return newArray(arr.DataType(), n, nulls, validity, memory.NewBufferBytes(out))
	case *arrow.ListType, *arrow.MapType:
		return gatherList(arr, idx, hasNeg)
	case *arrow.StructType:
		validity, nulls := gatherValidity(arr, idx, hasNeg)
		s := arr.(*array.Struct)
		children := make([]arrow.ArrayData, s.NumField())
		for f := range children {
			children[f] = Take(s.Field(f), idx).Data()
		}
		return array.MakeFromData(array.NewData(dt, n, []*memory.Buffer{validity}, children, nulls, 0))
	}
	return arrowTake(arr, idx)
}

// gatherList gathers the rows idx of a list (or map) array: the new offsets count
// each row's elements, and the child array is gathered at all of them, in order, by
// Take itself (so nested lists gather level by level, in Lore's own loops: Arrow's
// take kernel runs on goroutines of its own, where a panic could not be recovered).
func gatherList(arr arrow.Array, idx []int32, hasNeg bool) arrow.Array {
	data := arr.Data()
	n := len(idx)
	validity, nulls := gatherValidity(arr, idx, hasNeg)
	srcOffs := asSlice[int32](data.Buffers()[1].Bytes())[data.Offset():]
	child := array.MakeFromData(data.Children()[0])
	defer child.Release()
	offs := make([]int32, n+1)
	var elems []int32
	for k, i := range idx {
		if i >= 0 && arr.IsValid(int(i)) {
			for e := srcOffs[i]; e < srcOffs[i+1]; e++ {
				elems = append(elems, e)
			}
		}
		offs[k+1] = int32(len(elems))
	}
	gathered := Take(child, elems)
	out := array.NewData(arr.DataType(), n, []*memory.Buffer{validity, memory.NewBufferBytes(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(offs))), 4*len(offs)))},
		[]arrow.ArrayData{gathered.Data()}, nulls, 0)
	return array.MakeFromData(out)
}

// gatherFixed copies src[idx[k]] to dst[k]; a negative index leaves the zero value.
func gatherFixed[T any](dst, src []T, idx []int32) {
	dst = dst[:len(idx)]
	for k, i := range idx {
		if i >= 0 {
			dst[k] = src[i]
		}
	}
}

// asSlice views b as a slice of T (b's length a multiple of T's size; Go's
// allocations and Arrow's buffers are aligned for the fixed-width types used here).
func asSlice[T any](b []byte) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if len(b) < size {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size)
}

// gatherValidity returns the validity bitmap of the gathered rows and the number of
// NULLs, or nil and 0 when there are none.
func gatherValidity(arr arrow.Array, idx []int32, hasNeg bool) (*memory.Buffer, int) {
	if arr.NullN() == 0 && !hasNeg {
		return nil, 0
	}
	bm := make([]byte, bitutil.BytesForBits(int64(len(idx))))
	nulls := 0
	if arr.NullN() == 0 {
		for k, i := range idx {
			if i >= 0 {
				bitutil.SetBit(bm, k)
			} else {
				nulls++
			}
		}
	} else {
		src := arr.NullBitmapBytes()
		off := arr.Data().Offset()
		for k, i := range idx {
			if i >= 0 && bitutil.BitIsSet(src, off+int(i)) {
				bitutil.SetBit(bm, k)
			} else {
				nulls++
			}
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	return memory.NewBufferBytes(bm), nulls
}

func newArray(dt arrow.DataType, n, nulls int, validity *memory.Buffer, bufs ...*memory.Buffer) arrow.Array {
	data := array.NewData(dt, n, append([]*memory.Buffer{validity}, bufs...), nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// gatherStrings is gatherRows for strings and binaries with 32-bit offsets.
func gatherStrings(arr arrow.Array, idx []int32, hasNeg bool) arrow.Array {
	data := arr.Data()
	n := len(idx)
	offs := asSlice[int32](data.Buffers()[1].Bytes())[data.Offset():]
	var src []byte
	if b := data.Buffers()[2]; b != nil {
		src = b.Bytes()
	}
	validity, nulls := gatherValidity(arr, idx, hasNeg)
	outOffs := make([]int32, n+1)
	total := 0
	for k, i := range idx {
		if i >= 0 {
			total += int(offs[i+1] - offs[i])
		}
		outOffs[k+1] = int32(total)
	}
	if total > 1<<31-1 {
		return arrowTake(arr, idx)
	}
	out := make([]byte, total)
	for k, i := range idx {
		if i >= 0 {
			copy(out[outOffs[k]:outOffs[k+1]], src[offs[i]:offs[i+1]])
		}
	}
	return newArray(arr.DataType(), n, nulls, validity,
		memory.NewBufferBytes(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(outOffs))), 4*(n+1))),
		memory.NewBufferBytes(out))
}

// TakeRef is Take for an array that outlives the result and is gathered from many
// times (a join's build side): strings and binaries come back as a dictionary whose
// indices are idx and whose dictionary is arr itself, so no bytes are copied and a
// later gather moves 4-byte indices. A row whose value is NULL gets a NULL index, so
// no valid index points at a NULL entry. Other types are gathered by Take.
func TakeRef(arr arrow.Array, idx []int32) arrow.Array {
	switch arr.DataType().ID() {
	case arrow.STRING, arrow.BINARY:
	default:
		return Take(arr, idx)
	}
	hasNeg := false
	for _, i := range idx {
		if i < 0 {
			hasNeg = true
			break
		}
	}
	validity, nulls := gatherValidity(arr, idx, hasNeg)
	ind := make([]int32, len(idx))
	copy(ind, idx)
	if hasNeg {
		for k, i := range ind {
			if i < 0 {
				ind[k] = 0
			}
		}
	}
	indices := newArray(arrow.PrimitiveTypes.Int32, len(idx), nulls, validity,
		memory.NewBufferBytes(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(ind))), 4*len(ind))))
	defer indices.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arr.DataType()}
	return array.NewDictionaryArray(dt, indices, arr)
}
