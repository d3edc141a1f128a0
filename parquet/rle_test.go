package parquet

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// encodeHybrid writes vals as alternating runs: a repeated run of the first value, then
// the rest bit-packed, padded to groups of eight.
func encodeHybrid(vals []uint32, width int, rep int) []byte {
	var out []byte
	nb := (width + 7) / 8
	if rep > 0 {
		out = binary.AppendUvarint(out, uint64(rep)<<1)
		for i := 0; i < nb; i++ {
			out = append(out, byte(vals[0]>>(8*i)))
		}
		vals = vals[rep:]
	}
	groups := (len(vals) + 7) / 8
	out = binary.AppendUvarint(out, uint64(groups)<<1|1)
	packed := make([]byte, groups*width)
	for i, v := range vals {
		for b := 0; b < width; b++ {
			if v>>b&1 == 1 {
				bit := i*width + b
				packed[bit>>3] |= 1 << (bit & 7)
			}
		}
	}
	return append(out, packed...)
}

// randomRuns returns n random values of width bits whose first rep repeat.
func randomRuns(rng *rand.Rand, width, n int) (vals []uint32, rep int) {
	vals = make([]uint32, n)
	for i := range vals {
		if width > 0 {
			vals[i] = uint32(rng.Uint64() & (1<<width - 1))
		}
	}
	rep = rng.IntN(n)
	for i := 1; i < rep; i++ {
		vals[i] = vals[0]
	}
	return vals, rep
}

func TestRLEDecoderAllWidths(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for width := 0; width <= 32; width++ {
		for _, n := range []int{1, 7, 8, 9, 63, 1000, 4099} {
			vals, rep := randomRuns(rng, width, n)
			data := encodeHybrid(vals, width, rep)
			var d rleDecoder
			if err := d.reset(data, width); err != nil {
				t.Fatal(err)
			}
			got := make([]uint32, n)
			// Read in uneven pieces so that reads start inside groups of eight.
			for at := 0; at < n; {
				k := min(n-at, 1+rng.IntN(50))
				if err := d.indexes(got[at:at+k], 1<<32); err != nil {
					t.Fatalf("width %d n %d: %v", width, n, err)
				}
				at += k
			}
			for i := range vals {
				if got[i] != vals[i] {
					t.Fatalf("width %d n %d rep %d: value %d is %d, want %d", width, n, rep, i, got[i], vals[i])
				}
			}
		}
	}
}

func TestRLEDecoderMalformed(t *testing.T) {
	var d rleDecoder
	if err := d.reset(nil, 33); err == nil {
		t.Error("width 33 accepted")
	}
	// Out-of-range index.
	_ = d.reset(encodeHybrid([]uint32{1, 2, 3}, 2, 0), 2)
	if err := d.indexes(make([]uint32, 3), 3); err == nil {
		t.Error("index 3 accepted in a dictionary of 3")
	}
	// More values asked for than encoded.
	_ = d.reset(encodeHybrid([]uint32{1, 1, 1}, 1, 3), 1)
	if err := d.indexes(make([]uint32, 4), 2); err == nil {
		t.Error("read past the end without an error")
	}
	// A truncated bit-packed run gives only the values whose bits are present.
	data := encodeHybrid([]uint32{5, 6, 7, 1, 2, 3, 4, 5}, 3, 0)
	_ = d.reset(data[:len(data)-1], 3)
	got := make([]uint32, 5)
	if err := d.indexes(got, 8); err != nil || got[4] != 2 {
		t.Errorf("truncated run: %v %v", got, err)
	}
	if err := d.indexes(make([]uint32, 3), 8); err == nil {
		t.Error("read past a truncated run without an error")
	}
	// Definition levels above 1.
	_ = d.reset(encodeHybrid([]uint32{0, 1, 2}, 2, 0), 2)
	if _, err := d.levels(make([]bool, 3)); err == nil {
		t.Error("definition level 2 accepted")
	}
}

// FuzzRLEDecoder feeds arbitrary bytes to the hybrid decoder: it must return values or
// an error, never panic.
func FuzzRLEDecoder(f *testing.F) {
	f.Add(encodeHybrid([]uint32{1, 2, 3, 4, 5, 6, 7, 0, 1}, 3, 2), uint8(3), uint16(9), uint16(5))
	f.Add([]byte{0x03, 0x88, 0xc6, 0xfa}, uint8(3), uint16(8), uint16(3))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, uint8(32), uint16(100), uint16(7))
	f.Fuzz(func(t *testing.T, data []byte, width uint8, n, dict uint16) {
		var d rleDecoder
		if err := d.reset(data, int(width)); err != nil {
			return
		}
		out := make([]uint32, n)
		for at := 0; at < len(out); at += 7 {
			if err := d.indexes(out[at:min(at+7, len(out))], int(dict)); err != nil {
				return
			}
		}
		for _, v := range out {
			if int(v) >= int(dict) {
				t.Fatalf("index %d returned for a dictionary of %d", v, dict)
			}
		}
		var l rleDecoder
		_ = l.reset(data, 1)
		_, _ = l.levels(make([]bool, n))
	})
}

// TestRLEDecoderPick picks values at random places in pieces of the runs, with the
// rest passed over, and requires the values there.
func TestRLEDecoderPick(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for width := 0; width <= 32; width++ {
		for _, n := range []int{1, 9, 1000, 4099} {
			vals, rep := randomRuns(rng, width, n)
			var d rleDecoder
			if err := d.reset(encodeHybrid(vals, width, rep), width); err != nil {
				t.Fatal(err)
			}
			for base := 0; base < n; {
				k := min(n-base, 1+rng.IntN(300))
				var at []int32
				for i := base; i < base+k; i++ {
					if rng.IntN(5) == 0 {
						at = append(at, int32(i))
					}
				}
				got := make([]uint32, len(at))
				if err := d.pick(at, base, k, got, 1<<32); err != nil {
					t.Fatalf("width %d n %d: %v", width, n, err)
				}
				for i, p := range at {
					if got[i] != vals[p] {
						t.Fatalf("width %d n %d rep %d: value %d is %d, want %d", width, n, rep, p, got[i], vals[p])
					}
				}
				base += k
			}
		}
	}
	// An index beyond the dictionary is an error.
	var d rleDecoder
	if err := d.reset(encodeHybrid([]uint32{1, 2, 9, 3}, 4, 0), 4); err != nil {
		t.Fatal(err)
	}
	if err := d.pick([]int32{1, 2}, 0, 4, make([]uint32, 2), 5); err == nil {
		t.Error("index 9 of a dictionary of 5 picked")
	}
}

// BenchmarkRLEUnpack decodes bit-packed runs of the widths dictionary indices and
// levels usually have.
func BenchmarkRLEUnpack(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 1 << 16
	for _, width := range []int{1, 3, 6, 8, 11, 14, 17, 20} {
		vals, _ := randomRuns(rng, width, n)
		data := encodeHybrid(vals, width, 0)
		out := make([]uint32, 1024)
		b.Run(fmt.Sprintf("width=%d", width), func(b *testing.B) {
			b.SetBytes(n * 4)
			for b.Loop() {
				var d rleDecoder
				if err := d.reset(data, width); err != nil {
					b.Fatal(err)
				}
				for at := 0; at < n; at += len(out) {
					if err := d.indexes(out, 1<<32); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
