package agg

import (
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/internal/wire"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// The kinds of the statistical, boolean and bitwise aggregates, of MIN and MAX of
// values that are not plain integers or floats, and of the aggregates that keep
// values (exact distinct sets, histograms, collected rows, picked values). Those
// that keep values write them as values columns (state_values.go).

// An accumulator whose form depends on the types it holds says whether it has one.
type typedState interface {
	hasStateForm() bool
}

// The moments: every statistic is float64 state, written as its exact bits.

func (a *momentAcc) stateKind() string { return "variance" }
func (a *momentAcc) stateGroups() int  { return len(a.n) }

func (a *momentAcc) appendState(w *wire.Writer) { appendFloatRows(w, a.n, a.mean, a.m2) }

func (a *momentAcc) loadState(r *wire.Reader, n int) {
	c := loadFloatRows(r, n, 3)
	a.n, a.mean, a.m2 = c[0], c[1], c[2]
}

func (a *comomentAcc) stateKind() string { return "covariance" }
func (a *comomentAcc) stateGroups() int  { return len(a.n) }

func (a *comomentAcc) appendState(w *wire.Writer) {
	appendFloatRows(w, a.n, a.mx, a.my, a.sxx, a.syy, a.sxy)
}

func (a *comomentAcc) loadState(r *wire.Reader, n int) {
	c := loadFloatRows(r, n, 6)
	a.n, a.mx, a.my, a.sxx, a.syy, a.sxy = c[0], c[1], c[2], c[3], c[4], c[5]
}

func (a *shapeAcc) stateKind() string { return "shape" }
func (a *shapeAcc) stateGroups() int  { return len(a.n) }

func (a *shapeAcc) appendState(w *wire.Writer) { appendFloatRows(w, a.n, a.mean, a.m2, a.m3, a.m4) }

func (a *shapeAcc) loadState(r *wire.Reader, n int) {
	c := loadFloatRows(r, n, 5)
	a.n, a.mean, a.m2, a.m3, a.m4 = c[0], c[1], c[2], c[3], c[4]
}

// appendFloatRows writes, group after group, each column's value for the group.
func appendFloatRows(w *wire.Writer, cols ...[]float64) {
	for g := range cols[0] {
		for _, c := range cols {
			w.F64(c[g])
		}
	}
}

func loadFloatRows(r *wire.Reader, n, k int) [][]float64 {
	cols := make([][]float64, k)
	for c := range cols {
		cols[c] = make([]float64, n)
	}
	for g := range n {
		for _, c := range cols {
			c[g] = r.F64()
		}
	}
	return cols
}

func (a *weightedAvgAcc) stateKind() string { return "weighted_avg" }
func (a *weightedAvgAcc) stateGroups() int  { return len(a.n) }

func (a *weightedAvgAcc) appendState(w *wire.Writer) {
	for g, n := range a.n {
		w.I64(n)
		w.F64(a.xw[g])
		w.F64(a.wsum[g])
	}
}

func (a *weightedAvgAcc) loadState(r *wire.Reader, n int) {
	a.n, a.xw, a.wsum = make([]int64, n), make([]float64, n), make([]float64, n)
	for g := range n {
		a.n[g], a.xw[g], a.wsum[g] = r.I64(), r.F64(), r.F64()
	}
}

func (a *floatFoldAcc) stateKind() string { return "float_fold" }
func (a *floatFoldAcc) stateGroups() int  { return len(a.seen) }

func (a *floatFoldAcc) appendState(w *wire.Writer) {
	for g, seen := range a.seen {
		w.Bool(seen)
		w.F64(a.val[g])
		w.F64(a.comp[g])
	}
}

func (a *floatFoldAcc) loadState(r *wire.Reader, n int) {
	a.seen, a.val, a.comp = make([]bool, n), make([]float64, n), make([]float64, n)
	for g := range n {
		a.seen[g], a.val[g], a.comp[g] = r.Bool(), r.F64(), r.F64()
	}
}

func (a *boolAcc) stateKind() string { return "bool" }
func (a *boolAcc) stateGroups() int  { return len(a.seen) }

func (a *boolAcc) appendState(w *wire.Writer) {
	for g, seen := range a.seen {
		w.Bool(seen)
		w.Bool(a.val[g])
		w.I64(a.count[g])
	}
}

func (a *boolAcc) loadState(r *wire.Reader, n int) {
	a.seen, a.val, a.count = make([]bool, n), make([]bool, n), make([]int64, n)
	for g := range n {
		a.seen[g], a.val[g], a.count[g] = r.Bool(), r.Bool(), r.I64()
	}
}

func (a *bitAcc) stateKind() string { return "bit" }
func (a *bitAcc) stateGroups() int  { return len(a.seen) }

func (a *bitAcc) appendState(w *wire.Writer) {
	for g, seen := range a.seen {
		w.Bool(seen)
		w.U64(a.bits[g])
	}
}

func (a *bitAcc) loadState(r *wire.Reader, n int) {
	a.seen, a.bits = make([]bool, n), make([]uint64, n)
	for g := range n {
		a.seen[g], a.bits[g] = r.Bool(), r.U64()
	}
}

// MIN and MAX of 128-bit decimals, intervals, strings and nested values write a
// byte per group (1: it has a value), then the values of the groups that have one,
// in group order, as one values column. (Booleans and 64-bit decimals are held as
// integers and write min_max_int.)

func (a *mmOrdered[T]) stateKind() string { return "min_max_value" }
func (a *mmOrdered[T]) stateGroups() int  { return len(a.has) }

func (a *mmOrdered[T]) appendState(w *wire.Writer) {
	appendPresent(w, fixedArray(a.dt, a.vals, a.has), a.has)
}

func (a *mmOrdered[T]) loadState(r *wire.Reader, n int) {
	a.has = make([]bool, n)
	col, at := loadPresent(r, a.dt, a.has)
	a.vals = make([]T, n)
	if r.Err() != nil {
		return
	}
	vals := rawValues[T](col)
	for g, k := range at {
		if k >= 0 {
			a.vals[g] = vals[k]
		}
	}
}

// appendPresent writes a flag per group, then the values of the groups that have
// one (rows of vals) as a values column.
func appendPresent(w *wire.Writer, vals arrow.Array, has []bool) {
	var rows []int
	for g, h := range has {
		w.Bool(h)
		if h {
			rows = append(rows, g)
		}
	}
	appendValuesAt(w, vals, rows)
}

// loadPresent reads what appendPresent wrote into has (one flag per group) and
// returns the values and, per group, its value's row in them (-1 for none).
func loadPresent(r *wire.Reader, dt arrow.DataType, has []bool) (arrow.Array, []int) {
	at := make([]int, len(has))
	k := 0
	for g := range has {
		has[g], at[g] = r.Bool(), -1
		if has[g] {
			at[g] = k
			k++
		}
	}
	col := loadValues(r, dt)
	switch {
	case r.Err() != nil:
	case col.Len() != k:
		r.Fail("%d values for %d groups", col.Len(), k)
	case col.NullN() > 0:
		r.Fail("a NULL minimum or maximum")
	}
	return col, at
}

func (a *mmString) stateKind() string { return "min_max_value" }
func (a *mmString) stateGroups() int  { return len(a.has) }

func (a *mmString) appendState(w *wire.Writer) {
	res, err := a.Final()
	if err != nil {
		panic("BUG: " + err.Error())
	}
	appendPresent(w, res, a.has)
}

func (a *mmString) loadState(r *wire.Reader, n int) {
	has := make([]bool, n)
	col, at := loadPresent(r, a.dt, has)
	a.load(col, at, r)
}

// load replaces the state with the strings or blobs of col, group g's at row at[g].
func (a *mmString) load(col arrow.Array, at []int, r *wire.Reader) {
	n := len(at)
	a.vals, a.has, a.dirty, a.changed, a.bytes = make([]string, n), make([]bool, n), make([]bool, n), nil, 0
	if r.Err() != nil {
		return
	}
	for g, k := range at {
		if k >= 0 {
			a.vals[g], a.has[g] = strings.Clone(types.ValueAt(col, k).S), true
			a.bytes += int64(len(a.vals[g]))
		}
	}
}

// A nested MIN or MAX is written as the values, not as the encodings it compares;
// reading encodes them again.
func (a *mmNested) appendState(w *wire.Writer) {
	res, err := a.Final()
	if err != nil {
		panic("BUG: " + err.Error())
	}
	appendPresent(w, res, a.has)
}

func (a *mmNested) loadState(r *wire.Reader, n int) {
	has := make([]bool, n)
	col, at := loadPresent(r, a.nested, has)
	if r.Err() == nil {
		col = kernels.NestedKeys(col)
	}
	a.mmString.load(col, at, r)
}

// pickAcc writes whether each group holds a value, then the values (NULL where
// none), then for arg_min and arg_max the values compared.
func (a *pickAcc) stateKind() string { return "pick" }
func (a *pickAcc) stateGroups() int  { return len(a.set) }

func (a *pickAcc) hasStateForm() bool {
	return valuesSupported(a.t) && (!a.byValue() || valuesSupported(a.byType()))
}

// byType is the type of arg_min's and arg_max's second argument.
func (a *pickAcc) byType() arrow.DataType { return types.Unwrap(a.spec.ArgTypes[0]) }

func (a *pickAcc) appendState(w *wire.Writer) {
	for _, set := range a.set {
		w.Bool(set)
	}
	vals := make([]types.Value, len(a.set))
	for g, set := range a.set {
		vals[g] = types.NullOf(a.t)
		if set {
			vals[g] = a.val[g]
		}
	}
	appendValues(w, vector.FromValues(a.t, vals))
	if !a.byValue() {
		return
	}
	// A nested second argument is compared, and kept, as its encoding (kernels.
	// NestedKeys); it is written as the value.
	nested := kernels.NestedOrderable(a.byType())
	held := a.byType()
	if nested {
		held = types.Binary
	}
	for g, set := range a.set {
		vals[g] = types.NullOf(held)
		if set {
			vals[g] = a.by[g]
		}
	}
	by := vector.FromValues(held, vals)
	if nested {
		by = kernels.DecodeNestedKeys(a.byType(), by.(*array.Binary))
	}
	appendValues(w, by)
}

func (a *pickAcc) loadState(r *wire.Reader, n int) {
	a.set, a.val, a.by, a.best, a.touch, a.held = make([]bool, n), make([]types.Value, n), nil, nil, nil, 0
	set := make([]bool, n)
	for g := range n {
		set[g] = r.Bool()
	}
	vals := loadGroupValues(r, a.t, n)
	var by arrow.Array
	if a.byValue() {
		a.by = make([]types.Value, n)
		by = loadGroupValues(r, a.byType(), n)
		if r.Err() == nil && kernels.NestedOrderable(a.byType()) {
			by = kernels.NestedKeys(by)
		}
	}
	if r.Err() != nil {
		return
	}
	for g, set := range set {
		if !set {
			continue
		}
		a.keep(uint32(g), vector.KeptValue(vals, g))
		if by != nil {
			if by.IsNull(g) {
				r.Fail("group %d holds a value without the value it was picked by", g)
				return
			}
			a.by[g] = types.ValueAt(by, g)
		}
	}
}

// count_distinct writes its (group, value) pairs: per group the number of its
// values, then the values of group 0, of group 1, … as one values column, each
// group's in the order they were first met.
func (a *distinctAcc) stateKind() string  { return "count_distinct" }
func (a *distinctAcc) stateGroups() int   { return len(a.counts) }
func (a *distinctAcc) hasStateForm() bool { return valuesSupported(a.argType) }

func (a *distinctAcc) appendState(w *wire.Writer) {
	var groups []uint32
	var vals arrow.Array
	if a.single != nil {
		vals = a.single.Keys()[0]
		groups = make([]uint32, vals.Len())
	} else {
		groups, vals = a.pairKeys()
	}
	appendGrouped(w, len(a.counts), groups, []arrow.Array{vals})
}

// appendGrouped writes rows, row i of each column of cols in group groups[i]: per
// group (of n) the number of its rows, then each column's rows as a values column,
// grouped by group, in their order within a group.
func appendGrouped(w *wire.Writer, n int, groups []uint32, cols []arrow.Array) {
	start := make([]int, n+1)
	for _, g := range groups {
		start[g+1]++
	}
	for g := range n {
		w.Uvarint(uint64(start[g+1]))
		start[g+1] += start[g]
	}
	rows := make([]int, len(groups))
	for i, g := range groups {
		rows[start[g]] = i
		start[g]++
	}
	for _, c := range cols {
		appendValuesAt(w, c, rows)
	}
}

// loadGrouped reads what appendGrouped wrote, columns of types ts, and returns each
// row's group and the columns. Every row takes a validity bit of each column at
// least, so a total the bytes left cannot hold is refused before it is allocated.
func loadGrouped(r *wire.Reader, n int, ts []arrow.DataType) ([]uint32, []arrow.Array) {
	counts := make([]uint64, n)
	total := uint64(0)
	for g := range counts {
		counts[g] = r.Uvarint()
		if total += counts[g]; counts[g] > 8*uint64(len(r.B)) || total > 8*uint64(len(r.B)) {
			r.Fail("%d rows run past its end", total)
			return nil, nil
		}
	}
	cols := make([]arrow.Array, len(ts))
	for c, t := range ts {
		cols[c] = loadValues(r, t)
		if r.Err() != nil {
			return nil, nil
		}
		if uint64(cols[c].Len()) != total {
			r.Fail("%d values for %d rows", cols[c].Len(), total)
			return nil, nil
		}
	}
	groups := make([]uint32, 0, total)
	for g, m := range counts {
		for range m {
			groups = append(groups, uint32(g))
		}
	}
	return groups, cols
}

func (a *distinctAcc) loadState(r *wire.Reader, n int) {
	groups, cols := loadGrouped(r, n, []arrow.DataType{a.argType})
	a.counts = make([]int64, n)
	a.single, a.packed, a.pairs, a.words = kernels.NewKeyTable([]arrow.DataType{a.argType}), nil, nil, nil
	if r.Err() != nil || len(groups) == 0 {
		return
	}
	vals := cols[0]
	if allZero(groups) {
		a.ids = grow(a.ids[:0], len(groups))
		a.single.Insert([]arrow.Array{vals}, nil, a.ids[:len(groups)])
		a.counts[0] = int64(a.single.Len())
		return
	}
	if err := a.toPairs(); err != nil {
		r.Fail("%v", err)
		return
	}
	if err := a.insertPairs([]arrow.Array{uint32Array(groups), vals}, nil, len(groups)); err != nil {
		r.Fail("%v", err)
	}
}

// sum_distinct and avg_distinct write their (group, value) pairs as count_distinct
// does.
func (a *distinctOf) stateKind() string  { return "sum_avg_distinct" }
func (a *distinctOf) stateGroups() int   { return a.groups }
func (a *distinctOf) hasStateForm() bool { return valuesSupported(a.inner.ArgType) }

func (a *distinctOf) appendState(w *wire.Writer) {
	if a.pairs.Len() == 0 {
		empty := array.MakeArrayOfNull(memory.DefaultAllocator, types.Unwrap(a.inner.ArgType), 0)
		appendGrouped(w, a.groups, nil, []arrow.Array{empty})
		return
	}
	keys := a.pairs.Keys()
	appendGrouped(w, a.groups, keys[0].(*array.Uint32).Uint32Values(), keys[1:])
}

func (a *distinctOf) loadState(r *wire.Reader, n int) {
	groups, cols := loadGrouped(r, n, []arrow.DataType{a.inner.ArgType})
	a.groups = n
	a.pairs = kernels.NewKeyTable([]arrow.DataType{types.Uint32, types.Unwrap(a.inner.ArgType)})
	if r.Err() != nil || len(groups) == 0 {
		return
	}
	a.pairs.Insert([]arrow.Array{uint32Array(groups), cols[0]}, nil, make([]uint32, len(groups)))
}

// histogram writes its distinct values as a values column, in the order they were
// first met, then per group its entries, by ascending position in that column: the
// count of entries, then each one's position and count.
func (a *histAcc) stateKind() string  { return "histogram" }
func (a *histAcc) stateGroups() int   { return len(a.counts) }
func (a *histAcc) hasStateForm() bool { return valuesSupported(a.t) }

func (a *histAcc) appendState(w *wire.Writer) {
	vals, err := a.values()
	if err != nil {
		panic("BUG: " + err.Error())
	}
	appendValues(w, vals)
	var ids []uint32
	for _, cs := range a.counts {
		ids = ids[:0]
		for id := range cs {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		w.Uvarint(uint64(len(ids)))
		for _, id := range ids {
			w.Uvarint(uint64(id))
			w.Uvarint(cs[id])
		}
	}
}

func (a *histAcc) loadState(r *wire.Reader, n int) {
	vals := loadValues(r, a.t)
	a.kt, a.reps, a.nvals, a.counts = kernels.NewKeyTable([]arrow.DataType{a.t}), nil, 0, make([]map[uint32]uint64, n)
	if r.Err() != nil {
		return
	}
	rows := make([]int32, vals.Len())
	for i := range rows {
		rows[i] = int32(i)
	}
	mine := slices.Clone(a.intern(vals, rows))
	for g := range a.counts {
		m := r.Count(2)
		next := uint64(0) // positions ascend
		for range m {
			id, c := r.Uvarint(), r.Uvarint()
			switch {
			case r.Err() != nil:
				return
			case id < next || id >= uint64(len(mine)):
				r.Fail("group %d: an entry at position %d of %d", g, id, len(mine))
				return
			case c == 0:
				r.Fail("group %d: an entry of no rows", g)
				return
			}
			next = id + 1
			a.add(uint32(g), mine[id], c)
		}
	}
}

// The row-keeping aggregates (list, string_agg, mode, the quantiles, and any with
// DISTINCT or ORDER BY inside the call) write their stored rows as count_distinct
// writes its pairs, a values column per argument and then per ORDER BY key. Only
// the order of a group's rows matters to the result, so rows are regrouped.
func (a *collectAcc) stateKind() string               { return "collect" }
func (a *collectAcc) stateGroups() int                { return a.groups }
func (a *collectAcc) hasStateForm() bool              { return a.store.hasStateForm() }
func (a *collectAcc) appendState(w *wire.Writer)      { a.store.appendState(w, a.groups) }
func (a *collectAcc) loadState(r *wire.Reader, n int) { a.groups = n; a.store.loadState(r, n) }

func (a *orderedAcc) stateKind() string               { return "ordered" }
func (a *orderedAcc) stateGroups() int                { return a.groups }
func (a *orderedAcc) hasStateForm() bool              { return a.store.hasStateForm() }
func (a *orderedAcc) appendState(w *wire.Writer)      { a.store.appendState(w, a.groups) }
func (a *orderedAcc) loadState(r *wire.Reader, n int) { a.groups = n; a.store.loadState(r, n) }

// hasStateForm is false for a store of no columns (whose rows the form cannot
// count) and of a type without a values column form.
func (s *rowStore) hasStateForm() bool {
	for _, t := range s.types {
		if !valuesSupported(t) {
			return false
		}
	}
	return len(s.types) > 0
}

func (s *rowStore) appendState(w *wire.Writer, groups int) {
	cols, err := s.columns()
	if err != nil {
		panic(err.Error())
	}
	appendGrouped(w, groups, s.groups, cols)
}

// loadState replaces the rows with those r holds, of groups below n.
func (s *rowStore) loadState(r *wire.Reader, n int) {
	groups, cols := loadGrouped(r, n, s.types)
	s.chunks, s.groups, s.bytes = nil, nil, 0
	if r.Err() != nil || len(groups) == 0 {
		return
	}
	for _, c := range cols {
		for _, b := range c.Data().Buffers() {
			if b != nil {
				s.bytes += int64(b.Len())
			}
		}
	}
	s.chunks, s.groups = [][]arrow.Array{cols}, groups
}

// loadGroupValues reads a values column of one value per group.
func loadGroupValues(r *wire.Reader, dt arrow.DataType, n int) arrow.Array {
	col := loadValues(r, dt)
	if r.Err() == nil && col.Len() != n {
		r.Fail("%d values for %d groups", col.Len(), n)
	}
	return col
}
