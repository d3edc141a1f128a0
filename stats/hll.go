package stats

import (
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
)

const (
	// HLLPrecision is p: the top p bits of a hash choose one of 2^p registers.
	HLLPrecision = 12
	// HLLRegisters is the number of registers, 2^p.
	HLLRegisters = 1 << HLLPrecision
	// HLLRelativeError is the relative standard error of an estimate, 1.04/√4096.
	HLLRelativeError = 1.04 / 64
	// HLLVersion is the byte format MarshalBinary writes (docs/format/sketches.md).
	HLLVersion = 1

	hllQ        = 64 - HLLPrecision // hash bits left after the register index
	hllMaxValue = hllQ + 1          // register value when those bits are all zero
	hllPacked   = HLLRegisters * 6 / 8
	hllEncoded  = 2 + hllPacked
)

// HLL is a HyperLogLog sketch of a set of hashes (p = 12): it estimates how many
// distinct hashes were added with relative standard error HLLRelativeError, in 4 KiB.
// Adding and merging are order-insensitive, so two sketches of the same set of values
// are identical however the values arrived, and Merge of two sketches is identical to
// the sketch of the union. The zero value is not usable; call NewHLL.
//
// An HLL is not safe for concurrent mutation; Estimate and MarshalBinary only read.
type HLL struct {
	// reg[i] is the register of index i: the largest "position of the first 1 bit"
	// among the hashes with that index, 0 when none has been seen (0..hllMaxValue).
	reg *[HLLRegisters]uint8
}

// NewHLL returns an empty sketch.
func NewHLL() *HLL { return &HLL{reg: new([HLLRegisters]uint8)} }

// hllSplit divides a hash into its register index (the top p bits) and the register
// value: 1 + the number of leading zeros of the remaining q bits, or q+1 when they are
// all zero (the guard bit just below them caps the count).
func hllSplit(x uint64) (idx uint64, val uint8) {
	return x >> hllQ, uint8(bits.LeadingZeros64(x<<HLLPrecision|1<<(HLLPrecision-1)) + 1)
}

// AddHash adds one hash (from HashValue or HashColumn).
func (h *HLL) AddHash(x uint64) {
	i, v := hllSplit(x)
	if v > h.reg[i] {
		h.reg[i] = v
	}
}

// AddHashes adds every hash in xs.
func (h *HLL) AddHashes(xs []uint64) {
	reg := h.reg
	for _, x := range xs {
		i, v := hllSplit(x)
		// A store either way: once the registers fill up a branch would be taken
		// rarely and unpredictably.
		reg[i] = max(reg[i], v)
	}
}

// AddColumn hashes the selected non-null rows of arr (sel as in HashColumn) and adds
// them, using scratch for the hashes; it returns scratch, grown if it was too small,
// for reuse. A dictionary entry that is NULL counts as NULL.
func (h *HLL) AddColumn(arr arrow.Array, sel []int32, scratch []uint64) []uint64 {
	rows := arr.Len()
	if sel != nil {
		rows = len(sel)
	}
	if cap(scratch) < rows {
		scratch = make([]uint64, rows)
	}
	out := scratch[:rows]
	HashColumn(arr, sel, out)
	if !hasNulls(arr) {
		h.AddHashes(out)
		return scratch
	}
	if d, ok := arr.(*array.Dictionary); ok && d.Dictionary().NullN() > 0 {
		// NULL entries of the dictionary: the rare case, row by row.
		for j, x := range out {
			row := j
			if sel != nil {
				row = int(sel[j])
			}
			if !isNullRow(arr, row) {
				h.AddHash(x)
			}
		}
		return scratch
	}
	// NULL rows by the validity bitmap: the hashes between them go in as runs.
	start := 0
	forNullRows(arr, sel, func(j int) {
		h.AddHashes(out[start:j])
		start = j + 1
	})
	h.AddHashes(out[start:])
	return scratch
}

// hasNulls reports whether any row of arr may be NULL, counting NULL dictionary entries.
func hasNulls(arr arrow.Array) bool {
	if arr.NullN() > 0 {
		return true
	}
	if d, ok := arr.(*array.Dictionary); ok {
		return d.Dictionary().NullN() > 0
	}
	return arr.DataType().ID() == arrow.NULL
}

func isNullRow(arr arrow.Array, i int) bool {
	if arr.IsNull(i) {
		return true
	}
	if d, ok := arr.(*array.Dictionary); ok {
		return d.Dictionary().IsNull(d.GetValueIndex(i))
	}
	return false
}

// Merge folds o into h: h becomes the sketch of the union of both sets.
func (h *HLL) Merge(o *HLL) {
	for i, v := range o.reg {
		if v > h.reg[i] {
			h.reg[i] = v
		}
	}
}

// Clone returns an independent copy of h.
func (h *HLL) Clone() *HLL {
	c := NewHLL()
	*c.reg = *h.reg
	return c
}

// Empty reports whether no hash has been added.
func (h *HLL) Empty() bool {
	for _, v := range h.reg {
		if v != 0 {
			return false
		}
	}
	return true
}

// Estimate is the estimated number of distinct hashes added: Ertl's improved raw
// estimator ("New cardinality estimation algorithms for HyperLogLog sketches", 2017,
// section 3.2). It needs no bias tables or empirical thresholds: the register value
// histogram is corrected at both ends (registers never hit and registers saturated)
// by the series σ and τ, and the estimate is unbiased over the whole range from 0 up.
// An empty sketch estimates 0. Small counts are close but not exact: two values that
// share a register count once, so n values lose about n(n−1)/8192 (≈ 1 at n = 100).
func (h *HLL) Estimate() float64 {
	var count [hllMaxValue + 1]int
	for _, v := range h.reg {
		count[v]++
	}
	const m = float64(HLLRegisters)
	z := m * hllTau(1-float64(count[hllMaxValue])/m)
	for k := hllQ; k >= 1; k-- {
		z = 0.5 * (z + float64(count[k]))
	}
	z += m * hllSigma(float64(count[0])/m)
	// α∞ = 1/(2 ln 2). When every register is saturated z is 0 and the estimate is
	// unbounded; it is capped at 2^64, the number of distinct hashes.
	return min(m*m/(2*math.Ln2*z), 1<<64)
}

// hllSigma is σ(x) = x + Σ_{k≥1} x^(2^k) 2^(k-1), summed until it stops changing.
func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += x * y
		y += y
		if z == prev {
			return z
		}
	}
}

// hllTau is τ(x) = (1 − x − Σ_{k≥1} (1 − x^(2^−k))² 2^−k) / 3, summed until it stops
// changing.
func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		z -= (1 - x) * (1 - x) * y
		if z == prev {
			return z / 3
		}
	}
}

// MarshalBinary encodes the sketch in format version 1: one byte version, one byte p,
// then the 4,096 six-bit registers packed little-endian, four registers to three
// bytes (docs/format/sketches.md).
func (h *HLL) MarshalBinary() ([]byte, error) {
	b := make([]byte, hllEncoded)
	b[0], b[1] = HLLVersion, HLLPrecision
	p := b[2:]
	for i := 0; i < HLLRegisters; i += 4 {
		r0, r1, r2, r3 := h.reg[i], h.reg[i+1], h.reg[i+2], h.reg[i+3]
		o := i / 4 * 3
		p[o] = r0 | r1<<6
		p[o+1] = r1>>2 | r2<<4
		p[o+2] = r2>>4 | r3<<2
	}
	return b, nil
}

// UnmarshalBinary replaces h with a sketch encoded by MarshalBinary. A version newer
// than HLLVersion, another precision, a wrong length or a register value that no hash
// can produce is refused with errs.CorruptSource, and h is left unchanged.
func (h *HLL) UnmarshalBinary(b []byte) error {
	switch {
	case len(b) < 2:
		return errs.New(errs.CorruptSource, "cannot read HyperLogLog sketch: %d bytes, want %d", len(b), hllEncoded)
	case b[0] != HLLVersion:
		return errs.New(errs.CorruptSource, "cannot read HyperLogLog sketch: format version %d; this build reads version %d", b[0], HLLVersion)
	case b[1] != HLLPrecision:
		return errs.New(errs.CorruptSource, "cannot read HyperLogLog sketch: precision %d; this build reads precision %d", b[1], HLLPrecision)
	case len(b) != hllEncoded:
		return errs.New(errs.CorruptSource, "cannot read HyperLogLog sketch: %d bytes, want %d", len(b), hllEncoded)
	}
	var reg [HLLRegisters]uint8
	p := b[2:]
	for i := 0; i < HLLRegisters; i += 4 {
		o := i / 4 * 3
		reg[i] = p[o] & 63
		reg[i+1] = p[o]>>6 | (p[o+1]&15)<<2
		reg[i+2] = p[o+1]>>4 | (p[o+2]&3)<<4
		reg[i+3] = p[o+2] >> 2
	}
	for i, v := range reg {
		if v > hllMaxValue {
			return errs.New(errs.CorruptSource, "cannot read HyperLogLog sketch: register %d holds %d, above the maximum %d", i, v, hllMaxValue)
		}
	}
	if h.reg == nil {
		h.reg = new([HLLRegisters]uint8)
	}
	*h.reg = reg
	return nil
}
