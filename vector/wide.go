package vector

import (
	"encoding/binary"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/types"
)

// WideArray returns arr with every 64-bit decimal in it (the array itself, its
// dictionary, or the elements or fields of a nested array) as a 128-bit decimal of the same precision,
// scale and value, for what takes only 128-bit decimals (the Parquet writer, Arrow
// clients); an array without one is returned as it is.
func WideArray(arr arrow.Array) arrow.Array {
	if wideType(arr.DataType()) == arr.DataType() {
		return arr
	}
	d := wideData(arr.Data())
	defer d.Release()
	return array.MakeFromData(d)
}

// wideData rebuilds d with its 64-bit decimals widened. The offsets, validity
// bitmaps and other buffers are shared: a 64-bit value buffer becomes a 128-bit one
// of as many slots, the offset's included.
func wideData(d arrow.ArrayData) arrow.ArrayData {
	dt := d.DataType()
	wide := wideType(dt)
	if wide == dt {
		d.Retain()
		return d
	}
	bufs := d.Buffers()
	if dt.ID() == arrow.DECIMAL64 {
		slots := d.Offset() + d.Len()
		out := make([]byte, 16*slots)
		if src := bufs[1]; src != nil {
			b := src.Bytes()
			for i := range slots {
				v := binary.LittleEndian.Uint64(b[8*i:])
				binary.LittleEndian.PutUint64(out[16*i:], v)
				binary.LittleEndian.PutUint64(out[16*i+8:], uint64(int64(v)>>63))
			}
		}
		return array.NewData(wide, d.Len(), []*memory.Buffer{bufs[0], memory.NewBufferBytes(out)}, nil, d.NullN(), d.Offset())
	}
	if dt.ID() == arrow.DICTIONARY {
		dict := wideData(d.Dictionary())
		defer dict.Release()
		return array.NewDataWithDictionary(wide, d.Len(), bufs, d.NullN(), d.Offset(), dict.(*array.Data))
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = wideData(c)
	}
	out := array.NewData(wide, d.Len(), bufs, children, d.NullN(), d.Offset())
	for _, c := range children {
		c.Release()
	}
	return out
}

// WideRecord is WideArray of every column of rec, with the schema to match.
func WideRecord(rec arrow.Record) arrow.Record {
	schema := WideSchema(rec.Schema())
	if schema == rec.Schema() {
		return rec
	}
	cols := make([]arrow.Array, rec.NumCols())
	for i := range cols {
		cols[i] = WideArray(rec.Column(i))
	}
	return array.NewRecord(schema, cols, rec.NumRows())
}

// WideSchema is schema with its 64-bit decimal types widened (schema itself when it
// has none).
func WideSchema(schema *arrow.Schema) *arrow.Schema {
	fields := schema.Fields()
	changed := false
	for i, f := range fields {
		if w := wideType(f.Type); w != f.Type {
			fields[i].Type, changed = w, true
		}
	}
	if !changed {
		return schema
	}
	md := schema.Metadata()
	return arrow.NewSchema(fields, &md)
}

// wideType is dt with its 64-bit decimals, at the top or nested, widened.
func wideType(dt arrow.DataType) arrow.DataType {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		if v := wideType(d.ValueType); v != d.ValueType {
			return &arrow.DictionaryType{IndexType: d.IndexType, ValueType: v, Ordered: d.Ordered}
		}
		return dt
	}
	if types.IsNested(dt) {
		return types.WideInside(dt)
	}
	return types.Wide(dt)
}

// NarrowDecimal returns a 128-bit decimal array as an array of the 64-bit decimal
// type to (of the same scale), or the first valid value that needs more than 64
// bits and false.
func NarrowDecimal(a *array.Decimal128, to arrow.DataType) (arrow.Array, decimal128.Num, bool) {
	vals := a.Values()
	out := make([]int64, len(vals))
	for i, v := range vals {
		lo := int64(v.LowBits())
		if v.HighBits() != lo>>63 && a.IsValid(i) {
			return nil, v, false
		}
		out[i] = lo
	}
	return Decimal64Array(a, to, out), decimal128.Num{}, true
}

// Decimal64Array makes an array of the 64-bit decimal type to from values and the
// validity of like, an array of as many rows.
func Decimal64Array(like arrow.Array, to arrow.DataType, vals []int64) arrow.Array {
	var valid *memory.Buffer
	if like.NullN() > 0 {
		bits := make([]byte, bitutil.BytesForBits(int64(like.Len())))
		bitutil.CopyBitmap(like.NullBitmapBytes(), like.Data().Offset(), like.Len(), bits, 0)
		valid = memory.NewBufferBytes(bits)
	}
	var data []byte
	if len(vals) > 0 {
		data = unsafe.Slice((*byte)(unsafe.Pointer(&vals[0])), 8*len(vals))
	}
	d := array.NewData(to, like.Len(), []*memory.Buffer{valid, memory.NewBufferBytes(data)}, nil, like.NullN(), 0)
	defer d.Release()
	return array.MakeFromData(d)
}
