package agg

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// shapeFuncs are the aggregates of a distribution's shape over a DOUBLE argument:
// skewness, kurtosis (the sample's excess kurtosis, bias-corrected) and
// kurtosis_pop (the population's excess kurtosis), with DuckDB's formulas. sem (the
// standard error of the mean) is computed by momentAcc.
var shapeFuncs = map[string]bool{"skewness": true, "kurtosis": true, "kurtosis_pop": true}

// shapeResultType is ResultType of skewness, kurtosis, kurtosis_pop, sem and
// weighted_avg; ok is false for another name.
func shapeResultType(s Spec, arg arrow.DataType) (dt arrow.DataType, ok bool, err error) {
	switch {
	case shapeFuncs[s.Name] || s.Name == "sem":
	case s.Name == "weighted_avg":
		if len(s.ArgTypes) != 1 {
			return nil, true, errs.New(errs.Analysis, "%s takes two arguments", s.Name)
		}
		if !types.IsNumeric(types.Unwrap(s.ArgTypes[0])) {
			return nil, true, unsupported(s)
		}
	default:
		return nil, false, nil
	}
	if !types.IsNumeric(arg) {
		return nil, true, unsupported(s)
	}
	return types.Float64, true, nil
}

// shapeAcc keeps per group the count, the mean and the sums of the second, third
// and fourth powers of the deviations from it, updated one value at a time and
// merged by Pébay's formulas: exact in arithmetic and, unlike sums of raw powers,
// stable when the values are far from zero. The statistics are DuckDB's formulas
// over these moments.
type shapeAcc struct {
	spec                Spec
	n, mean, m2, m3, m4 []float64
}

var _ Accumulator = (*shapeAcc)(nil)

func (a *shapeAcc) Resize(n int) {
	a.n, a.mean, a.m2 = extend(a.n, n), extend(a.mean, n), extend(a.m2, n)
	a.m3, a.m4 = extend(a.m3, n), extend(a.m4, n)
}

func (a *shapeAcc) Update(arg arrow.Array, sel []int32, groups []uint32) error {
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
		n1 := a.n[g]
		n := n1 + 1
		d := vals[r] - a.mean[g]
		dn := d / n
		dn2 := dn * dn
		t := d * dn * n1
		a.mean[g] += dn
		a.m4[g] += t*dn2*(n*n-3*n+3) + 6*dn2*a.m2[g] - 4*dn*a.m3[g]
		a.m3[g] += t*dn*(n-2) - 3*dn*a.m2[g]
		a.m2[g] += t
		a.n[g] = n
	}
	return nil
}

func (a *shapeAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*shapeAcc](other, a.spec)
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
		d2 := d * d
		ma2, ma3 := a.m2[g], a.m3[g]
		a.m4[g] += o.m4[j] + d2*d2*na*nb*(na*na-na*nb+nb*nb)/(n*n*n) +
			6*d2*(na*na*o.m2[j]+nb*nb*ma2)/(n*n) + 4*d*(na*o.m3[j]-nb*ma3)/n
		a.m3[g] += o.m3[j] + d2*d*na*nb*(na-nb)/(n*n) + 3*d*(na*o.m2[j]-nb*ma2)/n
		a.m2[g] += o.m2[j] + d2*na*nb/n
		a.mean[g] += d * nb / n
		a.n[g] = n
	}
	return nil
}

func (a *shapeAcc) Final() (arrow.Array, error) {
	out := make([]float64, len(a.n))
	valid := make([]bool, len(a.n))
	for g, n := range a.n {
		v, ok, err := shapeOf(a.spec.Name, n, a.m2[g]/n, a.m3[g]/n, a.m4[g]/n)
		if err != nil {
			return nil, err
		}
		if ok {
			out[g], valid[g] = v, true
		}
	}
	return fixedArray(types.Float64, out, valid), nil
}

// shapeOf is the statistic name of n values with the central moments m2, m3, m4;
// ok is false where it is NULL: too few values, or no spread for the kurtoses (the
// skewness of values without spread is NaN, as in DuckDB). A result that overflows
// is an error.
func shapeOf(name string, n, m2, m3, m4 float64) (float64, bool, error) {
	var v float64
	switch {
	case name == "skewness":
		if n <= 2 {
			return 0, false, nil
		}
		div := math.Sqrt(max(m2*m2*m2, 0))
		if div == 0 {
			return math.NaN(), true, nil
		}
		v = math.Sqrt(n*(n-1)) / (n - 2) * m3 / div
	case n <= 1 || name == "kurtosis" && n <= 3 || !(m2 > 0):
		return 0, false, nil
	default:
		v = m4/(m2*m2) - 3
		if name == "kurtosis" {
			v = (n - 1) * ((n+1)*m4/(m2*m2) - 3*(n-1)) / ((n - 2) * (n - 3))
		}
	}
	return v, true, finite(v, name)
}

func (a *shapeAcc) MemoryUsage() int64 {
	return int64(8 * (cap(a.n) + cap(a.mean) + cap(a.m2) + cap(a.m3) + cap(a.m4)))
}

func (a *shapeAcc) FromZone(*Zone, uint32) (bool, error) { return false, nil }

// weightedAvgAcc is weighted_avg(x, w) over two DOUBLE arguments: the sum of x·w
// over the sum of w, of the rows where both are not NULL (an infinity or NaN when
// the weights add up to zero, as in DuckDB).
type weightedAvgAcc struct {
	spec     Spec
	n        []int64
	xw, wsum []float64
}

var _ MultiArg = (*weightedAvgAcc)(nil)

func (a *weightedAvgAcc) Resize(n int) {
	a.n, a.xw, a.wsum = extend(a.n, n), extend(a.xw, n), extend(a.wsum, n)
}

func (a *weightedAvgAcc) Update(arrow.Array, []int32, []uint32) error { return needsArgs(a.spec) }

func (a *weightedAvgAcc) UpdateArgs(args []arrow.Array, sel []int32, groups []uint32) error {
	ensureGroup0(a, len(a.n), groups)
	return floatPairs(a.spec, args, sel, groups, func(g uint32, x, w float64) {
		a.n[g]++
		a.xw[g] += x * w
		a.wsum[g] += w
	})
}

func (a *weightedAvgAcc) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*weightedAvgAcc](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, len(o.n), len(a.n)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.n)] {
		a.n[g] += o.n[j]
		a.xw[g] += o.xw[j]
		a.wsum[g] += o.wsum[j]
	}
	return nil
}

func (a *weightedAvgAcc) Final() (arrow.Array, error) {
	out := make([]float64, len(a.n))
	valid := make([]bool, len(a.n))
	for g, n := range a.n {
		if n > 0 {
			out[g], valid[g] = a.xw[g]/a.wsum[g], true
		}
	}
	return fixedArray(types.Float64, out, valid), nil
}

func (a *weightedAvgAcc) MemoryUsage() int64 {
	return int64(8 * (cap(a.n) + cap(a.xw) + cap(a.wsum)))
}

func (a *weightedAvgAcc) FromZone(*Zone, uint32) (bool, error) { return false, nil }
