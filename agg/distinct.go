package agg

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// distinctType reports whether count_distinct accepts values of dt: whatever can be a
// hash key.
func distinctType(dt arrow.DataType) bool { return kernels.ValidKeyType(dt) }

// distinctAcc is count_distinct. Its state is the set of distinct non-NULL values of
// each group, kept in a KeyTable, and a count per group bumped whenever the set gains
// a value; the state is exact, so it merges exactly (at the cost of memory
// proportional to the distinct values).
//
// While every row has gone to group 0 (the ungrouped aggregate) the table is keyed by
// the value alone, which takes the KeyTable's fast single-column paths (plain integers
// in one pass, dictionaries once per entry). The first row of another group converts
// it to (group, value) pairs. Integer values from 0 to 2^32-1, most counted keys,
// are packed with their group into one word (group<<32 | value) and kept in a
// wordSet, which counts the groups' values when they are asked for; the first
// value out of that range moves the pairs into a table keyed by two columns.
type distinctAcc struct {
	argType arrow.DataType
	single  *kernels.KeyTable // keyed by value; nil once converted
	packed  *wordSet          // group<<32 | value; nil unless in use
	pairs   *kernels.KeyTable // keyed by (group, value); nil until needed
	// counts is the number of values of each group; with packed, as of the last
	// recount (see stale).
	counts []int64
	stale  bool     // packed has gained words since counts were counted
	gcol   []uint32 // the group of each physical row of the batch
	ids    []uint32
	words  []uint64 // packed keys of the batch
}

var _ Accumulator = (*distinctAcc)(nil)

func newDistinct(arg arrow.DataType) *distinctAcc {
	return &distinctAcc{argType: arg, single: kernels.NewKeyTable([]arrow.DataType{arg})}
}

func (a *distinctAcc) spec() Spec { return Spec{Name: "count_distinct", ArgType: a.argType} }

func (a *distinctAcc) Resize(n int) { a.counts = extend(a.counts, n) }

func (a *distinctAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	ensureGroup0(a, len(a.counts), groups)
	if !arrow.TypeEqual(types.Unwrap(arg.DataType()), a.argType) {
		return typeMismatch(a.spec(), arg)
	}
	if !ascending(sel) {
		// The group column is laid out by physical row, which needs each row once.
		arg, sel = vector.Take(arg, sel), nil
	}
	n := len(groups)
	if groups == nil {
		if n = arg.Len(); sel != nil {
			n = len(sel)
		}
	}
	// NULLs are not counted: narrow the selection to the non-NULL rows.
	if arg.NullN() > 0 || arg.DataType().ID() == arrow.NULL || isDictWithNulls(arg) {
		var keep []int32
		var kg []uint32
		for k := 0; k < n; k++ {
			i := k
			if sel != nil {
				i = int(sel[k])
			}
			if isNullAt(arg, i) {
				continue
			}
			keep = append(keep, int32(i))
			if groups != nil {
				kg = append(kg, groups[k])
			}
		}
		sel, n = keep, len(keep)
		if groups != nil {
			groups = kg
		}
	}
	if n == 0 {
		return nil
	}
	if a.single != nil && allZero(groups[:min(n, len(groups))]) {
		a.ids = grow(a.ids[:0], n)
		before := a.single.Len()
		a.single.Insert([]arrow.Array{arg}, sel, a.ids[:n])
		a.counts[0] += int64(a.single.Len() - before)
		return nil
	}
	if err := a.toPairs(); err != nil {
		return err
	}
	a.gcol = grow(a.gcol[:0], arg.Len())
	if groups == nil {
		clear(a.gcol)
	} else if sel == nil {
		copy(a.gcol, groups[:n])
	} else {
		for k, i := range sel[:n] {
			a.gcol[i] = groups[k]
		}
	}
	return a.insertPairs([]arrow.Array{uint32Array(a.gcol), arg}, sel, n)
}

// allZero reports whether every group is 0 (nil groups: the ungrouped case).
func allZero(groups []uint32) bool {
	for _, g := range groups {
		if g != 0 {
			return false
		}
	}
	return true
}

// toPairs converts the value-keyed table into the (group, value)-keyed one, packed
// where the value type allows.
func (a *distinctAcc) toPairs() error {
	if a.single == nil {
		return nil
	}
	if packable(a.argType) {
		a.packed = &wordSet{}
	} else {
		a.pairs = kernels.NewKeyTable([]arrow.DataType{types.Uint32, a.argType})
	}
	single := a.single
	a.single = nil
	if single.Len() == 0 {
		return nil
	}
	a.counts[0] = 0 // recounted as the values go in
	vals := single.Keys()[0]
	return a.insertPairs([]arrow.Array{uint32Array(make([]uint32, vals.Len())), vals}, nil, vals.Len())
}

// insertPairs adds the (group, value) keys of the selected rows, counting the new ones
// for their groups (the group column is cols[0]).
func (a *distinctAcc) insertPairs(cols []arrow.Array, sel []int32, n int) error {
	if a.packed != nil {
		if a.pack(cols, sel, n) {
			a.packed.add(a.words[:n])
			a.stale = true
			return nil
		}
		if err := a.unpack(); err != nil {
			return err
		}
	}
	a.ids = grow(a.ids[:0], n)
	table := a.pairs
	before := uint32(table.Len())
	table.Insert(cols, sel, a.ids[:n])
	if uint32(table.Len()) == before {
		return nil
	}
	gvals := cols[0].(*array.Uint32).Uint32Values()
	for k, id := range a.ids[:n] {
		if id >= before {
			i := k
			if sel != nil {
				i = int(sel[k])
			}
			g := gvals[i]
			if int(g) >= len(a.counts) {
				return errs.New(errs.Internal, "BUG: count_distinct row for group %d of %d", g, len(a.counts))
			}
			a.counts[g]++
			before = id + 1 // ids of new keys rise one by one; a repeat is not new
		}
	}
	return nil
}

func (a *distinctAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*distinctAcc](other, a.spec())
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec(), mapping, len(o.counts), len(a.counts)); err != nil {
		return err
	}
	if o.single != nil {
		if o.single.Len() == 0 {
			return nil
		}
		if a.single != nil && mapping[0] == 0 {
			before := a.single.Len()
			a.single.Merge(o.single)
			a.counts[0] += int64(a.single.Len() - before)
			return nil
		}
		if err := a.toPairs(); err != nil {
			return err
		}
		vals := o.single.Keys()[0]
		g := make([]uint32, vals.Len())
		for i := range g {
			g[i] = mapping[0]
		}
		return a.insertPairs([]arrow.Array{uint32Array(g), vals}, nil, len(g))
	}
	if (o.packed != nil && len(o.packed.words) == 0) || (o.pairs != nil && o.pairs.Len() == 0) {
		return nil
	}
	if err := a.toPairs(); err != nil {
		return err
	}
	if o.packed != nil && a.packed != nil {
		// Regrouped words of packed values are packed values.
		words := o.packed.distinct()
		a.words = grow(a.words[:0], len(words))
		for i, w := range words {
			if w>>32 >= uint64(len(o.counts)) {
				return errs.New(errs.Internal, "BUG: count_distinct value for group %d of %d", w>>32, len(o.counts))
			}
			a.words[i] = uint64(mapping[w>>32])<<32 | w&math.MaxUint32
		}
		a.packed.add(a.words[:len(words)])
		a.stale = true
		return nil
	}
	og, vals := o.pairKeys()
	g := make([]uint32, len(og))
	for i, x := range og {
		g[i] = mapping[x]
	}
	return a.insertPairs([]arrow.Array{uint32Array(g), vals}, nil, len(g))
}

// packable reports whether values of dt may be packed with their group into one
// word: those of the plain integer types.
func packable(dt arrow.DataType) bool {
	switch dt.(type) {
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type:
		return true
	}
	return false
}

// pack writes the packed keys of the selected rows of (group, value) cols into
// a.words, reporting false when a value does not fit in 32 bits unsigned.
func (a *distinctAcc) pack(cols []arrow.Array, sel []int32, n int) bool {
	g := cols[0].(*array.Uint32).Uint32Values()
	a.words = grow(a.words[:0], n)
	vals := cols[1]
	if d, ok := vals.(*array.Dictionary); ok {
		// The selected rows' values, by the selection's order.
		idx := make([]int32, n)
		for k := range idx {
			i := k
			if sel != nil {
				i = int(sel[k])
			}
			idx[k] = int32(d.GetValueIndex(i))
		}
		vals = vector.Take(d.Dictionary(), idx)
		if sel != nil {
			gs := make([]uint32, n)
			for k, i := range sel[:n] {
				gs[k] = g[i]
			}
			g, sel = gs, nil
		}
	}
	switch v := vals.(type) {
	case *array.Int8:
		return packInto(a.words, g, v.Int8Values(), sel, n)
	case *array.Int16:
		return packInto(a.words, g, v.Int16Values(), sel, n)
	case *array.Int32:
		return packInto(a.words, g, v.Int32Values(), sel, n)
	case *array.Int64:
		return packInto(a.words, g, v.Int64Values(), sel, n)
	case *array.Uint8:
		return packInto(a.words, g, v.Uint8Values(), sel, n)
	case *array.Uint16:
		return packInto(a.words, g, v.Uint16Values(), sel, n)
	case *array.Uint32:
		return packInto(a.words, g, v.Uint32Values(), sel, n)
	case *array.Uint64:
		return packInto(a.words, g, v.Uint64Values(), sel, n)
	}
	return false // a dictionary, say
}

func packInto[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](out []uint64, g []uint32, vals []T, sel []int32, n int) bool {
	var bad bool
	if sel == nil {
		for i, x := range vals[:n] {
			bad = bad || x < 0 || uint64(x) > math.MaxUint32
			out[i] = uint64(g[i])<<32 | uint64(uint32(x))
		}
	} else {
		for k, i := range sel[:n] {
			x := vals[i]
			bad = bad || x < 0 || uint64(x) > math.MaxUint32
			out[k] = uint64(g[i])<<32 | uint64(uint32(x))
		}
	}
	return !bad
}

// pairKeys returns the (group, value) keys of the table in use, as columns.
func (a *distinctAcc) pairKeys() ([]uint32, arrow.Array) {
	if a.packed == nil {
		keys := a.pairs.Keys()
		return keys[0].(*array.Uint32).Uint32Values(), keys[1]
	}
	words := a.packed.distinct()
	g := make([]uint32, len(words))
	v := make([]uint32, len(words))
	for i, w := range words {
		g[i], v[i] = uint32(w>>32), uint32(w)
	}
	return g, valuesOf(a.argType, v)
}

// unpack moves the packed keys into a table of two columns, for a value that does
// not fit beside its group.
func (a *distinctAcc) unpack() error {
	if err := a.recount(); err != nil {
		return err
	}
	g, vals := a.pairKeys()
	a.pairs = kernels.NewKeyTable([]arrow.DataType{types.Uint32, a.argType})
	a.ids = grow(a.ids, len(g))
	a.pairs.Insert([]arrow.Array{uint32Array(g), vals}, nil, a.ids[:len(g)])
	a.packed, a.words = nil, nil // never packed again: MemoryUsage no longer counts words
	return nil
}

// recount counts the values of each group from the packed words, when they have
// changed since the last count.
func (a *distinctAcc) recount() error {
	if a.packed == nil || !a.stale {
		return nil
	}
	clear(a.counts)
	for _, w := range a.packed.distinct() {
		g := w >> 32
		if g >= uint64(len(a.counts)) {
			return errs.New(errs.Internal, "BUG: count_distinct value for group %d of %d", g, len(a.counts))
		}
		a.counts[g]++
	}
	a.stale = false
	return nil
}

// valuesOf makes an array of the packable type dt holding vals.
func valuesOf(dt arrow.DataType, vals []uint32) arrow.Array {
	switch dt.(type) {
	case *arrow.Int8Type:
		return fixedArray(dt, convert[int8](vals), nil)
	case *arrow.Int16Type:
		return fixedArray(dt, convert[int16](vals), nil)
	case *arrow.Int32Type:
		return fixedArray(dt, convert[int32](vals), nil)
	case *arrow.Int64Type:
		return fixedArray(dt, convert[int64](vals), nil)
	case *arrow.Uint8Type:
		return fixedArray(dt, convert[uint8](vals), nil)
	case *arrow.Uint16Type:
		return fixedArray(dt, convert[uint16](vals), nil)
	case *arrow.Uint32Type:
		return fixedArray(dt, vals, nil)
	default:
		return fixedArray(dt, convert[uint64](vals), nil)
	}
}

func convert[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint64](vals []uint32) []T {
	out := make([]T, len(vals))
	for i, x := range vals {
		out[i] = T(x)
	}
	return out
}

func (a *distinctAcc) Final() (arrow.Array, error) {
	if err := a.recount(); err != nil {
		return nil, err
	}
	return fixedArray(types.Int64, append([]int64(nil), a.counts...), nil), nil
}

func (a *distinctAcc) MemoryUsage() int64 {
	m := int64(8*cap(a.counts) + 4*cap(a.gcol) + 4*cap(a.ids))
	if a.single != nil {
		m += a.single.MemoryUsage()
	}
	if a.pairs != nil {
		m += a.pairs.MemoryUsage()
	}
	if a.packed != nil {
		m += a.packed.memory() + int64(8*cap(a.words))
	}
	return m
}

// uint32Array wraps vals (not copied) as a UINT32 array.
func uint32Array(vals []uint32) *array.Uint32 {
	data := array.NewData(types.Uint32, len(vals), []*memory.Buffer{nil, memory.NewBufferBytes(bytesOf(vals))}, nil, 0, 0)
	defer data.Release()
	return array.NewUint32Data(data)
}

// ascending reports whether sel is strictly increasing (nil selects rows in order).
func ascending(sel []int32) bool {
	for k := 1; k < len(sel); k++ {
		if sel[k] <= sel[k-1] {
			return false
		}
	}
	return true
}

// isDictWithNulls reports a dictionary array whose dictionary holds NULLs.
func isDictWithNulls(arr arrow.Array) bool {
	d, ok := arr.(*array.Dictionary)
	return ok && (d.Dictionary().NullN() > 0 || d.Dictionary().DataType().ID() == arrow.NULL)
}

// isNullAt reports whether row i is NULL, looking through a dictionary.
func isNullAt(arr arrow.Array, i int) bool {
	if arr.DataType().ID() == arrow.NULL || arr.IsNull(i) {
		return true
	}
	if d, ok := arr.(*array.Dictionary); ok {
		dict := d.Dictionary()
		return dict.DataType().ID() == arrow.NULL || dict.IsNull(d.GetValueIndex(i))
	}
	return false
}
