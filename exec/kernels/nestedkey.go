package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/loredb/lore/types"
)

// Nested values (lists, structs, maps) are compared, sorted, hashed and grouped
// through a byte encoding whose byte order is DuckDB's order of the values and whose
// byte equality is their equality: a nested column becomes a BLOB column, and the
// BLOB paths of comparisons, sorts and key tables do the rest.
//
// The encoding of a value, by type:
//   - a list is, per element, a marker (nkValid then the element's encoding, or
//     nkNull) and then nkEnd, so a list sorts before any longer list it begins;
//   - a map is a list of entries, each the key's encoding then the value's marker
//     and encoding;
//   - a struct is, per field in order, a marker and the field's encoding;
//   - integers, dates, times and timestamps are big-endian with the sign bit flipped;
//   - floats are their bits, all flipped when negative else the sign bit flipped,
//     with -0 written as +0 and every NaN as one NaN above +Inf (DuckDB's order);
//   - strings and blobs have each 0x00 byte written 0x00 0xFF and end in 0x00 0x00,
//     so a prefix sorts first.
//
// Inside a nested value NULL equals NULL and sorts after every other value, as in
// DuckDB ([1, NULL] = [1, NULL] is true, [1, 2] < [1, NULL]). The encoding decodes
// back to the value (decodeNestedKey), which is how key tables return nested keys.
const (
	nkEnd   = 0x00
	nkValid = 0x01
	nkNull  = 0x02
)

// NestedOrderable reports a list, struct or map type whose values can be compared,
// sorted and hashed: every type inside it is one the encoding knows.
func NestedOrderable(dt arrow.DataType) bool {
	return types.IsNested(dt) && nestedKeyable(dt)
}

func nestedKeyable(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.ListType:
		return nestedKeyable(t.Elem())
	case *arrow.LargeListType:
		return nestedKeyable(t.Elem())
	case *arrow.FixedSizeListType:
		return nestedKeyable(t.Elem())
	case *arrow.MapType:
		return nestedKeyable(t.KeyType()) && nestedKeyable(t.ItemType())
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if !nestedKeyable(f.Type) {
				return false
			}
		}
		return t.NumFields() > 0
	}
	switch dt.ID() {
	case arrow.NULL, arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION,
		arrow.DECIMAL64, arrow.DECIMAL128, arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		// Intervals are left out: DuckDB compares them normalised (a month is 30
		// days), which a lossless encoding of their fields does not give.
		return true
	}
	return false
}

// nkColumn is the encoding of every row of an array: row i is data[offs[i]:offs[i+1]].
// A NULL row's bytes are whatever its slot holds; parents write nkNull for it.
type nkColumn struct {
	offs []int
	data []byte
}

func (c *nkColumn) row(i int) []byte { return c.data[c.offs[i]:c.offs[i+1]] }

// NestedKeys returns the encoding of each row of a nested array as a BLOB array,
// NULL where arr is NULL. It panics on a type NestedOrderable rejects: callers check.
func NestedKeys(arr arrow.Array) *array.Binary {
	c := encodeNested(arr)
	n := arr.Len()
	if c.offs[n] > math.MaxInt32 {
		panic(fmt.Sprintf("BUG: %d bytes of nested keys exceed 32-bit offsets", c.offs[n]))
	}
	offs := make([]int32, n+1)
	for i, o := range c.offs[:n+1] {
		offs[i] = int32(o)
	}
	var validity *memory.Buffer
	nulls := arr.NullN()
	if nulls > 0 {
		bm := make([]byte, bitmapLen(n))
		for i := range n {
			if arr.IsValid(i) {
				bm[i>>3] |= 1 << (i & 7)
			}
		}
		validity = memory.NewBufferBytes(bm)
	}
	data := array.NewData(arrow.BinaryTypes.Binary, n,
		[]*memory.Buffer{validity, memory.NewBufferBytes(ktBytesOf(offs)), memory.NewBufferBytes(c.data)}, nil, nulls, 0)
	defer data.Release()
	return array.NewBinaryData(data)
}

// encodeNested encodes every row of arr, a column at a time: a list's elements (its
// child array) are encoded in one pass and then framed per row.
func encodeNested(arr arrow.Array) nkColumn {
	n := arr.Len()
	c := nkColumn{offs: make([]int, 0, n+1)}
	c.offs = append(c.offs, 0)
	switch a := arr.(type) {
	case *array.Null:
		for range n {
			c.offs = append(c.offs, 0)
		}
	case *array.Boolean:
		for i := range n {
			b := byte(0)
			if a.Value(i) {
				b = 1
			}
			c.data = append(c.data, b)
			c.offs = append(c.offs, len(c.data))
		}
	case *array.Int8:
		nkInts(&c, a.Int8Values(), 1)
	case *array.Int16:
		nkInts(&c, a.Int16Values(), 2)
	case *array.Int32:
		nkInts(&c, a.Int32Values(), 4)
	case *array.Int64:
		nkInts(&c, a.Int64Values(), 8)
	case *array.Date32:
		nkInts(&c, a.Date32Values(), 4)
	case *array.Date64:
		nkInts(&c, a.Date64Values(), 8)
	case *array.Time32:
		nkInts(&c, a.Time32Values(), 4)
	case *array.Time64:
		nkInts(&c, a.Time64Values(), 8)
	case *array.Timestamp:
		nkInts(&c, a.TimestampValues(), 8)
	case *array.Duration:
		nkInts(&c, a.DurationValues(), 8)
	case *array.Uint8:
		nkUints(&c, a.Uint8Values(), 1)
	case *array.Uint16:
		nkUints(&c, a.Uint16Values(), 2)
	case *array.Uint32:
		nkUints(&c, a.Uint32Values(), 4)
	case *array.Uint64:
		nkUints(&c, a.Uint64Values(), 8)
	case *array.Float32:
		for _, f := range a.Float32Values() {
			c.data = binary.BigEndian.AppendUint32(c.data, float32Key(f))
			c.offs = append(c.offs, len(c.data))
		}
	case *array.Float64:
		for _, f := range a.Float64Values() {
			c.data = binary.BigEndian.AppendUint64(c.data, float64Key(f))
			c.offs = append(c.offs, len(c.data))
		}
	case *array.Decimal128:
		for _, d := range a.Values() {
			c.data = binary.BigEndian.AppendUint64(c.data, uint64(d.HighBits())^(1<<63))
			c.data = binary.BigEndian.AppendUint64(c.data, d.LowBits())
			c.offs = append(c.offs, len(c.data))
		}
	case *array.Decimal64:
		// Encoded as the 128-bit value: equal values key alike in either width.
		for _, d := range int64sOf(a) {
			c.data = binary.BigEndian.AppendUint64(c.data, uint64(d>>63)^(1<<63))
			c.data = binary.BigEndian.AppendUint64(c.data, uint64(d))
			c.offs = append(c.offs, len(c.data))
		}
	case *array.String:
		for i := range n {
			c.data = nkBytes(c.data, a.Value(i))
			c.offs = append(c.offs, len(c.data))
		}
	case *array.LargeString:
		for i := range n {
			c.data = nkBytes(c.data, a.Value(i))
			c.offs = append(c.offs, len(c.data))
		}
	case *array.Binary:
		for i := range n {
			c.data = nkBytes(c.data, string(a.Value(i)))
			c.offs = append(c.offs, len(c.data))
		}
	case *array.LargeBinary:
		for i := range n {
			c.data = nkBytes(c.data, string(a.Value(i)))
			c.offs = append(c.offs, len(c.data))
		}
	case *array.Map:
		keys, items := encodeNested(a.Keys()), encodeNested(a.Items())
		for i := range n {
			start, end := a.ValueOffsets(i)
			for k := int(start); k < int(end); k++ {
				c.data = append(c.data, nkValid)
				c.data = append(c.data, keys.row(k)...)
				c.data = nkElem(c.data, a.Items(), &items, k)
			}
			c.data = append(c.data, nkEnd)
			c.offs = append(c.offs, len(c.data))
		}
	case array.ListLike:
		child := a.ListValues()
		elems := encodeNested(child)
		for i := range n {
			start, end := a.ValueOffsets(i)
			for k := int(start); k < int(end); k++ {
				c.data = nkElem(c.data, child, &elems, k)
			}
			c.data = append(c.data, nkEnd)
			c.offs = append(c.offs, len(c.data))
		}
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		fields := make([]nkColumn, st.NumFields())
		for f := range fields {
			fields[f] = encodeNested(a.Field(f))
		}
		for i := range n {
			for f := range fields {
				c.data = nkElem(c.data, a.Field(f), &fields[f], i)
			}
			c.offs = append(c.offs, len(c.data))
		}
	default:
		panic(fmt.Sprintf("BUG: %s values have no key encoding", types.Name(arr.DataType())))
	}
	return c
}

// nkElem appends element k of arr (encoded in enc) with its marker.
func nkElem(dst []byte, arr arrow.Array, enc *nkColumn, k int) []byte {
	if arr.IsNull(k) {
		return append(dst, nkNull)
	}
	return append(append(dst, nkValid), enc.row(k)...)
}

func nkInts[T int8 | int16 | int32 | int64 | arrow.Date32 | arrow.Date64 | arrow.Time32 | arrow.Time64 | arrow.Timestamp | arrow.Duration](c *nkColumn, vals []T, width int) {
	flip := uint64(1) << (8*width - 1)
	for _, v := range vals {
		c.data = nkWord(c.data, uint64(int64(v))^flip, width)
		c.offs = append(c.offs, len(c.data))
	}
}

func nkUints[T uint8 | uint16 | uint32 | uint64](c *nkColumn, vals []T, width int) {
	for _, v := range vals {
		c.data = nkWord(c.data, uint64(v), width)
		c.offs = append(c.offs, len(c.data))
	}
}

// nkWord appends the low width bytes of x, big-endian.
func nkWord(dst []byte, x uint64, width int) []byte {
	for s := 8 * (width - 1); s >= 0; s -= 8 {
		dst = append(dst, byte(x>>s))
	}
	return dst
}

// nkBytes appends a string escaped and terminated so that byte order is string order.
func nkBytes(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		dst = append(dst, s[i])
		if s[i] == 0 {
			dst = append(dst, 0xff)
		}
	}
	return append(dst, 0, 0)
}

func float64Key(f float64) uint64 {
	switch {
	case f != f:
		f = math.NaN()
	case f == 0:
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

func float32Key(f float32) uint32 {
	switch {
	case f != f:
		f = float32(math.NaN())
	case f == 0:
		f = 0
	}
	b := math.Float32bits(f)
	if b>>31 != 0 {
		return ^b
	}
	return b | 1<<31
}

// nestedKeyArray decodes n encoded values (a NULL where nulls says so) into an array
// of type dt.
func nestedKeyArray(dt arrow.DataType, n int, key func(i int) []byte, nulls []bool) arrow.Array {
	bld := array.NewBuilder(memory.DefaultAllocator, dt)
	defer bld.Release()
	bld.Reserve(n)
	for i := range n {
		if nulls != nil && nulls[i] {
			bld.AppendNull()
			continue
		}
		if rest := decodeNestedKey(key(i), bld); len(rest) != 0 {
			panic(fmt.Sprintf("BUG: %d bytes left after decoding a %s key", len(rest), types.Name(dt)))
		}
	}
	a := bld.NewArray()
	if !hasUUID(dt) {
		return a
	}
	// The library's builders make a UUID inside a nested type a BLOB (a map's even
	// where the map's own type says UUID): the same layout, given the type back.
	defer a.Release()
	d := relabel(a.Data(), dt)
	defer d.Release()
	return array.MakeFromData(d)
}

// hasUUID reports a nested type with a UUID inside.
func hasUUID(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *types.UUIDType:
		return true
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if hasUUID(f.Type) {
				return true
			}
		}
	case arrow.ListLikeType:
		return hasUUID(t.Elem())
	}
	return false
}

// relabel is array data d with type dt, which has d's layout at every level (a UUID
// where d has a BLOB).
func relabel(d arrow.ArrayData, dt arrow.DataType) arrow.ArrayData {
	var kids []arrow.DataType
	switch t := dt.(type) {
	case *arrow.StructType:
		for _, f := range t.Fields() {
			kids = append(kids, f.Type)
		}
	case arrow.ListLikeType: // lists and maps (whose element is the entries struct)
		kids = []arrow.DataType{t.Elem()}
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		if i < len(kids) {
			children[i] = relabel(c, kids[i])
			defer children[i].Release()
		} else {
			children[i] = c
		}
	}
	return array.NewData(dt, d.Len(), d.Buffers(), children, d.NullN(), d.Offset())
}

// DecodeNestedKeys decodes the encodings NestedKeys made of values of the nested type
// dt back to those values (NULL where keys is NULL).
func DecodeNestedKeys(dt arrow.DataType, keys *array.Binary) arrow.Array {
	var nulls []bool
	if keys.NullN() > 0 {
		nulls = make([]bool, keys.Len())
		for i := range nulls {
			nulls[i] = keys.IsNull(i)
		}
	}
	return nestedKeyArray(dt, keys.Len(), keys.Value, nulls)
}

// decodeNestedKey appends the value encoded at the start of b to bld and returns the
// bytes after it.
func decodeNestedKey(b []byte, bld array.Builder) []byte {
	switch x := bld.(type) {
	case *array.NullBuilder:
		x.AppendNull()
		return b
	case *array.BooleanBuilder:
		x.Append(b[0] != 0)
		return b[1:]
	case *array.Int8Builder:
		x.Append(int8(uint8(b[0]) ^ 0x80))
		return b[1:]
	case *array.Int16Builder:
		x.Append(int16(binary.BigEndian.Uint16(b) ^ 1<<15))
		return b[2:]
	case *array.Int32Builder:
		x.Append(int32(binary.BigEndian.Uint32(b) ^ 1<<31))
		return b[4:]
	case *array.Int64Builder:
		x.Append(int64(binary.BigEndian.Uint64(b) ^ 1<<63))
		return b[8:]
	case *array.Date32Builder:
		x.Append(arrow.Date32(binary.BigEndian.Uint32(b) ^ 1<<31))
		return b[4:]
	case *array.Date64Builder:
		x.Append(arrow.Date64(binary.BigEndian.Uint64(b) ^ 1<<63))
		return b[8:]
	case *array.Time32Builder:
		x.Append(arrow.Time32(binary.BigEndian.Uint32(b) ^ 1<<31))
		return b[4:]
	case *array.Time64Builder:
		x.Append(arrow.Time64(binary.BigEndian.Uint64(b) ^ 1<<63))
		return b[8:]
	case *array.TimestampBuilder:
		x.Append(arrow.Timestamp(binary.BigEndian.Uint64(b) ^ 1<<63))
		return b[8:]
	case *array.DurationBuilder:
		x.Append(arrow.Duration(binary.BigEndian.Uint64(b) ^ 1<<63))
		return b[8:]
	case *array.Uint8Builder:
		x.Append(b[0])
		return b[1:]
	case *array.Uint16Builder:
		x.Append(binary.BigEndian.Uint16(b))
		return b[2:]
	case *array.Uint32Builder:
		x.Append(binary.BigEndian.Uint32(b))
		return b[4:]
	case *array.Uint64Builder:
		x.Append(binary.BigEndian.Uint64(b))
		return b[8:]
	case *array.Float32Builder:
		k := binary.BigEndian.Uint32(b)
		if k>>31 != 0 {
			k &^= 1 << 31
		} else {
			k = ^k
		}
		x.Append(math.Float32frombits(k))
		return b[4:]
	case *array.Float64Builder:
		k := binary.BigEndian.Uint64(b)
		if k>>63 != 0 {
			k &^= 1 << 63
		} else {
			k = ^k
		}
		x.Append(math.Float64frombits(k))
		return b[8:]
	case *array.Decimal128Builder:
		hi := int64(binary.BigEndian.Uint64(b) ^ 1<<63)
		x.Append(decimal128.New(hi, binary.BigEndian.Uint64(b[8:])))
		return b[16:]
	case *array.Decimal64Builder:
		x.Append(decimal.Decimal64(binary.BigEndian.Uint64(b[8:])))
		return b[16:]
	case *array.StringBuilder:
		s, rest := nkUnescape(b)
		x.Append(string(s))
		return rest
	case *array.LargeStringBuilder:
		s, rest := nkUnescape(b)
		x.Append(string(s))
		return rest
	case *array.BinaryBuilder: // also LARGE_BINARY
		s, rest := nkUnescape(b)
		x.Append(s)
		return rest
	case *array.MapBuilder:
		x.Append(true)
		kb, ib := x.KeyBuilder(), x.ItemBuilder()
		for b[0] != nkEnd {
			b = decodeNestedKey(b[1:], kb)
			b = nkDecodeElem(b, ib)
		}
		return b[1:]
	case array.ListLikeBuilder:
		x.Append(true)
		vb := x.ValueBuilder()
		for b[0] != nkEnd {
			b = nkDecodeElem(b, vb)
		}
		return b[1:]
	case *array.StructBuilder:
		x.Append(true)
		for f := range x.NumField() {
			b = nkDecodeElem(b, x.FieldBuilder(f))
		}
		return b
	}
	panic(fmt.Sprintf("BUG: no key decoding into %T", bld))
}

// nkDecodeElem decodes a marker and, unless it marks NULL, the value after it.
func nkDecodeElem(b []byte, bld array.Builder) []byte {
	if b[0] == nkNull {
		bld.AppendNull()
		return b[1:]
	}
	return decodeNestedKey(b[1:], bld)
}

// nkUnescape reads an escaped, terminated string and returns it and the bytes after.
func nkUnescape(b []byte) (s, rest []byte) {
	s = []byte{}
	for i := 0; ; i++ {
		if b[i] != 0 {
			s = append(s, b[i])
			continue
		}
		if b[i+1] == 0 {
			return s, b[i+2:]
		}
		s = append(s, 0)
		i++
	}
}
