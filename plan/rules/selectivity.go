package rules

import (
	"github.com/loredb/lore/plan"
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
	for _, c := range plan.Conjuncts(f.Cond) {
		sel *= judge(s, c)
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
