package agg

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/internal/wire"
	"github.com/loredb/lore/types"
)

// A values column is the byte form of an array whose type both ends know from the
// Spec: the kinds whose state holds values of the argument types (strings, decimals,
// intervals, nested values, a group's rows, the keys of a distinct set) all write
// them this way (docs/format/partial-state.md, "Values columns"). It is written from
// the logical values alone — NULL slots as zeros, no offsets, slicing or dictionary —
// so equal columns have equal bytes, and a reader checks every count against the
// bytes left before it allocates:
//
//	rows        uvarint; a child column's count follows from its parent instead
//	validity    ⌈rows/8⌉ bytes, bit i (least significant first) set when row i is not NULL
//	values      by type: nothing for NULL; ⌈rows/8⌉ bytes of bits for BOOLEAN; each
//	            row's fields little-endian for fixed-width types; a uvarint length
//	            and the bytes for strings and blobs; a uvarint element count per row,
//	            then the elements as one child column, for lists and maps (a map's
//	            elements are its (key, value) entries as a struct); the rows×size
//	            elements for fixed-size lists; each field's column for structs.
//
// An extension type is written as its storage (with its own validity).
//
// Arrow IPC, which carries any array, is not used: its stream repeats the schema
// both ends already have, its reader trusts the lengths and offsets it is given, and
// the bytes it writes depend on how an array happens to be sliced.

// valuesSupported reports whether values of dt have a values column form.
func valuesSupported(dt arrow.DataType) bool {
	dt = types.Unwrap(dt)
	switch t := dt.(type) {
	case *arrow.ListType:
		return valuesSupported(t.Elem()) && !isDict(t.Elem())
	case *arrow.LargeListType:
		return valuesSupported(t.Elem()) && !isDict(t.Elem())
	case *arrow.FixedSizeListType:
		return valuesSupported(t.Elem()) && !isDict(t.Elem())
	case *arrow.MapType:
		return valuesSupported(t.Elem())
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if !valuesSupported(f.Type) || isDict(f.Type) {
				return false
			}
		}
		return true
	case arrow.ExtensionType:
		return valuesSupported(t.StorageType()) && !isDict(t.StorageType())
	}
	switch dt.ID() {
	case arrow.NULL, arrow.BOOL, arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return true
	}
	_, ok := fixedLayout(dt)
	return ok
}

func isDict(dt arrow.DataType) bool { return dt.ID() == arrow.DICTIONARY }

// layout is how one value of a fixed-width type is written: its fields' widths in
// bytes, each little-endian; raw (no fields) for bytes written as they are.
type layout struct {
	width  int
	fields []int
}

var (
	layout1 = []int{1}
	layout2 = []int{2}
	layout4 = []int{4}
	layout8 = []int{8}
)

// fixedLayout is the layout of a fixed-width type; ok is false for any other type.
func fixedLayout(dt arrow.DataType) (l layout, ok bool) {
	switch dt.ID() {
	case arrow.INT8, arrow.UINT8:
		return layout{1, layout1}, true
	case arrow.INT16, arrow.UINT16, arrow.FLOAT16:
		return layout{2, layout2}, true
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.TIME32, arrow.DECIMAL32, arrow.INTERVAL_MONTHS:
		return layout{4, layout4}, true
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION, arrow.DECIMAL64:
		return layout{8, layout8}, true
	case arrow.DECIMAL128:
		return layout{16, []int{8, 8}}, true // low word, then high word
	case arrow.DECIMAL256:
		return layout{32, []int{8, 8, 8, 8}}, true // least significant word first
	case arrow.INTERVAL_DAY_TIME:
		return layout{8, []int{4, 4}}, true // days, milliseconds
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return layout{16, []int{4, 4, 8}}, true // months, days, nanoseconds
	case arrow.FIXED_SIZE_BINARY:
		return layout{width: dt.(*arrow.FixedSizeBinaryType).ByteWidth}, true
	}
	return layout{}, false
}

// appendValues writes arr (a dictionary is written as its values) as a values
// column. Its type must be one valuesSupported accepts.
func appendValues(w *wire.Writer, arr arrow.Array) {
	arr = plain(arr)
	w.Uvarint(uint64(arr.Len()))
	appendColumn(w, arr, nil)
}

// appendValuesAt writes rows of arr, in that order, as a values column.
func appendValuesAt(w *wire.Writer, arr arrow.Array, rows []int) {
	arr = plain(arr)
	w.Uvarint(uint64(len(rows)))
	appendColumn(w, arr, nonNilRows(rows))
}

// appendColumn writes rows of arr (nil: every row) as a column without its count.
func appendColumn(w *wire.Writer, arr arrow.Array, rows []int) {
	if ext, ok := arr.(array.ExtensionArray); ok {
		appendColumn(w, ext.Storage(), rows)
		return
	}
	n := len(rows)
	if rows == nil {
		n = arr.Len()
	}
	at := func(k int) int {
		if rows == nil {
			return k
		}
		return rows[k]
	}
	isNull := arr.DataType().ID() == arrow.NULL
	valid := make([]byte, (n+7)/8)
	for k := range n {
		if !isNull && arr.IsValid(at(k)) {
			valid[k/8] |= 1 << (k % 8)
		}
	}
	w.B = append(w.B, valid...)
	ok := func(k int) bool { return valid[k/8]&(1<<(k%8)) != 0 }

	switch a := arr.(type) {
	case *array.Null:
		return
	case *array.Boolean:
		bits := make([]byte, (n+7)/8)
		for k := range n {
			if ok(k) && a.Value(at(k)) {
				bits[k/8] |= 1 << (k % 8)
			}
		}
		w.B = append(w.B, bits...)
		return
	case *array.String, *array.LargeString:
		value := a.(interface{ Value(int) string }).Value
		for k := range n {
			appendText(w, ok(k), value, at(k))
		}
		return
	case *array.Binary, *array.LargeBinary:
		value := a.(interface{ Value(int) []byte }).Value
		for k := range n {
			appendBlob(w, ok(k), value, at(k))
		}
		return
	case *array.Struct:
		for f := range a.NumField() {
			appendColumn(w, a.Field(f), rows)
		}
		return
	case *array.FixedSizeList:
		var child []int
		for k := range n {
			s, e := a.ValueOffsets(at(k))
			for i := s; i < e; i++ {
				child = append(child, int(i))
			}
		}
		appendColumn(w, a.ListValues(), nonNilRows(child))
		return
	case array.ListLike:
		var child []int
		for k := range n {
			if !ok(k) {
				w.Uvarint(0)
				continue
			}
			s, e := a.ValueOffsets(at(k))
			w.Uvarint(uint64(e - s))
			for i := s; i < e; i++ {
				child = append(child, int(i))
			}
		}
		appendColumn(w, a.ListValues(), nonNilRows(child))
		return
	}
	l, found := fixedLayout(arr.DataType())
	if !found {
		panic("BUG: no values column form of " + arr.DataType().String())
	}
	var src []byte
	if bufs := arr.Data().Buffers(); len(bufs) > 1 && bufs[1] != nil {
		src = bufs[1].Bytes()
	}
	off := arr.Data().Offset()
	zero := make([]byte, l.width)
	for k := range n {
		v := zero
		if ok(k) {
			i := off + at(k)
			v = src[i*l.width : (i+1)*l.width]
		}
		if l.fields == nil {
			w.B = append(w.B, v...)
			continue
		}
		for _, f := range l.fields {
			switch f {
			case 1:
				w.B = append(w.B, v[0])
			case 2:
				w.B = binary.LittleEndian.AppendUint16(w.B, binary.NativeEndian.Uint16(v))
			case 4:
				w.B = binary.LittleEndian.AppendUint32(w.B, binary.NativeEndian.Uint32(v))
			case 8:
				w.B = binary.LittleEndian.AppendUint64(w.B, binary.NativeEndian.Uint64(v))
			}
			v = v[f:]
		}
	}
}

// nonNilRows keeps an empty selection of rows distinct from nil (every row).
func nonNilRows(rows []int) []int {
	if rows == nil {
		return []int{}
	}
	return rows
}

func appendText(w *wire.Writer, valid bool, value func(int) string, i int) {
	if !valid {
		w.Uvarint(0)
		return
	}
	s := value(i)
	w.Uvarint(uint64(len(s)))
	w.B = append(w.B, s...)
}

func appendBlob(w *wire.Writer, valid bool, value func(int) []byte, i int) {
	if !valid {
		w.Uvarint(0)
		return
	}
	w.Bytes(value(i))
}

// loadValues reads a values column of type dt (a dictionary type reads as its
// values). On a failure, recorded in r, it returns an empty array of dt.
func loadValues(r *wire.Reader, dt arrow.DataType) arrow.Array {
	dt = types.Unwrap(dt)
	n := r.Uvarint()
	if d := loadColumn(r, dt, n); d != nil && r.Err() == nil {
		return array.MakeFromData(d)
	}
	return array.MakeArrayOfNull(memory.DefaultAllocator, dt, 0)
}

// take reads k bytes as they are (sharing r's bytes).
func take(r *wire.Reader, k uint64) []byte {
	if r.Err() != nil {
		return nil
	}
	if uint64(len(r.B)) < k {
		r.Fail("a value runs past its end")
		return nil
	}
	b := r.B[:k:k]
	r.B = r.B[k:]
	return b
}

// loadColumn reads a column of n rows of type dt; nil on a failure. Every row has at
// least a validity bit, so a count the bytes left cannot hold is refused before
// anything is allocated for it.
func loadColumn(r *wire.Reader, dt arrow.DataType, n uint64) arrow.ArrayData {
	if r.Err() != nil {
		return nil
	}
	if n > 8*uint64(len(r.B)) || n > math.MaxInt32 {
		r.Fail("a count of %d runs past its end", n)
		return nil
	}
	if t, ok := dt.(arrow.ExtensionType); ok {
		st := loadColumn(r, t.StorageType(), n)
		if st == nil {
			return nil
		}
		return array.NewData(dt, st.Len(), st.Buffers(), st.Children(), st.NullN(), 0)
	}
	bm := take(r, (n+7)/8)
	if r.Err() != nil {
		return nil
	}
	rows := int(n)
	nulls := 0
	for k := range rows {
		if bm[k/8]&(1<<(k%8)) == 0 {
			nulls++
		}
	}
	var validity *memory.Buffer
	if nulls > 0 {
		validity = memory.NewBufferBytes(append([]byte(nil), bm...))
	}
	valid := func(k int) bool { return bm[k/8]&(1<<(k%8)) != 0 }
	data := func(bufs []*memory.Buffer, children []arrow.ArrayData) arrow.ArrayData {
		return array.NewData(dt, rows, append([]*memory.Buffer{validity}, bufs...), children, nulls, 0)
	}

	switch t := dt.(type) {
	case *arrow.StructType:
		children := make([]arrow.ArrayData, t.NumFields())
		for f, field := range t.Fields() {
			if children[f] = loadColumn(r, field.Type, n); children[f] == nil {
				return nil
			}
		}
		return data(nil, children)
	case *arrow.FixedSizeListType:
		size := uint64(t.Len())
		if size != 0 && n > math.MaxInt32/size {
			r.Fail("a count of %d lists of %d runs past its end", n, size)
			return nil
		}
		child := loadColumn(r, t.Elem(), n*size)
		if child == nil {
			return nil
		}
		return data(nil, []arrow.ArrayData{child})
	case *arrow.ListType, *arrow.MapType, *arrow.LargeListType:
		var elem arrow.DataType
		switch t := t.(type) {
		case *arrow.ListType:
			elem = t.Elem()
		case *arrow.MapType:
			elem = t.Elem()
		case *arrow.LargeListType:
			elem = t.Elem()
		}
		offs := make([]int64, rows+1)
		for k := range rows {
			m := r.Uvarint()
			if !valid(k) && m != 0 {
				r.Fail("a NULL list of %d elements", m)
			}
			// Every element takes a validity bit at least.
			if r.Err() != nil || m > 8*uint64(len(r.B)) || uint64(offs[k])+m > math.MaxInt32 {
				r.Fail("a list of %d elements runs past its end", m)
				return nil
			}
			offs[k+1] = offs[k] + int64(m)
		}
		child := loadColumn(r, elem, uint64(offs[rows]))
		if child == nil {
			return nil
		}
		if dt.ID() == arrow.MAP && (child.NullN() != 0 || child.Children()[0].NullN() != 0) {
			r.Fail("a NULL map entry or key")
			return nil
		}
		if dt.ID() == arrow.LARGE_LIST {
			return data([]*memory.Buffer{memory.NewBufferBytes(bytesOf(offs))}, []arrow.ArrayData{child})
		}
		return data([]*memory.Buffer{memory.NewBufferBytes(bytesOf(narrowOffsets(offs)))}, []arrow.ArrayData{child})
	}

	switch dt.ID() {
	case arrow.NULL:
		if nulls != rows {
			r.Fail("a value in a column of NULLs")
			return nil
		}
		return array.NewNull(rows).Data()
	case arrow.BOOL:
		bits := take(r, (n+7)/8)
		if r.Err() != nil {
			return nil
		}
		return data([]*memory.Buffer{memory.NewBufferBytes(append([]byte(nil), bits...))}, nil)
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		offs := make([]int64, rows+1)
		var bytes []byte
		for k := range rows {
			b := r.Bytes()
			if !valid(k) && len(b) != 0 {
				r.Fail("a NULL string of %d bytes", len(b))
			}
			if r.Err() != nil {
				return nil
			}
			bytes = append(bytes, b...)
			offs[k+1] = int64(len(bytes))
		}
		if dt.ID() == arrow.LARGE_STRING || dt.ID() == arrow.LARGE_BINARY {
			return data([]*memory.Buffer{memory.NewBufferBytes(bytesOf(offs)), memory.NewBufferBytes(bytes)}, nil)
		}
		if len(bytes) > math.MaxInt32 {
			r.Fail("%d bytes of strings exceed 32-bit offsets", len(bytes))
			return nil
		}
		return data([]*memory.Buffer{memory.NewBufferBytes(bytesOf(narrowOffsets(offs))), memory.NewBufferBytes(bytes)}, nil)
	}
	l, ok := fixedLayout(dt)
	if !ok {
		r.Fail("no values column form of %s", dt)
		return nil
	}
	if l.width > 0 && n > uint64(len(r.B))/uint64(l.width) {
		r.Fail("%d values run past its end", n)
		return nil
	}
	src := take(r, n*uint64(l.width))
	if r.Err() != nil {
		return nil
	}
	out := make([]byte, 0, len(src))
	if l.fields == nil {
		out = append(out, src...)
	} else {
		for len(src) > 0 {
			for _, f := range l.fields {
				switch f {
				case 1:
					out = append(out, src[0])
				case 2:
					out = binary.NativeEndian.AppendUint16(out, binary.LittleEndian.Uint16(src))
				case 4:
					out = binary.NativeEndian.AppendUint32(out, binary.LittleEndian.Uint32(src))
				case 8:
					out = binary.NativeEndian.AppendUint64(out, binary.LittleEndian.Uint64(src))
				}
				src = src[f:]
			}
		}
	}
	return data([]*memory.Buffer{memory.NewBufferBytes(out)}, nil)
}

// narrowOffsets converts offsets known to fit in 32 bits.
func narrowOffsets(offs []int64) []int32 {
	out := make([]int32, len(offs))
	for i, o := range offs {
		out[i] = int32(o)
	}
	return out
}
