package agg

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// SUM and AVG share their states: a sum and a count of non-NULL rows per group, kept
// side by side per group. Integer
// and decimal sums are kept in 128 bits (a low uint64 and a high int64), so a sum of
// 64-bit values cannot overflow while it is accumulated and partial sums merge
// exactly; only the final result is checked against BIGINT (SUM of integers) or
// DECIMAL(38,s). AVG divides in float64 at Final.

// add128 adds the 128-bit (xlo, xhi) to (lo, hi), wrapping.
func add128(lo uint64, hi int64, xlo uint64, xhi int64) (uint64, int64) {
	l, c := bits.Add64(lo, xlo, 0)
	return l, hi + xhi + int64(c)
}

// int128Float converts a 128-bit integer to the nearest float64 (near enough: the two
// halves are rounded separately).
func int128Float(lo uint64, hi int64) float64 {
	if hi == int64(lo)>>63 {
		return float64(int64(lo)) // fits in 64 bits
	}
	if hi < 0 {
		// Negate, convert the magnitude, and negate back: converting the halves of a
		// negative value separately would cancel catastrophically.
		nlo, b := bits.Sub64(0, lo, 0)
		nhi := -hi - int64(b)
		return -(float64(uint64(nhi))*0x1p64 + float64(nlo))
	}
	return float64(hi)*0x1p64 + float64(lo)
}

// sum128 is the state of one group of an integer or decimal SUM/AVG. The fields sit
// together so that a row touches one cache line of state, not three.
type sum128 struct {
	lo  uint64
	hi  int64
	cnt int64
}

// intSumAcc is SUM and AVG of signed and unsigned integers.
type intSumAcc struct {
	spec  Spec
	argID arrow.Type
	avg   bool
	st    []sum128
	rows  rows
}

var _ Accumulator = (*intSumAcc)(nil)

func (a *intSumAcc) Resize(n int) { a.st = extend(a.st, n) }

func (a *intSumAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	ensureGroup0(a, len(a.st), groups)
	return a.update(arg, sel, groups, 0)
}

func (a *intSumAcc) UpdateGroup(arg arrow.Array, sel []int32, g uint32) error {
	return a.update(arg, sel, nil, g)
}

// update folds rows into their groups, or with groups nil into group into.
func (a *intSumAcc) update(arg arrow.Array, sel []int32, groups []uint32, into uint32) error {
	vals, s, g, n := a.rows.resolve(arg, sel, groups)
	if n == 0 {
		return nil
	}
	if vals.DataType().ID() != a.argID {
		return typeMismatch(a.spec, arg)
	}
	switch a.argID {
	case arrow.INT8:
		sumSigned(rawValues[int8](vals), s, g, n, a, into)
	case arrow.INT16:
		sumSigned(rawValues[int16](vals), s, g, n, a, into)
	case arrow.INT32:
		sumSigned(rawValues[int32](vals), s, g, n, a, into)
	case arrow.INT64:
		sumSigned(rawValues[int64](vals), s, g, n, a, into)
	case arrow.UINT8:
		sumUnsigned(rawValues[uint8](vals), s, g, n, a, into)
	case arrow.UINT16:
		sumUnsigned(rawValues[uint16](vals), s, g, n, a, into)
	case arrow.UINT32:
		sumUnsigned(rawValues[uint32](vals), s, g, n, a, into)
	case arrow.UINT64:
		sumUnsigned(rawValues[uint64](vals), s, g, n, a, into)
	default:
		return typeMismatch(a.spec, arg)
	}
	return nil
}

func sumSigned[T int8 | int16 | int32 | int64](vals []T, sel []int32, groups []uint32, n int, a *intSumAcc, into uint32) {
	if groups == nil {
		var lo uint64
		var hi int64
		if sel == nil {
			for _, v := range vals[:n] {
				lo, hi = add128(lo, hi, uint64(int64(v)), int64(v)>>63)
			}
		} else {
			for _, i := range sel[:n] {
				v := int64(vals[i])
				lo, hi = add128(lo, hi, uint64(v), v>>63)
			}
		}
		p := &a.st[into]
		p.lo, p.hi = add128(p.lo, p.hi, lo, hi)
		p.cnt += int64(n)
		return
	}
	st := a.st
	if sel == nil {
		for k, g := range groups[:n] {
			v, p := int64(vals[k]), &st[g]
			p.lo, p.hi = add128(p.lo, p.hi, uint64(v), v>>63)
			p.cnt++
		}
		return
	}
	for k, g := range groups[:n] {
		v, p := int64(vals[sel[k]]), &st[g]
		p.lo, p.hi = add128(p.lo, p.hi, uint64(v), v>>63)
		p.cnt++
	}
}

func sumUnsigned[T uint8 | uint16 | uint32 | uint64](vals []T, sel []int32, groups []uint32, n int, a *intSumAcc, into uint32) {
	if groups == nil {
		var lo uint64
		var hi int64
		if sel == nil {
			for _, v := range vals[:n] {
				lo, hi = add128(lo, hi, uint64(v), 0)
			}
		} else {
			for _, i := range sel[:n] {
				lo, hi = add128(lo, hi, uint64(vals[i]), 0)
			}
		}
		p := &a.st[into]
		p.lo, p.hi = add128(p.lo, p.hi, lo, hi)
		p.cnt += int64(n)
		return
	}
	st := a.st
	if sel == nil {
		for k, g := range groups[:n] {
			p := &st[g]
			p.lo, p.hi = add128(p.lo, p.hi, uint64(vals[k]), 0)
			p.cnt++
		}
		return
	}
	for k, g := range groups[:n] {
		p := &st[g]
		p.lo, p.hi = add128(p.lo, p.hi, uint64(vals[sel[k]]), 0)
		p.cnt++
	}
}

func (a *intSumAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*intSumAcc](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, len(o.st), len(a.st)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.st)] {
		p, q := &a.st[g], &o.st[j]
		p.lo, p.hi = add128(p.lo, p.hi, q.lo, q.hi)
		p.cnt += q.cnt
	}
	return nil
}

func (a *intSumAcc) Final() (arrow.Array, error) {
	n := len(a.st)
	valid := make([]bool, n)
	for g := range a.st {
		valid[g] = a.st[g].cnt > 0
	}
	if a.avg {
		out := make([]float64, n)
		for g, p := range a.st {
			if p.cnt > 0 {
				out[g] = int128Float(p.lo, p.hi) / float64(p.cnt)
			}
		}
		return fixedArray(types.Float64, out, valid), nil
	}
	out := make([]int64, n)
	for g, p := range a.st {
		if p.cnt == 0 {
			continue
		}
		if p.hi != int64(p.lo)>>63 {
			return nil, errs.New(errs.Analysis, "SUM overflowed BIGINT: the sum of %s values does not fit in 64 bits", types.Name(a.spec.ArgType))
		}
		out[g] = int64(p.lo)
	}
	return fixedArray(types.Int64, out, valid), nil
}

func (a *intSumAcc) MemoryUsage() int64 { return int64(24*cap(a.st)) + a.rows.memoryUsage() }

// fsum is the state of one group of a float SUM/AVG.
type fsum struct {
	sum float64
	cnt int64
}

// floatSumAcc is SUM and AVG of float32 and float64, summed in float64.
type floatSumAcc struct {
	spec  Spec
	argID arrow.Type
	avg   bool
	st    []fsum
	rows  rows
}

var _ Accumulator = (*floatSumAcc)(nil)

func (a *floatSumAcc) Resize(n int) { a.st = extend(a.st, n) }

func (a *floatSumAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	ensureGroup0(a, len(a.st), groups)
	if _, isDict := arg.(*array.Dictionary); !isDict && arg.NullN() > 0 && arg.DataType().ID() == a.argID {
		// A column with NULLs is summed straight from its validity bitmap, rather
		// than through a list of its valid rows made first.
		if a.argID == arrow.FLOAT32 {
			sumFloatValid(rawValues[float32](arg), arg, sel, groups, a)
		} else {
			sumFloatValid(rawValues[float64](arg), arg, sel, groups, a)
		}
		return nil
	}
	vals, s, g, n := a.rows.resolve(arg, sel, groups)
	if n == 0 {
		return nil
	}
	switch {
	case vals.DataType().ID() != a.argID:
		return typeMismatch(a.spec, arg)
	case a.argID == arrow.FLOAT32:
		sumFloat(rawValues[float32](vals), s, g, n, a)
	default:
		sumFloat(rawValues[float64](vals), s, g, n, a)
	}
	return nil
}

// sumFloatValid adds the valid values of arg (whose values are vals) at the rows sel
// (nil: every row) into their groups (nil: group 0). Each shape of sel and groups has
// its own loop, so that the per-row work is the validity test and the addition.
func sumFloatValid[T float32 | float64](vals []T, arg arrow.Array, sel []int32, groups []uint32, a *floatSumAcc) {
	bm, off := arg.NullBitmapBytes(), arg.Data().Offset()
	valid := func(i int) bool { b := off + i; return bm[b>>3]&(1<<(b&7)) != 0 }
	st := a.st
	switch {
	case groups == nil:
		var sum float64
		var cnt int64
		if sel == nil {
			for i, v := range vals[:arg.Len()] {
				if valid(i) {
					sum += float64(v)
					cnt++
				}
			}
		} else {
			for _, i := range sel {
				if valid(int(i)) {
					sum += float64(vals[i])
					cnt++
				}
			}
		}
		st[0].sum += sum
		st[0].cnt += cnt
	case sel == nil:
		vals = vals[:len(groups)]
		for i, g := range groups {
			if valid(i) {
				p := &st[g]
				p.sum += float64(vals[i])
				p.cnt++
			}
		}
	default:
		sel = sel[:len(groups)]
		for k, g := range groups {
			if i := sel[k]; valid(int(i)) {
				p := &st[g]
				p.sum += float64(vals[i])
				p.cnt++
			}
		}
	}
}

func sumFloat[T float32 | float64](vals []T, sel []int32, groups []uint32, n int, a *floatSumAcc) {
	if groups == nil {
		var s float64
		if sel == nil {
			for _, v := range vals[:n] {
				s += float64(v)
			}
		} else {
			for _, i := range sel[:n] {
				s += float64(vals[i])
			}
		}
		a.st[0].sum += s
		a.st[0].cnt += int64(n)
		return
	}
	st := a.st
	if sel == nil {
		for k, g := range groups[:n] {
			p := &st[g]
			p.sum += float64(vals[k])
			p.cnt++
		}
		return
	}
	for k, g := range groups[:n] {
		p := &st[g]
		p.sum += float64(vals[sel[k]])
		p.cnt++
	}
}

func (a *floatSumAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*floatSumAcc](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, len(o.st), len(a.st)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.st)] {
		a.st[g].sum += o.st[j].sum
		a.st[g].cnt += o.st[j].cnt
	}
	return nil
}

func (a *floatSumAcc) Final() (arrow.Array, error) {
	n := len(a.st)
	out := make([]float64, n)
	valid := make([]bool, n)
	for g, p := range a.st {
		if p.cnt == 0 {
			continue
		}
		valid[g] = true
		out[g] = p.sum
		if a.avg {
			out[g] /= float64(p.cnt)
		}
	}
	return fixedArray(types.Float64, out, valid), nil
}

func (a *floatSumAcc) MemoryUsage() int64 { return int64(16*cap(a.st)) + a.rows.memoryUsage() }

// decSumAcc is SUM and AVG of DECIMAL(p,s): a 128-bit sum of the scaled integers.
// Adding two 128-bit values can overflow (each may be near 10^38), so each addition
// is checked and an overflow is remembered and reported.
type decSumAcc struct {
	spec     Spec
	scale    int32
	avg      bool
	st       []sum128
	overflow bool
	rows     rows
}

var _ Accumulator = (*decSumAcc)(nil)

func (a *decSumAcc) Resize(n int) { a.st = extend(a.st, n) }

// addChecked adds (xlo, xhi) to group g, noting a signed 128-bit overflow.
func (a *decSumAcc) addChecked(g uint32, xlo uint64, xhi int64) {
	p := &a.st[g]
	lo, hi := add128(p.lo, p.hi, xlo, xhi)
	if (p.hi^hi)&(xhi^hi) < 0 {
		a.overflow = true
	}
	p.lo, p.hi = lo, hi
}

func (a *decSumAcc) overflowError() error {
	return errs.New(errs.Analysis, "SUM overflowed DECIMAL(38,%d)", a.scale)
}

func (a *decSumAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	ensureGroup0(a, len(a.st), groups)
	return a.update(arg, sel, groups, 0)
}

func (a *decSumAcc) UpdateGroup(arg arrow.Array, sel []int32, g uint32) error {
	return a.update(arg, sel, nil, g)
}

// update folds rows into their groups, or with groups nil into group into.
func (a *decSumAcc) update(arg arrow.Array, sel []int32, groups []uint32, into uint32) error {
	vals, s, g, n := a.rows.resolve(arg, sel, groups)
	if n == 0 {
		return nil
	}
	if vals.DataType().ID() == arrow.DECIMAL64 {
		a.update64(rawValues[int64](vals), s, g, n, into)
		return nil
	}
	if vals.DataType().ID() != arrow.DECIMAL128 {
		return typeMismatch(a.spec, arg)
	}
	nums := rawValues[decimal128.Num](vals)
	// One loop per shape, the sums of one group kept in registers when there are no
	// groups; a sign change that the operands do not explain marks an overflow.
	var ovf int64
	st := a.st
	switch {
	case g == nil:
		ovf = sumInto(&st[into], nums, s, n)
	default:
		for k, grp := range g[:n] {
			i := k
			if s != nil {
				i = int(s[k])
			}
			x := nums[i]
			p := &st[grp]
			l, c := bits.Add64(p.lo, x.LowBits(), 0)
			h := p.hi + x.HighBits() + int64(c)
			ovf |= (p.hi ^ h) & (x.HighBits() ^ h)
			p.lo, p.hi = l, h
			p.cnt++
		}
	}
	if ovf < 0 {
		a.overflow = true
	}
	if a.overflow {
		return a.overflowError()
	}
	return nil
}

// update64 folds 64-bit values into the 128-bit sums. Values of at most 18 digits
// cannot carry a sum past 128 bits before some 10^20 of them have been added.
func (a *decSumAcc) update64(nums []int64, s []int32, g []uint32, n int, into uint32) {
	st := a.st
	if g == nil {
		p := &st[into]
		lo, hi := p.lo, p.hi
		if s == nil {
			for _, x := range nums[:n] {
				l, c := bits.Add64(lo, uint64(x), 0)
				hi += x>>63 + int64(c)
				lo = l
			}
		} else {
			for _, i := range s[:n] {
				x := nums[i]
				l, c := bits.Add64(lo, uint64(x), 0)
				hi += x>>63 + int64(c)
				lo = l
			}
		}
		p.lo, p.hi = lo, hi
		p.cnt += int64(n)
		return
	}
	for k, grp := range g[:n] {
		i := k
		if s != nil {
			i = int(s[k])
		}
		x := nums[i]
		p := &st[grp]
		l, c := bits.Add64(p.lo, uint64(x), 0)
		p.hi += x>>63 + int64(c)
		p.lo = l
		p.cnt++
	}
}

// sumInto adds the n values nums[s[k]] (nums[k] when s is nil) to p, the sum kept in
// registers meanwhile; the result is negative when the sum overflowed.
func sumInto(p *sum128, nums []decimal128.Num, s []int32, n int) (ovf int64) {
	lo, hi := p.lo, p.hi
	if s == nil {
		for _, x := range nums[:n] {
			l, c := bits.Add64(lo, x.LowBits(), 0)
			h := hi + x.HighBits() + int64(c)
			ovf |= (hi ^ h) & (x.HighBits() ^ h)
			lo, hi = l, h
		}
	} else {
		for _, i := range s[:n] {
			x := nums[i]
			l, c := bits.Add64(lo, x.LowBits(), 0)
			h := hi + x.HighBits() + int64(c)
			ovf |= (hi ^ h) & (x.HighBits() ^ h)
			lo, hi = l, h
		}
	}
	p.lo, p.hi = lo, hi
	p.cnt += int64(n)
	return ovf
}

func (a *decSumAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*decSumAcc](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, len(o.st), len(a.st)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.st)] {
		a.addChecked(g, o.st[j].lo, o.st[j].hi)
		a.st[g].cnt += o.st[j].cnt
	}
	if a.overflow || o.overflow {
		a.overflow = true
		return a.overflowError()
	}
	return nil
}

func (a *decSumAcc) Final() (arrow.Array, error) {
	if a.overflow {
		return nil, a.overflowError()
	}
	n := len(a.st)
	valid := make([]bool, n)
	for g := range a.st {
		valid[g] = a.st[g].cnt > 0
	}
	if a.avg {
		out := make([]float64, n)
		for g, p := range a.st {
			if p.cnt > 0 {
				out[g] = decimal128.New(p.hi, p.lo).ToFloat64(a.scale) / float64(p.cnt)
			}
		}
		return fixedArray(types.Float64, out, valid), nil
	}
	out := make([]decimal128.Num, n)
	for g, p := range a.st {
		if p.cnt == 0 {
			continue
		}
		out[g] = decimal128.New(p.hi, p.lo)
		if !out[g].FitsInPrecision(38) {
			return nil, a.overflowError()
		}
	}
	return fixedArray(&arrow.Decimal128Type{Precision: 38, Scale: a.scale}, out, valid), nil
}

func (a *decSumAcc) MemoryUsage() int64 { return int64(24*cap(a.st)) + a.rows.memoryUsage() }

// checkMapping verifies that a Merge mapping covers the other accumulator's groups and
// points at groups that exist.
func checkMapping(s Spec, mapping []uint32, otherGroups, groups int) error {
	if len(mapping) < otherGroups {
		return errs.New(errs.Internal, "BUG: merging %d groups of %s with a mapping of %d", otherGroups, s, len(mapping))
	}
	for _, g := range mapping[:otherGroups] {
		if int(g) >= groups {
			return errs.New(errs.Internal, "BUG: merging %s into group %d of %d", s, g, groups)
		}
	}
	return nil
}
