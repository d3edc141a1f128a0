package parquet

import (
	"encoding/binary"
	"io"
	"math"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/loredb/lore/types"
)

// BloomProbe is a set of values as a column's bloom filters hash them: each value in
// the plain encoding of the column's physical type (what writers hash), so that one
// probe checks every row group of a file.
type BloomProbe struct {
	keys [][]byte
}

// maxBloomBytes bounds the filter a reader fetches: the format's own limit on a
// split-block filter (128 MiB) plus room for its header. A column chunk that claims
// more is treated as having no filter.
const maxBloomBytes = 128<<20 + 1<<10

// BloomProbe converts vals — typed like the file's column c after normalisation, or
// a type that compares with it (a wider integer, a double for a float column) — to
// the values the column's bloom filters hold. ok is false when any value has no exact
// counterpart in the column's physical type (out of its range, a fraction of its time
// unit, a NaN, a decimal stored as variable-length bytes, INT96, booleans): a filter
// checked with an inexact value could rule out a row group that holds a match, so the
// filters are then not used. NULL values are left out: they never equal a row.
func (f *File) BloomProbe(c int, vals []types.Value) (*BloomProbe, bool) {
	if c < 0 || c >= len(f.cols) {
		return nil, false
	}
	col := f.cols[c]
	if col.leaf == nil || col.int96 {
		return nil, false
	}
	p := &BloomProbe{}
	for _, v := range vals {
		if v.Null {
			continue
		}
		keys, ok := plainKeys(col, f.schema.Field(c).Type, v)
		if !ok {
			return nil, false
		}
		p.keys = append(p.keys, keys...)
	}
	return p, len(p.keys) > 0
}

// plainKeys is the plain encoding of v in column col, whose normalised type is dt:
// one key, or two for a float zero (a row holding -0 equals 0, and hashes apart).
func plainKeys(col column, dt arrow.DataType, v types.Value) ([][]byte, bool) {
	vt := types.Unwrap(v.Type)
	dt = types.Unwrap(dt)
	switch col.leaf.PhysicalType() {
	case pq.Types.Int32:
		n, ok := intOf(col, dt, vt, v)
		if !ok || n < math.MinInt32 || n > math.MaxUint32 {
			return nil, false
		}
		return [][]byte{binary.LittleEndian.AppendUint32(nil, uint32(n))}, true
	case pq.Types.Int64:
		if types.IsUnsigned(dt) && types.IsUnsigned(vt) {
			return [][]byte{binary.LittleEndian.AppendUint64(nil, v.U)}, true
		}
		n, ok := intOf(col, dt, vt, v)
		if !ok {
			return nil, false
		}
		return [][]byte{binary.LittleEndian.AppendUint64(nil, uint64(n))}, true
	case pq.Types.Float:
		if !types.IsFloat(vt) || dt.ID() != arrow.FLOAT32 || math.IsNaN(v.F) || float64(float32(v.F)) != v.F {
			return nil, false
		}
		if v.F == 0 {
			return [][]byte{binary.LittleEndian.AppendUint32(nil, 0), binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(math.Copysign(0, -1))))}, true
		}
		return [][]byte{binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(v.F)))}, true
	case pq.Types.Double:
		if !types.IsFloat(vt) || dt.ID() != arrow.FLOAT64 || math.IsNaN(v.F) {
			return nil, false
		}
		if v.F == 0 {
			return [][]byte{binary.LittleEndian.AppendUint64(nil, 0), binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.Copysign(0, -1)))}, true
		}
		return [][]byte{binary.LittleEndian.AppendUint64(nil, math.Float64bits(v.F))}, true
	case pq.Types.ByteArray:
		if (types.IsString(dt) && types.IsString(vt)) || (types.IsBinary(dt) && types.IsBinary(vt)) {
			return [][]byte{[]byte(v.S)}, true
		}
	case pq.Types.FixedLenByteArray:
		size := col.leaf.TypeLength()
		switch {
		case sameDecimalScale(dt, vt):
			b, ok := fixedDecimal(v.D, size)
			return [][]byte{b}, ok
		case types.IsUUID(dt) && types.IsUUID(vt) && len(v.S) == size,
			types.IsBinary(dt) && types.IsBinary(vt) && len(v.S) == size && isFixedBinary(col.read):
			return [][]byte{[]byte(v.S)}, true
		}
	}
	return nil, false
}

// isFixedBinary reports whether a FIXED_LEN_BYTE_ARRAY column holds opaque bytes
// (fixed-size binary, a UUID) rather than numbers (a float16, an interval).
func isFixedBinary(read arrow.DataType) bool {
	if ext, ok := read.(arrow.ExtensionType); ok {
		read = ext.StorageType()
	}
	return read.ID() == arrow.FIXED_SIZE_BINARY
}

// intOf is the integer an INT32 or INT64 column stores for v: an integer within the
// column's own range, a date's days, a time or timestamp in the column's unit, a
// decimal's unscaled value at the column's scale.
func intOf(col column, dt, vt arrow.DataType, v types.Value) (int64, bool) {
	switch {
	case types.IsSigned(dt) && types.IsSigned(vt):
		lo, hi := signedRange(dt)
		return v.I, v.I >= lo && v.I <= hi
	case types.IsUnsigned(dt) && types.IsUnsigned(vt):
		if hi := unsignedMax(dt); v.U > hi {
			return 0, false
		}
		return int64(v.U), true
	case sameDecimalScale(dt, vt):
		n := int64(v.D.LowBits())
		if decimal128.FromI64(n) != v.D {
			return 0, false
		}
		if col.leaf.PhysicalType() == pq.Types.Int32 && (n < math.MinInt32 || n > math.MaxInt32) {
			return 0, false
		}
		return n, true
	case dt.ID() == arrow.DATE32 && vt.ID() == arrow.DATE32:
		return v.I, v.I >= math.MinInt32 && v.I <= math.MaxInt32
	case dt.ID() == arrow.TIMESTAMP && vt.ID() == arrow.TIMESTAMP:
		want, ok := col.read.(*arrow.TimestampType)
		if !ok {
			return 0, false
		}
		return exactRescale(v.I, vt.(*arrow.TimestampType).Unit, want.Unit)
	case (dt.ID() == arrow.TIME32 || dt.ID() == arrow.TIME64) && arrow.TypeEqual(dt, vt) && arrow.TypeEqual(dt, col.read):
		return v.I, true
	}
	return 0, false
}

// signedRange is the range of a signed integer type.
func signedRange(dt arrow.DataType) (int64, int64) {
	switch dt.ID() {
	case arrow.INT8:
		return math.MinInt8, math.MaxInt8
	case arrow.INT16:
		return math.MinInt16, math.MaxInt16
	case arrow.INT32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// unsignedMax is the largest value of an unsigned integer type.
func unsignedMax(dt arrow.DataType) uint64 {
	switch dt.ID() {
	case arrow.UINT8:
		return math.MaxUint8
	case arrow.UINT16:
		return math.MaxUint16
	case arrow.UINT32:
		return math.MaxUint32
	}
	return math.MaxUint64
}

// exactRescale converts n from one time unit to another, exactly or not at all.
func exactRescale(n int64, from, to arrow.TimeUnit) (int64, bool) {
	m, ok := rescale(n, from, to)
	if !ok {
		return 0, false
	}
	back, ok := rescale(m, to, from)
	return m, ok && back == n
}

// fixedDecimal is d as a FIXED_LEN_BYTE_ARRAY of size bytes stores it: big-endian
// two's complement, sign-extended; ok is false when d does not fit.
func fixedDecimal(d decimal128.Num, size int) ([]byte, bool) {
	if size <= 0 || size > 16 {
		return nil, false
	}
	var full [16]byte
	binary.BigEndian.PutUint64(full[:8], uint64(d.HighBits()))
	binary.BigEndian.PutUint64(full[8:], d.LowBits())
	sign := byte(0)
	if d.Sign() < 0 {
		sign = 0xff
	}
	for _, b := range full[:16-size] {
		if b != sign {
			return nil, false
		}
	}
	if size < 16 && (full[16-size]&0x80 != 0) != (sign == 0xff) {
		return nil, false
	}
	return append([]byte(nil), full[16-size:]...), true
}

// HasBloom reports whether column c's chunk in row group rg points at a bloom
// filter, as the footer says; reading it may still fail.
func (f *File) HasBloom(rg, c int) bool {
	_, ok := f.bloomChunk(rg, c)
	return ok
}

// BloomBytes is the size the footer records for the bloom filter of column c in row
// group rg, header included; 0 when it records none (older writers do not).
func (f *File) BloomBytes(rg, c int) int64 {
	leaf, ok := f.bloomChunk(rg, c)
	if !ok {
		return 0
	}
	return f.bloomLength(rg, leaf)
}

// bloomChunk is the leaf column index of column c when its chunk in row group rg has
// a bloom filter that lies within the file, unencrypted.
func (f *File) bloomChunk(rg, c int) (int, bool) {
	if rg < 0 || rg >= len(f.groups) || c < 0 || c >= len(f.cols) || f.cols[c].leaf == nil {
		return 0, false
	}
	leaf := f.cols[c].leaves[0]
	ci := f.chunk(rg, leaf)
	if ci == nil || ci.encrypted {
		return 0, false
	}
	off, n := ci.bloomOffset, int64(ci.bloomLength)
	if off <= 0 || off >= f.size || n < 0 || n > maxBloomBytes || (n > 0 && n > f.size-off) {
		return 0, false
	}
	return leaf, true
}

// maxBloomHeader is the most a bloom filter's header can take (a size and three
// one-member unions, in Thrift's compact encoding) with room to spare.
const maxBloomHeader = 64

// bloomLength is the length the footer records for the bloom filter of leaf column
// leaf in row group rg, header included; 0 when it records none.
func (f *File) bloomLength(rg, leaf int) int64 {
	if ci := f.chunk(rg, leaf); ci != nil {
		return int64(ci.bloomLength)
	}
	return 0
}

// BloomExcludes reads the bloom filter of column c in row group rg through the
// reader the File holds and reports whether it contains none of p's values: then no
// row of the row group equals any of them. read says whether a filter was read, and
// bytes how many bytes of the file that took (one read when the footer records the
// filter's length). A chunk without a filter, or one that does not read back (bad
// header, unknown algorithm, a failed read), excludes nothing.
func (f *File) BloomExcludes(rg, c int, p *BloomProbe) (excludes bool, bytes int64, read bool) {
	if p == nil || len(p.keys) == 0 || f.src == nil {
		return false, 0, false
	}
	leaf, ok := f.bloomChunk(rg, c)
	if !ok {
		return false, 0, false
	}
	in := &countingReader{r: f.src}
	defer func() {
		if r := recover(); r != nil { // the library panics on some malformed headers
			excludes, bytes, read = false, in.n.Load(), false
		}
	}()
	md, err := f.metadata()
	if err != nil {
		return false, 0, false
	}
	rdr := metadata.BloomFilterReader{
		Input:        io.NewSectionReader(in, 0, f.size),
		FileMetadata: md,
		BufferPool:   &bloomBuffers,
	}
	rgr, err := rdr.RowGroup(rg)
	if err != nil {
		return false, in.n.Load(), false
	}
	length := f.bloomLength(rg, leaf)
	err = rgr.VisitColumnBloomFilter(leaf, func(bf metadata.BloomFilter) error {
		read = true
		if length > 0 && (length-bf.Size() <= 0 || length-bf.Size() > maxBloomHeader) {
			// The footer's length and the header's size disagree: a filter whose
			// header understates it would be checked against the wrong blocks.
			read = false
			return nil
		}
		h := bf.Hasher()
		excludes = true
		for _, k := range p.keys {
			if bf.CheckHash(h.Sum64(k)) {
				excludes = false
				break
			}
		}
		return nil
	})
	if err != nil {
		return false, in.n.Load(), false
	}
	return excludes, in.n.Load(), read
}

// bloomBuffers are the buffers bloom filters are read into, shared by every file.
var bloomBuffers = sync.Pool{New: func() any { return memory.NewResizableBuffer(memory.DefaultAllocator) }}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// sameDecimalScale reports whether dt and vt are decimal types of one scale, whose
// scaled integers mean the same whatever their precisions and widths.
func sameDecimalScale(dt, vt arrow.DataType) bool {
	_, ds, ok1 := types.DecimalParams(dt)
	_, vs, ok2 := types.DecimalParams(vt)
	return ok1 && ok2 && ds == vs
}
