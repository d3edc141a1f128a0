package stats

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// codecTestTypes is every type that has a codec, in the forms Lore meets them.
var codecTestTypes = []arrow.DataType{
	types.Boolean,
	types.Int8, types.Int16, types.Int32, types.Int64,
	types.Uint8, types.Uint16, types.Uint32, types.Uint64,
	arrow.FixedWidthTypes.Float16, types.Float32, types.Float64,
	types.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.StringView,
	types.Binary, arrow.BinaryTypes.LargeBinary,
	&arrow.FixedSizeBinaryType{ByteWidth: 16}, &arrow.FixedSizeBinaryType{ByteWidth: 3},
	types.Date, arrow.FixedWidthTypes.Date64,
	&arrow.TimestampType{Unit: arrow.Second}, &arrow.TimestampType{Unit: arrow.Millisecond},
	types.Timestamp, &arrow.TimestampType{Unit: arrow.Nanosecond},
	types.TimestampTZ, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"},
	arrow.FixedWidthTypes.Time32s, arrow.FixedWidthTypes.Time32ms,
	arrow.FixedWidthTypes.Time64us, arrow.FixedWidthTypes.Time64ns,
	&arrow.Decimal128Type{Precision: 38, Scale: 0}, &arrow.Decimal128Type{Precision: 38, Scale: 10},
	&arrow.Decimal128Type{Precision: 18, Scale: 3}, &arrow.Decimal128Type{Precision: 9, Scale: 2},
	&arrow.Decimal128Type{Precision: 1, Scale: 0},
	&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: types.String},
}

func mustCodec(t testing.TB, dt arrow.DataType) Codec {
	t.Helper()
	c, ok := CodecFor(dt)
	if !ok {
		t.Fatalf("no codec for %s", dt)
	}
	return c
}

// randInt draws a signed integer of the given bit width: a mix of the width's edges,
// small numbers (so that equal and adjacent values meet) and uniform draws.
func randInt(r *rand.Rand, bits uint) int64 {
	lo, hi := int64(-1)<<(bits-1), int64(uint64(1)<<(bits-1)-1)
	switch r.IntN(4) {
	case 0:
		edges := []int64{lo, lo + 1, -1, 0, 1, hi - 1, hi}
		return edges[r.IntN(len(edges))]
	case 1:
		return int64(r.IntN(41) - 20)
	}
	shift := 64 - bits
	return int64(r.Uint64()<<shift) >> shift
}

func randUint(r *rand.Rand, bits uint) uint64 {
	top := uint64(1)<<(bits-1)<<1 - 1 // all ones in the width, also for 64 bits
	switch r.IntN(4) {
	case 0:
		edges := []uint64{0, 1, top / 2, top/2 + 1, top - 1, top}
		return edges[r.IntN(len(edges))]
	case 1:
		return uint64(r.IntN(20))
	}
	return r.Uint64() & top
}

// floatEdges are the awkward doubles, NaN aside.
var floatEdges = []float64{
	math.Inf(-1), -math.MaxFloat64, -1, -math.SmallestNonzeroFloat64,
	-math.Float64frombits(0x000fffffffffffff), // largest subnormal
	-math.Float64frombits(0x0010000000000000), // smallest normal
	math.Copysign(0, -1), 0,
	math.SmallestNonzeroFloat64, math.Float64frombits(0x000fffffffffffff),
	math.Float64frombits(0x0010000000000000), 1, math.MaxFloat64, math.Inf(1),
}

var float32Edges = []float32{
	float32(math.Inf(-1)), -math.MaxFloat32, -1, -math.SmallestNonzeroFloat32,
	-math.Float32frombits(0x007fffff), -math.Float32frombits(0x00800000),
	float32(math.Copysign(0, -1)), 0,
	math.SmallestNonzeroFloat32, math.Float32frombits(0x007fffff), math.Float32frombits(0x00800000),
	1, math.MaxFloat32, float32(math.Inf(1)),
}

func randFloat64(r *rand.Rand) float64 {
	switch r.IntN(4) {
	case 0:
		return floatEdges[r.IntN(len(floatEdges))]
	case 1:
		return float64(r.IntN(9)-4) / 2
	}
	for {
		if f := math.Float64frombits(r.Uint64()); !math.IsNaN(f) {
			return f
		}
	}
}

func randFloat32(r *rand.Rand) float32 {
	switch r.IntN(4) {
	case 0:
		return float32Edges[r.IntN(len(float32Edges))]
	case 1:
		return float32(r.IntN(9)-4) / 2
	}
	for {
		if f := math.Float32frombits(r.Uint32()); !math.IsNaN(float64(f)) {
			return f
		}
	}
}

// randBytes draws n bytes (n < 0: a random length up to 6) from a small alphabet with
// NUL, ASCII, a UTF-8 sequence and bytes that are not UTF-8, so that equal values,
// prefixes and high bytes all occur.
func randBytes(r *rand.Rand, n int) string {
	alphabet := []byte{0x00, 'a', 'b', 0x7f, 0x80, 0xc3, 0xa9, 0xff}
	if n < 0 {
		n = r.IntN(7)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// randDecimal draws a scaled integer with at most p digits, either sign.
func randDecimal(r *rand.Rand, p int32) decimal128.Num {
	top := new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil), big.NewInt(1))
	var v *big.Int
	switch r.IntN(4) {
	case 0:
		edges := []*big.Int{top, big.NewInt(0), big.NewInt(1), big.NewInt(-1), new(big.Int).Neg(top)}
		v = edges[r.IntN(len(edges))]
	case 1:
		v = big.NewInt(int64(r.IntN(21) - 10))
		if v.CmpAbs(top) > 0 {
			v.Set(top) // DECIMAL(1,s) holds no 10
		}
	default:
		digits := 1 + r.IntN(int(p))
		var sb strings.Builder
		for range digits {
			sb.WriteByte(byte('0' + r.IntN(10)))
		}
		v, _ = new(big.Int).SetString(sb.String(), 10)
		if r.IntN(2) == 0 {
			v.Neg(v)
		}
	}
	return decimal128.FromBigInt(v)
}

// sampleArray builds an array of n random values of dt, about one in ten NULL.
func sampleArray(t testing.TB, r *rand.Rand, dt arrow.DataType, n int) arrow.Array {
	t.Helper()
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	for range n {
		if r.IntN(10) == 0 {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.BooleanBuilder:
			bb.Append(r.IntN(2) == 1)
		case *array.Int8Builder:
			bb.Append(int8(randInt(r, 8)))
		case *array.Int16Builder:
			bb.Append(int16(randInt(r, 16)))
		case *array.Int32Builder:
			bb.Append(int32(randInt(r, 32)))
		case *array.Int64Builder:
			bb.Append(randInt(r, 64))
		case *array.Uint8Builder:
			bb.Append(uint8(randUint(r, 8)))
		case *array.Uint16Builder:
			bb.Append(uint16(randUint(r, 16)))
		case *array.Uint32Builder:
			bb.Append(uint32(randUint(r, 32)))
		case *array.Uint64Builder:
			bb.Append(randUint(r, 64))
		case *array.Float16Builder:
			// Normal half floats only: arrow's float16 conversion loses subnormals.
			for {
				h := float16.FromBits(uint16(r.Uint32()))
				if !h.IsNaN() && (h.Uint16()&0x7c00 != 0 || h.IsZero()) {
					bb.Append(h)
					break
				}
			}
		case *array.Float32Builder:
			bb.Append(randFloat32(r))
		case *array.Float64Builder:
			bb.Append(randFloat64(r))
		case *array.StringBuilder:
			bb.Append(randBytes(r, -1))
		case *array.LargeStringBuilder:
			bb.Append(randBytes(r, -1))
		case *array.StringViewBuilder:
			bb.Append(randBytes(r, -1))
		case *array.BinaryBuilder:
			bb.Append([]byte(randBytes(r, -1)))
		case *array.FixedSizeBinaryBuilder:
			bb.Append([]byte(randBytes(r, dt.(*arrow.FixedSizeBinaryType).ByteWidth)))
		case *array.Date32Builder:
			bb.Append(arrow.Date32(randInt(r, 32)))
		case *array.Date64Builder:
			bb.Append(arrow.Date64(randInt(r, 32) * 86400000))
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(randInt(r, 64)))
		case *array.Time32Builder:
			bb.Append(arrow.Time32(randInt(r, 32)))
		case *array.Time64Builder:
			bb.Append(arrow.Time64(randInt(r, 64)))
		case *array.Decimal128Builder:
			bb.Append(randDecimal(r, dt.(*arrow.Decimal128Type).Precision))
		case *array.BinaryDictionaryBuilder:
			if err := bb.AppendString(randBytes(r, -1)); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("no sample builder for %s (%T)", dt, b)
		}
	}
	return b.NewArray()
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// TestCodecOrderAndRoundTrip is the codecs' contract over random values of every
// type: the byte order is types.Compare's order, and decoding gives the value back.
func TestCodecOrderAndRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2026))
	for _, dt := range codecTestTypes {
		t.Run(types.Name(dt)+"/"+dt.String(), func(t *testing.T) {
			c := mustCodec(t, dt)
			arr := sampleArray(t, r, dt, 500)
			var vals []types.Value
			var encs [][]byte
			width := widthOf(c.Type())
			for i := range arr.Len() {
				v := types.ValueAt(arr, i)
				enc, ok := c.Encode(v)
				if v.Null {
					if ok {
						t.Fatalf("row %d: NULL encoded as %x", i, enc)
					}
					continue
				}
				if !ok {
					t.Fatalf("row %d: %s (%s) refused", i, v, v.Type)
				}
				if width > 0 && len(enc) != width {
					t.Fatalf("%s encoded in %d bytes, want %d", v, len(enc), width)
				}
				dec, err := c.Decode(enc)
				if err != nil {
					t.Fatalf("decode of %s (%x): %v", v, enc, err)
				}
				if !arrow.TypeEqual(dec.Type, c.Type()) || dec.Null || types.Compare(dec, v) != 0 {
					t.Fatalf("%s (%s) came back as %s (%s)", v, v.Type, dec, dec.Type)
				}
				// Text is compared too, except where it legitimately differs: -0.0 comes back
				// as 0.0 and half floats come back as FLOAT.
				if dt.ID() != arrow.FLOAT16 && !(types.IsFloat(dt) && v.F == 0) && dec.String() != v.String() {
					t.Fatalf("%s came back rendering as %s", v, dec)
				}
				if again, _ := c.Encode(dec); !bytes.Equal(again, enc) {
					t.Fatalf("%s re-encoded as %x, first %x", v, again, enc)
				}
				vals, encs = append(vals, v), append(encs, enc)
			}
			for i := range vals {
				for j := range vals {
					if got, want := sign(c.Compare(encs[i], encs[j])), sign(types.Compare(vals[i], vals[j])); got != want {
						t.Fatalf("%s vs %s: bytes %x vs %x compare %d, values %d", vals[i], vals[j], encs[i], encs[j], got, want)
					}
				}
			}
		})
	}
}

// ascending checks that values listed in increasing SQL order, written out by hand
// rather than sorted by types.Compare, encode to strictly increasing bytes.
func ascending(t *testing.T, dt arrow.DataType, vals []types.Value) {
	t.Helper()
	c := mustCodec(t, dt)
	var prev []byte
	for i, v := range vals {
		enc, ok := c.Encode(v)
		if !ok {
			t.Fatalf("%s: %s refused", types.Name(dt), v)
		}
		if i > 0 && bytes.Compare(prev, enc) >= 0 {
			t.Errorf("%s: %s (%x) does not encode above its predecessor (%x)", types.Name(dt), v, enc, prev)
		}
		prev = enc
	}
}

func TestCodecEdgesAscend(t *testing.T) {
	ints := func(dt arrow.DataType, xs ...int64) []types.Value {
		out := make([]types.Value, len(xs))
		for i, x := range xs {
			out[i] = types.Value{Type: dt, I: x}
		}
		return out
	}
	uints := func(dt arrow.DataType, xs ...uint64) []types.Value {
		out := make([]types.Value, len(xs))
		for i, x := range xs {
			out[i] = types.Value{Type: dt, U: x}
		}
		return out
	}
	ascending(t, types.Int8, ints(types.Int8, math.MinInt8, math.MinInt8+1, -1, 0, 1, math.MaxInt8-1, math.MaxInt8))
	ascending(t, types.Int16, ints(types.Int16, math.MinInt16, -256, -1, 0, 255, 256, math.MaxInt16))
	ascending(t, types.Int32, ints(types.Int32, math.MinInt32, -65536, -1, 0, 1, 1<<24, math.MaxInt32))
	ascending(t, types.Int64, ints(types.Int64, math.MinInt64, math.MinInt64+1, -1<<32, -1, 0, 1, 1<<32, math.MaxInt64-1, math.MaxInt64))
	ascending(t, types.Uint8, uints(types.Uint8, 0, 1, 127, 128, math.MaxUint8))
	ascending(t, types.Uint16, uints(types.Uint16, 0, 255, 256, math.MaxUint16))
	ascending(t, types.Uint32, uints(types.Uint32, 0, 1, 1<<31-1, 1<<31, math.MaxUint32))
	ascending(t, types.Uint64, uints(types.Uint64, 0, 1, 1<<63-1, 1<<63, math.MaxUint64))
	// Dates from before the proleptic year 1 to far after 1970; timestamps to the ends of int64.
	ascending(t, types.Date, ints(types.Date, math.MinInt32, -719528, -719162, -25567, -1, 0, 1, 2932896, math.MaxInt32))
	for _, dt := range []arrow.DataType{types.Timestamp, types.TimestampTZ, &arrow.TimestampType{Unit: arrow.Nanosecond}} {
		ascending(t, dt, ints(dt, math.MinInt64, math.MinInt64+1, -62135596800000000, -1, 0, 1, math.MaxInt64-1, math.MaxInt64))
	}
	ascending(t, arrow.FixedWidthTypes.Time32ms, ints(arrow.FixedWidthTypes.Time32ms, 0, 1, 1000, 86399999))
	ascending(t, arrow.FixedWidthTypes.Time64ns, ints(arrow.FixedWidthTypes.Time64ns, 0, 1, 86399999999999))
	ascending(t, types.Boolean, []types.Value{types.BoolValue(false), types.BoolValue(true)})

	ascending(t, types.Float64, []types.Value{
		types.FloatValue(math.Inf(-1)), types.FloatValue(-math.MaxFloat64), types.FloatValue(-1),
		types.FloatValue(-math.Float64frombits(0x0010000000000000)),
		types.FloatValue(-math.Float64frombits(0x000fffffffffffff)),
		types.FloatValue(-math.SmallestNonzeroFloat64), types.FloatValue(0),
		types.FloatValue(math.SmallestNonzeroFloat64), types.FloatValue(math.Float64frombits(0x000fffffffffffff)),
		types.FloatValue(math.Float64frombits(0x0010000000000000)), types.FloatValue(1),
		types.FloatValue(math.MaxFloat64), types.FloatValue(math.Inf(1)),
	})
	var f32s []types.Value
	for _, f := range []float32{float32(math.Inf(-1)), -math.MaxFloat32, -1, -math.SmallestNonzeroFloat32, 0,
		math.SmallestNonzeroFloat32, 1, math.MaxFloat32, float32(math.Inf(1))} {
		f32s = append(f32s, types.Value{Type: types.Float32, F: float64(f)})
	}
	ascending(t, types.Float32, f32s)

	strs := []string{"", "\x00", "\x00\x00", "a", "a\x00", "ab", "abc", "b", "\x7f", "\x80", "\xc3\xa9", "\xff", "\xff\xff"}
	var ss, bs []types.Value
	for _, s := range strs {
		ss = append(ss, types.StringValue(s))
		bs = append(bs, types.Value{Type: types.Binary, S: s})
	}
	ascending(t, types.String, ss)
	ascending(t, types.Binary, bs)

	dec := func(dt arrow.DataType, xs ...string) []types.Value {
		out := make([]types.Value, len(xs))
		for i, x := range xs {
			v, ok := new(big.Int).SetString(x, 10)
			if !ok {
				t.Fatalf("bad decimal %q", x)
			}
			out[i] = types.Value{Type: dt, D: decimal128.FromBigInt(v)}
		}
		return out
	}
	max38 := strings.Repeat("9", 38)
	for _, scale := range []int32{0, 10, 38} {
		dt := &arrow.Decimal128Type{Precision: 38, Scale: scale}
		ascending(t, dt, dec(dt, "-"+max38, "-"+max38[1:], "-18446744073709551617", "-18446744073709551616",
			"-1", "0", "1", "18446744073709551615", "18446744073709551616", max38[1:], max38))
	}
}

// TestCodecWorkedExamples pins the byte layouts that docs/format/bounds.md shows.
func TestCodecWorkedExamples(t *testing.T) {
	dec2 := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	cases := []struct {
		dt  arrow.DataType
		v   types.Value
		hex string
	}{
		{types.Int64, types.IntValue(-1), "7fffffffffffffff"},
		{types.Int64, types.IntValue(0), "8000000000000000"},
		{types.Int64, types.IntValue(math.MinInt64), "0000000000000000"},
		{types.Int32, types.Value{Type: types.Int32, I: 5}, "80000005"},
		{types.Int8, types.Value{Type: types.Int8, I: -128}, "00"},
		{types.Uint16, types.Value{Type: types.Uint16, U: 258}, "0102"},
		{types.Float64, types.FloatValue(1), "bff0000000000000"},
		{types.Float64, types.FloatValue(-1), "400fffffffffffff"},
		{types.Float64, types.FloatValue(0), "8000000000000000"},
		{types.Float64, types.FloatValue(math.Copysign(0, -1)), "8000000000000000"},
		{types.Float64, types.FloatValue(math.Inf(-1)), "000fffffffffffff"},
		{types.Float32, types.Value{Type: types.Float32, F: 1.5}, "bfc00000"},
		{types.Float32, types.Value{Type: types.Float32, F: -2}, "3fffffff"},
		{types.String, types.StringValue("ab"), "6162"},
		{types.String, types.StringValue(""), ""},
		{types.Boolean, types.BoolValue(true), "01"},
		{types.Date, types.DateValue(-1), "7fffffff"},
		{types.Date, types.DateValue(19723), "80004d0b"},   // 2024-01-01
		{types.Date, types.DateValue(-719162), "7ff506c6"}, // 0001-01-01
		{types.Timestamp, types.Value{Type: types.Timestamp, I: 1}, "8000000000000001"},
		{types.Timestamp, types.Value{Type: types.Timestamp, I: 1704067200000000}, "80060dd710212000"},
		{types.TimestampTZ, types.Value{Type: types.TimestampTZ, I: -86400000000}, "7fffffebe228a000"},
		{types.Float64, types.FloatValue(2.5), "c004000000000000"},
		{types.Float64, types.FloatValue(math.Inf(1)), "fff0000000000000"},
		{dec2, types.Value{Type: dec2, D: decimal128.FromI64(-1250)}, "7ffffffffffffffffffffffffffffb1e"},
		{dec2, types.Value{Type: dec2, D: decimal128.FromI64(-1)}, "7fffffffffffffffffffffffffffffff"},
		{dec2, types.Value{Type: dec2, D: decimal128.FromI64(1250)}, "800000000000000000000000000004e2"},
	}
	for _, tc := range cases {
		got, ok := mustCodec(t, tc.dt).Encode(tc.v)
		if !ok || hex.EncodeToString(got) != tc.hex {
			t.Errorf("%s %s: got %x (ok %v), want %s", types.Name(tc.dt), tc.v, got, ok, tc.hex)
		}
	}
}

func TestCodecNegativeZero(t *testing.T) {
	for _, dt := range []arrow.DataType{types.Float32, types.Float64} {
		c := mustCodec(t, dt)
		neg, ok1 := c.Encode(types.Value{Type: dt, F: math.Copysign(0, -1)})
		pos, ok2 := c.Encode(types.Value{Type: dt, F: 0})
		if !ok1 || !ok2 || !bytes.Equal(neg, pos) {
			t.Fatalf("%s: -0 %x and +0 %x should encode alike", types.Name(dt), neg, pos)
		}
		v, err := c.Decode(neg)
		if err != nil || v.F != 0 || math.Signbit(v.F) {
			t.Fatalf("%s: zero decoded as %v, %v", types.Name(dt), v.F, err)
		}
	}
}

func TestCodecRefuses(t *testing.T) {
	dec2 := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	cases := []struct {
		name string
		dt   arrow.DataType
		v    types.Value
	}{
		{"NULL", types.Int64, types.NullOf(types.Int64)},
		{"NULL string", types.String, types.NullOf(types.String)},
		{"zero value", types.Int64, types.Value{}},
		{"NaN", types.Float64, types.FloatValue(math.NaN())},
		{"negative NaN", types.Float64, types.FloatValue(math.Float64frombits(0xfff8000000000001))},
		{"NaN in FLOAT", types.Float32, types.Value{Type: types.Float32, F: math.NaN()}},
		{"NaN in FLOAT16", arrow.FixedWidthTypes.Float16, types.Value{Type: arrow.FixedWidthTypes.Float16, F: math.NaN()}},
		{"string for BIGINT", types.Int64, types.StringValue("5")},
		{"unsigned for BIGINT", types.Int64, types.Value{Type: types.Uint64, U: 5}},
		{"double for BIGINT", types.Int64, types.FloatValue(5)},
		{"BIGINT for UBIGINT", types.Uint64, types.IntValue(5)},
		{"BIGINT for VARCHAR", types.String, types.IntValue(5)},
		{"BIGINT for DOUBLE", types.Float64, types.IntValue(5)},
		{"BIGINT for DATE", types.Date, types.IntValue(5)},
		{"DATE for TIMESTAMP", types.Timestamp, types.DateValue(5)},
		{"BIGINT for BOOLEAN", types.Boolean, types.IntValue(1)},
		{"128 for TINYINT", types.Int8, types.IntValue(128)},
		{"-129 for TINYINT", types.Int8, types.IntValue(-129)},
		{"1<<31 for INTEGER", types.Int32, types.IntValue(1 << 31)},
		{"256 for UTINYINT", types.Uint8, types.Value{Type: types.Uint64, U: 256}},
		{"1<<32 for UINTEGER", types.Uint32, types.Value{Type: types.Uint64, U: 1 << 32}},
		{"day beyond int32", types.Date, types.Value{Type: types.Date, I: 1 << 31}},
		{"0.1 for FLOAT", types.Float32, types.FloatValue(0.1)},
		{"1e300 for FLOAT", types.Float32, types.FloatValue(1e300)},
		{"ms value for µs column", types.Timestamp, types.Value{Type: &arrow.TimestampType{Unit: arrow.Millisecond}, I: 1}},
		{"TIME ms for TIME s", arrow.FixedWidthTypes.Time32s, types.Value{Type: arrow.FixedWidthTypes.Time32ms, I: 1}},
		{"TIME µs for TIME ns", arrow.FixedWidthTypes.Time64ns, types.Value{Type: arrow.FixedWidthTypes.Time64us, I: 1}},
		{"scale 3 for scale 2", dec2, types.Value{Type: &arrow.Decimal128Type{Precision: 10, Scale: 3}, D: decimal128.FromI64(1)}},
		{"11 digits for DECIMAL(10,2)", dec2, types.Value{Type: &arrow.Decimal128Type{Precision: 38, Scale: 2}, D: decimal128.FromI64(1e10)}},
		{"-11 digits for DECIMAL(10,2)", dec2, types.Value{Type: &arrow.Decimal128Type{Precision: 38, Scale: 2}, D: decimal128.FromI64(-1e10)}},
		{"BIGINT for DECIMAL", dec2, types.IntValue(1)},
		{"5 bytes for BLOB(4)", &arrow.FixedSizeBinaryType{ByteWidth: 4}, types.Value{Type: types.Binary, S: "abcde"}},
		{"binary view value", types.Binary, types.Value{Type: arrow.BinaryTypes.BinaryView, S: "YWI="}},
	}
	for _, tc := range cases {
		if b, ok := mustCodec(t, tc.dt).Encode(tc.v); ok {
			t.Errorf("%s: encoded as %x, want refused", tc.name, b)
		}
	}
	// Values of another width in the same family are taken when they fit.
	if b, ok := mustCodec(t, types.Int8).Encode(types.IntValue(-128)); !ok || !bytes.Equal(b, []byte{0}) {
		t.Errorf("BIGINT -128 for TINYINT: %x, %v", b, ok)
	}
	if _, ok := mustCodec(t, types.Float32).Encode(types.FloatValue(0.5)); !ok {
		t.Errorf("DOUBLE 0.5 for FLOAT refused")
	}
	if _, ok := mustCodec(t, types.Binary).Encode(types.StringValue("é")); !ok {
		t.Errorf("VARCHAR for BLOB refused")
	}
	var zero Codec
	if _, ok := zero.Encode(types.IntValue(1)); ok {
		t.Errorf("the zero Codec encoded a value")
	}
	if _, err := zero.Decode([]byte{1}); errs.CodeOf(err) != errs.Internal {
		t.Errorf("the zero Codec decoded: %v", err)
	}
}

func TestCodecForUnsupported(t *testing.T) {
	for _, dt := range []arrow.DataType{
		nil, types.Interval, types.Null,
		arrow.FixedWidthTypes.DayTimeInterval, arrow.FixedWidthTypes.MonthInterval,
		arrow.FixedWidthTypes.Duration_us,
		arrow.ListOf(types.Int64), arrow.LargeListOf(types.Int64), arrow.FixedSizeListOf(2, types.Int64),
		arrow.StructOf(arrow.Field{Name: "a", Type: types.Int64}),
		arrow.MapOf(types.String, types.Int64),
		&arrow.Decimal256Type{Precision: 40, Scale: 2},
		arrow.BinaryTypes.BinaryView,
		extensions.NewUUIDType(),
		arrow.DenseUnionOf(nil, nil),
	} {
		if c, ok := CodecFor(dt); ok {
			t.Errorf("%v has a codec for %s", dt, c.Type())
		}
	}
	// Types Lore reads as another get that type's codec.
	for _, tc := range []struct{ dt, want arrow.DataType }{
		{arrow.FixedWidthTypes.Date64, types.Date},
		{arrow.FixedWidthTypes.Float16, types.Float32},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: types.Int64}, types.Int64},
		{types.TimestampTZ, types.TimestampTZ},
	} {
		if c := mustCodec(t, tc.dt); !arrow.TypeEqual(c.Type(), tc.want) {
			t.Errorf("codec of %s has type %s, want %s", tc.dt, c.Type(), tc.want)
		}
	}
}

func TestCodecDecodeMalformed(t *testing.T) {
	for _, dt := range codecTestTypes {
		c := mustCodec(t, dt)
		w := widthOf(c.Type())
		if w == 0 {
			continue
		}
		for _, n := range []int{0, w - 1, w + 1, 2 * w} {
			if n == w {
				continue
			}
			_, err := c.Decode(make([]byte, n))
			if errs.CodeOf(err) != errs.Internal {
				t.Errorf("%s: %d bytes decoded (err %v)", dt, n, err)
			}
		}
	}
	bad := []struct {
		dt  arrow.DataType
		hex string
	}{
		{types.Boolean, "02"},
		{types.Boolean, "ff"},
		{types.Float64, "fff8000000000000"}, // +NaN
		{types.Float64, "0007ffffffffffff"}, // -NaN
		{types.Float64, "7fffffffffffffff"}, // -0.0
		{types.Float32, "ffc00000"},         // +NaN
		{types.Float32, "7fffffff"},         // -0.0
		{&arrow.Decimal128Type{Precision: 3, Scale: 0}, "800000000000000000000000000003e8"},  // 1000
		{&arrow.Decimal128Type{Precision: 3, Scale: 0}, "7ffffffffffffffffffffffffffffc18"},  // -1000
		{&arrow.Decimal128Type{Precision: 38, Scale: 0}, "00000000000000000000000000000000"}, // -2^127
	}
	for _, tc := range bad {
		b, _ := hex.DecodeString(tc.hex)
		if v, err := mustCodec(t, tc.dt).Decode(b); errs.CodeOf(err) != errs.Internal {
			t.Errorf("%s %s decoded as %s (err %v)", types.Name(tc.dt), tc.hex, v, err)
		}
	}
}

// fuzzCodecs are the codecs FuzzCodecDecode picks from by its first argument.
var fuzzCodecs = func() []Codec {
	var out []Codec
	for _, dt := range codecTestTypes {
		c, _ := CodecFor(dt)
		out = append(out, c)
	}
	return out
}()

// FuzzCodecDecode feeds arbitrary bytes to every codec: decoding either fails with
// INTERNAL or yields a value whose encoding is exactly the input (so every encoding
// is canonical) — and never panics.
func FuzzCodecDecode(f *testing.F) {
	for i := range fuzzCodecs {
		f.Add(uint8(i), []byte{})
		f.Add(uint8(i), []byte{0x80, 0, 0, 0, 0, 0, 0, 1})
		f.Add(uint8(i), bytes.Repeat([]byte{0xff}, 16))
	}
	f.Fuzz(func(t *testing.T, k uint8, b []byte) {
		c := fuzzCodecs[int(k)%len(fuzzCodecs)]
		v, err := c.Decode(b)
		if err != nil {
			if errs.CodeOf(err) != errs.Internal {
				t.Fatalf("%s: error %v has code %s", c.Type(), err, errs.CodeOf(err))
			}
			return
		}
		enc, ok := c.Encode(v)
		if !ok || !bytes.Equal(enc, b) {
			t.Fatalf("%s: %x decoded as %s, which encodes as %x (ok %v)", c.Type(), b, v, enc, ok)
		}
	})
}

func BenchmarkCodecEncodeInt64(b *testing.B) {
	c := mustCodec(b, types.Int64)
	v := types.IntValue(-123456789)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		v.I = int64(i)
		if _, ok := c.Encode(v); !ok {
			b.Fatal("refused")
		}
	}
}

func BenchmarkCodecEncodeString(b *testing.B) {
	c := mustCodec(b, types.String)
	v := types.StringValue("the quick brown fox jumps")
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Encode(v); !ok {
			b.Fatal("refused")
		}
	}
}
