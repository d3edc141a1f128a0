package stats

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

const (
	// KLLK is k, the accuracy parameter: the top compactor holds about k items.
	KLLK = 200
	// KLLRankError is the normalized rank error of a quantile or rank at 99 %
	// confidence for k = 200.
	KLLRankError = 0.0165
	// KLLVersion is the byte format MarshalBinary writes (docs/format/sketches.md).
	KLLVersion = 1

	kllMinCap    = 8  // no compactor is smaller than this
	kllMaxLevels = 61 // level h weighs 2^h; n < 2^64 never needs more
	kllHeader    = 36
	// kllSeed starts every sketch's coin sequence, so that equal inputs give equal sketches.
	kllSeed = 0x6c6f72652d6b6c6c // "lore-kll"
)

// kllCaps[d] is the capacity of the compactor d levels below the top:
// round(k·(2/3)^d), at least kllMinCap. Integer arithmetic keeps it identical on every
// platform, which the byte format relies on.
var kllCaps = func() [kllMaxLevels]int {
	var c [kllMaxLevels]int
	pow2, pow3 := uint64(1), uint64(1)
	for d := range c {
		c[d] = kllMinCap
		if d <= 30 { // beyond, k·(2/3)^d is far below kllMinCap (and 3^d still fits)
			if v := int((2*KLLK*pow2/pow3 + 1) / 2); v > kllMinCap {
				c[d] = v
			}
			pow2, pow3 = pow2*2, pow3*3
		}
	}
	return c
}()

// KLL is a KLL quantile sketch (Karnin, Lang and Liberty, "Optimal quantile
// approximation in streams", 2016) with k = 200 over float64 values: it answers
// quantiles and ranks within KLLRankError of the true normalized rank, keeps the exact
// minimum and maximum, and holds a few hundred items however many values it has seen.
//
// Callers convert their values to float64 first (integers, dates as days, timestamps
// as ticks of the column's unit, decimals as their numeric value); NaN is ignored.
//
// The sketch is a stack of compactors: level h holds items that each stand for 2^h
// values. When the sketch holds as many items as its levels' capacities sum to, the
// lowest full level is sorted and halved — every other item, starting at an offset
// chosen by a coin, moves up one level with twice the weight. The coins come from a
// generator seeded with a constant and carried in the sketch (and its bytes), so the
// same values added in the same order give the same sketch and the same bytes.
//
// The zero value is not usable; call NewKLL (or UnmarshalBinary into it). A KLL is
// not safe for concurrent mutation; the query methods only read.
type KLL struct {
	levels   [][]float64 // levels[0] in arrival order; levels[h≥1] sorted ascending
	n        uint64      // values added
	min, max float64     // exact; NaN when n == 0
	rng      uint64      // splitmix64 state for the coins
	size     int         // items held, Σ len(levels[h])
	limit    int         // Σ capacities for the current number of levels
	keys     []uint64    // scratch for sorting level 0, kept between compactions
	merged   []float64   // scratch for merging into a level, likewise
}

// NewKLL returns an empty sketch.
func NewKLL() *KLL {
	s := &KLL{levels: [][]float64{nil}, min: math.NaN(), max: math.NaN(), rng: kllSeed}
	s.limit = s.computeLimit()
	return s
}

func (s *KLL) capacity(h int) int { return kllCaps[len(s.levels)-1-h] }

func (s *KLL) computeLimit() int {
	t := 0
	for h := range s.levels {
		t += s.capacity(h)
	}
	return t
}

// Add adds one value; NaN is ignored.
func (s *KLL) Add(x float64) {
	if x != x {
		return
	}
	if s.n == 0 {
		s.min, s.max = x, x
	} else if x < s.min {
		s.min = x
	} else if x > s.max {
		s.max = x
	}
	s.n++
	s.levels[0] = append(s.levels[0], x)
	s.size++
	if s.size >= s.limit {
		s.compress()
	}
}

// AddValues adds every value of xs in order (NaN ignored). It builds the same sketch
// as calling Add for each value, faster: values go to level 0 in runs that fill it up
// to the next compaction.
func (s *KLL) AddValues(xs []float64) {
	for len(xs) > 0 {
		if s.n == 0 { // the first value sets the bounds
			s.Add(xs[0])
			xs = xs[1:]
			continue
		}
		lo, hi := s.min, s.max
		room := s.limit - s.size
		base := len(s.levels[0])
		lv := slices.Grow(s.levels[0], room)[:base+room]
		dst := lv[base:]
		// Every value is written and NaN is then overwritten by the next one: no
		// branch per value but the bounds', which settle quickly.
		m := min(len(xs), room)
		added := 0
		for _, x := range xs[:m] {
			dst[added] = x
			c := 0
			if x == x {
				c = 1
			}
			added += c
			// As in Add: strict comparisons, so that of -0 and +0 the first stays
			// (and NaN, never less or greater, changes neither).
			if x < lo {
				lo = x
			}
			if x > hi {
				hi = x
			}
		}
		s.levels[0] = lv[:base+added]
		s.min, s.max = lo, hi
		s.n += uint64(added)
		s.size += added
		xs = xs[m:]
		if s.size >= s.limit {
			s.compress()
		}
	}
}

// N is the number of values added (NaN excluded).
func (s *KLL) N() uint64 { return s.n }

// Min is the smallest value added, NaN when none.
func (s *KLL) Min() float64 { return s.min }

// Max is the largest value added, NaN when none.
func (s *KLL) Max() float64 { return s.max }

// coin is the next bit of the sketch's splitmix64 sequence.
func (s *KLL) coin() int {
	s.rng += 0x9e3779b97f4a7c15
	z := s.rng
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return int(z >> 63)
}

// compress compacts the lowest full level until the sketch is below its limit.
func (s *KLL) compress() {
	for s.size >= s.limit {
		h := 0
		for len(s.levels[h]) < s.capacity(h) {
			h++ // some level is full: Σ len ≥ Σ capacity
		}
		if h == len(s.levels)-1 {
			if len(s.levels) == kllMaxLevels {
				// Only reachable after n has wrapped past 2^64 (weights would too):
				// halve the top level in place rather than grow without bound.
				lv := s.levels[h]
				s.size -= len(lv) / 2
				s.levels[h] = lv[:len(lv)-len(lv)/2]
				continue
			}
			s.levels = append(s.levels, nil)
			s.limit = s.computeLimit()
		}
		s.compact(h)
	}
}

// compact halves level h into level h+1. With an odd count the smallest item stays
// behind at its own weight, so the total weight is exactly n.
func (s *KLL) compact(h int) {
	lv := s.levels[h]
	if h == 0 {
		s.keys = sortFloats(lv, s.keys)
	}
	keep := len(lv) & 1
	half := lv[keep:]
	off := s.coin()
	j := 0
	for i := off; i < len(half); i += 2 {
		half[j] = half[i]
		j++
	}
	up := half[:j]
	s.levels[h+1], s.merged = mergeSorted(s.levels[h+1], up, s.merged)
	s.levels[h] = lv[:keep]
	s.size -= j
}

// sortFloats sorts NaN-free values, using scratch (grown if short, and returned for
// reuse) for keys. The result must be exactly what a stable sort gives for up to 48
// items and what slices.Sort gives above, because the order of equal items is
// visible in the bytes — but only -0 and +0 are equal without being identical, so any
// correct sort gives those bytes when no zero is present. With a zero it runs the
// exact sort the format was defined with.
//
// Level 0 is usually compacted at a dozen or two items (the lazy scheme gives the
// bottom level only the other levels' slack). Comparison sorts mispredict every other
// branch on random data; instead the values become order-preserving integer keys,
// blocks of 16 keys are sorted by a branch-free network and the blocks are merged
// pairwise by a branch-free merge.
func sortFloats(xs []float64, scratch []uint64) []uint64 {
	n := len(xs)
	if n < 2 {
		return scratch
	}
	padded := (n + 15) &^ 15
	if cap(scratch) < 2*padded {
		scratch = make([]uint64, 2*padded)
	}
	keys, tmp := scratch[:padded], scratch[padded:2*padded]
	zeros, descents := uint64(0), uint64(0)
	prev := uint64(0)
	for i, x := range xs {
		k := kllKey(x)
		keys[i] = k
		// -0 and +0 have the adjacent keys 1<<63 - 1 and 1<<63: d>>1 is 0 for them
		// alone, and d>>1 - 1 then the only value with the top bit set.
		d := (k - (1<<63 - 1)) >> 1
		zeros |= (d - 1) >> 63
		_, borrow := bits.Sub64(k, prev, 0) // 1 when k < prev, without a branch
		descents |= borrow
		prev = k
	}
	if descents == 0 && (zeros == 0 || n <= 48) {
		// Already in order (ascending columns such as timestamps and ids): a sort
		// leaves it as it is, ties included, since keys of equal items are then
		// identical or -0 before +0 in arrival order, as a stable sort keeps them.
		// Where slices.Sort defines the order of -0 and +0 it runs, as below.
		return scratch
	}
	if zeros != 0 {
		if n <= 48 {
			insertionSort(xs)
		} else {
			slices.Sort(xs)
		}
		return scratch
	}
	// The padding is the largest key: it sorts last and is cut off.
	for i := n; i < padded; i++ {
		keys[i] = math.MaxUint64
	}
	for lo := 0; lo < padded; lo += 16 {
		sort16((*[16]uint64)(keys[lo : lo+16]))
	}
	// Only the last block has padding, at its end: the merges stop at n.
	for w := 16; w < n; w *= 2 {
		for lo := 0; lo < n; lo += 2 * w {
			mid, hi := min(lo+w, n), min(lo+2*w, n)
			mergeKeys(tmp[lo:hi], keys[lo:mid], keys[mid:hi])
		}
		keys, tmp = tmp, keys
	}
	for i := range xs {
		xs[i] = kllUnkey(keys[i])
	}
	return scratch
}

func insertionSort(xs []float64) {
	for i := 1; i < len(xs); i++ {
		x := xs[i]
		j := i
		for ; j > 0 && xs[j-1] > x; j-- {
			xs[j] = xs[j-1]
		}
		xs[j] = x
	}
}

// kllKey maps a float64 other than NaN to a uint64 of the same order: the sign bit
// is flipped for positive values and every bit for negative ones. kllUnkey undoes it.
func kllKey(f float64) uint64 {
	b := math.Float64bits(f)
	return b ^ (uint64(int64(b)>>63) | 1<<63)
}

func kllUnkey(k uint64) float64 {
	return math.Float64frombits(k ^ (^uint64(int64(k)>>63) | 1<<63))
}

// mergeKeys merges sorted a and b into out (len(a)+len(b)) without branching on the
// comparison.
func mergeKeys(out, a, b []uint64) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		v, c := x, 1
		if y < x {
			v, c = y, 0
		}
		out[k] = v
		k++
		i += c
		j += 1 - c
	}
	k += copy(out[k:], a[i:])
	copy(out[k:], b[j:])
}

// sort16 sorts 16 keys with Batcher's odd-even merge sorting network (63
// compare-exchanges in 10 rounds), all in registers and free of branches.
func sort16(a *[16]uint64) {
	x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15 := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]
	x0, x1 = min(x0, x1), max(x0, x1)
	x2, x3 = min(x2, x3), max(x2, x3)
	x4, x5 = min(x4, x5), max(x4, x5)
	x6, x7 = min(x6, x7), max(x6, x7)
	x8, x9 = min(x8, x9), max(x8, x9)
	x10, x11 = min(x10, x11), max(x10, x11)
	x12, x13 = min(x12, x13), max(x12, x13)
	x14, x15 = min(x14, x15), max(x14, x15)
	x0, x2 = min(x0, x2), max(x0, x2)
	x1, x3 = min(x1, x3), max(x1, x3)
	x4, x6 = min(x4, x6), max(x4, x6)
	x5, x7 = min(x5, x7), max(x5, x7)
	x8, x10 = min(x8, x10), max(x8, x10)
	x9, x11 = min(x9, x11), max(x9, x11)
	x12, x14 = min(x12, x14), max(x12, x14)
	x13, x15 = min(x13, x15), max(x13, x15)
	x1, x2 = min(x1, x2), max(x1, x2)
	x5, x6 = min(x5, x6), max(x5, x6)
	x9, x10 = min(x9, x10), max(x9, x10)
	x13, x14 = min(x13, x14), max(x13, x14)
	x0, x4 = min(x0, x4), max(x0, x4)
	x1, x5 = min(x1, x5), max(x1, x5)
	x2, x6 = min(x2, x6), max(x2, x6)
	x3, x7 = min(x3, x7), max(x3, x7)
	x8, x12 = min(x8, x12), max(x8, x12)
	x9, x13 = min(x9, x13), max(x9, x13)
	x10, x14 = min(x10, x14), max(x10, x14)
	x11, x15 = min(x11, x15), max(x11, x15)
	x2, x4 = min(x2, x4), max(x2, x4)
	x3, x5 = min(x3, x5), max(x3, x5)
	x10, x12 = min(x10, x12), max(x10, x12)
	x11, x13 = min(x11, x13), max(x11, x13)
	x1, x2 = min(x1, x2), max(x1, x2)
	x3, x4 = min(x3, x4), max(x3, x4)
	x5, x6 = min(x5, x6), max(x5, x6)
	x9, x10 = min(x9, x10), max(x9, x10)
	x11, x12 = min(x11, x12), max(x11, x12)
	x13, x14 = min(x13, x14), max(x13, x14)
	x0, x8 = min(x0, x8), max(x0, x8)
	x1, x9 = min(x1, x9), max(x1, x9)
	x2, x10 = min(x2, x10), max(x2, x10)
	x3, x11 = min(x3, x11), max(x3, x11)
	x4, x12 = min(x4, x12), max(x4, x12)
	x5, x13 = min(x5, x13), max(x5, x13)
	x6, x14 = min(x6, x14), max(x6, x14)
	x7, x15 = min(x7, x15), max(x7, x15)
	x4, x8 = min(x4, x8), max(x4, x8)
	x5, x9 = min(x5, x9), max(x5, x9)
	x6, x10 = min(x6, x10), max(x6, x10)
	x7, x11 = min(x7, x11), max(x7, x11)
	x2, x4 = min(x2, x4), max(x2, x4)
	x3, x5 = min(x3, x5), max(x3, x5)
	x6, x8 = min(x6, x8), max(x6, x8)
	x7, x9 = min(x7, x9), max(x7, x9)
	x10, x12 = min(x10, x12), max(x10, x12)
	x11, x13 = min(x11, x13), max(x11, x13)
	x1, x2 = min(x1, x2), max(x1, x2)
	x3, x4 = min(x3, x4), max(x3, x4)
	x5, x6 = min(x5, x6), max(x5, x6)
	x7, x8 = min(x7, x8), max(x7, x8)
	x9, x10 = min(x9, x10), max(x9, x10)
	x11, x12 = min(x11, x12), max(x11, x12)
	x13, x14 = min(x13, x14), max(x13, x14)
	a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15] = x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15
}

// mergeSorted merges sorted b into sorted a and returns the result, which replaces
// a; equal items of a stay below b's. scratch is a spare buffer: the general merge
// writes into it and hands a's array back as the next spare, so no copy is made.
// Neither a nor scratch may share an array with b.
func mergeSorted(a, b, scratch []float64) (merged, spare []float64) {
	na, nb := len(a), len(b)
	switch {
	case na == 0 || nb == 0 || a[na-1] <= b[0]: // b goes on top: ascending input
		return append(a, b...), scratch
	case b[nb-1] < a[0]: // b goes below
		a = slices.Grow(a, nb)[:na+nb]
		copy(a[nb:], a[:na])
		copy(a, b)
		return a, scratch
	case na >= 16*nb:
		// A few items into a long (lazily compacted) level: find each one's place by
		// binary search and move the items above it in one copy, rather than walking
		// the whole level.
		a = slices.Grow(a, nb)[:na+nb]
		i := na
		for j := nb - 1; j >= 0; j-- {
			y := b[j]
			p := upperBound(a[:i], y)
			copy(a[p+j+1:i+j+1], a[p:i])
			a[p+j] = y
			i = p
		}
		return a, scratch
	}
	n := na + nb
	if cap(scratch) < n {
		// Room to grow, as append would leave.
		scratch = make([]float64, n, 2*n)
	}
	out := scratch[:n]
	mergeBoth(out, a, b)
	return out, a[:0]
}

// mergeBoth merges sorted a and b into out (len(a)+len(b)), equal items of a first.
// It takes the smallest item from the front and the largest from the back in the
// same step: the two halves are independent chains of loads and comparisons that the
// processor overlaps. Each choice is a flag used as a mask rather than a branch,
// which random data would mispredict half the time.
func mergeBoth(out, a, b []float64) {
	i, j, k := 0, 0, 0
	ia, jb, kb := len(a)-1, len(b)-1, len(out)-1
	for k < kb && i < len(a) && j < len(b) && ia >= 0 && jb >= 0 {
		// Front: a's item when a[i] ≤ b[j], so equal items of a come first.
		x, y := a[i], b[j]
		c := 0
		if x <= y {
			c = 1
		}
		xb, yb := math.Float64bits(x), math.Float64bits(y)
		out[k] = math.Float64frombits(yb ^ (xb^yb)&-uint64(c))
		k++
		i += c
		j += 1 - c
		// Back: a's item only when a[ia] > b[jb], so equal items of b come last.
		x, y = a[ia], b[jb]
		d := 0
		if x > y {
			d = 1
		}
		xb, yb = math.Float64bits(x), math.Float64bits(y)
		out[kb] = math.Float64frombits(yb ^ (xb^yb)&-uint64(d))
		kb--
		ia -= d
		jb -= 1 - d
	}
	// The middle: what is left of a is a[i:ia+1], of b b[j:jb+1].
	a, b = a[i:ia+1], b[j:jb+1]
	i, j = 0, 0
	for i < len(a) && j < len(b) {
		if a[i] <= b[j] {
			out[k] = a[i]
			i++
		} else {
			out[k] = b[j]
			j++
		}
		k++
	}
	k += copy(out[k:], a[i:])
	copy(out[k:], b[j:])
}

// upperBound is the number of items of sorted xs that are ≤ y.
func upperBound(xs []float64, y float64) int {
	lo, hi := 0, len(xs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if xs[m] <= y {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Merge folds o into s: s becomes a sketch of both streams, within the same error.
// o is not changed.
func (s *KLL) Merge(o *KLL) {
	if o.n == 0 {
		return
	}
	if o == s {
		o = s.Clone() // the level merges must not read what they write
	}
	if s.n == 0 {
		s.min, s.max = o.min, o.max
	} else {
		s.min, s.max = math.Min(s.min, o.min), math.Max(s.max, o.max)
	}
	for len(s.levels) < len(o.levels) {
		s.levels = append(s.levels, nil)
	}
	for h, lv := range o.levels {
		if h == 0 {
			s.levels[0] = append(s.levels[0], lv...)
		} else {
			s.levels[h], s.merged = mergeSorted(s.levels[h], lv, s.merged)
		}
	}
	s.n += o.n
	s.size += o.size
	// The coins after a merge depend on both histories, deterministically.
	s.rng = s.rng*0x9e3779b97f4a7c15 ^ o.rng
	s.limit = s.computeLimit()
	s.compress()
}

// Clone returns an independent copy of s.
func (s *KLL) Clone() *KLL {
	c := *s
	c.keys, c.merged = nil, nil
	c.levels = make([][]float64, len(s.levels))
	for h, lv := range s.levels {
		c.levels[h] = slices.Clone(lv)
	}
	return &c
}

// sortedView is every retained item in ascending order with its cumulative weight.
// The levels above 0 are already sorted, so it sorts a copy of level 0 and merges
// the levels in, one at a time.
func (s *KLL) sortedView() (vals []float64, cum []uint64) {
	vals = make([]float64, 0, s.size)
	ws := make([]uint64, 0, s.size)
	vals = append(vals, s.levels[0]...)
	sortFloats(vals, nil)
	for range vals {
		ws = append(ws, 1)
	}
	tmpV := make([]float64, 0, s.size)
	tmpW := make([]uint64, 0, s.size)
	for h := 1; h < len(s.levels); h++ {
		lv, w := s.levels[h], uint64(1)<<h
		if len(lv) == 0 {
			continue
		}
		tmpV, tmpW = tmpV[:0], tmpW[:0]
		i, j := 0, 0
		for i < len(vals) && j < len(lv) {
			if lv[j] < vals[i] {
				tmpV, tmpW = append(tmpV, lv[j]), append(tmpW, w)
				j++
			} else {
				tmpV, tmpW = append(tmpV, vals[i]), append(tmpW, ws[i])
				i++
			}
		}
		tmpV, tmpW = append(tmpV, vals[i:]...), append(tmpW, ws[i:]...)
		for ; j < len(lv); j++ {
			tmpV, tmpW = append(tmpV, lv[j]), append(tmpW, w)
		}
		vals, tmpV = tmpV, vals
		ws, tmpW = tmpW, ws
	}
	var t uint64
	for i, w := range ws {
		t += w
		ws[i] = t
	}
	return vals, ws
}

// Quantile is an estimate of the q-quantile (q in [0, 1]): a value whose normalized
// rank is within KLLRankError of q. q = 0 is the exact minimum and q = 1 the exact
// maximum; an empty sketch or a q outside [0, 1] gives NaN.
func (s *KLL) Quantile(q float64) float64 {
	return s.Quantiles([]float64{q})[0]
}

// Quantiles is Quantile for several q at once, sorting the sketch's items once.
func (s *KLL) Quantiles(qs []float64) []float64 {
	out := make([]float64, len(qs))
	var vals []float64
	var cum []uint64
	for i, q := range qs {
		switch {
		case s.n == 0 || !(q >= 0 && q <= 1):
			out[i] = math.NaN()
		case q == 0:
			out[i] = s.min
		case q == 1:
			out[i] = s.max
		default:
			if vals == nil {
				vals, cum = s.sortedView()
			}
			// The smallest item whose cumulative weight reaches q·n: the value of
			// rank ⌈q·n⌉ when the sketch is exact.
			t := q * float64(s.n)
			c := math.Ceil(t)
			if c-t > 1-1e-9 {
				c-- // q·n was an integer but for rounding (0.07·100 = 7.000000000000001)
			}
			target := uint64(c)
			j := sort.Search(len(cum), func(j int) bool { return cum[j] >= target })
			out[i] = vals[min(j, len(vals)-1)]
		}
	}
	return out
}

// Rank is an estimate of the normalized rank of x: the fraction of the values added
// that are ≤ x, within KLLRankError. Below the minimum it is 0, at or above the
// maximum 1; an empty sketch or a NaN x gives NaN.
func (s *KLL) Rank(x float64) float64 {
	switch {
	case s.n == 0 || x != x:
		return math.NaN()
	case x < s.min:
		return 0
	case x >= s.max:
		return 1
	}
	var w uint64
	for h, lv := range s.levels {
		if h == 0 {
			for _, v := range lv {
				if v <= x {
					w++
				}
			}
			continue
		}
		// Sorted: count the items ≤ x by binary search.
		c := sort.Search(len(lv), func(i int) bool { return lv[i] > x })
		w += uint64(c) << h
	}
	return float64(w) / float64(s.n)
}

// MarshalBinary encodes the sketch in format version 1 (docs/format/sketches.md):
// a 36-byte header (version, level count, k, n, coin state, min, max), one uint32
// item count per level, then the items level by level, all little-endian.
func (s *KLL) MarshalBinary() ([]byte, error) {
	b := make([]byte, kllHeader, kllHeader+4*len(s.levels)+8*s.size)
	b[0] = KLLVersion
	b[1] = byte(len(s.levels))
	binary.LittleEndian.PutUint16(b[2:], KLLK)
	binary.LittleEndian.PutUint64(b[4:], s.n)
	binary.LittleEndian.PutUint64(b[12:], s.rng)
	binary.LittleEndian.PutUint64(b[20:], math.Float64bits(s.min))
	binary.LittleEndian.PutUint64(b[28:], math.Float64bits(s.max))
	for _, lv := range s.levels {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(lv)))
	}
	for _, lv := range s.levels {
		for _, v := range lv {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b, nil
}

func kllCorrupt(format string, args ...any) error {
	return errs.New(errs.CorruptSource, "cannot read KLL sketch: "+format, args...)
}

// UnmarshalBinary replaces s with a sketch encoded by MarshalBinary. A newer version,
// another k, a wrong length, or contents that break the sketch's invariants (weights
// not summing to n, unsorted levels, items outside [min, max], NaN) are refused with
// errs.CorruptSource, and s is left unchanged.
func (s *KLL) UnmarshalBinary(b []byte) error {
	if len(b) < kllHeader {
		if len(b) > 0 && b[0] != KLLVersion {
			return kllCorrupt("format version %d; this build reads version %d", b[0], KLLVersion)
		}
		return kllCorrupt("%d bytes, shorter than the %d-byte header", len(b), kllHeader)
	}
	if b[0] != KLLVersion {
		return kllCorrupt("format version %d; this build reads version %d", b[0], KLLVersion)
	}
	nl := int(b[1])
	if k := binary.LittleEndian.Uint16(b[2:]); k != KLLK {
		return kllCorrupt("k = %d; this build reads k = %d", k, KLLK)
	}
	if nl < 1 || nl > kllMaxLevels {
		return kllCorrupt("%d levels, want 1 to %d", nl, kllMaxLevels)
	}
	n := binary.LittleEndian.Uint64(b[4:])
	rng := binary.LittleEndian.Uint64(b[12:])
	lo := math.Float64frombits(binary.LittleEndian.Uint64(b[20:]))
	hi := math.Float64frombits(binary.LittleEndian.Uint64(b[28:]))
	rest := b[kllHeader:]
	if len(rest) < 4*nl {
		return kllCorrupt("%d bytes, too short for %d level counts", len(b), nl)
	}
	counts := make([]int, nl)
	total := 0
	for h := range counts {
		c := binary.LittleEndian.Uint32(rest[4*h:])
		if c > uint32(len(b)/8) {
			return kllCorrupt("level %d claims %d items in %d bytes", h, c, len(b))
		}
		counts[h] = int(c)
		total += int(c)
	}
	rest = rest[4*nl:]
	if len(rest) != 8*total {
		return kllCorrupt("%d bytes of items, want %d for %d items", len(rest), 8*total, total)
	}
	if n == 0 {
		// An empty sketch has no items and the NaN math.NaN returns as both bounds.
		nan := math.Float64bits(math.NaN())
		if total != 0 || math.Float64bits(lo) != nan || math.Float64bits(hi) != nan {
			return kllCorrupt("an empty sketch with items or bounds")
		}
	} else if !(lo <= hi) {
		return kllCorrupt("minimum %v above maximum %v", lo, hi)
	}
	levels := make([][]float64, nl)
	var weight uint64
	for h, c := range counts {
		lv := make([]float64, c)
		for i := range lv {
			v := math.Float64frombits(binary.LittleEndian.Uint64(rest))
			rest = rest[8:]
			if !(v >= lo && v <= hi) {
				return kllCorrupt("level %d item %d is %v, outside [%v, %v]", h, i, v, lo, hi)
			}
			if h > 0 && i > 0 && v < lv[i-1] {
				return kllCorrupt("level %d is not sorted at item %d", h, i)
			}
			lv[i] = v
		}
		levels[h] = lv
		w, carry := bits64Mul(uint64(c), h)
		weight += w
		if carry || weight < w {
			return kllCorrupt("level weights overflow")
		}
	}
	if weight != n {
		return kllCorrupt("items weigh %d in all, but n = %d", weight, n)
	}
	*s = KLL{levels: levels, n: n, min: lo, max: hi, rng: rng, size: total}
	if n == 0 {
		s.min, s.max = math.NaN(), math.NaN()
	}
	s.limit = s.computeLimit()
	// A sketch from a valid writer is below its limit; compress is a no-op then and
	// restores the invariant otherwise.
	s.compress()
	return nil
}

// bits64Mul is c·2^h and whether it overflowed.
func bits64Mul(c uint64, h int) (uint64, bool) {
	if c == 0 {
		return 0, false
	}
	if h >= 64 || c > math.MaxUint64>>uint(h) {
		return 0, true
	}
	return c << uint(h), false
}

// KLLValue converts a value to the float64 a KLL sketch holds, and reports whether
// the type has one: integers as their value, floats as themselves (NaN reports
// false), decimals as their numeric value, dates as days since the epoch, timestamps
// and times as ticks of their unit. Other types (and NULL) report false. AddColumn
// converts alike, so sketches built from rows and from boxed values agree.
func KLLValue(v types.Value) (float64, bool) {
	if v.Null {
		return 0, false
	}
	dt := types.Unwrap(v.Type)
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64:
		return float64(v.I), true
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return float64(v.U), true
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return v.F, v.F == v.F
	case arrow.DECIMAL64, arrow.DECIMAL128:
		_, scale, _ := types.DecimalParams(dt)
		return decimalFloat(v.D, scale), true
	}
	return 0, false
}

// KLLSupports reports whether AddColumn accepts arrays of dt.
func KLLSupports(dt arrow.DataType) bool {
	switch types.Unwrap(dt).ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL64, arrow.DECIMAL128,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64:
		return true
	}
	return false
}

// decimalFloat is the nearest float64 to a decimal: a division by the power of ten,
// exact-rounded whenever the scaled integer and the power are both exact in float64.
func decimalFloat(d decimal128.Num, scale int32) float64 {
	hi, lo := d.HighBits(), d.LowBits()
	if (hi == 0 && lo < 1<<63) || (hi == -1 && lo >= 1<<63) {
		x := float64(int64(lo))
		switch {
		case scale >= 0 && scale <= 22:
			return x / math.Pow10(int(scale))
		case scale < 0 && scale >= -22:
			return x * math.Pow10(int(-scale))
		}
	}
	return d.ToFloat64(scale)
}

// AddColumn adds the selected non-null rows of arr (sel as in HashColumn: nil means
// every row), converted as KLLValue converts, and reports false, adding nothing, when
// the type has no KLL value (KLLSupports). Dictionary arrays are read through their
// dictionary.
func (s *KLL) AddColumn(arr arrow.Array, sel []int32) bool {
	switch a := arr.(type) {
	case *array.Int8:
		addNumbers(s, arr, a.Int8Values(), sel)
	case *array.Int16:
		addNumbers(s, arr, a.Int16Values(), sel)
	case *array.Int32:
		addNumbers(s, arr, a.Int32Values(), sel)
	case *array.Int64:
		addNumbers(s, arr, a.Int64Values(), sel)
	case *array.Uint8:
		addNumbers(s, arr, a.Uint8Values(), sel)
	case *array.Uint16:
		addNumbers(s, arr, a.Uint16Values(), sel)
	case *array.Uint32:
		addNumbers(s, arr, a.Uint32Values(), sel)
	case *array.Uint64:
		addNumbers(s, arr, a.Uint64Values(), sel)
	case *array.Float32:
		addNumbers(s, arr, a.Float32Values(), sel)
	case *array.Float64:
		addNumbers(s, arr, a.Float64Values(), sel)
	case *array.Date32:
		addNumbers(s, arr, a.Date32Values(), sel)
	case *array.Time32:
		addNumbers(s, arr, a.Time32Values(), sel)
	case *array.Time64:
		addNumbers(s, arr, a.Time64Values(), sel)
	case *array.Timestamp:
		addNumbers(s, arr, a.TimestampValues(), sel)
	case *array.Date64, *array.Float16, *array.Decimal64, *array.Decimal128:
		// Rare types: through the boxed conversion, which defines them.
		forValid(arr, sel, func(i int) {
			if x, ok := KLLValue(types.ValueAt(arr, i)); ok {
				s.Add(x)
			}
		})
	case *array.Dictionary:
		if !KLLSupports(a.Dictionary().DataType()) {
			return false
		}
		forValid(arr, sel, func(i int) {
			if x, ok := KLLValue(types.ValueAt(arr, i)); ok {
				s.Add(x)
			}
		})
	default:
		return false
	}
	return true
}

type number interface {
	integer | ~float32 | ~float64
}

// addNumbers adds vals[i] for the selected valid rows, converted in chunks and added
// with AddValues. NaN is dropped there.
func addNumbers[T number](s *KLL, arr arrow.Array, vals []T, sel []int32) {
	var buf [512]float64
	if arr.NullN() == 0 && sel == nil {
		vals = vals[:arr.Len()]
		for len(vals) > 0 {
			m := min(len(vals), len(buf))
			for i, v := range vals[:m] {
				buf[i] = float64(v)
			}
			s.AddValues(buf[:m])
			vals = vals[m:]
		}
		return
	}
	n := 0
	if arr.NullN() == 0 {
		for _, i := range sel {
			buf[n] = float64(vals[i])
			n++
			if n == len(buf) {
				s.AddValues(buf[:])
				n = 0
			}
		}
		s.AddValues(buf[:n])
		return
	}
	// With NULLs the validity bit is read from the bitmap and every row is written,
	// the next row overwriting a NULL one: no branch on a bit that may be random.
	bm := arr.NullBitmapBytes()
	if len(bm) == 0 {
		return // NULLs but no bitmap: every row is NULL
	}
	off := arr.Data().Offset()
	if sel == nil {
		vals = vals[:arr.Len()]
		for i, v := range vals {
			buf[n] = float64(v)
			n += int(bm[(off+i)>>3] >> ((off + i) & 7) & 1)
			if n == len(buf) {
				s.AddValues(buf[:])
				n = 0
			}
		}
	} else {
		for _, i := range sel {
			buf[n] = float64(vals[i])
			r := off + int(i)
			n += int(bm[r>>3] >> (r & 7) & 1)
			if n == len(buf) {
				s.AddValues(buf[:])
				n = 0
			}
		}
	}
	s.AddValues(buf[:n])
}

// forValid calls f for each selected row that is not NULL.
func forValid(arr arrow.Array, sel []int32, f func(i int)) {
	if sel == nil {
		for i := range arr.Len() {
			if arr.IsValid(i) {
				f(i)
			}
		}
		return
	}
	for _, i := range sel {
		if arr.IsValid(int(i)) {
			f(int(i))
		}
	}
}
