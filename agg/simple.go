package agg

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// boolAcc is bool_and and bool_or and count_if (the rows whose argument is true),
// each NULL for a group of no non-NULL rows.
type boolAcc struct {
	spec  Spec
	seen  []bool
	val   []bool
	count []int64
}

var _ Accumulator = (*boolAcc)(nil)

func (a *boolAcc) Resize(n int) {
	a.seen, a.val, a.count = extend(a.seen, n), extend(a.val, n), extend(a.count, n)
}

func (a *boolAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	ensureGroup0(a, len(a.seen), groups)
	arg = plain(arg)
	if arg.DataType().ID() == arrow.NULL {
		return nil
	}
	b, ok := arg.(*array.Boolean)
	if !ok {
		return typeMismatch(a.spec, arg)
	}
	sp := spanOf(arg, sel, groups)
	and := a.spec.Name == "bool_and"
	for k := 0; k < sp.n; k++ {
		r := sp.row(k)
		if b.IsNull(r) {
			continue
		}
		g, v := sp.group(k), b.Value(r)
		switch {
		case a.spec.Name == "count_if":
			a.seen[g] = true
			if v {
				a.count[g]++
			}
		case !a.seen[g]:
			a.seen[g], a.val[g] = true, v
		case and:
			a.val[g] = a.val[g] && v
		default:
			a.val[g] = a.val[g] || v
		}
	}
	return nil
}

func (a *boolAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*boolAcc](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, len(o.seen), len(a.seen)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.seen)] {
		a.count[g] += o.count[j]
		switch {
		case !o.seen[j]:
		case a.spec.Name == "count_if":
			a.seen[g] = true
		case !a.seen[g]:
			a.seen[g], a.val[g] = true, o.val[j]
		case a.spec.Name == "bool_and":
			a.val[g] = a.val[g] && o.val[j]
		default:
			a.val[g] = a.val[g] || o.val[j]
		}
	}
	return nil
}

func (a *boolAcc) Final() (arrow.Array, error) {
	if a.spec.Name == "count_if" {
		// As SUM of the conditions as 1 and 0: NULL for a group of no non-NULL rows.
		n := len(a.count)
		return fixedArray(types.Int64, append([]int64(nil), a.count...), a.seen[:n:n]), nil
	}
	vals := make([]types.Value, len(a.seen))
	for g := range vals {
		if a.seen[g] {
			vals[g] = types.BoolValue(a.val[g])
		} else {
			vals[g] = types.NullOf(types.Boolean)
		}
	}
	return vector.FromValues(types.Boolean, vals), nil
}

func (a *boolAcc) MemoryUsage() int64 { return int64(2*cap(a.seen) + 8*cap(a.count)) }

func (a *boolAcc) FromZone(*Zone, uint32) (bool, error) { return false, nil }

// bitAcc is bit_and, bit_or and bit_xor over an integer type, the bits kept in a
// uint64 per group and the result of the argument's type.
type bitAcc struct {
	spec Spec
	t    arrow.DataType
	seen []bool
	bits []uint64
}

var _ Accumulator = (*bitAcc)(nil)

func (a *bitAcc) Resize(n int) { a.seen, a.bits = extend(a.seen, n), extend(a.bits, n) }

func (a *bitAcc) fold(g uint32, v uint64) {
	if !a.seen[g] {
		a.seen[g], a.bits[g] = true, v
		return
	}
	switch a.spec.Name {
	case "bit_and":
		a.bits[g] &= v
	case "bit_or":
		a.bits[g] |= v
	default:
		a.bits[g] ^= v
	}
}

func (a *bitAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	ensureGroup0(a, len(a.seen), groups)
	arg = plain(arg)
	sp := spanOf(arg, sel, groups)
	for k := 0; k < sp.n; k++ {
		r := sp.row(k)
		if arg.IsNull(r) {
			continue
		}
		v := types.ValueAt(arg, r)
		bits := v.U
		if types.IsSigned(a.t) {
			bits = uint64(v.I)
		}
		a.fold(sp.group(k), bits)
	}
	return nil
}

func (a *bitAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*bitAcc](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, len(o.seen), len(a.seen)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.seen)] {
		if o.seen[j] {
			a.fold(g, o.bits[j])
		}
	}
	return nil
}

func (a *bitAcc) Final() (arrow.Array, error) {
	vals := make([]types.Value, len(a.seen))
	for g := range vals {
		switch {
		case !a.seen[g]:
			vals[g] = types.NullOf(a.t)
		case types.IsSigned(a.t):
			vals[g] = types.Value{Type: a.t, I: int64(a.bits[g])}
		default:
			vals[g] = types.Value{Type: a.t, U: a.bits[g]}
		}
	}
	return vector.FromValues(a.t, vals), nil
}

func (a *bitAcc) MemoryUsage() int64 { return int64(cap(a.seen) + 8*cap(a.bits)) }

func (a *bitAcc) FromZone(*Zone, uint32) (bool, error) { return false, nil }

// floatFoldAcc is product and the compensated sums fsum (kahan_sum, sumkahan) over
// a DOUBLE argument: NULL for a group of no non-NULL rows. The sum keeps Kahan's
// running compensation, which a merge adds in as well.
type floatFoldAcc struct {
	spec Spec
	seen []bool
	val  []float64
	comp []float64
}

var _ Accumulator = (*floatFoldAcc)(nil)

func (a *floatFoldAcc) Resize(n int) {
	old := len(a.val)
	a.seen, a.val, a.comp = extend(a.seen, n), extend(a.val, n), extend(a.comp, n)
	if a.spec.Name == "product" {
		for g := old; g < n; g++ {
			a.val[g] = 1
		}
	}
}

// add adds v to group g's sum with Kahan's compensation.
func (a *floatFoldAcc) add(g uint32, v float64) {
	y := v - a.comp[g]
	t := a.val[g] + y
	a.comp[g] = (t - a.val[g]) - y
	a.val[g] = t
}

func (a *floatFoldAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	ensureGroup0(a, len(a.seen), groups)
	arg = plain(arg)
	x, ok := arg.(*array.Float64)
	if !ok {
		return typeMismatch(a.spec, arg)
	}
	vals := x.Float64Values()
	sp := spanOf(arg, sel, groups)
	product := a.spec.Name == "product"
	for k := 0; k < sp.n; k++ {
		r := sp.row(k)
		if x.IsNull(r) {
			continue
		}
		g := sp.group(k)
		a.seen[g] = true
		if product {
			a.val[g] *= vals[r]
		} else {
			a.add(g, vals[r])
		}
	}
	return nil
}

func (a *floatFoldAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*floatFoldAcc](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, len(o.seen), len(a.seen)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.seen)] {
		if !o.seen[j] {
			continue
		}
		a.seen[g] = true
		if a.spec.Name == "product" {
			a.val[g] *= o.val[j]
			continue
		}
		a.add(g, o.val[j])
		a.add(g, -o.comp[j])
	}
	return nil
}

func (a *floatFoldAcc) Final() (arrow.Array, error) {
	out := make([]float64, len(a.val))
	copy(out, a.val)
	return fixedArray(types.Float64, out, a.seen[:len(out):len(out)]), nil
}

func (a *floatFoldAcc) MemoryUsage() int64 { return int64(cap(a.seen) + 8*(cap(a.val)+cap(a.comp))) }

func (a *floatFoldAcc) FromZone(*Zone, uint32) (bool, error) { return false, nil }
