package agg

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// dec64SumAcc is SUM of DECIMAL(p,s) stored in 64 bits (p ≤ 18): a 64-bit sum per
// group and a bit saying it has a value, 8 bytes a group where decSumAcc keeps 24.
// A sum that leaves 64 bits moves every group to 128-bit sums (wide), which take
// every later update: the result is decSumAcc's, to the bit.
type dec64SumAcc struct {
	spec  Spec
	scale int32
	st    []int64
	seen  []uint64 // bit g: group g has a non-NULL value
	rows  rows
	wide  *decSumAcc // nil until a sum overflowed 64 bits
}

func (a *dec64SumAcc) Resize(n int) {
	if a.wide != nil {
		a.wide.Resize(n)
		return
	}
	a.st = extend(a.st, n)
	a.seen = extend(a.seen, (n+63)/64)
}

func (a *dec64SumAcc) has(g uint32) bool { return a.seen[g/64]&(1<<(g%64)) != 0 }

// widen moves every group to 128-bit sums; from then on wide holds the state.
func (a *dec64SumAcc) widen() {
	w := &decSumAcc{spec: a.spec, scale: a.scale}
	w.Resize(len(a.st))
	for g, x := range a.st {
		if a.has(uint32(g)) {
			w.st[g] = sum128{lo: uint64(x), hi: x >> 63, cnt: 1}
		}
	}
	a.wide, a.st, a.seen = w, nil, nil
}

func (a *dec64SumAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	if a.wide != nil {
		return a.wide.Update(arg, sel, groups)
	}
	ensureGroup0(a, len(a.st), groups)
	return a.update(arg, sel, groups, 0)
}

func (a *dec64SumAcc) UpdateGroup(arg arrow.Array, sel []int32, g uint32) error {
	if a.wide != nil {
		return a.wide.UpdateGroup(arg, sel, g)
	}
	return a.update(arg, sel, nil, g)
}

// update folds rows into their groups, or with groups nil into group into, until a
// sum would leave 64 bits; the rows from there on go to the widened sums.
func (a *dec64SumAcc) update(arg arrow.Array, sel []int32, groups []uint32, into uint32) error {
	vals, s, g, n := a.rows.resolve(arg, sel, groups)
	if n == 0 {
		return nil
	}
	if vals.DataType().ID() != arrow.DECIMAL64 {
		a.widen()
		return a.wide.update(arg, sel, groups, into)
	}
	nums := rawValues[int64](vals)
	st := a.st
	if g == nil {
		sum := st[into]
		for k := range n {
			i := k
			if s != nil {
				i = int(s[k])
			}
			x := nums[i]
			r := sum + x
			if (sum^r)&(x^r) < 0 {
				st[into] = sum
				a.seen[into/64] |= 1 << (into % 64)
				return a.overflowAt(nums, s, g, n, k, into)
			}
			sum = r
		}
		st[into] = sum
		a.seen[into/64] |= 1 << (into % 64)
		return nil
	}
	seen := a.seen
	for k, grp := range g[:n] {
		i := k
		if s != nil {
			i = int(s[k])
		}
		x := nums[i]
		p := st[grp]
		r := p + x
		if (p^r)&(x^r) < 0 {
			return a.overflowAt(nums, s, g, n, k, into)
		}
		st[grp] = r
		seen[grp/64] |= 1 << (grp % 64)
	}
	return nil
}

// overflowAt widens the sums, every row before k folded in, and folds rows k… into
// the 128-bit sums.
func (a *dec64SumAcc) overflowAt(nums []int64, s []int32, g []uint32, n, k int, into uint32) error {
	a.widen()
	if s != nil {
		s = s[k:]
	} else {
		nums = nums[k:]
	}
	if g != nil {
		g = g[k:]
	}
	a.wide.update64(nums, s, g, n-k, into)
	return nil
}

// Merge folds other's groups in. other is left as it was.
func (a *dec64SumAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*dec64SumAcc](other, a.spec)
	if err != nil {
		return err
	}
	if o.wide != nil {
		if a.wide == nil {
			a.widen()
		}
		return a.wide.Merge(o.wide, mapping)
	}
	if err := checkMapping(a.spec, mapping, len(o.st), a.groups()); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.st)] {
		if !o.has(uint32(j)) {
			continue
		}
		x := o.st[j]
		if a.wide == nil {
			p := a.st[g]
			r := p + x
			if (p^r)&(x^r) >= 0 {
				a.st[g] = r
				a.seen[g/64] |= 1 << (g % 64)
				continue
			}
			a.widen()
		}
		a.wide.addChecked(g, uint64(x), x>>63)
		a.wide.st[g].cnt++
	}
	if a.wide != nil && a.wide.overflow {
		return a.wide.overflowError()
	}
	return nil
}

func (a *dec64SumAcc) groups() int {
	if a.wide != nil {
		return len(a.wide.st)
	}
	return len(a.st)
}

func (a *dec64SumAcc) Final() (arrow.Array, error) {
	if a.wide != nil {
		return a.wide.Final()
	}
	n := len(a.st)
	valid := make([]bool, n)
	out := make([]decimal128.Num, n)
	for g, x := range a.st {
		if a.has(uint32(g)) {
			valid[g] = true
			out[g] = decimal128.FromI64(x)
		}
	}
	return fixedArray(&arrow.Decimal128Type{Precision: 38, Scale: a.scale}, out, valid), nil
}

func (a *dec64SumAcc) MemoryUsage() int64 {
	if a.wide != nil {
		return a.wide.MemoryUsage()
	}
	return int64(8*cap(a.st)+8*cap(a.seen)) + a.rows.memoryUsage()
}

func (a *dec64SumAcc) FromZone(z *Zone, g uint32) (bool, error) {
	if a.wide != nil {
		return a.wide.FromZone(z, g)
	}
	lo, hi, _, fold, ok := scaledFromZone(a, z, g, a.scale)
	if !fold {
		return ok, nil
	}
	x := int64(lo)
	if hi == x>>63 { // the zone's sum fits 64 bits
		p := a.st[g]
		if r := p + x; (p^r)&(x^r) >= 0 {
			a.st[g] = r
			a.seen[g/64] |= 1 << (g % 64)
			return true, nil
		}
	}
	a.widen()
	return a.wide.FromZone(z, g)
}
