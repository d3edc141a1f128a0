package kernels

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// ConstArray returns an array of n rows that all hold v, of v's type (a dictionary
// type yields its value type). A NULL value of the NULL type gives a NULL array.
func ConstArray(v types.Value, n int) arrow.Array {
	dt := types.Unwrap(v.Type)
	if dt == nil || dt.ID() == arrow.NULL {
		return array.NewNull(n)
	}
	var valid []byte
	nulls := 0
	if v.Null {
		valid = make([]byte, bitmapLen(n))
		nulls = n
	}
	switch dt.ID() {
	case arrow.BOOL:
		bits := make([]byte, bitmapLen(n))
		if !v.Null && v.I != 0 {
			bitutil.SetBitsTo(bits, 0, int64(n), true)
		}
		return boolArray(bits, n, valid, nulls)
	case arrow.INT8:
		return fixedArray(dt, fill(n, int8(v.I)), valid, nulls)
	case arrow.INT16:
		return fixedArray(dt, fill(n, int16(v.I)), valid, nulls)
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return fixedArray(dt, fill(n, int32(v.I)), valid, nulls)
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64, arrow.DURATION:
		return fixedArray(dt, fill(n, v.I), valid, nulls)
	case arrow.DATE64:
		return fixedArray(dt, fill(n, v.I*86400000), valid, nulls)
	case arrow.UINT8:
		return fixedArray(dt, fill(n, uint8(v.U)), valid, nulls)
	case arrow.UINT16:
		return fixedArray(dt, fill(n, uint16(v.U)), valid, nulls)
	case arrow.UINT32:
		return fixedArray(dt, fill(n, uint32(v.U)), valid, nulls)
	case arrow.UINT64:
		return fixedArray(dt, fill(n, v.U), valid, nulls)
	case arrow.FLOAT16:
		return decimalArray(dt, fill(n, float16.New(float32(v.F))), valid, nulls)
	case arrow.FLOAT32:
		return fixedArray(dt, fill(n, float32(v.F)), valid, nulls)
	case arrow.FLOAT64:
		return fixedArray(dt, fill(n, v.F), valid, nulls)
	case arrow.DECIMAL128:
		return decimalArray(dt, fill(n, v.D), valid, nulls)
	case arrow.DECIMAL64:
		return decimalArray(dt, fill(n, int64(v.D.LowBits())), valid, nulls)
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return decimalArray(dt, fill(n, v.Iv), valid, nulls)
	case arrow.STRING, arrow.BINARY:
		s := v.S
		if v.Null {
			s = ""
		}
		offs := make([]int32, n+1)
		for i := range offs {
			offs[i] = int32(i * len(s))
		}
		data := []byte(strings.Repeat(s, n))
		d := array.NewData(dt, n, []*memory.Buffer{validBuf(valid), memory.NewBufferBytes(bytesOf(offs)), memory.NewBufferBytes(data)}, nil, nulls, 0)
		return array.MakeFromData(d)
	}
	if v.A != nil && !v.Null && types.IsNested(dt) {
		// A nested value is its one-row array, repeated.
		return vector.Take(v.A, make([]int32, n))
	}
	// Other types (large strings, a NULL nested value): build through the generic
	// builder.
	b := types.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	for i := 0; i < n; i++ {
		if v.Null {
			b.AppendNull()
			continue
		}
		if err := b.AppendValueFromString(v.String()); err != nil {
			panic(fmt.Sprintf("BUG: constant %s of type %s: %v", v, dt, err))
		}
	}
	return b.NewArray()
}

func fill[T any](n int, v T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// Decode turns a dictionary array into a plain array of its value type; any other
// array is returned as it is.
func Decode(arr arrow.Array) arrow.Array {
	d, ok := arr.(*array.Dictionary)
	if !ok {
		return arr
	}
	if s, ok := d.Dictionary().(*array.String); ok {
		return decodeStrings(d, s)
	}
	out, err := compute.TakeArray(context.Background(), d.Dictionary(), d.Indices())
	if err != nil {
		panic(fmt.Sprintf("BUG: decode of %s: %v", arr.DataType(), err))
	}
	return out
}

// constantValue reports whether every row of arr holds the same value (all NULL
// counts), so that a function over a dictionary argument and this one may be
// evaluated once per dictionary entry. It costs one pass over arr.
func constantValue(arr arrow.Array) bool {
	n := arr.Len()
	if n == 0 {
		return true
	}
	if nn := arr.NullN(); nn == n {
		return true
	} else if nn != 0 {
		return false
	}
	switch a := arr.(type) {
	case *array.Boolean:
		first := a.Value(0)
		for i := 1; i < n; i++ {
			if a.Value(i) != first {
				return false
			}
		}
		return true
	case *array.Int8:
		return allSame(a.Int8Values())
	case *array.Int16:
		return allSame(a.Int16Values())
	case *array.Int32:
		return allSame(a.Int32Values())
	case *array.Int64:
		return allSame(a.Int64Values())
	case *array.Uint8:
		return allSame(a.Uint8Values())
	case *array.Uint16:
		return allSame(a.Uint16Values())
	case *array.Uint32:
		return allSame(a.Uint32Values())
	case *array.Uint64:
		return allSame(a.Uint64Values())
	case *array.Float32:
		return allSame(a.Float32Values())
	case *array.Float64:
		return allSame(a.Float64Values())
	case *array.Date32:
		return allSame(a.Date32Values())
	case *array.Timestamp:
		return allSame(a.TimestampValues())
	case *array.Decimal128:
		return allSame(a.Values())
	case *array.Decimal64:
		return allSame(a.Values())
	case *array.MonthDayNanoInterval:
		return allSame(a.MonthDayNanoIntervalValues())
	case *array.String:
		first := a.Value(0)
		for i := 1; i < n; i++ {
			if a.Value(i) != first {
				return false
			}
		}
		return true
	case *array.Dictionary:
		return false
	}
	return false
}

func allSame[T comparable](s []T) bool {
	for _, v := range s[1:] {
		if v != s[0] {
			return false
		}
	}
	return true
}

// takeArray gathers arr at positions idx (all in range).
func takeArray(arr arrow.Array, idx []int32) arrow.Array {
	return vector.Take(arr, idx)
}

// decodeStrings expands a dictionary of strings by gathering its values at the
// rows' entries (vector.Take sizes the buffers exactly: a dictionary can stand for
// far more bytes than it holds, a long string repeated on every row).
func decodeStrings(d *array.Dictionary, values *array.String) arrow.Array {
	return vector.Take(values, dictPositions(d))
}

// dictPositions is the dictionary entry of each row of d, -1 for a NULL index.
func dictPositions(d *array.Dictionary) []int32 {
	pos := make([]int32, d.Len())
	hashDictIndices(d, nil, pos)
	return pos
}

// DictEntries is the dictionary entry of each row of d, -1 for a NULL index: d's own
// indices when they are 32-bit with no NULL, otherwise converted into room (grown
// when too small), which inRoom then reports.
func DictEntries(d *array.Dictionary, room []int32) (entries []int32, inRoom bool) {
	if ix, ok := d.Indices().(*array.Int32); ok && ix.NullN() == 0 {
		return ix.Int32Values(), false
	}
	room = hashGrow(room, d.Len())
	hashDictIndices(d, nil, room)
	return room, true
}

// ExpandedStringBytes is the string data a dictionary of strings stands for once
// expanded: the length of its value on every row where it is not NULL. ok is false
// for a dictionary of anything else.
func ExpandedStringBytes(d *array.Dictionary) (bytes int64, ok bool) {
	values, ok := d.Dictionary().(*array.String)
	if !ok {
		return 0, false
	}
	offs := values.ValueOffsets()
	nulls := values.NullN() > 0
	for _, p := range dictPositions(d) {
		if p >= 0 && (!nulls || values.IsValid(int(p))) {
			bytes += int64(offs[p+1] - offs[p])
		}
	}
	return bytes, true
}
