package deletes

import (
	"encoding/binary"
	"strings"
)

// AppendRoaring64 appends p in the portable 64-bit Roaring serialization that
// DecodeRoaring64 reads: a bucket per distinct high 32 bits, each a portable 32-bit
// bitmap of array and bitmap containers (no run containers).
func (p *Positions) AppendRoaring64(dst []byte) []byte {
	type bucket struct {
		key    uint32
		chunks []*chunk
	}
	var buckets []bucket
	if p != nil {
		for i := range p.chunks {
			c := &p.chunks[i]
			k := uint32(c.key >> chunkBits)
			if n := len(buckets); n == 0 || buckets[n-1].key != k {
				buckets = append(buckets, bucket{key: k})
			}
			buckets[len(buckets)-1].chunks = append(buckets[len(buckets)-1].chunks, c)
		}
	}
	dst = binary.LittleEndian.AppendUint64(dst, uint64(len(buckets)))
	var vals []int64
	for _, b := range buckets {
		dst = binary.LittleEndian.AppendUint32(dst, b.key)
		dst = binary.LittleEndian.AppendUint32(dst, cookieNoRuns)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b.chunks)))
		for _, c := range b.chunks {
			dst = binary.LittleEndian.AppendUint16(dst, uint16(c.key))
			dst = binary.LittleEndian.AppendUint16(dst, uint16(c.card-1))
		}
		// Offsets of the containers from the start of this 32-bit bitmap.
		at := 8 + 4*len(b.chunks) + 4*len(b.chunks)
		for _, c := range b.chunks {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(at))
			if c.card > arrayMax {
				at += chunkSize / 8
			} else {
				at += 2 * int(c.card)
			}
		}
		for _, c := range b.chunks {
			vals = c.appendValues(vals[:0], 0)
			if c.card > arrayMax {
				words := make([]uint64, bitmapLen)
				for _, v := range vals {
					words[v/bitmapWord] |= 1 << (v % bitmapWord)
				}
				for _, w := range words {
					dst = binary.LittleEndian.AppendUint64(dst, w)
				}
				continue
			}
			for _, v := range vals {
				dst = binary.LittleEndian.AppendUint16(dst, uint16(v))
			}
		}
	}
	return dst
}

// Z85Encode encodes b as Delta's Java writer does: padded with zero bytes to a
// multiple of 4, every 4 big-endian bytes as 5 digits.
func Z85Encode(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); i += 4 {
		var g [4]byte
		copy(g[:], b[i:])
		v := binary.BigEndian.Uint32(g[:])
		var digits [5]byte
		for k := 4; k >= 0; k-- {
			digits[k] = z85Alphabet[v%85]
			v /= 85
		}
		sb.Write(digits[:])
	}
	return sb.String()
}

// InlineDV is the Delta descriptor of p stored inline (storage type 'i'): the magic
// and the bitmap, Z85-encoded.
func InlineDV(p *Positions) DV {
	b := binary.LittleEndian.AppendUint32(nil, deltaMagic)
	b = p.AppendRoaring64(b)
	return DV{StorageType: StorageInline, PathOrInlineDv: Z85Encode(b), SizeInBytes: int32(len(b)), Cardinality: p.Len()}
}
