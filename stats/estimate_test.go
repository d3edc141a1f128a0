package stats

import (
	"math"
	"testing"

	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

func estimateRecord(t *testing.T) *Record {
	t.Helper()
	codec, _ := CodecFor(types.Int64)
	lo, _ := codec.Encode(types.IntValue(0))
	hi, _ := codec.Encode(types.IntValue(1000))
	nulls, exact := int64(100), int64(50)
	k := NewKLL()
	h := NewHLL()
	for i := 0; i < 900; i++ {
		v := float64(i * i / 900) // skewed towards small values
		k.Add(v)
		h.AddHash(HashValue(types.IntValue(int64(i % 300))))
	}
	kb, _ := k.MarshalBinary()
	hb, _ := h.MarshalBinary()
	return &Record{Rows: 1000, Columns: []Column{
		{Name: "uniform", DataType: "BIGINT", Min: lo, Max: hi, NullCount: new(int64)},
		{Name: "skewed", DataType: "BIGINT", Min: lo, Max: hi, NullCount: &nulls, Quantiles: kb, Distinct: hb},
		{Name: "code", DataType: "BIGINT", DistinctExact: &exact},
		{Name: "blank", DataType: "BIGINT"},
	}}
}

func TestSelectivity(t *testing.T) {
	r := estimateRecord(t)
	p := func(col, op string, vals ...int64) source.Predicate {
		var vs []types.Value
		for _, v := range vals {
			vs = append(vs, types.IntValue(v))
		}
		return source.Predicate{Column: col, Op: op, Values: vs}
	}
	cases := []struct {
		p        source.Predicate
		want     float64
		within   float64
		describe string
	}{
		{p("uniform", "<", 250), 0.25, 0.001, "interpolated between the bounds"},
		{p("uniform", ">=", 900), 0.10, 0.001, "interpolated, upper side"},
		{p("uniform", "<", -5), 0, 0, "below the minimum"},
		{p("skewed", "<", 250), 0.9 * 475 / 900, 0.02, "from the KLL sketch, times the non-null fraction"},
		{p("code", "=", 7), 1.0 / 50, 1e-9, "from the exact distinct count"},
		{p("code", "in", 1, 2, 3), 3.0 / 50, 1e-9, "IN from the exact distinct count"},
		{p("skewed", "=", 3), 0.9 / 300, 0.9 / 300 * 0.05, "from the HLL estimate"},
		{p("skewed", "is_null"), 0.1, 1e-9, "null test from the null count"},
		{p("skewed", "is_not_null"), 0.9, 1e-9, "not-null test from the null count"},
		{p("blank", "=", 3), 1, 0, "nothing known: unjudged"},
		{p("blank", "<", 3), 1, 0, "nothing known: unjudged"},
		{p("nosuch", "=", 3), 1, 0, "unknown column: unjudged"},
	}
	for _, c := range cases {
		if got := r.Selectivity(c.p); math.Abs(got-c.want) > c.within {
			t.Errorf("%s %s %v (%s): %.4f, want %.4f", c.p.Column, c.p.Op, c.p.Values, c.describe, got, c.want)
		}
	}
	if got := Or(0.5, 0.5); got != 0.75 {
		t.Errorf("Or(0.5, 0.5) = %v", got)
	}
}
