package agg

import (
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// momentAcc is the variance family (var_samp, var_pop, stddev_samp, stddev_pop) over
// a DOUBLE argument: per group the count, the mean and the sum of squared
// deviations from it (Welford's update), which merge exactly by Chan's formula.
type momentAcc struct {
	spec Spec
	n    []float64
	mean []float64
	m2   []float64
}

var _ Accumulator = (*momentAcc)(nil)

func (a *momentAcc) Resize(n int) {
	a.n, a.mean, a.m2 = extend(a.n, n), extend(a.mean, n), extend(a.m2, n)
}

func (a *momentAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	ensureGroup0(a, len(a.n), groups)
	arg = plain(arg)
	x, ok := arg.(*array.Float64)
	if !ok {
		return typeMismatch(a.spec, arg)
	}
	vals := x.Float64Values()
	sp := spanOf(arg, sel, groups)
	for k := 0; k < sp.n; k++ {
		r := sp.row(k)
		if x.IsNull(r) {
			continue
		}
		g := sp.group(k)
		v := vals[r]
		a.n[g]++
		d := v - a.mean[g]
		a.mean[g] += d / a.n[g]
		a.m2[g] += d * (v - a.mean[g])
	}
	return nil
}

func (a *momentAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*momentAcc](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, len(o.n), len(a.n)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.n)] {
		nb := o.n[j]
		if nb == 0 {
			continue
		}
		na := a.n[g]
		n := na + nb
		d := o.mean[j] - a.mean[g]
		a.mean[g] += d * nb / n
		a.m2[g] += o.m2[j] + d*d*na*nb/n
		a.n[g] = n
	}
	return nil
}

func (a *momentAcc) Final() (arrow.Array, error) {
	out := make([]float64, len(a.n))
	valid := make([]bool, len(a.n))
	for g, n := range a.n {
		var v float64
		switch a.spec.Name {
		case "var_pop", "stddev_pop":
			if n < 1 {
				continue
			}
			v = a.m2[g] / n
		case "sem":
			if n < 1 {
				continue
			}
			v = math.Sqrt(a.m2[g]/n) / math.Sqrt(n)
		default:
			if n < 2 {
				continue
			}
			v = a.m2[g] / (n - 1)
		}
		if a.spec.Name == "stddev_pop" || a.spec.Name == "stddev_samp" {
			v = math.Sqrt(v)
		}
		if err := finite(v, a.spec.Name); err != nil {
			return nil, err
		}
		out[g], valid[g] = v, true
	}
	return fixedArray(types.Float64, out, valid), nil
}

// finite is the error, as DuckDB's, for a statistic that came out infinite or NaN
// (its inputs held an infinity or a NaN, or its sums overflowed).
func finite(v float64, what string) error {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return errs.New(errs.Analysis, "%s is out of range", strings.ToUpper(what))
	}
	return nil
}

func (a *momentAcc) MemoryUsage() int64 { return int64(8 * (cap(a.n) + cap(a.mean) + cap(a.m2))) }

func (a *momentAcc) FromZone(*Zone, uint32) (bool, error) { return false, nil }

// comomentAcc is corr, covar_samp, covar_pop and the regr_ functions over two
// DOUBLE arguments (y, x), of the rows where both are not NULL: per group the
// count, both means, both sums of squared deviations and the sum of co-deviations,
// which merge exactly as momentAcc's do.
type comomentAcc struct {
	spec   Spec
	n      []float64
	mx, my []float64
	sxx    []float64
	syy    []float64
	sxy    []float64
}

var _ MultiArg = (*comomentAcc)(nil)

func (a *comomentAcc) Resize(n int) {
	a.n, a.mx, a.my = extend(a.n, n), extend(a.mx, n), extend(a.my, n)
	a.sxx, a.syy, a.sxy = extend(a.sxx, n), extend(a.syy, n), extend(a.sxy, n)
}

func (a *comomentAcc) Update(arrow.Array, []int32, []uint32) error { return needsArgs(a.spec) }

func (a *comomentAcc) UpdateArgs(args []arrow.Array, sel []int32, groups []uint32) error {
	ensureGroup0(a, len(a.n), groups)
	return floatPairs(a.spec, args, sel, groups, func(g uint32, y, x float64) {
		a.n[g]++
		n := a.n[g]
		dx := x - a.mx[g]
		dy := y - a.my[g]
		a.mx[g] += dx / n
		a.my[g] += dy / n
		a.sxx[g] += dx * (x - a.mx[g])
		a.syy[g] += dy * (y - a.my[g])
		a.sxy[g] += dx * (y - a.my[g])
	})
}

// floatPairs calls f with the group and the two DOUBLE arguments of each selected
// row where neither is NULL.
func floatPairs(s Spec, args []arrow.Array, sel []int32, groups []uint32, f func(g uint32, a, b float64)) error {
	aa, ok1 := plain(args[0]).(*array.Float64)
	ba, ok2 := plain(args[1]).(*array.Float64)
	if !ok1 || !ok2 {
		return typeMismatch(s, args[0])
	}
	as, bs := aa.Float64Values(), ba.Float64Values()
	sp := spanOf(aa, sel, groups)
	for k := 0; k < sp.n; k++ {
		r := sp.row(k)
		if aa.IsNull(r) || ba.IsNull(r) {
			continue
		}
		f(sp.group(k), as[r], bs[r])
	}
	return nil
}

func (a *comomentAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*comomentAcc](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, len(o.n), len(a.n)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.n)] {
		nb := o.n[j]
		if nb == 0 {
			continue
		}
		na := a.n[g]
		n := na + nb
		dx := o.mx[j] - a.mx[g]
		dy := o.my[j] - a.my[g]
		f := na * nb / n
		a.sxx[g] += o.sxx[j] + dx*dx*f
		a.syy[g] += o.syy[j] + dy*dy*f
		a.sxy[g] += o.sxy[j] + dx*dy*f
		a.mx[g] += dx * nb / n
		a.my[g] += dy * nb / n
		a.n[g] = n
	}
	return nil
}

func (a *comomentAcc) Final() (arrow.Array, error) {
	if a.spec.Name == "regr_count" {
		out := make([]uint32, len(a.n))
		for g, n := range a.n {
			out[g] = uint32(n)
		}
		return fixedArray(types.Uint32, out, nil), nil
	}
	out := make([]float64, len(a.n))
	valid := make([]bool, len(a.n))
	for g, n := range a.n {
		if n == 0 {
			continue
		}
		covPop := a.sxy[g] / n
		varX, varY := a.sxx[g]/n, a.syy[g]/n
		// The parts DuckDB checks before it divides (a division of zeros may still
		// give NaN, as it does in DuckDB).
		switch a.spec.Name {
		case "corr":
			for _, x := range []float64{covPop, varX, varY} {
				if err := finite(x, "corr"); err != nil {
					return nil, err
				}
			}
		case "covar_pop", "covar_samp", "regr_slope", "regr_intercept", "regr_r2":
			for _, x := range []float64{covPop, varX} {
				if err := finite(x, a.spec.Name); err != nil {
					return nil, err
				}
			}
		}
		var v float64
		switch a.spec.Name {
		case "covar_pop":
			v = covPop
		case "covar_samp":
			if n < 2 {
				continue
			}
			v = a.sxy[g] / (n - 1)
		case "corr":
			v = covPop / (math.Sqrt(varX) * math.Sqrt(varY))
		case "regr_slope":
			v = covPop / varX
		case "regr_intercept":
			slope := covPop / varX
			if math.IsNaN(slope) {
				continue
			}
			v = a.my[g] - slope*a.mx[g]
		case "regr_r2":
			switch {
			case varX == 0:
				continue
			case varY == 0:
				v = 1
			default:
				c := covPop / (math.Sqrt(varX) * math.Sqrt(varY))
				v = c * c
			}
		case "regr_avgx":
			v = a.mx[g]
		case "regr_avgy":
			v = a.my[g]
		case "regr_sxx":
			v = a.sxx[g]
		case "regr_syy":
			v = a.syy[g]
		case "regr_sxy":
			v = a.sxy[g]
		}
		out[g], valid[g] = v, true
	}
	return fixedArray(types.Float64, out, valid), nil
}

func (a *comomentAcc) MemoryUsage() int64 {
	return int64(8 * (cap(a.n) + cap(a.mx) + cap(a.my) + cap(a.sxx) + cap(a.syy) + cap(a.sxy)))
}

func (a *comomentAcc) FromZone(*Zone, uint32) (bool, error) { return false, nil }
