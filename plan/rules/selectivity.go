package rules

import (
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/stats"
)

// statsSelectivity estimates the fraction of a scan's rows a filter keeps from the
// table's statistics record, current or stale (SPEC §5): each conjunct with a
// storage form is judged by the record (stats.Record.Selectivity), an OR as a + b −
// ab, and anything else at 1 — a record never understates. Without a record, a
// filter that compares a column with constants is judged by what the footers say
// (TableRef.Footers): ranges by the columns' bounds, equalities by the distinct
// counts their writers stated, the other conjuncts guessed (see selectivity). ok is
// false when the filter is not directly over a scan with either; the caller then
// guesses.
func statsSelectivity(f *plan.Filter) (sel float64, ok bool) {
	s, isScan := f.Input.(*plan.Scan)
	if !isScan {
		return 0, false
	}
	rec, footers := s.Ref.Stats, false
	if rec == nil {
		if s.Ref.Footers == nil || !hasComparison(s, f.Cond) {
			return 0, false
		}
		if rec = s.Ref.Footers(); rec == nil || rec.Rows <= 0 {
			return 0, false
		}
		footers = true
	}
	sel = 1
	// Bounds on one column are one range, not independent conditions: x >= a AND
	// x < b keeps the rows between, P(x < b) − P(x < a), where the product would
	// keep P(x >= a)·P(x < b) (a quarter of a year of orders is not a fifth of them).
	type colRange struct {
		lo, hi       float64 // the tightest lower and upper bound's selectivity
		hasLo, hasHi bool
	}
	var cols []string
	ranges := map[string]*colRange{}
	for _, c := range plan.Conjuncts(f.Cond) {
		p, isPred := predicate(s, c)
		lower, upper := p.Op == ">" || p.Op == ">=", p.Op == "<" || p.Op == "<="
		switch {
		case isPred && (lower || upper):
		case footers:
			// The footers judge what they state; the rest is guessed, not taken
			// at 1 as a record's gaps are: the guesses are the footers' baseline.
			j, judged := 0.0, false
			if isPred {
				j, judged = rec.Judge(p)
			}
			if !judged {
				j = selectivity(c)
			}
			sel *= j
			continue
		default:
			sel *= judge(rec, s, c)
			continue
		}
		b := ranges[p.Column]
		if b == nil {
			b = &colRange{lo: 1, hi: 1}
			ranges[p.Column] = b
			cols = append(cols, p.Column)
		}
		j := rec.Selectivity(p)
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
		nonNull := rec.Selectivity(source.Predicate{Column: col, Op: "is_not_null"})
		sel *= max(b.lo+b.hi-nonNull, 0)
	}
	return sel, true
}

// hasComparison reports whether a conjunct of cond compares a column of scan s with
// constants: what footers may judge.
func hasComparison(s *plan.Scan, cond plan.Expr) bool {
	for _, c := range plan.Conjuncts(cond) {
		if p, ok := predicate(s, c); ok && p.Op != "is_null" && p.Op != "is_not_null" {
			return true
		}
	}
	return false
}

// judge is the selectivity of one conjunct over scan s by record rec.
func judge(rec *stats.Record, s *plan.Scan, e plan.Expr) float64 {
	if ds := plan.Disjuncts(e); len(ds) > 1 {
		out := 0.0
		for _, d := range ds {
			j := 1.0
			for _, c := range plan.Conjuncts(d) {
				j *= judge(rec, s, c)
			}
			out = stats.Or(out, j)
		}
		return out
	}
	if p, ok := predicate(s, e); ok {
		return rec.Selectivity(p)
	}
	return stats.Unjudged
}
