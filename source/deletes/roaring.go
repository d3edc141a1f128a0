package deletes

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/loredb/lore/errs"
)

// Cookies of the portable 32-bit Roaring serialization
// (https://github.com/RoaringBitmap/RoaringFormatSpec).
const (
	cookieNoRuns = 12346 // whole uint32; the container count follows
	cookieRuns   = 12347 // low 16 bits; the high 16 bits are the container count - 1
	// With cookieRuns, the per-container offsets are written only from this many
	// containers on; with cookieNoRuns always.
	noOffsetThreshold = 4
)

// DecodeRoaring64 decodes the "portable" 64-bit Roaring serialization (what Delta's
// RoaringTreemap and Iceberg's deletion-vector-v1 blob use): a little-endian uint64 count
// of 32-bit buckets, then per bucket a little-endian uint32 key (the high 32 bits) followed
// by a standard portable 32-bit RoaringBitmap serialization (cookies 12346 / 12347 with run
// containers, array / bitmap / run containers). Keys must be strictly ascending and at
// most 2^31-1 (both formats define positions as non-negative int64 and Iceberg says so
// explicitly), and b must hold exactly the bitmap.
func DecodeRoaring64(b []byte) (*Positions, error) {
	if len(b) < 8 {
		return nil, corrupt("roaring bitmap: %d bytes, shorter than its 8-byte bucket count", len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	rest := b[8:]
	// A bucket is at least a 4-byte key and an 8-byte empty 32-bit bitmap: the count
	// cannot exceed what the bytes can hold, whatever it claims.
	if n > uint64(len(rest)/12) {
		return nil, corrupt("roaring bitmap: %d buckets cannot fit in %d bytes", n, len(rest))
	}
	var chunks []chunk
	prev := int64(-1)
	for i := uint64(0); i < n; i++ {
		if len(rest) < 4 {
			return nil, corrupt("roaring bitmap: bucket %d: truncated key", i)
		}
		key := int64(binary.LittleEndian.Uint32(rest))
		if key > math.MaxInt32 {
			return nil, corrupt("roaring bitmap: bucket %d: key %d is above 2^31-1", i, key)
		}
		if key <= prev {
			return nil, corrupt("roaring bitmap: bucket %d: key %d does not ascend (previous %d)", i, key, prev)
		}
		prev = key
		var used int
		var err error
		chunks, used, err = decodeRoaring32(rest[4:], key<<chunkBits, chunks)
		if err != nil {
			return nil, corrupt("roaring bitmap: bucket %d (key %d): %w", i, key, err)
		}
		rest = rest[4+used:]
	}
	if len(rest) != 0 {
		return nil, corrupt("roaring bitmap: %d bytes after the last bucket", len(rest))
	}
	return build(chunks), nil
}

// decodeRoaring32 decodes one portable 32-bit Roaring bitmap at the start of b, appends
// its containers to chunks as the chunks high|containerKey, and returns how many bytes
// it used.
func decodeRoaring32(b []byte, high int64, chunks []chunk) ([]chunk, int, error) {
	if len(b) < 4 {
		return nil, 0, corrupt("truncated cookie")
	}
	cookie := binary.LittleEndian.Uint32(b)
	var n, pos int
	var runFlags []byte
	switch {
	case cookie&0xFFFF == cookieRuns:
		n = int(cookie>>16) + 1
		flagBytes := (n + 7) / 8
		if len(b) < 4+flagBytes {
			return nil, 0, corrupt("truncated run flags")
		}
		runFlags = b[4 : 4+flagBytes]
		pos = 4 + flagBytes
	case cookie == cookieNoRuns:
		if len(b) < 8 {
			return nil, 0, corrupt("truncated container count")
		}
		c := binary.LittleEndian.Uint32(b[4:])
		if c > chunkSize {
			return nil, 0, corrupt("%d containers, more than 65536", c)
		}
		n = int(c)
		pos = 8
	default:
		return nil, 0, corrupt("unknown cookie %d", cookie)
	}
	if len(b)-pos < 4*n {
		return nil, 0, corrupt("truncated header of %d containers", n)
	}
	header := b[pos : pos+4*n]
	pos += 4 * n
	var offsets []byte
	if runFlags == nil || n >= noOffsetThreshold {
		if len(b)-pos < 4*n {
			return nil, 0, corrupt("truncated offsets of %d containers", n)
		}
		offsets = b[pos : pos+4*n]
		pos += 4 * n
	}
	prev := -1
	for i := 0; i < n; i++ {
		key := int(binary.LittleEndian.Uint16(header[4*i:]))
		card := int(binary.LittleEndian.Uint16(header[4*i+2:])) + 1
		if key <= prev {
			return nil, 0, corrupt("container %d: key %d does not ascend (previous %d)", i, key, prev)
		}
		prev = key
		if offsets != nil {
			// The offsets are redundant with the sizes; one that disagrees means the
			// bytes are not what the writer wrote.
			if off := binary.LittleEndian.Uint32(offsets[4*i:]); uint64(off) != uint64(pos) {
				return nil, 0, corrupt("container %d: offset %d, but it starts at %d", i, off, pos)
			}
		}
		c := chunk{key: high | int64(key), card: int32(card)}
		var size int
		var err error
		switch {
		case runFlags != nil && runFlags[i/8]&(1<<(i%8)) != 0:
			size, err = decodeRuns(b[pos:], &c)
		case card > arrayMax:
			size, err = decodeBitmap(b[pos:], &c)
		default:
			size, err = decodeArray(b[pos:], &c)
		}
		if err != nil {
			return nil, 0, corrupt("container %d (key %d): %w", i, key, err)
		}
		pos += size
		chunks = append(chunks, c)
	}
	return chunks, pos, nil
}

// decodeArray reads an array container of c.card ascending values.
func decodeArray(b []byte, c *chunk) (int, error) {
	size := 2 * int(c.card)
	if len(b) < size {
		return 0, corrupt("truncated array of %d values", c.card)
	}
	c.kind = kindArray
	c.vals = make([]uint16, c.card)
	for i := range c.vals {
		c.vals[i] = binary.LittleEndian.Uint16(b[2*i:])
		if i > 0 && c.vals[i] <= c.vals[i-1] {
			return 0, corrupt("array value %d does not ascend (previous %d)", c.vals[i], c.vals[i-1])
		}
	}
	return size, nil
}

// decodeBitmap reads a bitmap container, whose set bits must number c.card.
func decodeBitmap(b []byte, c *chunk) (int, error) {
	const size = 8 * bitmapLen
	if len(b) < size {
		return 0, corrupt("truncated bitmap")
	}
	c.kind = kindBitmap
	c.bits = make([]uint64, bitmapLen)
	n := 0
	for i := range c.bits {
		c.bits[i] = binary.LittleEndian.Uint64(b[8*i:])
		n += bits.OnesCount64(c.bits[i])
	}
	if n != int(c.card) {
		return 0, corrupt("bitmap holds %d values, header says %d", n, c.card)
	}
	return size, nil
}

// decodeRuns reads a run container: a uint16 run count, then (start, length-1) pairs,
// ascending and disjoint, covering c.card values.
func decodeRuns(b []byte, c *chunk) (int, error) {
	if len(b) < 2 {
		return 0, corrupt("truncated run count")
	}
	runs := int(binary.LittleEndian.Uint16(b))
	size := 2 + 4*runs
	if len(b) < size {
		return 0, corrupt("truncated %d runs", runs)
	}
	if runs == 0 {
		return 0, corrupt("run container without runs")
	}
	c.kind = kindRun
	c.vals = make([]uint16, 2*runs)
	total := 0
	for r := 0; r < runs; r++ {
		first := int(binary.LittleEndian.Uint16(b[2+4*r:]))
		last := first + int(binary.LittleEndian.Uint16(b[4+4*r:]))
		if last >= chunkSize {
			return 0, corrupt("run %d ends at %d, past 65535", r, last)
		}
		if r > 0 && first <= int(c.vals[2*r-1]) {
			return 0, corrupt("run %d starts at %d, not after the previous run's end %d", r, first, c.vals[2*r-1])
		}
		c.vals[2*r], c.vals[2*r+1] = uint16(first), uint16(last)
		total += last - first + 1
	}
	if total != int(c.card) {
		return 0, corrupt("runs hold %d values, header says %d", total, c.card)
	}
	return size, nil
}

// corrupt is a CorruptSource error.
func corrupt(format string, args ...any) error {
	return errs.New(errs.CorruptSource, format, args...)
}
