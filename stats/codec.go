package stats

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// A Codec encodes non-null values of one Lore type as bytes ordered like the values:
// for any two values a and b of the type, bytes.Compare(Encode(a), Encode(b)) has the
// sign of types.Compare(a, b). Statistics keep every min/max in this form, so that the
// catalog can answer range questions ("which files may hold x > 5") by comparing bytes
// without knowing the type. docs/format/bounds.md is the byte layout of each type; it
// belongs to version 1 of the statistics document and changes only with it.
//
// Every encoding is canonical: equal values have equal bytes (-0.0 is +0.0), and
// Decode accepts only bytes that Encode can produce, so a decoded bound re-encodes to
// the same bytes. The zero Codec encodes nothing and decodes nothing.
type Codec struct {
	dt  arrow.DataType
	enc func(dt arrow.DataType, v types.Value) ([]byte, bool)
	dec func(dt arrow.DataType, b []byte) (types.Value, error)
}

// CodecFor returns the codec of dt; ok is false for types without a total order
// (intervals, durations, nested types: list/struct/map, the null type, extension and
// other unknown types) — they have no bounds.
//
// A dictionary type has the codec of its value type. A type that Lore reads as
// another has that type's codec, whose Type is the type read: DATE64 is DATE (whole
// days, as types.ValueAt gives them) and FLOAT16 is FLOAT. UUIDs reach Lore as BLOB
// (their 16 bytes), so the UUID extension type itself has no codec. BINARY_VIEW has
// none either: types.ValueAt keeps its values as text rather than bytes, so bounds
// built from them would be ordered by the text. DECIMAL256 has none because
// types.Value holds decimals of up to 128 bits only (Lore reads a wider decimal as
// DECIMAL(p,s) with p ≤ 38, or as DOUBLE).
func CodecFor(dt arrow.DataType) (c Codec, ok bool) {
	if dt == nil {
		return Codec{}, false
	}
	dt = types.Unwrap(dt)
	switch dt.ID() {
	case arrow.BOOL:
		return Codec{dt, encodeBool, decodeBool}, true
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return Codec{dt, encodeSigned, decodeSigned}, true
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return Codec{dt, encodeUnsigned, decodeUnsigned}, true
	case arrow.FLOAT16:
		return Codec{types.Float32, encodeFloat, decodeFloat}, true
	case arrow.FLOAT32, arrow.FLOAT64:
		return Codec{dt, encodeFloat, decodeFloat}, true
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY,
		arrow.FIXED_SIZE_BINARY:
		return Codec{dt, encodeBytes, decodeBytes}, true
	case arrow.DATE64:
		return Codec{types.Date, encodeSigned, decodeSigned}, true
	case arrow.DATE32, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64:
		return Codec{dt, encodeSigned, decodeSigned}, true
	case arrow.DECIMAL64, arrow.DECIMAL128:
		// Both widths encode as 128 bits: a record's bounds read alike in either.
		return Codec{dt, encodeDecimal, decodeDecimal}, true
	}
	return Codec{}, false
}

// Type is the type of the values the codec encodes and Decode returns.
func (c Codec) Type() arrow.DataType { return c.dt }

// Encode returns v's bytes; ok is false when v is NULL, NaN (NaN is never a bound), or
// not of the codec's type family.
//
// The families: signed integers (any width; dates, timestamps and times only with
// their own kind and, for timestamps and times, the codec's unit — the stored ticks
// are taken as they are, never rescaled), unsigned integers, floats, strings and
// binary together, booleans, and decimals of the codec's scale. A value of the family
// that the codec's type cannot hold exactly (300 for TINYINT, 0.1 as a double for
// FLOAT, 5 bytes for a 4-byte fixed-size binary, more digits than the precision) is
// refused too: Encode never rounds, because a rounded bound may exclude a value it
// should include.
func (c Codec) Encode(v types.Value) (b []byte, ok bool) {
	if c.enc == nil || v.Null || v.Type == nil {
		return nil, false
	}
	return c.enc(c.dt, v)
}

// Decode returns the value of b, typed c.Type(). Bytes that Encode cannot have
// produced for this type (a wrong length, a NaN, -0.0, a boolean byte other than 0
// or 1, a decimal beyond the precision) are an error with code INTERNAL: stored
// statistics are written only by Lore, so such bytes mean a damaged record.
func (c Codec) Decode(b []byte) (types.Value, error) {
	if c.dec == nil {
		return types.Value{}, errs.New(errs.Internal, "cannot decode a bound without a type")
	}
	return c.dec(c.dt, b)
}

// Compare orders two encodings (bytes.Compare; here so callers never assume).
func (c Codec) Compare(a, b []byte) int { return bytes.Compare(a, b) }

// widthOf is the size in bytes of every encoding of a fixed-width type, or 0 for
// variable-length types.
func widthOf(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.BOOL, arrow.INT8, arrow.UINT8:
		return 1
	case arrow.INT16, arrow.UINT16:
		return 2
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.TIME32:
		return 4
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP, arrow.TIME64:
		return 8
	case arrow.DECIMAL64, arrow.DECIMAL128:
		return 16
	case arrow.FIXED_SIZE_BINARY:
		return dt.(*arrow.FixedSizeBinaryType).ByteWidth
	}
	return 0
}

func badLength(dt arrow.DataType, b []byte, want int) error {
	return errs.New(errs.Internal, "cannot decode a %s bound: %d bytes, want %d", types.Name(dt), len(b), want)
}

// putUint writes the low width bytes of u big-endian; width is 1, 2, 4 or 8.
func putUint(u uint64, width int) []byte {
	b := make([]byte, width)
	for i := width - 1; i >= 0; i-- {
		b[i] = byte(u)
		u >>= 8
	}
	return b
}

// getUint reads len(b) (at most 8) big-endian bytes.
func getUint(b []byte) uint64 {
	var u uint64
	for _, c := range b {
		u = u<<8 | uint64(c)
	}
	return u
}

func encodeBool(_ arrow.DataType, v types.Value) ([]byte, bool) {
	if types.Unwrap(v.Type).ID() != arrow.BOOL {
		return nil, false
	}
	if v.I != 0 {
		return []byte{1}, true
	}
	return []byte{0}, true
}

func decodeBool(dt arrow.DataType, b []byte) (types.Value, error) {
	if len(b) != 1 {
		return types.Value{}, badLength(dt, b, 1)
	}
	if b[0] > 1 {
		return types.Value{}, errs.New(errs.Internal, "cannot decode a BOOLEAN bound: byte %#02x is neither 0 nor 1", b[0])
	}
	return types.BoolValue(b[0] == 1), nil
}

// sameSignedFamily reports whether a value of type vt stores its I in the same kind
// and unit as a column of type dt: any signed integer for an integer column, a date
// for a date column, a timestamp of the same unit for a timestamp column (the zone
// does not change the stored instant), a time of the same unit for a time column.
func sameSignedFamily(dt, vt arrow.DataType) bool {
	vt = types.Unwrap(vt)
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return types.IsSigned(vt)
	case arrow.DATE32:
		return vt.ID() == arrow.DATE32 || vt.ID() == arrow.DATE64
	case arrow.TIMESTAMP:
		t, ok := vt.(*arrow.TimestampType)
		return ok && t.Unit == dt.(*arrow.TimestampType).Unit
	case arrow.TIME32:
		t, ok := vt.(*arrow.Time32Type)
		return ok && t.Unit == dt.(*arrow.Time32Type).Unit
	case arrow.TIME64:
		t, ok := vt.(*arrow.Time64Type)
		return ok && t.Unit == dt.(*arrow.Time64Type).Unit
	}
	return false
}

// encodeSigned writes a signed integer (and dates, timestamps, times) big-endian in
// the type's width with the sign bit flipped: two's complement orders negatives after
// positives as unsigned bytes; flipping the sign bit moves them below, and within each
// sign the unsigned order of the remaining bits is the numeric order.
func encodeSigned(dt arrow.DataType, v types.Value) ([]byte, bool) {
	if !sameSignedFamily(dt, v.Type) {
		return nil, false
	}
	w := widthOf(dt)
	bitsW := uint(8 * w)
	if w < 8 {
		lim := int64(1) << (bitsW - 1)
		if v.I < -lim || v.I >= lim {
			return nil, false
		}
	}
	return putUint(uint64(v.I)^(1<<(bitsW-1)), w), true
}

func decodeSigned(dt arrow.DataType, b []byte) (types.Value, error) {
	w := widthOf(dt)
	if len(b) != w {
		return types.Value{}, badLength(dt, b, w)
	}
	shift := uint(64 - 8*w)
	u := getUint(b) ^ (1 << (8*w - 1))
	// Shifting up and arithmetically back down sign-extends the width's top bit.
	return types.Value{Type: dt, I: int64(u<<shift) >> shift}, nil
}

func encodeUnsigned(dt arrow.DataType, v types.Value) ([]byte, bool) {
	if !types.IsUnsigned(v.Type) {
		return nil, false
	}
	w := widthOf(dt)
	if w < 8 && v.U>>(8*w) != 0 {
		return nil, false
	}
	return putUint(v.U, w), true
}

func decodeUnsigned(dt arrow.DataType, b []byte) (types.Value, error) {
	w := widthOf(dt)
	if len(b) != w {
		return types.Value{}, badLength(dt, b, w)
	}
	return types.Value{Type: dt, U: getUint(b)}, nil
}

// encodeFloat writes the IEEE bits of the type's width big-endian, transformed so the
// unsigned order of the bytes is the numeric order: a positive number's bits already
// grow with its value, so setting the sign bit lifts positives above all negatives; a
// negative number's bits grow with its magnitude, so inverting them all reverses that
// order and clears the sign bit. -0.0 is written as +0.0 (SQL calls them equal) and
// NaN is refused.
func encodeFloat(dt arrow.DataType, v types.Value) ([]byte, bool) {
	if !types.IsFloat(v.Type) || math.IsNaN(v.F) {
		return nil, false
	}
	f := v.F
	if f == 0 {
		f = 0 // drops the sign of -0.0
	}
	var u uint64
	var w int
	if dt.ID() == arrow.FLOAT32 {
		f32 := float32(f)
		if float64(f32) != f {
			return nil, false // not a FLOAT value: rounding could move a bound inwards
		}
		u, w = uint64(math.Float32bits(f32)), 4
	} else {
		u, w = math.Float64bits(f), 8
	}
	sign := uint64(1) << (8*w - 1)
	if u&sign != 0 {
		u = ^u
	} else {
		u |= sign
	}
	return putUint(u, w), true
}

func decodeFloat(dt arrow.DataType, b []byte) (types.Value, error) {
	w := widthOf(dt)
	if len(b) != w {
		return types.Value{}, badLength(dt, b, w)
	}
	u := getUint(b)
	sign := uint64(1) << (8*w - 1)
	if u&sign != 0 {
		u &^= sign
	} else {
		u = ^u & (sign<<1 - 1) // inverted within the width only
	}
	var f float64
	if w == 4 {
		f = float64(math.Float32frombits(uint32(u)))
	} else {
		f = math.Float64frombits(u)
	}
	switch {
	case math.IsNaN(f):
		return types.Value{}, errs.New(errs.Internal, "cannot decode a %s bound: it is NaN", types.Name(dt))
	case f == 0 && u != 0:
		return types.Value{}, errs.New(errs.Internal, "cannot decode a %s bound: -0.0 is stored as +0.0", types.Name(dt))
	}
	return types.Value{Type: dt, F: f}, nil
}

// encodeBytes writes strings and binary as they are: bytes.Compare is already the
// order of strings.Compare, which is the SQL order of both (a prefix sorts first).
func encodeBytes(dt arrow.DataType, v types.Value) ([]byte, bool) {
	vt := types.Unwrap(v.Type)
	if !types.IsString(vt) && !types.IsBinary(vt) || vt.ID() == arrow.BINARY_VIEW {
		return nil, false
	}
	if w := widthOf(dt); w > 0 && len(v.S) != w {
		return nil, false
	}
	return []byte(v.S), true
}

func decodeBytes(dt arrow.DataType, b []byte) (types.Value, error) {
	if w := widthOf(dt); w > 0 && len(b) != w {
		return types.Value{}, badLength(dt, b, w)
	}
	return types.Value{Type: dt, S: string(b)}, nil
}

// encodeDecimal writes the scaled integer as 16 bytes of big-endian two's complement
// with the sign bit flipped, the signed-integer rule at 128 bits. Only values of the
// codec's scale are taken: the scaled integer means nothing without it.
func encodeDecimal(dt arrow.DataType, v types.Value) ([]byte, bool) {
	_, vs, ok := types.DecimalParams(v.Type)
	wp, ws, _ := types.DecimalParams(dt)
	if !ok || vs != ws || !fitsPrecision(v.D, wp) {
		return nil, false
	}
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b[0:], uint64(v.D.HighBits())^(1<<63))
	binary.BigEndian.PutUint64(b[8:], v.D.LowBits())
	return b, true
}

func decodeDecimal(dt arrow.DataType, b []byte) (types.Value, error) {
	if len(b) != 16 {
		return types.Value{}, badLength(dt, b, 16)
	}
	hi := binary.BigEndian.Uint64(b[0:]) ^ (1 << 63)
	d := decimal128.New(int64(hi), binary.BigEndian.Uint64(b[8:]))
	if p, _, _ := types.DecimalParams(dt); !fitsPrecision(d, p) {
		return types.Value{}, errs.New(errs.Internal, "cannot decode a %s bound: %s has more than %d digits",
			types.Name(dt), d.BigInt(), p)
	}
	return types.Value{Type: dt, D: d}, nil
}

// fitsPrecision reports whether -(10^p - 1) <= d <= 10^p - 1. It compares both ends
// rather than the absolute value, which wraps for the least 128-bit integer. A
// precision outside 1..38 bounds nothing beyond the 128 bits.
func fitsPrecision(d decimal128.Num, p int32) bool {
	if p < 1 || p > 38 {
		return true
	}
	top := decimal128.GetMaxValue(p)
	return d.Cmp(top) <= 0 && d.Cmp(top.Negate()) >= 0
}
