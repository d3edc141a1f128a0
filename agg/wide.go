package agg

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/types"
)

// Decimals of up to 18 digits arrive as 64-bit arrays (types.Decimal). SUM, AVG,
// the counts, MIN and MAX read them as they are; every other accumulator is made
// for the 128-bit types (wideSpec) and wrapped in a wideAcc, which widens its
// arguments and narrows its results to the types ResultType gives.

// wideSpec is s with every 64-bit decimal type in it replaced by its 128-bit type.
func wideSpec(s Spec) Spec {
	if s.ArgType != nil {
		s.ArgType = types.Wide(types.Unwrap(s.ArgType))
	}
	if len(s.ArgTypes) > 0 {
		ts := make([]arrow.DataType, len(s.ArgTypes))
		for i, t := range s.ArgTypes {
			ts[i] = types.Wide(types.Unwrap(t))
		}
		s.ArgTypes = ts
	}
	if len(s.Order) > 0 {
		ks := make([]OrderKey, len(s.Order))
		for i, k := range s.Order {
			k.Type = types.Wide(types.Unwrap(k.Type))
			ks[i] = k
		}
		s.Order = ks
	}
	return s
}

// sameSpecTypes reports whether two specs made by wideSpec from one another have
// the same types (s had no 64-bit decimal).
func sameSpecTypes(a, b Spec) bool {
	same := func(x, y arrow.DataType) bool {
		return (x == nil) == (y == nil) && (x == nil || arrow.TypeEqual(types.Unwrap(x), types.Unwrap(y)))
	}
	if !same(a.ArgType, b.ArgType) {
		return false
	}
	for i := range a.ArgTypes {
		if !same(a.ArgTypes[i], b.ArgTypes[i]) {
			return false
		}
	}
	for i := range a.Order {
		if !same(a.Order[i].Type, b.Order[i].Type) {
			return false
		}
	}
	return true
}

// reads64 reports whether the accumulator of s reads 64-bit decimal arguments
// itself.
func reads64(s Spec) bool {
	if s.Distinct || len(s.Order) > 0 || len(s.ArgTypes) > 0 {
		return false
	}
	switch s.Name {
	case "sum", "avg", "count", "count_star":
		return true
	case "min", "max":
		return s.ArgType != nil && types.Unwrap(s.ArgType).ID() == arrow.DECIMAL64
	}
	return false
}

// wideAcc runs an accumulator made for 128-bit decimals on 64-bit ones.
type wideAcc struct {
	inner  Accumulator
	result arrow.DataType // the result type, with 64-bit decimals
}

var _ MultiArg = (*wideAcc)(nil)

func (a *wideAcc) Resize(n int) { a.inner.Resize(n) }

func (a *wideAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	if arg != nil {
		arg = kernels.WidenDecimal(arg)
	}
	return a.inner.Update(arg, sel, groups)
}

// UpdateArgs folds the rows of several arguments (see MultiArg).
func (a *wideAcc) UpdateArgs(args []arrow.Array, sel []int32, groups []uint32) error {
	wide := make([]arrow.Array, len(args))
	for i, x := range args {
		wide[i] = kernels.WidenDecimal(x)
	}
	return UpdateArgs(a.inner, wide, sel, groups)
}

func (a *wideAcc) Merge(other Accumulator, mapping []uint32) error {
	if o, ok := other.(*wideAcc); ok {
		other = o.inner
	}
	return a.inner.Merge(other, mapping)
}

func (a *wideAcc) Final() (arrow.Array, error) {
	out, err := a.inner.Final()
	if err != nil || arrow.TypeEqual(out.DataType(), a.result) {
		return out, err
	}
	return kernels.Cast(out, a.result)
}

func (a *wideAcc) MemoryUsage() int64 { return a.inner.MemoryUsage() }

func (a *wideAcc) FromZone(z *Zone, g uint32) (bool, error) { return a.inner.FromZone(z, g) }
