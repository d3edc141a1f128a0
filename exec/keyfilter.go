package exec

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// keyFilter is a Bloom filter of a hash join's build keys that the probe side's scan
// tests rows against before it decodes their other columns: a row whose key the
// filter rules out cannot find a partner, and for the join kinds that use it an
// unmatched probe row yields nothing. Keys of any type the hash table takes, and of
// several columns, are hashed as the table hashes them (kernels.HashColumns: a
// dictionary column like its values). Each key sets three bits of one 64-bit word,
// about sixteen bits a key, so a lookup is one memory access and about one key in
// fifty that is not there passes.
//
// A key of one integer column (ints, dates, timestamps) whose keys span a narrow
// enough range (a dimension's surrogate keys; see rangeFilterGrowth) gets a bit for
// each value of the range instead: exact, and tested without a hash.
//
// A filter that turns out to keep nearly every row it tests stops testing: it costs
// a hash a row and saves nothing (a dimension that keeps most of its keys).
type keyFilter struct {
	cols  []int // the probe keys' scan columns
	words []uint64
	shift uint // 64 - log2(len(words))

	// span, when set, is the bit of each value of lo .. lo+span-1 (words holds them):
	// a range filter.
	lo, span uint64

	tested, passed atomic.Int64
	off            atomic.Bool
}

// maxFilterKeys bounds the build sides a filter is made for (16 bits a key).
const maxFilterKeys = 1 << 22

// filterThrough is how many scan rows a build key must stand for before a join above
// a chain makes a filter for the scan at its bottom.
const filterThrough = 16

// filterTrial is how many rows a filter tests before it judges whether it pays, and
// filterKeeps the share of them past which it does not.
const (
	filterTrial = 1 << 16
	filterKeeps = 0.9
)

// probeScanKeys returns the scan columns of the probe keys of the join j, for the
// probe pipeline p, with ok false when the join cannot narrow its probe side's scan:
// a kind that keeps unmatched probe rows or a canceled statement. A key that is not a
// column of p's scan (an expression, another operator's column) is -1. through says
// the scan is below other joins of a chain, not the join's own probe side: dropping
// a row there early is what this join would do to every row made from it (they have
// its key), and a join between that keeps unmatched rows keeps them with NULL keys,
// which this join drops too.
func (j *hashJoin) probeScanKeys(ctx context.Context, p *pipeline, build []arrow.Array) (cols []int, through, ok bool) {
	x := j.node
	kind := x.Kind
	dropsUnmatched := kind == plan.InnerJoin || kind == plan.SemiJoin ||
		(kind == plan.RightJoin && !j.swapped) || (j.swapped && (kind == plan.LeftJoin || kind == plan.AntiJoin))
	if !dropsUnmatched || x.NullAwareAnti || x.NullEq || len(build) == 0 || ctx.Err() != nil {
		return nil, false, false
	}
	probeNode, probeKeys := x.Left, x.LeftKeys
	if j.swapped {
		probeNode, probeKeys = x.Right, x.RightKeys
	}
	cols = make([]int, len(probeKeys))
	found := false
	for i, k := range probeKeys {
		cols[i] = -1
		scan, col, isCol := plan.ScanColumn(probeNode, k)
		if !isCol || scan != p.scan {
			scan, col, isCol = plan.ScanColumnThroughJoins(probeNode, k)
			through = through || isCol && scan == p.scan
		}
		if isCol && scan == p.scan && arrow.TypeEqual(keyType(k.Type()), keyType(build[i].DataType())) {
			cols[i], found = col, true
		}
	}
	return cols, through, found
}

// hasNull reports whether any of the key columns holds a NULL.
func hasNull(keys []arrow.Array) bool {
	for _, k := range keys {
		if k.NullN() > 0 {
			return true
		}
	}
	return false
}

// keyType is the type a key's values have, a dictionary's its values'.
func keyType(dt arrow.DataType) arrow.DataType {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		return d.ValueType
	}
	return types.Unwrap(dt)
}

// narrowProbe gives the probe pipeline p what the build side's keys (their rows
// valid, the build rows without a NULL key) tell about the rows that can find a
// partner (narrowScan). It returns the filter's size in bytes, for the join's
// reservation.
func (j *hashJoin) narrowProbe(ctx context.Context, p *pipeline, build []arrow.Array, valid []int32) int64 {
	cols, through, ok := j.probeScanKeys(ctx, p, build)
	if !ok || len(valid) == 0 {
		return 0
	}
	distinct := -1
	if j.table != nil {
		distinct = j.table.Len()
	}
	return narrowScan(ctx, p, cols, through, build, valid, distinct)
}

// narrowInput gives the pipeline p at the bottom of the aggregate's input what its
// key filter (a join's build keys, see hashJoin.filterProbeAggregate) tells about
// the rows that can matter: those whose group keys the filter holds (narrowScan). A
// row it drops would only have made rows of groups the aggregate skips: its key
// column passes unchanged through the joins above the scan, or comes out NULL from
// an outer join's missing side, which no key in the filter equals — when none is
// NULL (a join whose NULL keys are equal may hold one). It returns the filter's
// size in bytes.
func (h *hashAggregate) narrowInput(ctx context.Context, p *pipeline) int64 {
	if h.keyFilter == nil || p == nil || ctx.Err() != nil {
		return 0
	}
	keys := h.keyFilter.Keys()
	for _, k := range keys {
		if k.NullN() > 0 {
			return 0
		}
	}
	cols := make([]int, len(h.filterCols))
	through, found := false, false
	for k, c := range h.filterCols {
		cols[k] = -1
		g := h.node.Groups[c]
		scan, col, ok := plan.ScanColumn(h.node.Input, g)
		if !ok || scan != p.scan {
			scan, col, ok = plan.ScanColumnThroughJoins(h.node.Input, g)
			through = through || ok && scan == p.scan
		}
		if ok && scan == p.scan && arrow.TypeEqual(keyType(g.Type()), keyType(keys[k].DataType())) {
			cols[k], found = col, true
		}
	}
	if !found || len(keys) == 0 || keys[0].Len() == 0 {
		return 0
	}
	valid := make([]int32, keys[0].Len())
	for i := range valid {
		valid[i] = int32(i)
	}
	return narrowScan(ctx, p, cols, through, keys, valid, len(valid))
}

// narrowScan gives the scan pipeline p what a set of keys tells about the only rows
// that matter to the operator above it: cols[i] is the scan column of key i (-1 when
// the key is not one), keys[i] its values, at the rows valid (none NULL), of which
// distinct are distinct (-1: unknown). Each key column gets the keys' range, which
// skips the files, row groups and pages whose statistics lie outside it, and when
// every key is a column, the scan gets a Bloom filter of the keys. through says the
// scan is below joins on the way to that operator. It returns the filter's size in
// bytes.
func narrowScan(ctx context.Context, p *pipeline, cols []int, through bool, keys []arrow.Array, valid []int32, distinct int) int64 {
	all := true
	for i, c := range cols {
		if c < 0 {
			all = false
			continue
		}
		if lo, hi, ok := keyRange(keys[i], valid); ok {
			name := p.scan.Ref.Listing.Schema.Field(c).Name
			p.extra = append(p.extra,
				source.Predicate{Column: name, Op: ">=", Values: []types.Value{lo}},
				source.Predicate{Column: name, Op: "<=", Values: []types.Value{hi}})
		}
	}
	if !all || len(valid) > maxFilterKeys || distinct < 0 {
		return 0
	}
	if rows := p.scan.Ref.Rows; rows >= 0 && int64(distinct) >= rows {
		// As many distinct keys as the scan has rows: a filter could hardly drop any.
		return 0
	} else if through && rows >= 0 && int64(distinct)*filterThrough > rows {
		// A join above a chain filters rows the joins below have mostly narrowed
		// already: a large build side's filter costs more to make than it saves.
		return 0
	}
	f := newRangeFilter(keys, valid)
	if f == nil {
		// Each pass over millions of keys takes a while.
		hashes := make([]uint64, len(valid))
		kernels.HashColumns(keys, valid, hashes)
		if ctx.Err() != nil {
			return 0
		}
		f = newFilterOf(hashes)
	}
	f.cols = cols
	// The joins of a chain narrow the scan from the top down, so a lower join's
	// filter, set last, goes first: the join order puts the most selective joins
	// lowest, and a filter tests only the rows the ones before it kept.
	p.members = append([]*keyFilter{f}, p.members...)
	return int64(8 * len(f.words))
}

// filterWords is the size in words of the Bloom filter of n keys: 16 bits a key, a
// power of two.
func filterWords(n int) int { return max(64, 1<<bits.Len(uint(n/4))) }

// newFilterOf makes a filter of the keys with the given hashes.
func newFilterOf(hashes []uint64) *keyFilter {
	n := filterWords(len(hashes))
	f := &keyFilter{words: make([]uint64, n), shift: uint(64 - bits.TrailingZeros(uint(n)))}
	for _, h := range hashes {
		h = mix(h)
		f.words[h>>f.shift] |= probeBits(h)
	}
	return f
}

// selectRows tests the rows sel of the key columns of one batch (rows 0..rows-1
// when sel is nil) and returns those, in order, whose key is not NULL and may be a
// build key: the selection of the batch the filter passes on. ok is false when the
// filter has stopped testing. Rows a filter before it dropped are not hashed. The
// selection is written into room when it holds a row per row tested.
func (f *keyFilter) selectRows(keys []arrow.Array, sel []int32, rows int, room []int32) (out []int32, ok bool) {
	if f.off.Load() || len(keys) == 0 {
		return nil, false
	}
	n := rows
	if sel != nil {
		n = len(sel)
	}
	out = grow(room, n)
	if f.span > 0 {
		ints, isInt := intColumnOf(keys[0])
		if !isInt {
			return nil, false
		}
		out = ints.test(f, sel, rows, out)
	} else {
		buf := scratchWords.Get().(*[]uint64)
		defer scratchWords.Put(buf)
		if cap(*buf) < n {
			*buf = make([]uint64, n)
		}
		hashes := (*buf)[:n]
		kernels.HashColumns(keys, sel, hashes)
		kept := 0
		for i, h := range hashes {
			row := int32(i)
			if sel != nil {
				row = sel[i]
			}
			h = mix(h)
			b := probeBits(h)
			out[kept] = row
			if f.words[h>>f.shift]&b == b {
				kept++
			}
		}
		out = out[:kept]
	}
	if hasNull(keys) {
		k := 0
		for _, row := range out {
			valid := true
			for _, c := range keys {
				valid = valid && c.IsValid(int(row))
			}
			if valid {
				out[k] = row
				k++
			}
		}
		out = out[:k]
	}
	f.judge(n, len(out))
	return out, true
}

// A range filter may have rangeFilterGrowth times the words of the Bloom filter of
// the same keys, and at most maxRangeFilterWords: it is tested without a hash, and a
// probe column in the order of its keys (a fact table sorted by its key) tests
// neighbouring bits of it, where the Bloom filter's tests land anywhere.
const (
	rangeFilterGrowth   = 8
	maxRangeFilterWords = 1 << 21
)

// intKey are the types of the integer columns a range filter takes, by their values.
type intKey interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// newRangeFilter returns the range filter of the keys (one integer column) at the
// rows valid, or nil when they are not one such column or span too wide a range
// (see rangeFilterGrowth).
func newRangeFilter(keys []arrow.Array, valid []int32) *keyFilter {
	if len(keys) != 1 || len(valid) == 0 {
		return nil
	}
	ints, ok := intColumnOf(keys[0])
	if !ok {
		return nil
	}
	loRow, hiRow := ints.extremes(valid)
	lo, hi := ints.value(loRow), ints.value(hiRow)
	span := hi - lo + 1
	limit := min(rangeFilterGrowth*filterWords(len(valid)), maxRangeFilterWords)
	if span == 0 || span > 64*uint64(limit) {
		return nil
	}
	f := &keyFilter{lo: lo, span: span, words: make([]uint64, (span+63)/64)}
	ints.set(f, valid)
	return f
}

// intColumn is what a range filter does with an integer column's values, each
// taken as a uint64 (a signed value sign-extended, so that v-lo orders the range).
type intColumn struct {
	// extremes returns the rows of sel holding the least and the greatest value,
	// in the order of the column's type.
	extremes func(sel []int32) (lo, hi int32)
	// value is the value at a row.
	value func(row int32) uint64
	// set sets f's bit of the value at each row of sel.
	set func(f *keyFilter, sel []int32)
	// test writes into out the rows of sel (0..rows-1 when nil) whose value has
	// its bit set in f, and returns them.
	test func(f *keyFilter, sel []int32, rows int, out []int32) []int32
}

// intColumnOf returns the operations on arr of a range filter and of keyRange, with
// ok false when arr is not of an integer type whose statistics prune (integers,
// dates of days, timestamps).
func intColumnOf(arr arrow.Array) (c intColumn, ok bool) {
	switch a := arr.(type) {
	case *array.Int8:
		return intColumnFor(a.Int8Values()), true
	case *array.Int16:
		return intColumnFor(a.Int16Values()), true
	case *array.Int32:
		return intColumnFor(a.Int32Values()), true
	case *array.Int64:
		return intColumnFor(a.Int64Values()), true
	case *array.Uint8:
		return intColumnFor(a.Uint8Values()), true
	case *array.Uint16:
		return intColumnFor(a.Uint16Values()), true
	case *array.Uint32:
		return intColumnFor(a.Uint32Values()), true
	case *array.Uint64:
		return intColumnFor(a.Uint64Values()), true
	case *array.Date32:
		return intColumnFor(a.Date32Values()), true
	case *array.Timestamp:
		return intColumnFor(a.TimestampValues()), true
	}
	return intColumn{}, false
}

func intColumnFor[T intKey](vals []T) intColumn {
	return intColumn{
		extremes: func(sel []int32) (int32, int32) { return extremes(vals, sel) },
		value:    func(row int32) uint64 { return uint64(vals[row]) },
		set: func(f *keyFilter, sel []int32) {
			for _, r := range sel {
				d := uint64(vals[r]) - f.lo
				f.words[d>>6] |= 1 << (d & 63)
			}
		},
		test: func(f *keyFilter, sel []int32, rows int, out []int32) []int32 {
			return inRange(vals, f, sel, rows, out)
		},
	}
}

func inRange[T intKey](vals []T, f *keyFilter, sel []int32, rows int, out []int32) []int32 {
	lo, span, words := f.lo, f.span, f.words
	kept := 0
	if sel == nil {
		for i, v := range vals[:rows] {
			d := uint64(v) - lo
			out[kept] = int32(i)
			if d < span && words[d>>6]&(1<<(d&63)) != 0 {
				kept++
			}
		}
		return out[:kept]
	}
	for _, r := range sel {
		d := uint64(vals[r]) - lo
		out[kept] = r
		if d < span && words[d>>6]&(1<<(d&63)) != 0 {
			kept++
		}
	}
	return out[:kept]
}

// judge counts the rows tested and passed, and turns the filter off once it has
// tested a trial's worth of rows and kept nearly all of them.
func (f *keyFilter) judge(tested, passed int) {
	t := f.tested.Add(int64(tested))
	p := f.passed.Add(int64(passed))
	if t >= filterTrial && float64(p) > filterKeeps*float64(t) {
		f.off.Store(true)
	}
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

// scratchWords are buffers for the hashes of a probe batch's keys.
var scratchWords = sync.Pool{New: func() any { return new([]uint64) }}

// keyRange returns the least and the greatest of the keys of arr at the rows sel
// (none NULL), for the ordered types whose statistics prune: integers, dates,
// timestamps and strings. A dictionary's range is its entries' (a range that holds
// every key is all pruning needs).
func keyRange(arr arrow.Array, sel []int32) (lo, hi types.Value, ok bool) {
	if d, isDict := arr.(*array.Dictionary); isDict {
		vals := d.Dictionary()
		all := make([]int32, 0, vals.Len())
		for i := 0; i < vals.Len(); i++ {
			if vals.IsValid(i) {
				all = append(all, int32(i))
			}
		}
		return keyRange(vals, all)
	}
	var loRow, hiRow int32
	ints, isInt := intColumnOf(arr)
	switch a := arr.(type) {
	case *array.String:
		loRow, hiRow = extremesOf(a.Value, sel)
	case *array.LargeString:
		loRow, hiRow = extremesOf(a.Value, sel)
	default:
		if !isInt {
			return types.Value{}, types.Value{}, false
		}
		loRow, hiRow = ints.extremes(sel)
	}
	if len(sel) == 0 {
		return types.Value{}, types.Value{}, false
	}
	return types.ValueAt(arr, int(loRow)), types.ValueAt(arr, int(hiRow)), true
}

// extremes returns the rows of sel holding the least and the greatest of vals.
func extremes[T intKey](vals []T, sel []int32) (lo, hi int32) {
	if len(sel) == 0 {
		return 0, 0
	}
	lo, hi = sel[0], sel[0]
	mn, mx := vals[lo], vals[hi]
	for _, r := range sel[1:] {
		switch v := vals[r]; {
		case v < mn:
			mn, lo = v, r
		case v > mx:
			mx, hi = v, r
		}
	}
	return lo, hi
}

// extremesOf is extremes for values read one at a time (strings).
func extremesOf(at func(int) string, sel []int32) (lo, hi int32) {
	if len(sel) == 0 {
		return 0, 0
	}
	lo, hi = sel[0], sel[0]
	mn, mx := at(int(lo)), at(int(hi))
	for _, r := range sel[1:] {
		switch v := at(int(r)); {
		case v < mn:
			mn, lo = v, r
		case v > mx:
			mx, hi = v, r
		}
	}
	return lo, hi
}
