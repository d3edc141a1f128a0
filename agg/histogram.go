package agg

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/vector"
)

// histAcc is histogram(x): per group, a MAP from each distinct non-NULL value to
// the number of its rows (UBIGINT), its keys in ascending order as DuckDB gives
// them. The distinct values of every group share one KeyTable and are kept once,
// in the order of their ids; a group holds counts by id. Merge re-enters the other
// accumulator's values, so it is exact.
type histAcc struct {
	spec   Spec
	t      arrow.DataType
	kt     *kernels.KeyTable
	reps   []arrow.Array // the distinct values, in id order, in chunks
	nvals  uint32
	counts []map[uint32]uint64
	ids    []uint32
	rows   []int32
}

func newHistogram(s Spec, t arrow.DataType) *histAcc {
	return &histAcc{spec: s, t: t, kt: kernels.NewKeyTable([]arrow.DataType{t})}
}

func (a *histAcc) Resize(n int) { a.counts = extend(a.counts, n) }

// intern gives rows of arr their value ids, keeping the values first seen.
func (a *histAcc) intern(arr arrow.Array, rows []int32) []uint32 {
	a.ids = extend(a.ids[:0], len(rows))[:len(rows)]
	if len(rows) == 0 {
		return a.ids
	}
	a.kt.Insert([]arrow.Array{arr}, rows, a.ids)
	var fresh []int32
	for k, id := range a.ids {
		if id == a.nvals {
			fresh = append(fresh, rows[k])
			a.nvals++
		}
	}
	if len(fresh) > 0 {
		a.reps = append(a.reps, vector.Take(arr, fresh))
	}
	return a.ids
}

func (a *histAcc) add(g, id uint32, c uint64) {
	if a.counts[g] == nil {
		a.counts[g] = map[uint32]uint64{}
	}
	a.counts[g][id] += c
}

func (a *histAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	ensureGroup0(a, len(a.counts), groups)
	arg = plain(arg)
	sp := spanOf(arg, sel, groups)
	a.rows = a.rows[:0]
	var gs []uint32
	for k := 0; k < sp.n; k++ {
		if r := sp.row(k); arg.IsValid(r) {
			a.rows = append(a.rows, int32(r))
			gs = append(gs, sp.group(k))
		}
	}
	ids := a.intern(arg, a.rows)
	for k, id := range ids {
		a.add(gs[k], id, 1)
	}
	return nil
}

func (a *histAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*histAcc](other, a.spec)
	if err != nil {
		return err
	}
	vals, err := o.values()
	if err != nil {
		return err
	}
	rows := make([]int32, vals.Len())
	for i := range rows {
		rows[i] = int32(i)
	}
	mine := slices.Clone(a.intern(vals, rows))
	for j, cs := range o.counts {
		for id, c := range cs {
			a.add(mapping[j], mine[id], c)
		}
	}
	return nil
}

// values is the distinct values in id order.
func (a *histAcc) values() (arrow.Array, error) {
	switch len(a.reps) {
	case 0:
		return array.MakeArrayOfNull(memory.DefaultAllocator, a.t, 0), nil
	case 1:
		return a.reps[0], nil
	}
	v, err := array.Concatenate(a.reps, memory.DefaultAllocator)
	if err != nil {
		return nil, errs.New(errs.Internal, "histogram: %v", err)
	}
	a.reps = []arrow.Array{v}
	return v, nil
}

func (a *histAcc) Final() (arrow.Array, error) {
	vals, err := a.values()
	if err != nil {
		return nil, err
	}
	order := rowOrder(vals)
	n := len(a.counts)
	offs := make([]int32, 1, n+1)
	var idx []int32
	var cnt []uint64
	valid := make([]byte, bitmapBytes(n))
	nulls := 0
	for g, cs := range a.counts {
		if len(cs) == 0 {
			nulls++
		} else {
			bitutil.SetBit(valid, g)
			start := len(idx)
			for id := range cs {
				idx = append(idx, int32(id))
			}
			slices.SortFunc(idx[start:], func(p, q int32) int { return order(int(p), int(q)) })
			for _, id := range idx[start:] {
				cnt = append(cnt, cs[uint32(id)])
			}
		}
		offs = append(offs, int32(len(idx)))
	}
	counts := array.NewData(arrow.PrimitiveTypes.Uint64, len(cnt), []*memory.Buffer{nil, memory.NewBufferBytes(uint64Bytes(cnt))}, nil, 0, 0)
	return kernels.MapArray(a.t, arrow.PrimitiveTypes.Uint64, offs, vector.Take(vals, idx), array.MakeFromData(counts), valid, nulls), nil
}

func (a *histAcc) MemoryUsage() int64 {
	var b int64
	for _, r := range a.reps {
		for _, buf := range r.Data().Buffers() {
			if buf != nil {
				b += int64(buf.Len())
			}
		}
	}
	for _, cs := range a.counts {
		b += 48 + 16*int64(len(cs))
	}
	return b + 16*int64(a.nvals)
}

func (a *histAcc) FromZone(*Zone, uint32) (bool, error) { return false, nil }

func bitmapBytes(n int) int { return (n + 7) / 8 }

func uint64Bytes(v []uint64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		for b := 0; b < 8; b++ {
			out[8*i+b] = byte(x >> (8 * b))
		}
	}
	return out
}
