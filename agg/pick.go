package agg

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// pickAcc keeps one row's value per group: first (the first row, NULL or not),
// last (the last row), any_value (the first non-NULL value), and arg_min and
// arg_max (the value of the row whose second argument is least or greatest, of the
// rows where neither is NULL; the earliest row on ties). A batch is scanned with a
// comparison typed for it, and a group's value is boxed once per batch at most.
type pickAcc struct {
	spec  Spec
	t     arrow.DataType
	set   []bool
	val   []types.Value
	by    []types.Value // arg_min and arg_max: the value compared
	best  []int32       // a batch's chosen row per group, -1 if none
	touch []uint32      // the groups with a chosen row in the batch
	held  int64         // the bytes of the kept values' strings and nested rows' text
}

// keep makes v group g's value.
func (a *pickAcc) keep(g uint32, v types.Value) {
	a.held += int64(len(v.S) - len(a.val[g].S))
	a.set[g], a.val[g] = true, v
}

var _ MultiArg = (*pickAcc)(nil)

func (a *pickAcc) Resize(n int) {
	a.set, a.val = extend(a.set, n), extend(a.val, n)
	if a.byValue() {
		a.by = extend(a.by, n)
	}
}

func (a *pickAcc) byValue() bool { return a.spec.Name == "arg_min" || a.spec.Name == "arg_max" }

func (a *pickAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	if a.byValue() {
		return needsArgs(a.spec)
	}
	return a.UpdateArgs([]arrow.Array{arg}, sel, groups)
}

func (a *pickAcc) UpdateArgs(args []arrow.Array, sel []int32, groups []uint32) error {
	ensureGroup0(a, len(a.set), groups)
	arg := plain(args[0])
	sp := spanOf(arg, sel, groups)
	if len(a.best) < len(a.set) {
		a.best = make([]int32, len(a.set))
		for i := range a.best {
			a.best[i] = -1
		}
	}
	a.touch = a.touch[:0]
	choose := func(g uint32, r int) {
		if a.best[g] < 0 {
			a.touch = append(a.touch, g)
		}
		a.best[g] = int32(r)
	}
	switch a.spec.Name {
	case "first":
		for k := 0; k < sp.n; k++ {
			if g := sp.group(k); !a.set[g] && a.best[g] < 0 {
				choose(g, sp.row(k))
			}
		}
	case "last":
		for k := 0; k < sp.n; k++ {
			choose(sp.group(k), sp.row(k))
		}
	case "any_value":
		for k := 0; k < sp.n; k++ {
			if g, r := sp.group(k), sp.row(k); !a.set[g] && a.best[g] < 0 && arg.IsValid(r) {
				choose(g, r)
			}
		}
	default: // arg_min, arg_max
		by := plain(args[1])
		if kernels.NestedOrderable(by.DataType()) {
			// Nested values are compared as their order-preserving encodings.
			by = kernels.NestedKeys(by)
		}
		order := rowOrder(by)
		sign := 1
		if a.spec.Name == "arg_max" {
			sign = -1
		}
		for k := 0; k < sp.n; k++ {
			g, r := sp.group(k), sp.row(k)
			if arg.IsNull(r) || by.IsNull(r) {
				continue
			}
			if b := a.best[g]; b < 0 || sign*order(r, int(b)) < 0 {
				choose(g, r)
			}
		}
		for _, g := range a.touch {
			r := int(a.best[g])
			a.best[g] = -1
			v := types.ValueAt(by, r)
			if a.set[g] && sign*types.Compare(v, a.by[g]) >= 0 {
				continue
			}
			a.keep(g, vector.KeptValue(arg, r))
			a.by[g] = v
		}
		return nil
	}
	for _, g := range a.touch {
		a.keep(g, vector.KeptValue(arg, int(a.best[g])))
		a.best[g] = -1
	}
	return nil
}

func (a *pickAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*pickAcc](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, len(o.set), len(a.set)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.set)] {
		if !o.set[j] {
			continue
		}
		take := !a.set[g]
		switch a.spec.Name {
		case "last":
			take = true
		case "arg_min":
			take = take || types.Compare(o.by[j], a.by[g]) < 0
		case "arg_max":
			take = take || types.Compare(o.by[j], a.by[g]) > 0
		}
		if take {
			a.keep(g, o.val[j])
			if a.byValue() {
				a.by[g] = o.by[j]
			}
		}
	}
	return nil
}

func (a *pickAcc) Final() (arrow.Array, error) {
	vals := make([]types.Value, len(a.set))
	for g := range vals {
		if a.set[g] {
			vals[g] = a.val[g]
		} else {
			vals[g] = types.NullOf(a.t)
		}
	}
	return vector.FromValues(a.t, vals), nil
}

func (a *pickAcc) MemoryUsage() int64 {
	return int64(cap(a.set)+80*(cap(a.val)+cap(a.by))+4*cap(a.best)+4*cap(a.touch)) + a.held
}

func (a *pickAcc) FromZone(*Zone, uint32) (bool, error) { return false, nil }
