package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// rleDecoder decodes Parquet's RLE/bit-packed hybrid encoding, used for definition
// levels and dictionary indexes: a sequence of runs, each a ULEB128 header whose low
// bit says whether a value repeated (header>>1) times follows in ceil(width/8)
// little-endian bytes, or (header>>1) groups of eight values bit-packed
// least-significant bit first.
type rleDecoder struct {
	data  []byte // the runs after the current one
	width uint   // bits per value, at most 32
	bp    []byte // the current bit-packed run's bytes

	repLeft int    // values left in the current repeated run
	repVal  uint32 // its value
	bpLeft  int    // values left in the current bit-packed run
	bpBit   int    // bit offset in data of the next bit-packed value
}

var errRLEShort = errors.New("RLE/bit-packed data ends before its values")

func (d *rleDecoder) reset(data []byte, width int) error {
	if width < 0 || width > 32 {
		return fmt.Errorf("RLE/bit-packed bit width %d out of range", width)
	}
	*d = rleDecoder{data: data, width: uint(width)}
	return nil
}

// header starts the next run.
func (d *rleDecoder) header() error {
	for d.repLeft == 0 && d.bpLeft == 0 {
		if len(d.data) == 0 {
			return errRLEShort
		}
		h, k := binary.Uvarint(d.data)
		if k <= 0 || h>>1 > 1<<31 {
			return errors.New("malformed RLE/bit-packed run header")
		}
		d.data = d.data[k:]
		count := int(h >> 1)
		if h&1 == 0 {
			nb := int(d.width+7) / 8
			if len(d.data) < nb {
				return errRLEShort
			}
			var v uint32
			for i := nb - 1; i >= 0; i-- {
				v = v<<8 | uint32(d.data[i])
			}
			d.data = d.data[nb:]
			d.repLeft, d.repVal = count, v
			continue
		}
		// count groups of eight values; a writer may cut the last run's bytes short,
		// so the values are bounded by the bits present.
		nb := count * int(d.width)
		values := count * 8
		if nb > len(d.data) {
			nb = len(d.data)
			values = nb * 8 / int(d.width)
		}
		d.bp, d.data = d.data[:nb], d.data[nb:]
		d.bpLeft, d.bpBit = values, 0
	}
	return nil
}

// unpack reads len(out) values of the current bit-packed run (which has them).
func (d *rleDecoder) unpack(out []uint32) {
	w := d.width
	d.bpLeft -= len(out)
	if w == 0 {
		clear(out)
		return
	}
	mask := uint64(1)<<w - 1
	// Loads may run past the run into the bytes after it (the next runs, the rest of
	// the page buffer): the values there are masked off or never returned.
	data := d.bp[:cap(d.bp)]
	bit := d.bpBit
	i := 0
	// One by one up to a group of eight, which starts on a byte.
	for ; i < len(out) && bit%(8*int(w)) != 0; i++ {
		out[i] = uint32(loadBits(data, bit) & mask)
		bit += int(w)
	}
	// Whole groups of eight values (w bytes), while 16 bytes past the group's start
	// are in bounds.
	for ; len(out)-i >= 8 && bit>>3+int(w)+16 <= len(data); i, bit = i+8, bit+8*int(w) {
		g := data[bit>>3:]
		o := out[i : i+8 : i+8]
		switch {
		case w <= 8:
			// One load holds the group; the shifts, masked to 63 (they are at most
			// 56), compile without the checks for shifts of 64 or more.
			x := binary.LittleEndian.Uint64(g)
			o[0] = uint32(x & mask)
			o[1] = uint32(x >> (w & 63) & mask)
			o[2] = uint32(x >> (2 * w & 63) & mask)
			o[3] = uint32(x >> (3 * w & 63) & mask)
			o[4] = uint32(x >> (4 * w & 63) & mask)
			o[5] = uint32(x >> (5 * w & 63) & mask)
			o[6] = uint32(x >> (6 * w & 63) & mask)
			o[7] = uint32(x >> (7 * w & 63) & mask)
		case w <= 25:
			// Each value is within the four bytes from the one it starts in.
			m := uint32(mask)
			at := func(s uint) uint32 { return binary.LittleEndian.Uint32(g[s>>3:]) >> (s & 7) & m }
			o[0] = at(0)
			o[1] = at(w)
			o[2] = at(2 * w)
			o[3] = at(3 * w)
			o[4] = at(4 * w)
			o[5] = at(5 * w)
			o[6] = at(6 * w)
			o[7] = at(7 * w)
		default:
			for j := range o {
				s := uint(j) * w
				o[j] = uint32(binary.LittleEndian.Uint64(g[s>>3:]) >> (s & 7) & mask)
			}
		}
	}
	for ; i < len(out); i++ {
		out[i] = uint32(loadBits(data, bit) & mask)
		bit += int(w)
	}
	d.bpBit = bit
}

// loadBits returns the 57 or more bits of data from bit offset bit on (zeros past the
// end).
func loadBits(data []byte, bit int) uint64 {
	b := bit >> 3
	if b+8 <= len(data) {
		return binary.LittleEndian.Uint64(data[b:]) >> (bit & 7)
	}
	var word uint64
	if b < len(data) {
		for j, c := range data[b:] {
			word |= uint64(c) << (8 * j)
		}
	}
	return word >> (bit & 7)
}

// pick passes over the next n values and writes to out[i] the value at place
// at[i]-base among them (at ascending, each within the n), each checked to be below
// limit: the values between are skipped, not unpacked.
func (d *rleDecoder) pick(at []int32, base, n int, out []uint32, limit int) error {
	mask := uint64(1)<<d.width - 1
	passed := 0
	for i, p := range at {
		if err := d.skip(int(p) - base - passed); err != nil {
			return err
		}
		passed = int(p) - base
		if err := d.header(); err != nil {
			return err
		}
		var v uint32
		if d.repLeft > 0 {
			v = d.repVal
			d.repLeft--
		} else {
			v = uint32(loadBits(d.bp[:cap(d.bp)], d.bpBit) & mask)
			d.bpLeft--
			d.bpBit += int(d.width)
		}
		passed++
		if int64(v) >= int64(limit) {
			return fmt.Errorf("dictionary index %d out of range (dictionary of %d)", v, limit)
		}
		out[i] = v
	}
	return d.skip(n - passed)
}

// indexes decodes len(out) dictionary indexes, each below n.
func (d *rleDecoder) indexes(out []uint32, n int) error {
	for len(out) > 0 {
		if err := d.header(); err != nil {
			return err
		}
		if d.repLeft > 0 {
			k := min(len(out), d.repLeft)
			if int64(d.repVal) >= int64(n) {
				return fmt.Errorf("dictionary index %d out of range (dictionary of %d)", d.repVal, n)
			}
			v := d.repVal
			for i := range out[:k] {
				out[i] = v
			}
			d.repLeft -= k
			out = out[k:]
			continue
		}
		k := min(len(out), d.bpLeft)
		d.unpack(out[:k])
		if int64(1)<<d.width > int64(n) { // else every value of the width is in range
			for _, ix := range out[:k] {
				if int64(ix) >= int64(n) {
					return fmt.Errorf("dictionary index %d out of range (dictionary of %d)", ix, n)
				}
			}
		}
		out = out[k:]
	}
	return nil
}

// gather decodes len(out) dictionary indexes and writes the dictionary's values to
// out; scratch holds unpacked indexes.
func gather[V any](d *rleDecoder, dict []V, out []V, scratch []uint32) error {
	for len(out) > 0 {
		if err := d.header(); err != nil {
			return err
		}
		if d.repLeft > 0 {
			k := min(len(out), d.repLeft)
			if int64(d.repVal) >= int64(len(dict)) {
				return fmt.Errorf("dictionary index %d out of range (dictionary of %d)", d.repVal, len(dict))
			}
			v := dict[d.repVal]
			for i := range out[:k] {
				out[i] = v
			}
			d.repLeft -= k
			out = out[k:]
			continue
		}
		k := min(len(out), d.bpLeft, len(scratch))
		ix := scratch[:k]
		d.unpack(ix)
		dst := out[:k]
		for i, x := range ix {
			if int(x) >= len(dict) { // proves the index below in range: one check, not two
				return fmt.Errorf("dictionary index %d out of range (dictionary of %d)", x, len(dict))
			}
			dst[i] = dict[x]
		}
		out = out[k:]
	}
	return nil
}

// levels decodes len(out) definition levels of a flat column (0 or 1) into out as
// validity, returning how many are 1. Levels above 1 are malformed.
func (d *rleDecoder) levels(out []bool) (int, error) {
	defined := 0
	for len(out) > 0 {
		if err := d.header(); err != nil {
			return 0, err
		}
		if d.repLeft > 0 {
			k := min(len(out), d.repLeft)
			if d.repVal > 1 {
				return 0, fmt.Errorf("definition level %d above the maximum 1", d.repVal)
			}
			fillBools(out[:k], d.repVal == 1)
			if d.repVal == 1 {
				defined += k
			}
			d.repLeft -= k
			out = out[k:]
			continue
		}
		var buf [256]uint32
		k := min(len(out), d.bpLeft, len(buf))
		d.unpack(buf[:k])
		for i, x := range buf[:k] {
			if x > 1 {
				return 0, fmt.Errorf("definition level %d above the maximum 1", x)
			}
			out[i] = x == 1
			defined += int(x)
		}
		out = out[k:]
	}
	return defined, nil
}

// fillBools sets every element of out to v, by doubling copies: a run of levels
// covers a whole page of a column without NULLs, and a byte loop over it costs a
// scan several per cent.
func fillBools(out []bool, v bool) {
	if len(out) == 0 {
		return
	}
	out[0] = v
	for j := 1; j < len(out); j *= 2 {
		copy(out[j:], out[:j])
	}
}

// skip passes over n values without decoding them.
func (d *rleDecoder) skip(n int) error {
	for n > 0 {
		if err := d.header(); err != nil {
			return err
		}
		if d.repLeft > 0 {
			k := min(n, d.repLeft)
			d.repLeft -= k
			n -= k
			continue
		}
		k := min(n, d.bpLeft)
		d.bpLeft -= k
		d.bpBit += k * int(d.width)
		n -= k
	}
	return nil
}

// defined passes over n definition levels of a flat column and returns how many are
// 1. Levels above 1 are malformed.
func (d *rleDecoder) defined(n int) (int, error) {
	defined := 0
	var buf [256]bool
	for n > 0 {
		k := min(n, len(buf))
		m, err := d.levels(buf[:k])
		if err != nil {
			return 0, err
		}
		defined += m
		n -= k
	}
	return defined, nil
}
