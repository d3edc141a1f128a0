package agg

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// hllAcc is approx_count_distinct: one HyperLogLog sketch per group, built from the
// same value hash as the statistics' sketches, so that both paths agree. A group's
// sketch is made on its first non-NULL value.
type hllAcc struct {
	sketches []*stats.HLL
	hashes   []uint64
	exact    map[uint32]exactCount // groups answered by an exact count (FromZone)
}

var _ Accumulator = (*hllAcc)(nil)

func (a *hllAcc) Resize(n int) {
	for len(a.sketches) < n {
		a.sketches = append(a.sketches, nil)
	}
}

func (a *hllAcc) sketch(g uint32) *stats.HLL {
	if a.sketches[g] == nil {
		a.sketches[g] = stats.NewHLL()
	}
	return a.sketches[g]
}

func (a *hllAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	if groups == nil {
		a.Resize(1)
	}
	n := arg.Len()
	if sel != nil {
		n = len(sel)
	}
	if cap(a.hashes) < n {
		a.hashes = make([]uint64, n)
	}
	h := a.hashes[:n]
	stats.HashColumn(arg, sel, h)
	for k := range h {
		row := k
		if sel != nil {
			row = int(sel[k])
		}
		if arg.IsNull(row) {
			continue
		}
		var g uint32
		if groups != nil {
			g = groups[k]
		}
		if a.exact != nil {
			if err := a.touch(g); err != nil {
				return err
			}
		}
		a.sketch(g).AddHash(h[k])
	}
	return nil
}

func (a *hllAcc) Merge(other Accumulator, mapping []uint32) error {
	o, ok := other.(*hllAcc)
	if !ok {
		return errs.New(errs.Internal, "BUG: merging %T into approx_count_distinct", other)
	}
	for j, s := range o.sketches {
		if e, ok := o.exact[uint32(j)]; ok && !a.hasExact(mapping[j]) && a.sketches[mapping[j]] == nil {
			a.setExact(mapping[j], e.n, e.whole)
			if s != nil {
				a.sketch(mapping[j]).Merge(s)
			}
			continue
		}
		if _, ok := o.exact[uint32(j)]; ok && s == nil {
			return errs.New(errs.Internal, "BUG: approx_count_distinct merged a zone known only by its exact count")
		}
		if s != nil {
			if err := a.touch(mapping[j]); err != nil {
				return err
			}
			a.sketch(mapping[j]).Merge(s)
		}
	}
	return nil
}

func (a *hllAcc) Final() (arrow.Array, error) {
	out := make([]int64, len(a.sketches))
	for g, s := range a.sketches {
		if e, ok := a.exact[uint32(g)]; ok {
			out[g] = e.n
		} else if s != nil {
			out[g] = int64(math.Round(s.Estimate()))
		}
	}
	data := array.NewData(types.Int64, len(out), []*memory.Buffer{nil, memory.NewBufferBytes(bytesOf(out))}, nil, 0, 0)
	defer data.Release()
	return array.NewInt64Data(data), nil
}

func (a *hllAcc) MemoryUsage() int64 {
	n := int64(8 * cap(a.hashes))
	for _, s := range a.sketches {
		if s != nil {
			n += stats.HLLRegisters
		}
	}
	return n
}

// kllAcc is approx_percentile: one KLL sketch per group over the values' numeric
// form; quantiles are read back in the argument's type (a KLL quantile is always one
// of the values seen, so the conversion is exact).
type kllAcc struct {
	spec     Spec
	arg      arrow.DataType
	sketches []*stats.KLL
}

var _ Accumulator = (*kllAcc)(nil)

func (a *kllAcc) Resize(n int) {
	for len(a.sketches) < n {
		a.sketches = append(a.sketches, nil)
	}
}

func (a *kllAcc) sketch(g uint32) *stats.KLL {
	if a.sketches[g] == nil {
		a.sketches[g] = stats.NewKLL()
	}
	return a.sketches[g]
}

func (a *kllAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	if groups == nil {
		a.Resize(1)
		if a.sketch(0).AddColumn(arg, sel) {
			return nil
		}
	}
	n := arg.Len()
	if sel != nil {
		n = len(sel)
	}
	for k := 0; k < n; k++ {
		row := k
		if sel != nil {
			row = int(sel[k])
		}
		if arg.IsNull(row) {
			continue
		}
		x, ok := stats.KLLValue(types.ValueAt(arg, row))
		if !ok {
			return errs.New(errs.Analysis, "approx_percentile does not support %s", types.Name(arg.DataType()))
		}
		var g uint32
		if groups != nil {
			g = groups[k]
		}
		a.sketch(g).Add(x)
	}
	return nil
}

func (a *kllAcc) Merge(other Accumulator, mapping []uint32) error {
	o, ok := other.(*kllAcc)
	if !ok {
		return errs.New(errs.Internal, "BUG: merging %T into approx_percentile", other)
	}
	for j, s := range o.sketches {
		if s != nil {
			a.sketch(mapping[j]).Merge(s)
		}
	}
	return nil
}

// value converts a quantile back to the argument's type.
func (a *kllAcc) value(x float64) types.Value {
	v := types.Value{Type: a.arg}
	switch {
	case types.IsFloat(a.arg):
		v.F = x
	case types.IsUnsigned(a.arg):
		v.U = uint64(math.Round(x))
	case types.IsDecimal(a.arg):
		d, err := decimal128.FromFloat64(x, 38, a.arg.(arrow.DecimalType).GetScale())
		if err != nil {
			return types.NullOf(a.arg)
		}
		v.D = d
	default: // signed integers, dates, timestamps, times: their integer ticks
		v.I = int64(math.Round(x))
	}
	return v
}

func (a *kllAcc) Final() (arrow.Array, error) {
	rt, err := ResultType(a.spec)
	if err != nil {
		return nil, err
	}
	b := array.NewBuilder(vector.Allocator, rt)
	defer b.Release()
	for _, s := range a.sketches {
		if s == nil || s.N() == 0 {
			b.AppendNull()
			continue
		}
		qs := s.Quantiles(a.spec.Quantiles)
		if !a.spec.List {
			vector.AppendValue(b, a.value(qs[0]))
			continue
		}
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		for _, q := range qs {
			vector.AppendValue(lb.ValueBuilder(), a.value(q))
		}
	}
	return b.NewArray(), nil
}

func (a *kllAcc) MemoryUsage() int64 {
	var n int64
	for _, s := range a.sketches {
		if s != nil {
			n += 8 * 3 * stats.KLLK
		}
	}
	return n
}
