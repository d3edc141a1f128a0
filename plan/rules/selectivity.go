package rules

import (
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/stats"
)

// statsSelectivity estimates the fraction of a scan's rows a filter keeps from the
// table's statistics record, current or stale (SPEC §5): each conjunct with a
// storage form is judged by the record (stats.Record.Selectivity), an OR as a + b −
// ab, and anything else at 1 — a record never understates. ok is false when the
// filter is not directly over a scan with a record; the caller then guesses.
func statsSelectivity(f *plan.Filter) (sel float64, ok bool) {
	s, isScan := f.Input.(*plan.Scan)
	if !isScan || s.Ref.Stats == nil {
		return 0, false
	}
	sel = 1
	// Bounds on one column are one range, not independent conditions: x >= a AND
	// x < b keeps the rows between, P(x < b) − P(x < a), where the product would
	// keep P(x >= a)·P(x < b) (a quarter of a year of orders is not a fifth of them).
	type bounds struct {
		lo, hi       float64 // the tightest lower and upper bound's selectivity
		hasLo, hasHi bool
	}
	var cols []string
	ranges := map[string]*bounds{}
	for _, c := range plan.Conjuncts(f.Cond) {
		p, isPred := predicate(s, c)
		lower, upper := p.Op == ">" || p.Op == ">=", p.Op == "<" || p.Op == "<="
		if !isPred || (!lower && !upper) {
			sel *= judge(s, c)
			continue
		}
		b := ranges[p.Column]
		if b == nil {
			b = &bounds{lo: 1, hi: 1}
			ranges[p.Column] = b
			cols = append(cols, p.Column)
		}
		j := s.Ref.Stats.Selectivity(p)
		if lower {
			b.lo, b.hasLo = min(b.lo, j), true
		} else {
			b.hi, b.hasHi = min(b.hi, j), true
		}
	}
	for _, col := range cols {
		b := ranges[col]
		if !b.hasLo || !b.hasHi {
			sel *= min(b.lo, b.hi)
			continue
		}
		// Each bound's selectivity counts the non-NULL rows on its side; the two
		// sides overlap in the range and together cover the non-NULL rows once more.
		nonNull := s.Ref.Stats.Selectivity(source.Predicate{Column: col, Op: "is_not_null"})
		sel *= max(b.lo+b.hi-nonNull, 0)
	}
	return sel, true
}

// judge is the selectivity of one conjunct over scan s.
func judge(s *plan.Scan, e plan.Expr) float64 {
	if ds := plan.Disjuncts(e); len(ds) > 1 {
		out := 0.0
		for _, d := range ds {
			j := 1.0
			for _, c := range plan.Conjuncts(d) {
				j *= judge(s, c)
			}
			out = stats.Or(out, j)
		}
		return out
	}
	if p, ok := predicate(s, e); ok {
		return s.Ref.Stats.Selectivity(p)
	}
	return stats.Unjudged
}
