package deletes

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/loredb/lore/errs"
)

// Container kinds, as in Roaring: a chunk of at most arrayMax positions is a sorted
// array, a larger one a bitmap, and a chunk decoded from a run container stays runs.
const (
	kindArray uint8 = iota
	kindBitmap
	kindRun
)

const (
	chunkBits  = 16
	chunkSize  = 1 << chunkBits // positions per chunk
	arrayMax   = 4096           // largest array chunk; Roaring's own threshold
	bitmapWord = 64
	bitmapLen  = chunkSize / bitmapWord // words in a bitmap chunk
)

// chunk holds the deleted positions p with p>>16 == key, as their low 16 bits.
type chunk struct {
	key  int64
	kind uint8
	card int32 // 1..65536
	// vals is an array chunk's ascending values, or a run chunk's (first, last) pairs,
	// ascending and disjoint.
	vals []uint16
	bits []uint64 // a bitmap chunk's bitmapLen words; bit v of word v/64 is value v
}

// Positions is the set of deleted row positions of one data file, immutable once built.
// A nil *Positions is the empty set.
type Positions struct {
	chunks []chunk // ascending by key, none empty
	// before[i] is the number of positions in chunks[:i]; it has len(chunks)+1 entries.
	before []int64
}

// build finishes a Positions from chunks in ascending key order.
func build(chunks []chunk) *Positions {
	p := &Positions{chunks: chunks, before: make([]int64, len(chunks)+1)}
	for i := range chunks {
		p.before[i+1] = p.before[i] + int64(chunks[i].card)
	}
	return p
}

// Len is the number of deleted positions.
func (p *Positions) Len() int64 {
	if p == nil {
		return 0
	}
	return p.before[len(p.chunks)]
}

// find returns the index of the first chunk whose key is at least key.
func (p *Positions) find(key int64) int {
	return sort.Search(len(p.chunks), func(i int) bool { return p.chunks[i].key >= key })
}

// Contains reports whether pos is deleted.
func (p *Positions) Contains(pos int64) bool {
	if p == nil || pos < 0 {
		return false
	}
	i := p.find(pos >> chunkBits)
	return i < len(p.chunks) && p.chunks[i].key == pos>>chunkBits &&
		p.chunks[i].contains(int(pos&(chunkSize-1)))
}

// rank is the number of deleted positions below pos.
func (p *Positions) rank(pos int64) int64 {
	if pos <= 0 {
		return 0
	}
	i := p.find(pos >> chunkBits)
	r := p.before[i]
	if i < len(p.chunks) && p.chunks[i].key == pos>>chunkBits {
		r += int64(p.chunks[i].rank(int(pos & (chunkSize - 1))))
	}
	return r
}

// CountIn is how many deleted positions fall in [first, first+n).
func (p *Positions) CountIn(first, n int64) int64 {
	if p == nil || n <= 0 {
		return 0
	}
	return p.rank(end(first, n)) - p.rank(first)
}

// end is first+n saturated at math.MaxInt64, for n > 0.
func end(first, n int64) int64 {
	if first > math.MaxInt64-n {
		return math.MaxInt64
	}
	return first + n
}

// next returns the smallest deleted position at or above pos, or false.
func (p *Positions) next(pos int64) (int64, bool) {
	pos = max(pos, 0)
	i := p.find(pos >> chunkBits)
	if i < len(p.chunks) && p.chunks[i].key == pos>>chunkBits {
		if v, ok := p.chunks[i].next(int(pos & (chunkSize - 1))); ok {
			return p.chunks[i].key<<chunkBits | int64(v), true
		}
		i++
	}
	if i < len(p.chunks) {
		v, _ := p.chunks[i].next(0)
		return p.chunks[i].key<<chunkBits | int64(v), true
	}
	return 0, false
}

// Live appends to dst the offsets i in [0,n) with first+i NOT deleted, and returns it.
// It returns nil (and leaves dst alone) when no position in [first, first+n) is deleted,
// so that a caller can keep a batch whole; when every row is deleted it returns dst
// unchanged but never nil. It costs O(n + deleted positions in range) after a binary
// search to the range start. n must fit an int32 offset.
func (p *Positions) Live(first int64, n int, dst []int32) []int32 {
	if p == nil || n <= 0 {
		return nil
	}
	if n > math.MaxInt32 {
		panic("BUG: deletes: Live batch larger than an int32 offset")
	}
	last := end(first, int64(n))
	if d, ok := p.next(first); !ok || d >= last {
		return nil
	}
	if dst == nil {
		dst = make([]int32, 0, n)
	}
	from := max(first, 0) // rows below 0 are never deleted
	dst = appendSeq(dst, 0, int32(from-first))
	done := from // rows [first, done) are emitted
	for i := p.find(from >> chunkBits); i < len(p.chunks); i++ {
		c := &p.chunks[i]
		base := c.key << chunkBits
		if base >= last {
			break
		}
		lo, hi := max(done, base), min(last, base+chunkSize)
		dst = appendSeq(dst, int32(done-first), int32(lo-first))
		dst = c.appendLive(dst, int(lo-base), int(hi-base), base-first)
		done = hi
	}
	return appendSeq(dst, int32(done-first), int32(last-first))
}

// appendSeq appends from, from+1, ..., to-1.
func appendSeq(dst []int32, from, to int32) []int32 {
	for i := from; i < to; i++ {
		dst = append(dst, i)
	}
	return dst
}

// AppendTo appends every deleted position to dst in ascending order and returns it.
func (p *Positions) AppendTo(dst []int64) []int64 {
	if p == nil {
		return dst
	}
	for i := range p.chunks {
		c := &p.chunks[i]
		dst = c.appendValues(dst, c.key<<chunkBits)
	}
	return dst
}

// Max returns the largest deleted position, or false for the empty set.
func (p *Positions) Max() (int64, bool) {
	if p.Len() == 0 {
		return 0, false
	}
	c := &p.chunks[len(p.chunks)-1]
	return c.key<<chunkBits | int64(c.max()), true
}

// Union is the set of positions deleted by any of ps; nil entries are ignored. Iceberg
// applies every delete file that matches a data file, so one file can have several.
func Union(ps ...*Positions) *Positions {
	var all []chunk
	var only *Positions
	count := 0
	for _, p := range ps {
		if p.Len() == 0 {
			continue
		}
		count++
		only = p
		all = append(all, p.chunks...)
	}
	switch count {
	case 0:
		return nil
	case 1:
		return only
	}
	slices.SortStableFunc(all, func(a, b chunk) int { return cmp.Compare(a.key, b.key) })
	out := make([]chunk, 0, len(all))
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].key == all[i].key {
			j++
		}
		if j == i+1 {
			out = append(out, all[i]) // chunks are immutable: share it
		} else {
			words := make([]uint64, bitmapLen)
			for k := i; k < j; k++ {
				all[k].orInto(words)
			}
			out = append(out, fromBitmap(all[i].key, words))
		}
		i = j
	}
	return build(out)
}

// FromSorted builds Positions from ascending, unique, non-negative positions, such as
// the pos column of an Iceberg position delete file for one data file.
func FromSorted(pos []int64) (*Positions, error) {
	for i, v := range pos {
		if v < 0 {
			return nil, errs.New(errs.CorruptSource, "deleted position %d at index %d is negative", v, i)
		}
		if i > 0 && v <= pos[i-1] {
			return nil, errs.New(errs.CorruptSource, "deleted positions are not strictly ascending at index %d (%d after %d)", i, v, pos[i-1])
		}
	}
	var chunks []chunk
	for i := 0; i < len(pos); {
		key := pos[i] >> chunkBits
		j := i + 1
		for j < len(pos) && pos[j]>>chunkBits == key {
			j++
		}
		if j-i <= arrayMax {
			vals := make([]uint16, j-i)
			for k := range vals {
				vals[k] = uint16(pos[i+k])
			}
			chunks = append(chunks, chunk{key: key, kind: kindArray, card: int32(j - i), vals: vals})
		} else {
			words := make([]uint64, bitmapLen)
			for _, v := range pos[i:j] {
				words[(v&(chunkSize-1))/bitmapWord] |= 1 << (v % bitmapWord)
			}
			chunks = append(chunks, chunk{key: key, kind: kindBitmap, card: int32(j - i), bits: words})
		}
		i = j
	}
	return build(chunks), nil
}

// fromBitmap makes the chunk for a non-empty bitmap, as an array when it is small.
func fromBitmap(key int64, words []uint64) chunk {
	card := 0
	for _, w := range words {
		card += bits.OnesCount64(w)
	}
	if card > arrayMax {
		return chunk{key: key, kind: kindBitmap, card: int32(card), bits: words}
	}
	vals := make([]uint16, 0, card)
	for i, w := range words {
		for w != 0 {
			vals = append(vals, uint16(i*bitmapWord+bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
	return chunk{key: key, kind: kindArray, card: int32(card), vals: vals}
}

// contains reports whether v is in the chunk.
func (c *chunk) contains(v int) bool {
	switch c.kind {
	case kindArray:
		_, ok := slices.BinarySearch(c.vals, uint16(v))
		return ok
	case kindBitmap:
		return c.bits[v/bitmapWord]&(1<<(v%bitmapWord)) != 0
	default:
		r := c.runAtOrAfter(v)
		return r < len(c.vals)/2 && int(c.vals[2*r]) <= v
	}
}

// runAtOrAfter returns the index of the first run whose last value is at least v.
func (c *chunk) runAtOrAfter(v int) int {
	return sort.Search(len(c.vals)/2, func(r int) bool { return int(c.vals[2*r+1]) >= v })
}

// rank is the number of values below v, for v in [0, 65536).
func (c *chunk) rank(v int) int {
	switch c.kind {
	case kindArray:
		i, _ := slices.BinarySearch(c.vals, uint16(v))
		return i
	case kindBitmap:
		n := 0
		for _, w := range c.bits[:v/bitmapWord] {
			n += bits.OnesCount64(w)
		}
		return n + bits.OnesCount64(c.bits[v/bitmapWord]&(1<<(v%bitmapWord)-1))
	default:
		n := 0
		for r := 0; r < len(c.vals); r += 2 {
			first, last := int(c.vals[r]), int(c.vals[r+1])
			if first >= v {
				break
			}
			n += min(last, v-1) - first + 1
		}
		return n
	}
}

// next returns the smallest value at or above v, or false.
func (c *chunk) next(v int) (int, bool) {
	switch c.kind {
	case kindArray:
		i, _ := slices.BinarySearch(c.vals, uint16(v))
		if i == len(c.vals) {
			return 0, false
		}
		return int(c.vals[i]), true
	case kindBitmap:
		w := v / bitmapWord
		word := c.bits[w] &^ (1<<(v%bitmapWord) - 1)
		for {
			if word != 0 {
				return w*bitmapWord + bits.TrailingZeros64(word), true
			}
			w++
			if w == bitmapLen {
				return 0, false
			}
			word = c.bits[w]
		}
	default:
		r := c.runAtOrAfter(v)
		if r == len(c.vals)/2 {
			return 0, false
		}
		return max(v, int(c.vals[2*r])), true
	}
}

// max is the largest value in the chunk.
func (c *chunk) max() int {
	switch c.kind {
	case kindArray, kindRun:
		return int(c.vals[len(c.vals)-1])
	default:
		for w := bitmapLen - 1; ; w-- {
			if c.bits[w] != 0 {
				return w*bitmapWord + bitmapWord - 1 - bits.LeadingZeros64(c.bits[w])
			}
		}
	}
}

// appendLive appends v+shift for every v in [lo, hi) that is not in the chunk.
func (c *chunk) appendLive(dst []int32, lo, hi int, shift int64) []int32 {
	switch c.kind {
	case kindArray:
		i, _ := slices.BinarySearch(c.vals, uint16(lo))
		for v := lo; v < hi; v++ {
			if i < len(c.vals) && int(c.vals[i]) == v {
				i++
				continue
			}
			dst = append(dst, int32(int64(v)+shift))
		}
	case kindBitmap:
		for v := lo; v < hi; v++ {
			if c.bits[v/bitmapWord]&(1<<(v%bitmapWord)) == 0 {
				dst = append(dst, int32(int64(v)+shift))
			}
		}
	default:
		v := lo
		for r := 2 * c.runAtOrAfter(lo); r < len(c.vals) && v < hi; r += 2 {
			first, last := int(c.vals[r]), int(c.vals[r+1])
			for ; v < min(first, hi); v++ {
				dst = append(dst, int32(int64(v)+shift))
			}
			v = max(v, last+1)
		}
		for ; v < hi; v++ {
			dst = append(dst, int32(int64(v)+shift))
		}
	}
	return dst
}

// appendValues appends base|v for every value v of the chunk, ascending.
func (c *chunk) appendValues(dst []int64, base int64) []int64 {
	switch c.kind {
	case kindArray:
		for _, v := range c.vals {
			dst = append(dst, base|int64(v))
		}
	case kindBitmap:
		for i, w := range c.bits {
			for w != 0 {
				dst = append(dst, base|int64(i*bitmapWord+bits.TrailingZeros64(w)))
				w &= w - 1
			}
		}
	default:
		for r := 0; r < len(c.vals); r += 2 {
			for v := int(c.vals[r]); v <= int(c.vals[r+1]); v++ {
				dst = append(dst, base|int64(v))
			}
		}
	}
	return dst
}

// orInto sets the chunk's values in a bitmap of bitmapLen words.
func (c *chunk) orInto(words []uint64) {
	switch c.kind {
	case kindArray:
		for _, v := range c.vals {
			words[v/bitmapWord] |= 1 << (v % bitmapWord)
		}
	case kindBitmap:
		for i, w := range c.bits {
			words[i] |= w
		}
	default:
		for r := 0; r < len(c.vals); r += 2 {
			for v := int(c.vals[r]); v <= int(c.vals[r+1]); v++ {
				words[v/bitmapWord] |= 1 << (v % bitmapWord)
			}
		}
	}
}
