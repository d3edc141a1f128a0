package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/types"
)

// Hashing of keys for group-by, join and distinct.
//
// Every key column is first normalised into a hashKeyVec: fixed-width values become
// 64-bit words (integers sign- or zero-extended, floats as the bits of a float64 with
// -0 folded into +0 and every NaN into one NaN, booleans 0/1), decimals two words, and
// strings and binary byte strings. NULL rows carry a zero value and a null flag. The
// hash and the equality of KeyTable are defined on this form only, which is what makes
// a dictionary-encoded column hash and compare like the plain column with the same
// values, and why the hash is the same from one batch to the next.

// The multiplier constants of the mixing function (odd, high-entropy 64-bit values).
const (
	hashK1 = 0xa0761d6478bd642f
	hashK2 = 0xe7037ed1a0b428db
	hashK3 = 0x8ebc6af09c88c6e3
	hashK4 = 0x589965cc75374cc3

	// hashNull is the hash of a NULL in any column.
	hashNull = 0x2d358dccaa6c78a5
	// hashNaNBits is the one bit pattern every NaN is stored as.
	hashNaNBits = 0x7ff8000000000001
)

// hashMum multiplies to 128 bits and folds the halves: the core of the mixing.
func hashMum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// hashWord hashes one normalised 64-bit key value.
func hashWord(x uint64) uint64 { return hashMum(x^hashK1, hashK2) ^ x>>29 }

// hashWide hashes a 128-bit key value (a decimal).
func hashWide(lo, hi uint64) uint64 { return hashMum(lo^hashK1, hi^hashK2) ^ hashWord(hi) }

// hashCombine folds the hash of the next key column into the hash of the previous ones.
func hashCombine(h, c uint64) uint64 { return hashMum(h^hashK3, c^hashK4) }

// hashString hashes a byte string, reading it eight bytes at a time.
func hashString(s string) uint64 {
	n := len(s)
	h := uint64(n) ^ hashK3
	p := unsafe.Slice(unsafe.StringData(s), n)
	for len(p) >= 16 {
		h = hashMum(binary.LittleEndian.Uint64(p)^hashK1, binary.LittleEndian.Uint64(p[8:])^h^hashK2)
		p = p[16:]
	}
	var a, b uint64
	switch {
	case len(p) >= 8:
		a = binary.LittleEndian.Uint64(p)
		// The last eight bytes, overlapping a when fewer than 16 remain.
		b = binary.LittleEndian.Uint64(p[len(p)-8:])
	case len(p) >= 4:
		a = uint64(binary.LittleEndian.Uint32(p))
		b = uint64(binary.LittleEndian.Uint32(p[len(p)-4:]))
	case len(p) > 0:
		a = uint64(p[0])<<16 | uint64(p[len(p)>>1])<<8 | uint64(p[len(p)-1])
	}
	h = hashMum(a^hashK1, b^h^hashK2)
	return hashMum(h^hashK4, uint64(n)^hashK1)
}

// hashFloatBits normalises a float for keys: -0 is +0 and every NaN the same NaN.
func hashFloatBits(f float64) uint64 {
	if f == 0 {
		return 0
	}
	if f != f {
		return hashNaNBits
	}
	return math.Float64bits(f)
}

// hashKind is how a key column is normalised.
type hashKind uint8

const (
	hashKindWord  hashKind = iota // one uint64 per value
	hashKindWide                  // two uint64 per value (low, high): decimal128
	hashKindBytes                 // a byte string per value
)

// hashKindOf returns the normalised form of a key type; ok is false for types that
// cannot be keys.
func hashKindOf(dt arrow.DataType) (k hashKind, ok bool) {
	if d, isDict := dt.(*arrow.DictionaryType); isDict {
		dt = d.ValueType
	}
	switch dt.ID() {
	case arrow.NULL, arrow.BOOL,
		arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64, arrow.DURATION,
		arrow.DECIMAL64:
		return hashKindWord, true
	case arrow.DECIMAL128:
		return hashKindWide, true
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return hashKindBytes, true
	}
	if NestedOrderable(dt) {
		// Nested values are keyed by their order-preserving encoding (nestedkey.go).
		return hashKindBytes, true
	}
	return 0, false
}

// ValidKeyType reports whether values of dt can be hashed and used as KeyTable keys
// (a dictionary type is judged by its value type).
func ValidKeyType(dt arrow.DataType) bool {
	_, ok := hashKindOf(dt)
	return ok
}

// hashKeyVec is one key column normalised for the selected rows of a batch (or for
// the stored keys of a table): element k belongs to the k-th selected row.
type hashKeyVec struct {
	kind  hashKind
	words []uint64 // hashKindWord: one per row; hashKindWide: low, high per row
	strs  []string // hashKindBytes; may point into the source array's memory
	nulls []bool   // nil when no row is NULL
	// hashes, when not nil, holds the column's hash per row already (a dictionary
	// column hashes each dictionary entry once).
	hashes []uint64

	// scratch reused between batches
	wordBuf []uint64
	strBuf  []string
	nullBuf []bool
	hashBuf []uint64
	posBuf  []int32
	entBuf  []uint64    // hash per dictionary entry
	ent     *hashKeyVec // the dictionary's entries, normalised
	// entDict is the dictionary last seen, and entHashed whether entBuf holds the
	// hashes of its entries.
	entDict   arrow.ArrayData
	entHashed bool
}

// hashNormalize fills v with column arr at the selected rows (sel nil = rows 0..n-1).
func hashNormalize(arr arrow.Array, sel []int32, n int, v *hashKeyVec) {
	v.hashes = nil
	if d, ok := arr.(*array.Dictionary); ok {
		hashNormalizeDict(d, sel, n, v)
		return
	}
	hashGather(arr, sel, n, v)
}

// hashGather normalises arr at positions pos (nil = 0..n-1); a negative position is NULL.
func hashGather(arr arrow.Array, pos []int32, n int, v *hashKeyVec) {
	kind, ok := hashKindOf(arr.DataType())
	if !ok {
		panic(fmt.Sprintf("BUG: %s cannot be a key", arr.DataType()))
	}
	if types.IsNested(arr.DataType()) {
		arr = NestedKeys(arr)
	}
	v.kind = kind
	v.nulls = nil
	negative := false
	for _, p := range pos {
		if p < 0 {
			negative = true
			break
		}
	}
	switch {
	case arr.DataType().ID() == arrow.NULL:
		// Arrays of the null type have no validity bitmap: every row is NULL.
		v.nullBuf = hashGrow(v.nullBuf, n)
		for k := range v.nullBuf {
			v.nullBuf[k] = true
		}
		v.nulls = v.nullBuf
	case arr.NullN() > 0 || negative:
		v.nullBuf = hashGrow(v.nullBuf, n)
		nulls := v.nullBuf
		some := false
		for k := range nulls {
			i := k
			if pos != nil {
				i = int(pos[k])
			}
			nulls[k] = i < 0 || arr.IsNull(i)
			some = some || nulls[k]
		}
		if some {
			v.nulls = nulls
		}
	}
	switch kind {
	case hashKindWord:
		v.wordBuf = hashGrow(v.wordBuf, n)
		v.words = v.wordBuf
		hashGatherWords(arr, pos, v.words)
	case hashKindWide:
		v.wordBuf = hashGrow(v.wordBuf, 2*n)
		v.words = v.wordBuf
		vals := arr.(*array.Decimal128).Values()
		for k := 0; k < n; k++ {
			i := k
			if pos != nil {
				if i = int(pos[k]); i < 0 {
					v.words[2*k], v.words[2*k+1] = 0, 0
					continue
				}
			}
			v.words[2*k], v.words[2*k+1] = vals[i].LowBits(), uint64(vals[i].HighBits())
		}
	case hashKindBytes:
		v.strBuf = hashGrow(v.strBuf, n)
		v.strs = v.strBuf
		hashGatherStrings(arr, pos, v.strs)
	}
	if v.nulls != nil {
		// A NULL carries a zero value so that equality needs only value and flag.
		for k, isNull := range v.nulls {
			if !isNull {
				continue
			}
			switch kind {
			case hashKindWord:
				v.words[k] = 0
			case hashKindWide:
				v.words[2*k], v.words[2*k+1] = 0, 0
			case hashKindBytes:
				v.strs[k] = ""
			}
		}
	}
}

// hashGatherWords normalises fixed-width values to words; out has one element per row.
func hashGatherWords(arr arrow.Array, pos []int32, out []uint64) {
	switch a := arr.(type) {
	case *array.Null:
		clear(out)
	case *array.Boolean:
		for k := range out {
			i := k
			if pos != nil {
				if i = int(pos[k]); i < 0 {
					continue
				}
			}
			if a.Value(i) {
				out[k] = 1
			} else {
				out[k] = 0
			}
		}
	case *array.Int8:
		hashGatherInts(a.Int8Values(), pos, out)
	case *array.Int16:
		hashGatherInts(a.Int16Values(), pos, out)
	case *array.Int32:
		hashGatherInts(a.Int32Values(), pos, out)
	case *array.Int64:
		hashGatherInts(a.Int64Values(), pos, out)
	case *array.Uint8:
		hashGatherInts(a.Uint8Values(), pos, out)
	case *array.Uint16:
		hashGatherInts(a.Uint16Values(), pos, out)
	case *array.Uint32:
		hashGatherInts(a.Uint32Values(), pos, out)
	case *array.Uint64:
		hashGatherInts(a.Uint64Values(), pos, out)
	case *array.Date32:
		hashGatherInts(a.Date32Values(), pos, out)
	case *array.Date64:
		hashGatherInts(a.Date64Values(), pos, out)
	case *array.Time32:
		hashGatherInts(a.Time32Values(), pos, out)
	case *array.Time64:
		hashGatherInts(a.Time64Values(), pos, out)
	case *array.Timestamp:
		hashGatherInts(a.TimestampValues(), pos, out)
	case *array.Duration:
		hashGatherInts(a.DurationValues(), pos, out)
	case *array.Decimal64:
		hashGatherInts(int64sOf(a), pos, out)
	case *array.Float32:
		hashGatherFloats(a.Float32Values(), pos, out)
	case *array.Float64:
		hashGatherFloats(a.Float64Values(), pos, out)
	default:
		panic(fmt.Sprintf("BUG: no word form for %s", arr.DataType()))
	}
}

type hashInteger interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

func hashGatherInts[T hashInteger](vals []T, pos []int32, out []uint64) {
	if pos == nil {
		vals = vals[:len(out)]
		for k, x := range vals {
			out[k] = uint64(x)
		}
		return
	}
	for k, p := range pos[:len(out)] {
		if p >= 0 {
			out[k] = uint64(vals[p])
		}
	}
}

func hashGatherFloats[T float32 | float64](vals []T, pos []int32, out []uint64) {
	if pos == nil {
		vals = vals[:len(out)]
		for k, x := range vals {
			out[k] = hashFloatBits(float64(x))
		}
		return
	}
	for k, p := range pos[:len(out)] {
		if p >= 0 {
			out[k] = hashFloatBits(float64(vals[p]))
		}
	}
}

// hashGatherStrings views byte-string values as strings without copying them.
func hashGatherStrings(arr arrow.Array, pos []int32, out []string) {
	d := arr.Data()
	var data []byte
	if b := d.Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	switch arr.DataType().ID() {
	case arrow.STRING, arrow.BINARY:
		hashGatherViews(hashOffsets[int32](d), data, pos, out)
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		hashGatherViews(hashOffsets[int64](d), data, pos, out)
	default:
		panic(fmt.Sprintf("BUG: no string form for %s", arr.DataType()))
	}
}

// hashOffsets views the offsets of a variable-width array: len+1 entries, absolute
// positions in the data buffer.
func hashOffsets[O int32 | int64](d arrow.ArrayData) []O {
	b := d.Buffers()[1]
	if b == nil || b.Len() == 0 {
		return make([]O, d.Len()+1) // an empty array may have no offsets
	}
	all := unsafe.Slice((*O)(unsafe.Pointer(unsafe.SliceData(b.Bytes()))), b.Len()/int(unsafe.Sizeof(O(0))))
	return all[d.Offset() : d.Offset()+d.Len()+1]
}

func hashGatherViews[O int32 | int64](offs []O, data []byte, pos []int32, out []string) {
	view := func(i int) string {
		lo, hi := offs[i], offs[i+1]
		if lo == hi {
			return ""
		}
		return unsafe.String(&data[lo], int(hi-lo))
	}
	if pos == nil {
		for k := range out {
			out[k] = view(k)
		}
		return
	}
	for k, p := range pos[:len(out)] {
		if p >= 0 {
			out[k] = view(int(p))
		}
	}
}

// hashBytesString views b as a string; the caller must not let it outlive b's array.
func hashBytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// hashNormalizeDict normalises a dictionary column: the selected rows' indices are
// resolved, and the hash of each string entry is computed once and gathered per row
// when that is cheaper than hashing the rows: when the dictionary is not much larger
// than the batch, or when it is the dictionary of the previous batch too (a join's
// build column, a row group's dictionary), whose entry hashes are then kept for the
// batches after.
func hashNormalizeDict(d *array.Dictionary, sel []int32, n int, v *hashKeyVec) {
	v.posBuf = hashGrow(v.posBuf, n)
	pos := v.posBuf
	hashDictIndices(d, sel, pos)
	dict := d.Dictionary()
	hashGather(dict, pos, n, v)
	if v.kind != hashKindBytes {
		return
	}
	if data := dict.Data(); data != v.entDict {
		v.entDict, v.entHashed = data, false
		if dict.Len() > n {
			return
		}
	}
	if !v.entHashed {
		// Hash each entry once.
		if v.ent == nil {
			v.ent = new(hashKeyVec)
		}
		hashGather(dict, nil, dict.Len(), v.ent)
		v.entBuf = hashGrow(v.entBuf, dict.Len())
		hashVecInto(v.ent, v.entBuf, false)
		clear(v.ent.strBuf) // the entry hashes are kept, not the views of the strings
		v.entHashed = true
	}
	v.hashBuf = hashGrow(v.hashBuf, n)
	for k, p := range pos {
		if p < 0 {
			v.hashBuf[k] = hashNull
		} else {
			v.hashBuf[k] = v.entBuf[p]
		}
	}
	v.hashes = v.hashBuf
}

// hashDictIndices writes the dictionary index of each selected row into pos, -1 for a
// NULL index.
func hashDictIndices(d *array.Dictionary, sel []int32, pos []int32) {
	idx := d.Indices()
	switch a := idx.(type) {
	case *array.Int8:
		hashIndices(a.Int8Values(), sel, pos)
	case *array.Int16:
		hashIndices(a.Int16Values(), sel, pos)
	case *array.Int32:
		hashIndices(a.Int32Values(), sel, pos)
	case *array.Int64:
		hashIndices(a.Int64Values(), sel, pos)
	case *array.Uint8:
		hashIndices(a.Uint8Values(), sel, pos)
	case *array.Uint16:
		hashIndices(a.Uint16Values(), sel, pos)
	case *array.Uint32:
		hashIndices(a.Uint32Values(), sel, pos)
	case *array.Uint64:
		hashIndices(a.Uint64Values(), sel, pos)
	default:
		panic(fmt.Sprintf("BUG: dictionary index type %s", idx.DataType()))
	}
	if idx.NullN() > 0 {
		for k := range pos {
			i := k
			if sel != nil {
				i = int(sel[k])
			}
			if idx.IsNull(i) {
				pos[k] = -1
			}
		}
	}
}

func hashIndices[T hashInteger](vals []T, sel []int32, pos []int32) {
	if sel == nil {
		for k := range pos {
			pos[k] = int32(vals[k])
		}
		return
	}
	for k, s := range sel[:len(pos)] {
		pos[k] = int32(vals[s])
	}
}

// hashVecInto writes (combine=false) or folds (combine=true) the hash of each row of v
// into out.
func hashVecInto(v *hashKeyVec, out []uint64, combine bool) {
	n := len(out)
	if v.nulls != nil && v.hashes == nil {
		hashVecWithNulls(v, out, combine)
		return
	}
	switch {
	case v.hashes != nil:
		if combine {
			for k, h := range v.hashes[:n] {
				out[k] = hashCombine(out[k], h)
			}
		} else {
			copy(out, v.hashes[:n])
		}
		return
	case v.kind == hashKindWord:
		w := v.words[:n]
		if combine {
			for k, x := range w {
				out[k] = hashCombine(out[k], hashWord(x))
			}
		} else {
			for k, x := range w {
				out[k] = hashWord(x)
			}
		}
	case v.kind == hashKindWide:
		w := v.words[:2*n]
		for k := range out {
			h := hashWide(w[2*k], w[2*k+1])
			if combine {
				h = hashCombine(out[k], h)
			}
			out[k] = h
		}
	case v.kind == hashKindBytes:
		s := v.strs[:n]
		for k := range s {
			h := hashString(s[k])
			if combine {
				h = hashCombine(out[k], h)
			}
			out[k] = h
		}
	}
}

// hashVecs computes the hash of every row of the key made of vecs.
func hashVecs(vecs []hashKeyVec, out []uint64) {
	if len(vecs) == 0 {
		for k := range out {
			out[k] = hashNull
		}
		return
	}
	for j := range vecs {
		hashVecInto(&vecs[j], out, j > 0)
	}
}

// hashVecWithNulls is hashVecInto for a column that has NULL rows.
func hashVecWithNulls(v *hashKeyVec, out []uint64, combine bool) {
	for k := range out {
		var h uint64
		switch {
		case v.nulls[k]:
			h = hashNull
		case v.kind == hashKindWord:
			h = hashWord(v.words[k])
		case v.kind == hashKindWide:
			h = hashWide(v.words[2*k], v.words[2*k+1])
		default:
			h = hashString(v.strs[k])
		}
		if combine {
			h = hashCombine(out[k], h)
		}
		out[k] = h
	}
}

// hashScratch holds the normalised columns of one HashColumns call.
type hashScratch struct{ vecs []hashKeyVec }

var hashScratchPool = sync.Pool{New: func() any { return new(hashScratch) }}

// HashColumns writes into out[k] a 64-bit hash of the key made of cols at row sel[k]
// (sel nil = rows 0..len(out)-1). Equal keys hash equal across batches and across
// array encodings: a dictionary-encoded column hashes like the plain column with the
// same values. Floats hash -0 like +0 and every NaN alike; a NULL hashes to a fixed
// constant. The function is fixed and seedless, so hashes may be compared between
// workers. It panics on a column type for which ValidKeyType is false.
func HashColumns(cols []arrow.Array, sel []int32, out []uint64) {
	s := hashScratchPool.Get().(*hashScratch)
	s.vecs = hashGrow(s.vecs, len(cols))
	for j, c := range cols {
		hashNormalize(c, sel, len(out), &s.vecs[j])
	}
	hashVecs(s.vecs, out)
	for j := range s.vecs {
		// Drop references into the caller's arrays before pooling.
		clear(s.vecs[j].strBuf)
		s.vecs[j].strs = nil
	}
	hashScratchPool.Put(s)
}

// hashGrow returns s resized to n elements, reusing its memory when it can. The
// contents are unspecified.
func hashGrow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n, n+n/4)
}
