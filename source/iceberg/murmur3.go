package iceberg

import (
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/types"
)

// murmur3 is the 32-bit Murmur3 hash, x86 variant, of b with seed 0: the hash the
// spec's bucket transform takes of a value's bytes (Appendix B). The input is mixed
// four bytes (little-endian) at a time, then the one to three bytes left, then the
// length, and the result is finished by an avalanche of shifts and multiplications.
func murmur3(b []byte) uint32 {
	const (
		c1 = 0xcc9e2d51
		c2 = 0x1b873593
	)
	mix := func(k uint32) uint32 {
		k *= c1
		k = bits.RotateLeft32(k, 15)
		return k * c2
	}
	var h uint32
	n := len(b)
	for len(b) >= 4 {
		h ^= mix(binary.LittleEndian.Uint32(b))
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
		b = b[4:]
	}
	var k uint32
	switch len(b) {
	case 3:
		k ^= uint32(b[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(b[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(b[0])
		h ^= mix(k)
	}
	h ^= uint32(n)
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// bucketHash is the hash the bucket transform takes of v, a value of the column type
// dt: integers, dates, times and timestamps as a long of their days or microseconds
// (nanoseconds are taken down to microseconds first, so that a column's buckets do
// not change with its precision), in eight little-endian bytes; decimals as the
// fewest big-endian two's complement bytes of their unscaled value; strings, binary
// values and UUIDs as their bytes. ok is false for NULL and for a type the transform
// does not take.
func bucketHash(v types.Value, dt arrow.DataType) (h uint32, ok bool) {
	if v.Null {
		return 0, false
	}
	var buf [16]byte
	switch {
	case dt.ID() == arrow.INT32, dt.ID() == arrow.INT64, dt.ID() == arrow.DATE32, dt.ID() == arrow.TIME64:
		return murmur3(binary.LittleEndian.AppendUint64(buf[:0], uint64(v.I))), true
	case dt.ID() == arrow.TIMESTAMP:
		us := v.I
		if dt.(*arrow.TimestampType).Unit == arrow.Nanosecond {
			us = floorDiv(us, 1000)
		}
		return murmur3(binary.LittleEndian.AppendUint64(buf[:0], uint64(us))), true
	case types.IsDecimal(dt):
		binary.BigEndian.PutUint64(buf[:8], uint64(v.D.HighBits()))
		binary.BigEndian.PutUint64(buf[8:], v.D.LowBits())
		// Drop the leading bytes that only repeat the sign: the next byte's top bit
		// still carries it.
		b := buf[:]
		for len(b) > 1 && (b[0] == 0 && b[1] < 0x80 || b[0] == 0xff && b[1] >= 0x80) {
			b = b[1:]
		}
		return murmur3(b), true
	case types.IsString(dt), types.IsBinary(dt):
		return murmur3([]byte(v.S)), true
	}
	return 0, false
}

// bucket is the bucket of n a value with hash h falls in: the hash without its sign
// bit, modulo n.
func bucket(h uint32, n int) int32 {
	return int32(int64(h&0x7fffffff) % int64(n))
}
