package stats

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/zeebo/xxh3"

	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

func TestHash8MatchesXXH3(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var buf [8]byte
	check := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		if got, want := hash8(v), xxh3.Hash(buf[:]); got != want {
			t.Fatalf("hash8(%#x) = %#x, XXH3-64 = %#x", v, got, want)
		}
	}
	for _, v := range []uint64{0, 1, math.MaxUint64, 1 << 63, canonicalNaN} {
		check(v)
	}
	for range 100000 {
		check(r.Uint64())
	}
}

// TestHashIsFixed pins the hash: these values are part of the sketch format, and a
// change here would silently break every stored HLL sketch.
func TestHashIsFixed(t *testing.T) {
	// XXH3-64 of the empty input with seed 0 is the reference implementation's
	// published test vector.
	if got := HashValue(types.StringValue("")); got != 0x2d06800538d394c2 {
		t.Fatalf("hash of '' = %#x, want XXH3-64's 0x2d06800538d394c2", got)
	}
	le := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	lei := func(v int64) []byte { return le(uint64(v)) }
	cases := []struct {
		v    types.Value
		want []byte
	}{
		{types.IntValue(5), le(5)},
		{types.Value{Type: types.Int8, I: -1}, le(math.MaxUint64)},
		{types.Value{Type: types.Uint32, U: 7}, le(7)},
		{types.FloatValue(1.5), le(math.Float64bits(1.5))},
		{types.FloatValue(math.Copysign(0, -1)), le(0)},
		{types.FloatValue(math.NaN()), le(0x7ff8000000000001)},
		{types.Value{Type: types.Float32, F: math.Float64frombits(0x7ff0000000000abc)}, le(0x7ff8000000000001)},
		{types.DateValue(19000), le(19000)},
		{types.Value{Type: types.Timestamp, I: -1e15}, lei(-1e15)},
		{types.StringValue("lore"), []byte("lore")},
		{types.BoolValue(true), []byte{1}},
		{types.BoolValue(false), []byte{0}},
		{types.Value{Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, D: decimal128.FromI64(-150)},
			append(append(lei(-150), lei(-1)...), 2)},
		{types.Value{Type: types.Interval, Iv: arrow.MonthDayNanoInterval{Months: 1, Days: -2, Nanoseconds: 3}},
			append(append(binary.LittleEndian.AppendUint32(nil, 1), binary.LittleEndian.AppendUint32(nil, 0xfffffffe)...), le(3)...)},
	}
	for _, c := range cases {
		if got, want := HashValue(c.v), xxh3.Hash(c.want); got != want {
			t.Errorf("hash of %s (%s) = %#x, want XXH3-64 of % x = %#x", c.v, types.Name(c.v.Type), got, c.want, want)
		}
	}
	if HashValue(types.NullOf(types.Int64)) != 0 {
		t.Error("NULL must hash as 0")
	}
}

func TestHashCanonicalForms(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		v := int64(int8(r.Uint32()))
		h := HashValue(types.IntValue(v))
		for _, dt := range []arrow.DataType{types.Int8, types.Int16, types.Int32} {
			if got := HashValue(types.Value{Type: dt, I: v}); got != h {
				t.Fatalf("%s %d hashes %#x, BIGINT %#x", types.Name(dt), v, got, h)
			}
		}
		if v >= 0 {
			for _, dt := range []arrow.DataType{types.Uint8, types.Uint16, types.Uint32, types.Uint64} {
				if got := HashValue(types.Value{Type: dt, U: uint64(v)}); got != h {
					t.Fatalf("%s %d hashes %#x, BIGINT %#x", types.Name(dt), v, got, h)
				}
			}
		}
		f := float64(float32(r.NormFloat64()))
		if HashValue(types.Value{Type: types.Float32, F: f}) != HashValue(types.FloatValue(f)) {
			t.Fatalf("FLOAT %v and DOUBLE %v hash differently", f, f)
		}
	}
	if HashValue(types.FloatValue(0)) != HashValue(types.FloatValue(math.Copysign(0, -1))) {
		t.Error("-0 and +0 hash differently")
	}
	if HashValue(types.FloatValue(math.NaN())) != HashValue(types.FloatValue(-math.NaN())) ||
		HashValue(types.FloatValue(math.NaN())) != HashValue(types.FloatValue(math.Float64frombits(0x7ff0000000000abc))) {
		t.Error("NaNs hash differently")
	}
	if HashValue(types.StringValue("a")) == HashValue(types.StringValue("b")) {
		t.Error("distinct strings collide")
	}
}

// columnCase is one array of a type, with a generator of random rows.
type columnCase struct {
	name string
	arr  arrow.Array
}

func randomColumns(r *rand.Rand, n int) []columnCase {
	mem := memory.DefaultAllocator
	null := func() bool { return r.IntN(8) == 0 }
	var cs []columnCase
	add := func(name string, b array.Builder, appendOne func()) {
		for range n {
			if null() {
				b.AppendNull()
			} else {
				appendOne()
			}
		}
		cs = append(cs, columnCase{name, b.NewArray()})
	}
	{
		b := array.NewInt8Builder(mem)
		add("int8", b, func() { b.Append(int8(r.Uint32())) })
	}
	{
		b := array.NewInt16Builder(mem)
		add("int16", b, func() { b.Append(int16(r.Uint32())) })
	}
	{
		b := array.NewInt32Builder(mem)
		add("int32", b, func() { b.Append(int32(r.Uint32())) })
	}
	{
		b := array.NewInt64Builder(mem)
		extremes := []int64{math.MinInt64, math.MaxInt64, 0, -1}
		add("int64", b, func() {
			if r.IntN(4) == 0 {
				b.Append(extremes[r.IntN(len(extremes))])
			} else {
				b.Append(int64(r.Uint64()))
			}
		})
	}
	{
		b := array.NewUint8Builder(mem)
		add("uint8", b, func() { b.Append(uint8(r.Uint32())) })
	}
	{
		b := array.NewUint16Builder(mem)
		add("uint16", b, func() { b.Append(uint16(r.Uint32())) })
	}
	{
		b := array.NewUint32Builder(mem)
		add("uint32", b, func() { b.Append(r.Uint32()) })
	}
	{
		b := array.NewUint64Builder(mem)
		add("uint64", b, func() { b.Append(r.Uint64()) })
	}
	specials := []float64{math.NaN(), -math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1),
		math.SmallestNonzeroFloat64, math.MaxFloat64, math.Float64frombits(0x7ff0000000000abc)}
	{
		b := array.NewFloat64Builder(mem)
		add("float64", b, func() {
			if r.IntN(3) == 0 {
				b.Append(specials[r.IntN(len(specials))])
			} else {
				b.Append(r.NormFloat64() * 1e6)
			}
		})
	}
	{
		b := array.NewFloat32Builder(mem)
		add("float32", b, func() {
			if r.IntN(3) == 0 {
				b.Append(float32(specials[r.IntN(len(specials))]))
			} else {
				b.Append(float32(r.NormFloat64()))
			}
		})
	}
	{
		b := array.NewFloat16Builder(mem)
		add("float16", b, func() { b.Append(float16.New(float32(r.NormFloat64()))) })
	}
	{
		b := array.NewBooleanBuilder(mem)
		add("bool", b, func() { b.Append(r.IntN(2) == 0) })
	}
	randString := func() string {
		if r.IntN(5) == 0 {
			return ""
		}
		s := make([]byte, r.IntN(40))
		for i := range s {
			s[i] = byte(r.Uint32())
		}
		return string(s)
	}
	{
		b := array.NewStringBuilder(mem)
		add("string", b, func() { b.Append(randString()) })
	}
	{
		b := array.NewLargeStringBuilder(mem)
		add("large_string", b, func() { b.Append(randString()) })
	}
	{
		b := array.NewStringViewBuilder(mem)
		add("string_view", b, func() { b.Append(randString()) })
	}
	{
		b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		add("binary", b, func() { b.Append([]byte(randString())) })
	}
	{
		b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.LargeBinary)
		add("large_binary", b, func() { b.Append([]byte(randString())) })
	}
	{
		b := array.NewFixedSizeBinaryBuilder(mem, &arrow.FixedSizeBinaryType{ByteWidth: 16})
		add("uuid", b, func() {
			var u [16]byte
			binary.LittleEndian.PutUint64(u[:], r.Uint64())
			b.Append(u[:])
		})
	}
	{
		b := array.NewDate32Builder(mem)
		add("date32", b, func() { b.Append(arrow.Date32(int32(r.Uint32()))) })
	}
	{
		b := array.NewDate64Builder(mem)
		add("date64", b, func() { b.Append(arrow.Date64(int64(int32(r.Uint32())) * 86400000)) })
	}
	for _, unit := range []arrow.TimeUnit{arrow.Second, arrow.Millisecond, arrow.Microsecond, arrow.Nanosecond} {
		for _, tz := range []string{"", "UTC"} {
			b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: unit, TimeZone: tz})
			add(fmt.Sprintf("timestamp_%s_%q", unit, tz), b, func() {
				switch r.IntN(4) {
				case 0:
					b.Append(arrow.Timestamp(math.MinInt64 + int64(r.IntN(2))))
				case 1:
					b.Append(arrow.Timestamp(math.MaxInt64 - int64(r.IntN(2))))
				default:
					b.Append(arrow.Timestamp(int64(r.Uint64())))
				}
			})
		}
	}
	{
		b := array.NewTime64Builder(mem, arrow.FixedWidthTypes.Time64us.(*arrow.Time64Type))
		add("time64", b, func() { b.Append(arrow.Time64(r.Int64N(86400e6))) })
	}
	{
		b := array.NewTime32Builder(mem, arrow.FixedWidthTypes.Time32ms.(*arrow.Time32Type))
		add("time32", b, func() { b.Append(arrow.Time32(r.Int32N(86400e3))) })
	}
	for _, scale := range []int32{0, 2, 10} {
		b := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: scale})
		add(fmt.Sprintf("decimal_s%d", scale), b, func() {
			b.Append(decimal128.New(int64(r.Uint64())>>r.IntN(64), r.Uint64()))
		})
	}
	{
		b := array.NewMonthDayNanoIntervalBuilder(mem)
		add("interval", b, func() {
			b.Append(arrow.MonthDayNanoInterval{Months: int32(r.Uint32()), Days: int32(r.Uint32()), Nanoseconds: int64(r.Uint64())})
		})
	}
	{
		b := array.NewDurationBuilder(mem, &arrow.DurationType{Unit: arrow.Millisecond})
		add("duration", b, func() { b.Append(arrow.Duration(r.Int64())) })
	}
	{
		vb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
		ib := vb.ValueBuilder().(*array.Int32Builder)
		add("list", vb, func() {
			vb.Append(true)
			for range r.IntN(3) {
				ib.Append(r.Int32N(10))
			}
		})
	}
	// Dictionaries: string values (one of them NULL) with few and with many entries.
	for _, entries := range []int{3, 2 * n} {
		dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
		b := array.NewDictionaryBuilder(mem, dt).(*array.BinaryDictionaryBuilder)
		words := make([]string, entries)
		for i := range words {
			words[i] = fmt.Sprintf("w%d-%s", i, randString())
		}
		add(fmt.Sprintf("dict_string_%d", entries), b, func() { _ = b.AppendString(words[r.IntN(len(words))]) })
	}
	{
		dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Int64}
		b := array.NewDictionaryBuilder(mem, dt).(*array.Int64DictionaryBuilder)
		add("dict_int64", b, func() { _ = b.Append(r.Int64N(5)) })
	}
	{
		// A dictionary whose dictionary holds a NULL entry.
		dict := array.NewStringBuilder(mem)
		dict.AppendValues([]string{"a", "", "c"}, []bool{true, false, true})
		idx := array.NewInt8Builder(mem)
		for range n {
			if null() {
				idx.AppendNull()
			} else {
				idx.Append(int8(r.IntN(3)))
			}
		}
		dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
		cs = append(cs, columnCase{"dict_null_entry", array.NewDictionaryArray(dt, idx.NewArray(), dict.NewArray())})
	}
	{
		// An empty dictionary: every index NULL.
		idx := array.NewInt8Builder(mem)
		for range n {
			idx.AppendNull()
		}
		dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
		cs = append(cs, columnCase{"dict_empty", array.NewDictionaryArray(dt, idx.NewArray(), array.NewStringBuilder(mem).NewArray())})
	}
	cs = append(cs, columnCase{"null", array.NewNull(n)})
	// A slice, so that offsets are exercised.
	{
		b := array.NewInt64Builder(mem)
		add("int64_base", b, func() { b.Append(r.Int64()) })
		last := cs[len(cs)-1]
		cs[len(cs)-1] = columnCase{"int64_slice", array.NewSlice(last.arr, 3, int64(n))}
	}
	return cs
}

func TestHashColumnMatchesHashValue(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 500
	for _, c := range randomColumns(r, n) {
		t.Run(c.name, func(t *testing.T) {
			rows := c.arr.Len()
			all := make([]uint64, rows)
			HashColumn(c.arr, nil, all)
			sel := make([]int32, 0, rows)
			for i := rows - 1; i >= 0; i -= 1 + r.IntN(3) {
				sel = append(sel, int32(i))
			}
			some := make([]uint64, len(sel)+5) // longer than needed: only len(sel) written
			HashColumn(c.arr, sel, some)
			for i := range rows {
				want := HashValue(types.ValueAt(c.arr, i))
				if c.arr.IsNull(i) {
					want = 0
				}
				if all[i] != want {
					t.Fatalf("row %d (%s): HashColumn %#x, HashValue %#x", i, types.ValueAt(c.arr, i), all[i], want)
				}
			}
			for j, i := range sel {
				if some[j] != all[i] {
					t.Fatalf("selected row %d: %#x, unselected %#x", i, some[j], all[i])
				}
			}
		})
	}
}

func BenchmarkHashColumn(b *testing.B) {
	const rows = 8192
	r := rand.New(rand.NewPCG(7, 8))
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	for range rows {
		ib.Append(r.Int64())
		sb.Append(fmt.Sprintf("user-%d", r.IntN(1e6)))
	}
	out := make([]uint64, rows)
	for _, c := range []columnCase{{"int64", ib.NewArray()}, {"string", sb.NewArray()}} {
		b.Run(fmt.Sprintf("type=%s,rows=8K", c.name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				HashColumn(c.arr, nil, out)
			}
			b.ReportMetric(float64(b.N)*rows/b.Elapsed().Seconds()/1e6, "Mvalues/s")
		})
	}
}

// A decimal hashes alike whether its array is 64-bit or 128-bit: sketches built
// from either width merge.
func TestDecimalHashIsWidthFree(t *testing.T) {
	dt := types.Decimal(12, 2)
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	for _, v := range []int64{0, -1, 123456789, -99999999999} {
		vector.AppendValue(b, types.Value{Type: dt, D: decimal128.FromI64(v)})
	}
	narrow := b.NewArray()
	wide := vector.WideArray(narrow)
	h64, h128 := make([]uint64, narrow.Len()), make([]uint64, narrow.Len())
	HashColumn(narrow, nil, h64)
	HashColumn(wide, nil, h128)
	for i := range h64 {
		if h64[i] != h128[i] || h64[i] != HashValue(types.ValueAt(narrow, i)) {
			t.Errorf("row %d: %x in 64 bits, %x in 128, %x as a value", i, h64[i], h128[i], HashValue(types.ValueAt(narrow, i)))
		}
	}
}
