package stats

import (
	"math"

	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// Cardinality estimation from a record, current or stale (SPEC §5). Estimates never
// understate what they cannot judge: an unknown selectivity is 1.

// Unjudged is the selectivity of a predicate the record cannot judge.
const Unjudged = 1.0

// Selectivity estimates the fraction of the table's rows for which p holds: equality
// and IN from the distinct count (exact if on record, else the sketch's estimate, else
// the floor the writers stated),
// ranges from the quantile sketch or interpolated between min and max, null tests
// from the null count.
func (r *Record) Selectivity(p source.Predicate) float64 {
	sel, _ := r.Judge(p)
	return sel
}

// Judge is Selectivity, and whether the record judged p (false: Unjudged).
func (r *Record) Judge(p source.Predicate) (float64, bool) {
	c := r.Column(p.Column)
	if c == nil || r.Rows <= 0 {
		return Unjudged, false
	}
	rows := float64(r.Rows)
	nullFrac := -1.0
	if c.NullCount != nil {
		nullFrac = clamp(float64(*c.NullCount) / rows)
	}
	switch p.Op {
	case "is_null":
		if nullFrac < 0 {
			return Unjudged, false
		}
		return nullFrac, true
	case "is_not_null":
		if nullFrac < 0 {
			return Unjudged, false
		}
		return 1 - nullFrac, true
	case "=", "in":
		d := r.distinct(c)
		if d <= 0 {
			return Unjudged, false
		}
		k := float64(max(len(p.Values), 1))
		return clamp(k / d * nonNull(nullFrac)), true
	case "<>":
		d := r.distinct(c)
		if d <= 0 {
			return Unjudged, false
		}
		return clamp((1 - 1/d) * nonNull(nullFrac)), true
	case "<", "<=", ">", ">=":
		if len(p.Values) != 1 {
			return Unjudged, false
		}
		x, ok := KLLValue(p.Values[0])
		if !ok {
			return Unjudged, false
		}
		below, ok := r.rankBelow(c, x)
		if !ok {
			return Unjudged, false
		}
		frac := below
		if p.Op == ">" || p.Op == ">=" {
			frac = 1 - below
		}
		return clamp(frac * nonNull(nullFrac)), true
	}
	return Unjudged, false
}

// Or combines the selectivities of two independent disjuncts.
func Or(a, b float64) float64 { return clamp(a + b - a*b) }

// distinct is a column's distinct count: exact if on record, else the HLL estimate,
// else the floor the writers' counts give, else 0 (unknown).
func (r *Record) distinct(c *Column) float64 {
	if c.DistinctExact != nil {
		return float64(*c.DistinctExact)
	}
	if c.Distinct != nil {
		h := NewHLL()
		if h.UnmarshalBinary(c.Distinct) == nil {
			return math.Max(h.Estimate(), 1)
		}
	}
	if c.DistinctFloor != nil {
		return float64(*c.DistinctFloor)
	}
	return 0
}

// rankBelow is the fraction of the column's non-null values below x: from the KLL
// sketch when on record, else by linear interpolation between the bounds.
func (r *Record) rankBelow(c *Column, x float64) (float64, bool) {
	if c.Quantiles != nil {
		k := NewKLL()
		if k.UnmarshalBinary(c.Quantiles) == nil && k.N() > 0 {
			return k.Rank(x), true
		}
	}
	if c.Min == nil || c.Max == nil {
		return 0, false
	}
	dt, err := types.Parse(c.DataType)
	if err != nil {
		return 0, false
	}
	codec, ok := CodecFor(dt)
	if !ok {
		return 0, false
	}
	lo, err1 := codec.Decode(c.Min)
	hi, err2 := codec.Decode(c.Max)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	l, ok1 := KLLValue(lo)
	h, ok2 := KLLValue(hi)
	if !ok1 || !ok2 {
		return 0, false
	}
	switch {
	case x < l:
		return 0, true
	case x >= h:
		return 1, true
	case h == l:
		return 0.5, true
	}
	return (x - l) / (h - l), true
}

func nonNull(nullFrac float64) float64 {
	if nullFrac < 0 {
		return 1
	}
	return 1 - nullFrac
}

func clamp(f float64) float64 {
	switch {
	case f != f || f > 1:
		return 1
	case f < 0:
		return 0
	}
	return f
}
