package stats

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/zeebo/xxh3"

	"github.com/loredb/lore/types"
)

// The hash of a value is XXH3-64 (seed 0, the default secret) of the value's
// canonical bytes; docs/format/sketches.md lists the canonical bytes of every type.
// Changing any of this changes every stored sketch, so it is fixed for HLL format
// version 1.

// canonicalNaN is the one NaN every NaN hashes as (the quiet NaN Go's math.NaN returns).
const canonicalNaN = 0x7ff8000000000001

// xxh3Mix8 is XXH3-64's constant for inputs of 4 to 8 bytes with seed 0: the
// little-endian words at offsets 8 and 16 of the default secret, XORed.
const xxh3Mix8 = 0x1cad21f72c81017c ^ 0xdb979083e96dd4de

// hash8 is XXH3-64 (seed 0) of the 8 little-endian bytes of v. It is XXH3's 4-to-8-byte
// path written out so that the integer loops inline it; TestHash8MatchesXXH3 holds it to
// the library's output.
func hash8(v uint64) uint64 {
	// XXH3 reads the first and the last four bytes; with exactly eight bytes these
	// are the low and high halves, combined high-half-first.
	h := bits.RotateLeft64(v, 32) ^ xxh3Mix8
	h ^= bits.RotateLeft64(h, 49) ^ bits.RotateLeft64(h, 24)
	h *= 0x9fb21c651e98df25
	h ^= (h >> 35) + 8
	h *= 0x9fb21c651e98df25
	return h ^ (h >> 28)
}

// floatBits is the canonical form of a float: -0 is +0 and every NaN is one NaN, so
// that values SQL calls equal hash equal.
func floatBits(f float64) uint64 {
	if f != f {
		return canonicalNaN
	}
	if f == 0 {
		return 0
	}
	return math.Float64bits(f)
}

func hashBool(b bool) uint64 {
	var one [1]byte
	if b {
		one[0] = 1
	}
	return xxh3.Hash(one[:])
}

func hashDecimal(lo uint64, hi int64, scale int32) uint64 {
	var buf [17]byte
	binary.LittleEndian.PutUint64(buf[0:], lo)
	binary.LittleEndian.PutUint64(buf[8:], uint64(hi))
	buf[16] = byte(int8(scale))
	return xxh3.Hash(buf[:])
}

func hashInterval(iv arrow.MonthDayNanoInterval) uint64 {
	var buf [16]byte
	binary.LittleEndian.PutUint32(buf[0:], uint32(iv.Months))
	binary.LittleEndian.PutUint32(buf[4:], uint32(iv.Days))
	binary.LittleEndian.PutUint64(buf[8:], uint64(iv.Nanoseconds))
	return xxh3.Hash(buf[:])
}

// HashValue is the hash of one boxed value, for distinct counting. It is the slow
// path (literals, tests); HashColumn is the per-column loop and agrees with it on
// every non-null row. NULL hashes as 0; callers skip NULLs rather than count them.
//
// The same value hashes the same in every file, run and version: integers of every
// width, signed or unsigned, hash as their numeric value (INTEGER 5, BIGINT 5 and
// UBIGINT 5 hash alike); FLOAT and DOUBLE hash as the float64 value, with -0 = +0 and
// one NaN; strings and binary as their bytes; dates as days and timestamps and times
// as int64 ticks of the column's unit; decimals as the scaled integer and the scale;
// booleans as one byte.
func HashValue(v types.Value) uint64 {
	if v.Null {
		return 0
	}
	dt := types.Unwrap(v.Type)
	switch dt.ID() {
	case arrow.NULL:
		return 0
	case arrow.BOOL:
		return hashBool(v.I != 0)
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64:
		return hash8(uint64(v.I))
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return hash8(v.U)
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return hash8(floatBits(v.F))
	case arrow.DECIMAL64, arrow.DECIMAL128:
		// A value hashes alike in either width, so that sketches of one column
		// merge whichever width read it.
		_, scale, _ := types.DecimalParams(dt)
		return hashDecimal(v.D.LowBits(), v.D.HighBits(), scale)
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return hashInterval(v.Iv)
	}
	// Strings, binary, and every type types.ValueAt keeps as text.
	return xxh3.HashString(v.S)
}

// HashColumn writes the hash of each selected row of arr to out: out[j] is the hash
// of row sel[j], or of row j when sel is nil. out must hold len(sel) (or arr.Len())
// hashes. NULL rows get 0; callers skip them using the array's validity, since 0 is
// also (with probability 2⁻⁶⁴) a real hash. Every non-null row's hash equals
// HashValue(types.ValueAt(arr, row)). A dictionary array hashes its dictionary once
// when that is cheaper than hashing the rows.
func HashColumn(arr arrow.Array, sel []int32, out []uint64) {
	rows := arr.Len()
	if sel != nil {
		rows = len(sel)
	}
	out = out[:rows]
	switch a := arr.(type) {
	case *array.Int8:
		hashInts(a.Int8Values(), sel, out)
	case *array.Int16:
		hashInts(a.Int16Values(), sel, out)
	case *array.Int32:
		hashInts(a.Int32Values(), sel, out)
	case *array.Int64:
		hashInts(a.Int64Values(), sel, out)
	case *array.Uint8:
		hashInts(a.Uint8Values(), sel, out)
	case *array.Uint16:
		hashInts(a.Uint16Values(), sel, out)
	case *array.Uint32:
		hashInts(a.Uint32Values(), sel, out)
	case *array.Uint64:
		hashInts(a.Uint64Values(), sel, out)
	case *array.Date32:
		hashInts(a.Date32Values(), sel, out)
	case *array.Time32:
		hashInts(a.Time32Values(), sel, out)
	case *array.Time64:
		hashInts(a.Time64Values(), sel, out)
	case *array.Timestamp:
		hashInts(a.TimestampValues(), sel, out)
	case *array.Date64:
		// types.ValueAt reads a DATE64 as whole days.
		vals := a.Date64Values()
		forRows(sel, out, func(i int) uint64 { return hash8(uint64(int64(vals[i]) / 86400000)) })
	case *array.Float32:
		vals := a.Float32Values()
		forRows(sel, out, func(i int) uint64 { return hash8(floatBits(float64(vals[i]))) })
	case *array.Float64:
		hashFloats(a.Float64Values(), sel, out)
	case *array.Float16:
		forRows(sel, out, func(i int) uint64 { return hash8(floatBits(float64(a.Value(i).Float32()))) })
	case *array.Boolean:
		t, f := hashBool(true), hashBool(false)
		forRows(sel, out, func(i int) uint64 {
			if a.Value(i) {
				return t
			}
			return f
		})
	case *array.String:
		forRows(sel, out, func(i int) uint64 { return xxh3.HashString(a.Value(i)) })
	case *array.LargeString:
		forRows(sel, out, func(i int) uint64 { return xxh3.HashString(a.Value(i)) })
	case *array.StringView:
		forRows(sel, out, func(i int) uint64 { return xxh3.HashString(a.Value(i)) })
	case *array.Binary:
		forRows(sel, out, func(i int) uint64 { return xxh3.Hash(a.Value(i)) })
	case *array.LargeBinary:
		forRows(sel, out, func(i int) uint64 { return xxh3.Hash(a.Value(i)) })
	case *array.FixedSizeBinary:
		forRows(sel, out, func(i int) uint64 { return xxh3.Hash(a.Value(i)) })
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		vals := a.Values()
		forRows(sel, out, func(i int) uint64 { return hashDecimal(vals[i].LowBits(), vals[i].HighBits(), scale) })
	case *array.Decimal64:
		scale := a.DataType().(*arrow.Decimal64Type).Scale
		vals := a.Values()
		forRows(sel, out, func(i int) uint64 { return hashDecimal(uint64(vals[i]), int64(vals[i])>>63, scale) })
	case *array.MonthDayNanoInterval:
		vals := a.MonthDayNanoIntervalValues()
		forRows(sel, out, func(i int) uint64 { return hashInterval(vals[i]) })
	case *array.Dictionary:
		hashDictionary(a, sel, out)
		return
	case *array.Null:
		clear(out)
		return
	default:
		// Types without a canonical binary form hash as their text, as ValueAt boxes them.
		forRows(sel, out, func(i int) uint64 { return xxh3.HashString(types.ValueAt(arr, i).S) })
	}
	zeroNulls(arr, sel, out)
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// hashInts hashes integers by value: a conversion to int64 (sign-extending signed
// types, zero-extending unsigned ones) gives every width the same canonical 8 bytes.
func hashInts[T integer](vals []T, sel []int32, out []uint64) {
	if sel == nil {
		vals = vals[:len(out)]
		for i, v := range vals {
			out[i] = hash8(uint64(int64(v)))
		}
		return
	}
	for j, i := range sel {
		out[j] = hash8(uint64(int64(vals[i])))
	}
}

func hashFloats(vals []float64, sel []int32, out []uint64) {
	if sel == nil {
		vals = vals[:len(out)]
		for i, v := range vals {
			out[i] = hash8(floatBits(v))
		}
		return
	}
	for j, i := range sel {
		out[j] = hash8(floatBits(vals[i]))
	}
}

// forRows is the loop for types whose per-row cost (a string hash) dwarfs a call.
func forRows(sel []int32, out []uint64, hash func(i int) uint64) {
	if sel == nil {
		for i := range out {
			out[i] = hash(i)
		}
		return
	}
	for j, i := range sel {
		out[j] = hash(int(i))
	}
}

// zeroNulls overwrites the hashes of NULL rows with 0.
func zeroNulls(arr arrow.Array, sel []int32, out []uint64) {
	if arr.NullN() == 0 {
		return
	}
	forNullRows(arr, sel, func(j int) { out[j] = 0 })
}

// hashDictionary hashes each dictionary entry once and gathers by index when the
// dictionary is no larger than the rows asked for; otherwise it hashes just the
// entries the rows point at, with the dictionary's own typed loop.
func hashDictionary(a *array.Dictionary, sel []int32, out []uint64) {
	dict := a.Dictionary()
	if dict.Len() == 0 { // every row is NULL
		clear(out)
		return
	}
	// out[j] first holds the dictionary entry of output j, read from the indices
	// with a typed loop; NULL rows point at entry 0 and are zeroed at the end.
	if !gatherIndices(a.Indices(), sel, out) {
		for j := range out {
			row := j
			if sel != nil {
				row = int(sel[j])
			}
			out[j] = uint64(a.GetValueIndex(row))
		}
	}
	if a.NullN() > 0 {
		forNullRows(a, sel, func(j int) { out[j] = 0 })
	}
	n := uint64(dict.Len())
	for j, k := range out {
		if k >= n { // a corrupt index (or a negative one) reads entry 0, never past the end
			out[j] = 0
		}
	}
	if dict.Len() <= len(out) {
		dh := make([]uint64, dict.Len())
		HashColumn(dict, nil, dh)
		for j, k := range out {
			out[j] = dh[k]
		}
	} else {
		idx := make([]int32, len(out))
		for j, k := range out {
			idx[j] = int32(k)
		}
		HashColumn(dict, idx, out)
	}
	zeroNulls(a, sel, out)
}

// gatherIndices writes the dictionary indices of the selected rows to out (as
// uint64; a negative index becomes huge) and reports false for an index type it
// does not know.
func gatherIndices(ix arrow.Array, sel []int32, out []uint64) bool {
	switch ix := ix.(type) {
	case *array.Int8:
		gatherInts(ix.Int8Values(), sel, out)
	case *array.Int16:
		gatherInts(ix.Int16Values(), sel, out)
	case *array.Int32:
		gatherInts(ix.Int32Values(), sel, out)
	case *array.Int64:
		gatherInts(ix.Int64Values(), sel, out)
	case *array.Uint8:
		gatherInts(ix.Uint8Values(), sel, out)
	case *array.Uint16:
		gatherInts(ix.Uint16Values(), sel, out)
	case *array.Uint32:
		gatherInts(ix.Uint32Values(), sel, out)
	case *array.Uint64:
		gatherInts(ix.Uint64Values(), sel, out)
	default:
		return false
	}
	return true
}

func gatherInts[T integer](vals []T, sel []int32, out []uint64) {
	if sel == nil {
		vals = vals[:len(out)]
		for i, v := range vals {
			out[i] = uint64(int64(v))
		}
		return
	}
	for j, i := range sel {
		out[j] = uint64(int64(vals[i]))
	}
}

// forNullRows calls f(j) for each output j whose row is NULL, reading the validity
// bitmap directly.
func forNullRows(arr arrow.Array, sel []int32, f func(j int)) {
	bm := arr.NullBitmapBytes()
	if len(bm) == 0 {
		if arr.NullN() > 0 { // no bitmap but NULLs: every row is NULL
			n := arr.Len()
			if sel != nil {
				n = len(sel)
			}
			for j := range n {
				f(j)
			}
		}
		return
	}
	off := arr.Data().Offset()
	if sel == nil {
		for i := range arr.Len() {
			if !bitutil.BitIsSet(bm, off+i) {
				f(i)
			}
		}
		return
	}
	for j, i := range sel {
		if !bitutil.BitIsSet(bm, off+int(i)) {
			f(j)
		}
	}
}
