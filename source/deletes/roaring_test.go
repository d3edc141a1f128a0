package deletes

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/loredb/lore/errs"
)

// bucket64 frames 32-bit bitmaps as a 64-bit one with the given keys.
func bucket64(keys []uint32, bitmaps ...[]byte) []byte {
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(bitmaps)))
	for i, b := range bitmaps {
		out = binary.LittleEndian.AppendUint32(out, keys[i])
		out = append(out, b...)
	}
	return out
}

// le is a little-endian byte string of 16-bit and 32-bit values, for hand-built bitmaps.
func le(vals ...any) []byte {
	var out []byte
	for _, v := range vals {
		switch v := v.(type) {
		case uint16:
			out = binary.LittleEndian.AppendUint16(out, v)
		case uint32:
			out = binary.LittleEndian.AppendUint32(out, v)
		case byte:
			out = append(out, v)
		default:
			panic("le: unsupported value")
		}
	}
	return out
}

func TestDecodeRoaring64Rejects(t *testing.T) {
	arr := func(key, card uint16, vals ...uint16) []byte { // one array container, no runs
		b := le(uint32(cookieNoRuns), uint32(1), key, card-1, uint32(16))
		for _, v := range vals {
			b = append(b, le(v)...)
		}
		return b
	}
	runs := func(card uint16, pairs ...uint16) []byte { // one run container
		b := le(uint32(cookieRuns), byte(1), uint16(0), card-1, uint16(len(pairs)/2))
		for _, v := range pairs {
			b = append(b, le(v)...)
		}
		return b
	}
	huge := binary.LittleEndian.AppendUint64(nil, 1<<31)
	huge = append(huge, make([]byte, 32)...)
	cases := map[string][]byte{
		"2^31 buckets in 40 bytes":  huge,
		"2^31 containers":           bucket64([]uint32{0}, le(uint32(cookieNoRuns), uint32(1<<31))),
		"65536 containers, 9 bytes": bucket64([]uint32{0}, le(uint32(cookieRuns|0xFFFF<<16), byte(0xFF))),
		"65537 containers":          bucket64([]uint32{0}, le(uint32(cookieNoRuns), uint32(65537))),
		"unknown cookie":            bucket64([]uint32{0}, le(uint32(12345), uint32(0))),
		"bucket key above 2^31-1":   bucket64([]uint32{1 << 31}, arr(0, 1, 5)),
		"bucket keys descending":    bucket64([]uint32{2, 1}, arr(0, 1, 5), arr(0, 1, 5)),
		"bucket keys repeated":      bucket64([]uint32{1, 1}, arr(0, 1, 5), arr(0, 1, 5)),
		"array not ascending":       bucket64([]uint32{0}, arr(0, 2, 5, 5)),
		"array truncated":           bucket64([]uint32{0}, arr(0, 3, 5, 6)),
		"offset wrong":              bucket64([]uint32{0}, le(uint32(cookieNoRuns), uint32(1), uint16(0), uint16(0), uint32(17), uint16(5))),
		"container keys repeated": bucket64([]uint32{0}, le(uint32(cookieNoRuns), uint32(2), uint16(3), uint16(0), uint16(3), uint16(0),
			uint32(24), uint32(26), uint16(1), uint16(2))),
		"run past 65535":        bucket64([]uint32{0}, runs(10, 65530, 9)),
		"runs overlap":          bucket64([]uint32{0}, runs(6, 10, 2, 12, 2)),
		"runs out of order":     bucket64([]uint32{0}, runs(6, 20, 2, 10, 2)),
		"run cardinality wrong": bucket64([]uint32{0}, runs(4, 10, 2)),
		"no runs":               bucket64([]uint32{0}, runs(1)),
		"trailing byte":         append(bucket64([]uint32{0}, arr(0, 1, 5)), 0),
		"short":                 {1, 0, 0},
	}
	bitmap := le(uint32(cookieNoRuns), uint32(1), uint16(0), uint16(4999), uint32(16))
	bitmap = append(bitmap, make([]byte, 8192)...)
	bitmap[16] = 0xFF // 8 bits set, header says 5000
	cases["bitmap cardinality wrong"] = bucket64([]uint32{0}, bitmap)
	for name, b := range cases {
		start := time.Now()
		if _, err := DecodeRoaring64(b); !errors.Is(err, errs.ErrCorruptSource) {
			t.Errorf("%s: %v, want CORRUPT_SOURCE", name, err)
		}
		if d := time.Since(start); d > 50*time.Millisecond {
			t.Errorf("%s: took %v to refuse", name, d)
		}
	}
	// The hand-built pieces are sound when not broken.
	if p, err := DecodeRoaring64(bucket64([]uint32{0, 7}, arr(0, 2, 5, 6), runs(6, 10, 2, 20, 2))); err != nil ||
		!slices.Equal(p.AppendTo(nil), []int64{5, 6, 7<<32 | 10, 7<<32 | 11, 7<<32 | 12, 7<<32 | 20, 7<<32 | 21, 7<<32 | 22}) {
		t.Errorf("hand-built bitmap: %v, %v", p.AppendTo(nil), err)
	}
}

// TestDecodeRoaring64Damage truncates valid encodings at every length and flips bytes of
// them: every result is an error or a consistent set, never a panic.
func TestDecodeRoaring64Damage(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for iter := range 6 {
		pos := randomPositions(r)
		if len(pos) > 3000 {
			pos = pos[:3000]
		}
		for _, runs := range []bool{false, true} {
			b := encodeRoaring64(pos, runs)
			if len(b) > 8000 {
				continue
			}
			for n := 0; n < len(b); n++ {
				if _, err := DecodeRoaring64(b[:n]); !errors.Is(err, errs.ErrCorruptSource) {
					t.Fatalf("iteration %d: %d of %d bytes: %v", iter, n, len(b), err)
				}
			}
			for range 500 {
				c := slices.Clone(b)
				c[r.IntN(len(c))] ^= byte(1 + r.IntN(255))
				if p, err := DecodeRoaring64(c); err == nil {
					checkConsistent(t, p)
				} else if !errors.Is(err, errs.ErrCorruptSource) {
					t.Fatal(err)
				}
			}
		}
	}
}

// checkConsistent checks that a decoded set agrees with itself: ascending positions,
// Len, Contains and CountIn. Sets too large to list are only counted.
func checkConsistent(t testing.TB, p *Positions) {
	t.Helper()
	if p.Len() > 1<<20 {
		return
	}
	all := p.AppendTo(nil)
	if int64(len(all)) != p.Len() {
		t.Fatalf("Len %d, but %d positions", p.Len(), len(all))
	}
	for i, v := range all {
		if v < 0 || i > 0 && v <= all[i-1] {
			t.Fatalf("position %d at %d is out of order", v, i)
		}
		if i < 64 && (!p.Contains(v) || p.CountIn(v, 1) != 1 || p.Live(v, 1, nil) == nil) {
			t.Fatalf("position %d listed but not contained", v)
		}
	}
	if len(all) > 0 && p.CountIn(0, all[len(all)-1]+1) != p.Len() {
		t.Fatal("CountIn over everything differs from Len")
	}
}
