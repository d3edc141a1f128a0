package agg

import (
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// rowStore keeps the rows folded into an aggregate that needs all of a group's
// values at once (list, string_agg, mode, the quantiles, and any aggregate with
// DISTINCT or ORDER BY inside the call): each Update's rows are copied out of the
// batch, column by column, as one chunk, and the group of every stored row is kept
// in the order the rows came. A merge appends the other store's chunks.
type rowStore struct {
	types  []arrow.DataType
	chunks [][]arrow.Array
	groups []uint32
	bytes  int64
	idx    []int32
}

func newRowStore(ts []arrow.DataType) rowStore {
	out := make([]arrow.DataType, len(ts))
	for i, t := range ts {
		out[i] = types.Unwrap(t)
	}
	return rowStore{types: out}
}

// add stores the rows of sp, one value of each column in cols per row.
func (s *rowStore) add(cols []arrow.Array, sp span) {
	if sp.n == 0 {
		return
	}
	s.idx = s.idx[:0]
	for k := 0; k < sp.n; k++ {
		s.idx = append(s.idx, int32(sp.row(k)))
		s.groups = append(s.groups, sp.group(k))
	}
	chunk := make([]arrow.Array, len(cols))
	for c, col := range cols {
		chunk[c] = vector.Take(plain(col), s.idx)
		for _, b := range chunk[c].Data().Buffers() {
			if b != nil {
				s.bytes += int64(b.Len())
			}
		}
	}
	s.chunks = append(s.chunks, chunk)
}

func (s *rowStore) merge(o *rowStore, mapping []uint32) {
	s.chunks = append(s.chunks, o.chunks...)
	for _, g := range o.groups {
		s.groups = append(s.groups, mapping[g])
	}
	s.bytes += o.bytes
}

func (s *rowStore) memoryUsage() int64 { return s.bytes + int64(4*(cap(s.groups)+cap(s.idx))) }

// columns returns every stored row as one array per column, in the order the rows
// came.
func (s *rowStore) columns() ([]arrow.Array, error) {
	cols := make([]arrow.Array, len(s.types))
	for c, t := range s.types {
		parts := make([]arrow.Array, 0, len(s.chunks))
		for _, ch := range s.chunks {
			parts = append(parts, ch[c])
		}
		if len(parts) == 0 {
			cols[c] = array.MakeArrayOfNull(memory.DefaultAllocator, t, 0)
			continue
		}
		var err error
		if cols[c], err = array.Concatenate(parts, memory.DefaultAllocator); err != nil {
			return nil, errs.New(errs.Internal, "BUG: cannot concatenate an aggregate's rows: %w", err)
		}
	}
	return cols, nil
}

// rows returns every stored row as one array per column, with the positions of the
// rows of group g, in the order they came, at order[start[g]:start[g+1]].
func (s *rowStore) rows(groups int) (cols []arrow.Array, order []int32, start []int, err error) {
	if cols, err = s.columns(); err != nil {
		return nil, nil, nil, err
	}
	start = make([]int, groups+1)
	for _, g := range s.groups {
		start[g+1]++
	}
	for g := 1; g <= groups; g++ {
		start[g] += start[g-1]
	}
	at := slices.Clone(start[:groups])
	order = make([]int32, len(s.groups))
	for r, g := range s.groups {
		order[at[g]] = int32(r)
		at[g]++
	}
	return cols, order, start, nil
}

// collectAcc is an aggregate computed from all of a group's rows at Final: list
// (array_agg), string_agg, mode, quantile_cont, quantile_disc and median.
type collectAcc struct {
	spec   Spec
	t      arrow.DataType // the first argument's type, unwrapped
	result arrow.DataType
	store  rowStore
	groups int
}

var _ MultiArg = (*collectAcc)(nil)

func newCollect(s Spec, result arrow.DataType) *collectAcc {
	t := types.Unwrap(s.ArgType)
	return &collectAcc{spec: s, t: t, result: result, store: newRowStore([]arrow.DataType{t})}
}

func (a *collectAcc) Resize(n int) { a.groups = max(a.groups, n) }

func (a *collectAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	return a.UpdateArgs([]arrow.Array{arg}, sel, groups)
}

func (a *collectAcc) UpdateArgs(args []arrow.Array, sel []int32, groups []uint32) error {
	if groups == nil && a.groups == 0 {
		a.Resize(1)
	}
	a.store.add(args[:1], spanOf(args[0], sel, groups))
	return nil
}

func (a *collectAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*collectAcc](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, o.groups, a.groups); err != nil {
		return err
	}
	a.store.merge(&o.store, mapping)
	return nil
}

func (a *collectAcc) MemoryUsage() int64 { return a.store.memoryUsage() }

func (a *collectAcc) FromZone(*Zone, uint32) (bool, error) { return false, nil }

func (a *collectAcc) Final() (arrow.Array, error) {
	cols, order, start, err := a.store.rows(a.groups)
	if err != nil {
		return nil, err
	}
	col := cols[0]
	switch a.spec.Name {
	case "list":
		return listOf(col, order, start), nil
	case "string_agg":
		return a.stringAgg(col, order, start), nil
	case "mode":
		return a.mode(col, order, start), nil
	}
	return a.quantiles(col, order, start)
}

// listOf builds one list per group of the values at order[start[g]:start[g+1]];
// a group of no rows is NULL.
func listOf(col arrow.Array, order []int32, start []int) arrow.Array {
	groups := len(start) - 1
	values := vector.Take(col, order)
	offsets := make([]int32, groups+1)
	valid := make([]bool, groups)
	for g := 0; g < groups; g++ {
		offsets[g+1] = int32(start[g+1])
		valid[g] = start[g+1] > start[g]
	}
	bm, nulls := validityBitmap(valid)
	data := array.NewData(arrow.ListOf(col.DataType()), groups,
		[]*memory.Buffer{bm, memory.NewBufferBytes(bytesOf(offsets))}, []arrow.ArrayData{values.Data()}, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

func (a *collectAcc) stringAgg(col arrow.Array, order []int32, start []int) arrow.Array {
	groups := len(start) - 1
	vals := make([]types.Value, groups)
	var sb strings.Builder
	for g := 0; g < groups; g++ {
		sb.Reset()
		any := false
		for _, r := range order[start[g]:start[g+1]] {
			if col.IsNull(int(r)) {
				continue
			}
			if any {
				sb.WriteString(a.spec.Sep)
			}
			any = true
			sb.WriteString(types.ValueAt(col, int(r)).S)
		}
		if any {
			vals[g] = types.StringValue(sb.String())
		} else {
			vals[g] = types.NullOf(types.String)
		}
	}
	return vector.FromValues(types.String, vals)
}

// sortedValues returns the non-NULL rows of one group sorted by value, ties in the
// order the rows came.
func sortedValues(col arrow.Array, rows []int32, order func(i, j int) int) []int32 {
	out := make([]int32, 0, len(rows))
	for _, r := range rows {
		if col.IsValid(int(r)) {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(i, j int32) int { return order(int(i), int(j)) })
	return out
}

// mode is the most frequent non-NULL value of each group; of values as frequent,
// the one that came first.
func (a *collectAcc) mode(col arrow.Array, order []int32, start []int) arrow.Array {
	groups := len(start) - 1
	cmp := rowOrder(col)
	vals := make([]types.Value, groups)
	nested := types.IsNested(col.DataType())
	var picked []int32
	if nested {
		picked = make([]int32, groups)
	}
	for g := 0; g < groups; g++ {
		rows := sortedValues(col, order[start[g]:start[g+1]], cmp)
		vals[g] = types.NullOf(a.t)
		best, bestCount := int32(-1), 0
		for i := 0; i < len(rows); {
			j := i + 1
			for j < len(rows) && cmp(int(rows[i]), int(rows[j])) == 0 {
				j++
			}
			// Stable sort: rows[i] is the run's first arrival.
			if n := j - i; n > bestCount || (n == bestCount && rows[i] < best) {
				best, bestCount = rows[i], n
			}
			i = j
		}
		if best >= 0 {
			vals[g] = types.ValueAt(col, int(best))
		}
		if nested {
			picked[g] = best
		}
	}
	if nested {
		// A nested value is gathered from its row rather than rebuilt from a box.
		return vector.Take(col, picked)
	}
	return vector.FromValues(a.t, vals)
}

// quantiles computes quantile_cont and quantile_disc (median is quantile_cont at
// 0.5) of each group, one value or, for a list of fractions, one list.
func (a *collectAcc) quantiles(col arrow.Array, order []int32, start []int) (arrow.Array, error) {
	groups := len(start) - 1
	cmp := rowOrder(col)
	qs := a.spec.Quantiles
	if a.spec.Name == "median" {
		qs = []float64{0.5}
	}
	elem := a.result
	if a.spec.List {
		elem = a.result.(*arrow.ListType).Elem()
	}
	vals := make([]types.Value, 0, groups*len(qs))
	valid := make([]bool, groups)
	for g := 0; g < groups; g++ {
		rows := sortedValues(col, order[start[g]:start[g+1]], cmp)
		valid[g] = len(rows) > 0
		for _, q := range qs {
			if len(rows) == 0 {
				if !a.spec.List {
					vals = append(vals, types.NullOf(elem))
				}
				continue
			}
			if a.spec.Name == "quantile_disc" || !interpolated(elem) {
				i := discreteIndex(len(rows), q)
				if a.spec.FromTop {
					i = len(rows) - 1 - i
				}
				vals = append(vals, types.ValueAt(col, int(rows[i])))
				continue
			}
			if a.spec.FromTop {
				q = 1 - q
			}
			pos := float64(len(rows)-1) * q
			lo, hi := int(math.Floor(pos)), int(math.Ceil(pos))
			vals = append(vals, interpolate(types.ValueAt(col, int(rows[lo])), types.ValueAt(col, int(rows[hi])), pos-float64(lo), elem))
		}
	}
	flat := vector.FromValues(elem, vals)
	if !a.spec.List {
		return flat, nil
	}
	offsets := make([]int32, groups+1)
	for g := 0; g < groups; g++ {
		offsets[g+1] = offsets[g]
		if valid[g] {
			offsets[g+1] += int32(len(qs))
		}
	}
	bm, nulls := validityBitmap(valid)
	data := array.NewData(a.result, groups, []*memory.Buffer{bm, memory.NewBufferBytes(bytesOf(offsets))},
		[]arrow.ArrayData{flat.Data()}, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// discreteIndex is the position of quantile q among n sorted values: the least i
// with (i+1)/n >= q. n*q is rounded to 9 decimals first, so that a fraction written
// in decimal (0.4) lands where DuckDB's exact decimal arithmetic puts it rather than
// one place on because 715 * 0.4 is 286.00000000000006 in binary.
func discreteIndex(n int, q float64) int {
	x := math.Round(float64(n)*q*1e9) / 1e9
	return min(max(int(math.Ceil(x)), 1), n) - 1
}

// interpolated reports whether a continuous quantile of result type t lies between
// two values; otherwise it is one of them (median of strings).
func interpolated(t arrow.DataType) bool {
	return t.ID() == arrow.FLOAT64 || t.ID() == arrow.TIMESTAMP || types.IsDecimal(t)
}

// interpolate is lo + (hi - lo) * f in the result type t: a DOUBLE of numbers, a
// DECIMAL truncated to its scale, a TIMESTAMP of dates or timestamps (in its unit).
func interpolate(lo, hi types.Value, f float64, t arrow.DataType) types.Value {
	src := types.Unwrap(lo.Type)
	switch {
	case types.IsDecimal(t):
		d := hi.D.Sub(lo.D)
		step := decimal128.FromI64(int64(d.ToFloat64(0) * f))
		return types.Value{Type: t, D: lo.D.Add(step)}
	case t.ID() == arrow.TIMESTAMP:
		l, h := lo.I, hi.I
		if src.ID() == arrow.DATE32 {
			l, h = l*86400_000_000, h*86400_000_000
		}
		return types.Value{Type: t, I: l + int64(float64(h-l)*f)}
	}
	l, h := asFloat(lo), asFloat(hi)
	return types.Value{Type: t, F: l + (h-l)*f}
}

func asFloat(v types.Value) float64 {
	dt := types.Unwrap(v.Type)
	switch {
	case types.IsFloat(dt):
		return v.F
	case types.IsUnsigned(dt):
		return float64(v.U)
	}
	return float64(v.I)
}
