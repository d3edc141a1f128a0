package exec

import (
	"context"
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/plan"
)

// keyFilter is a Bloom filter of a hash join's build keys that the probe side's scan
// tests rows against before it decodes their other columns: a row whose key the
// filter rules out cannot find a partner, and for the join kinds that use it an
// unmatched probe row yields nothing. Each key sets three bits of one 64-bit word,
// about sixteen bits a key, so a lookup is one memory access and about one key in
// fifty that is not there passes.
type keyFilter struct {
	col   int // the probe key's scan column
	words []uint64
	shift uint // 64 - log2(len(words))
}

// maxFilterKeys bounds the build sides a filter is made for (16 bits a key).
const maxFilterKeys = 1 << 22

// joinKeyFilter returns a filter of the build keys for the probe pipeline p, or nil
// when the join cannot use one: a kind that keeps unmatched probe rows, more than one
// key, a probe key that is not a column of p's scan, a key type the filter does not
// read, a build side too large, or a canceled statement (which has no use for one).
func (j *hashJoin) joinKeyFilter(ctx context.Context, p *pipeline, buildKeys arrow.Array) *keyFilter {
	x := j.node
	kind := x.Kind
	dropsUnmatched := kind == plan.InnerJoin || kind == plan.SemiJoin ||
		(kind == plan.RightJoin && !j.swapped) || (j.swapped && (kind == plan.LeftJoin || kind == plan.AntiJoin))
	if !dropsUnmatched || x.NullAwareAnti || x.NullEq || len(x.LeftKeys) != 1 || buildKeys == nil {
		return nil
	}
	probeNode, probeKey := x.Left, x.LeftKeys[0]
	if j.swapped {
		probeNode, probeKey = x.Right, x.RightKeys[0]
	}
	scan, col, ok := plan.ScanColumn(probeNode, probeKey)
	if !ok || scan != p.scan || !arrow.TypeEqual(probeKey.Type(), buildKeys.DataType()) {
		return nil
	}
	if buildKeys.Len() > maxFilterKeys {
		return nil
	}
	// Each pass over millions of keys takes a while.
	words, ok := keyWords(buildKeys, make([]uint64, 0, buildKeys.Len()))
	if !ok || ctx.Err() != nil {
		return nil
	}
	f := newFilterOf(words, buildKeys)
	f.col = col
	return f
}

// newFilterOf makes a filter of the non-NULL keys of keys, read as words.
func newFilterOf(words []uint64, keys arrow.Array) *keyFilter {
	n := max(64, 1<<bits.Len(uint(len(words)/4))) // 16 bits a key, a power of two
	f := &keyFilter{words: make([]uint64, n), shift: uint(64 - bits.TrailingZeros(uint(n)))}
	for i, w := range words {
		if keys.IsValid(i) {
			h := mix(w)
			f.words[h>>f.shift] |= probeBits(h)
		}
	}
	return f
}

// mask tests every row of arr: false where the key is NULL or certainly not a build
// key. ok is false when arr is not of a type the filter reads.
func (f *keyFilter) mask(arr arrow.Array) (*array.Boolean, bool) {
	buf := scratchWords.Get().(*[]uint64)
	defer scratchWords.Put(buf)
	words, ok := keyWords(arr, (*buf)[:0])
	if !ok {
		return nil, false
	}
	*buf = words
	out := make([]byte, (len(words)+7)/8)
	for i, w := range words {
		h := mix(w)
		b := probeBits(h)
		if f.words[h>>f.shift]&b == b {
			out[i>>3] |= 1 << (i & 7)
		}
	}
	if arr.NullN() > 0 {
		valid := arr.NullBitmapBytes()
		off := arr.Data().Offset()
		for i := range words {
			if b := off + i; valid[b>>3]&(1<<(b&7)) == 0 {
				out[i>>3] &^= 1 << (i & 7)
			}
		}
	}
	d := array.NewData(arrow.FixedWidthTypes.Boolean, len(words), []*memory.Buffer{nil, memory.NewBufferBytes(out)}, nil, 0, 0)
	defer d.Release()
	return array.NewBooleanData(d), true
}

// mix scrambles a key's bits (the finaliser of SplitMix64).
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// probeBits are the three bits a key sets in its word, from bits of the hash the word
// index does not use.
func probeBits(h uint64) uint64 {
	return 1<<(h&63) | 1<<(h>>6&63) | 1<<(h>>12&63)
}

// scratchWords are buffers for the words of a probe batch's keys.
var scratchWords = sync.Pool{New: func() any { return new([]uint64) }}

// keyWords appends the integer keys of arr to dst as words, each value
// sign-extended, so that a build and a probe column of one type give equal words for
// equal keys.
func keyWords(arr arrow.Array, dst []uint64) ([]uint64, bool) {
	switch a := arr.(type) {
	case *array.Int64:
		return appendWords(dst, a.Int64Values()), true
	case *array.Int32:
		return appendWords(dst, a.Int32Values()), true
	case *array.Date32:
		return appendWords(dst, a.Date32Values()), true
	case *array.Timestamp:
		return appendWords(dst, a.TimestampValues()), true
	}
	return nil, false
}

func appendWords[T ~int32 | ~int64](dst []uint64, vals []T) []uint64 {
	for _, v := range vals {
		dst = append(dst, uint64(int64(v)))
	}
	return dst
}
