package kernels

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// fixed is the set of Go types laid out as Arrow fixed-width values.
type fixed interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// integer is the set of Go integer types.
type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

func analysisf(format string, args ...any) error { return errs.New(errs.Analysis, format, args...) }

// outOfRange is the error of an arithmetic or conversion result outside its type.
func outOfRange(what string, dt arrow.DataType) error {
	return errs.New(errs.Analysis, "out of range: %s does not fit in %s", what, types.Name(dt))
}

// bytesOf reinterprets a slice of fixed-width values as its bytes, without copying.
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}

// bitmapLen is the number of bytes of a bitmap of n bits.
func bitmapLen(n int) int { return (n + 7) / 8 }

// validityOf returns arr's validity bitmap and bit offset, or nil when no row is
// NULL. The NULL type has no bitmap although every row is NULL: it returns an
// all-zero bitmap.
func validityOf(arr arrow.Array) ([]byte, int) {
	if arr.NullN() == 0 {
		return nil, 0
	}
	if arr.DataType().ID() == arrow.NULL {
		return make([]byte, bitmapLen(arr.Len())), 0
	}
	return arr.NullBitmapBytes(), arr.Data().Offset()
}

// andValidity returns a fresh bitmap (bit offset 0) of the rows valid in every
// array, and the number of NULL rows; nil and 0 when every row is valid.
func andValidity(n int, arrs ...arrow.Array) ([]byte, int) {
	var out []byte
	for _, a := range arrs {
		bm, off := validityOf(a)
		if bm == nil {
			continue
		}
		if out == nil {
			out = make([]byte, bitmapLen(n))
			bitutil.CopyBitmap(bm, off, n, out, 0)
			continue
		}
		bitutil.BitmapAnd(out, bm, 0, int64(off), out, 0, int64(n))
	}
	if out == nil {
		return nil, 0
	}
	nulls := n - bitutil.CountSetBits(out, 0, n)
	if nulls == 0 {
		return nil, 0
	}
	return out, nulls
}

// copyValidity returns a fresh offset-0 copy of arr's validity, or nil.
func copyValidity(arr arrow.Array) ([]byte, int) { return andValidity(arr.Len(), arr) }

func validBuf(valid []byte) *memory.Buffer {
	if valid == nil {
		return nil
	}
	return memory.NewBufferBytes(valid)
}

// fixedArray wraps a slice of values and a validity bitmap (bit offset 0, or nil) as
// an array of dt without copying.
func fixedArray[T fixed](dt arrow.DataType, vals []T, valid []byte, nulls int) arrow.Array {
	data := array.NewData(dt, len(vals), []*memory.Buffer{validBuf(valid), memory.NewBufferBytes(bytesOf(vals))}, nil, nulls, 0)
	return array.MakeFromData(data)
}

// decimalArray wraps decimal values as an array of dt.
func decimalArray[T any](dt arrow.DataType, vals []T, valid []byte, nulls int) arrow.Array {
	data := array.NewData(dt, len(vals), []*memory.Buffer{validBuf(valid), memory.NewBufferBytes(bytesOf(vals))}, nil, nulls, 0)
	return array.MakeFromData(data)
}

// boolArray wraps a value bitmap of n bits as a BOOLEAN array.
func boolArray(bits []byte, n int, valid []byte, nulls int) *array.Boolean {
	data := array.NewData(types.Boolean, n, []*memory.Buffer{validBuf(valid), memory.NewBufferBytes(bits)}, nil, nulls, 0)
	return array.NewBooleanData(data)
}

// nullArray is an array of dt with n rows, all NULL.
func nullArray(dt arrow.DataType, n int) arrow.Array {
	if dt.ID() == arrow.NULL {
		return array.NewNull(n)
	}
	return ConstArray(types.NullOf(dt), n)
}

// strBuilder collects the rows of a VARCHAR result.
type strBuilder struct {
	offs  []int32
	data  []byte
	valid []byte
	nulls int
	dt    arrow.DataType
}

func newStrBuilder(n, sizeHint int) *strBuilder {
	b := &strBuilder{offs: make([]int32, 1, n+1), data: make([]byte, 0, sizeHint), dt: types.String}
	return b
}

func (b *strBuilder) add(s string) {
	b.data = append(b.data, s...)
	b.offs = append(b.offs, int32(len(b.data)))
}

func (b *strBuilder) addBytes(s []byte) {
	b.data = append(b.data, s...)
	b.offs = append(b.offs, int32(len(b.data)))
}

func (b *strBuilder) addNull() {
	b.valid = nullAt(b.valid, len(b.offs)-1)
	b.nulls++
	b.offs = append(b.offs, int32(len(b.data)))
}

func (b *strBuilder) finish() arrow.Array {
	n := len(b.offs) - 1
	var valid []byte
	if b.nulls > 0 {
		valid = validRows(b.valid, n)
	}
	data := array.NewData(b.dt, n, []*memory.Buffer{validBuf(valid), memory.NewBufferBytes(bytesOf(b.offs)), memory.NewBufferBytes(b.data)}, nil, b.nulls, 0)
	return array.MakeFromData(data)
}

// isValid reports whether row i is valid in a bitmap from validityOf.
func isValid(bm []byte, off, i int) bool { return bm == nil || bitutil.BitIsSet(bm, off+i) }

// packBools turns a bool per row into a bitmap.
func packBools(b []bool) []byte {
	out := make([]byte, bitmapLen(len(b)))
	for i, v := range b {
		if v {
			out[i>>3] |= 1 << (i & 7)
		}
	}
	return out
}

// strAccess reads the rows of any string-like array without boxing.
type strAccess interface {
	Value(i int) string
	IsNull(i int) bool
	Len() int
}

// asStrings returns a string accessor for a string array (plain, large or view).
func asStrings(arr arrow.Array) (strAccess, bool) {
	switch a := arr.(type) {
	case *array.String:
		return a, true
	case *array.LargeString:
		return a, true
	case *array.StringView:
		return a, true
	}
	return nil, false
}

// plainStrings returns a string array as *array.String, converting large and view
// strings (rare: Lore's readers produce plain strings) so loops make no interface
// call per row.
func plainStrings(arr arrow.Array) *array.String {
	if s, ok := arr.(*array.String); ok {
		return s
	}
	src, ok := asStrings(arr)
	if !ok {
		panic("BUG: plainStrings of " + arr.DataType().String())
	}
	n := arr.Len()
	b := newStrBuilder(n, 16*n)
	for i := 0; i < n; i++ {
		if src.IsNull(i) {
			b.addNull()
		} else {
			b.add(src.Value(i))
		}
	}
	return b.finish().(*array.String)
}

// bstr views bytes as a string without copying; the bytes must not change while
// the string is in use (array buffers never do).
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
