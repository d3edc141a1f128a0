package rules

import (
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// Verdict is what a zone's statistics say of a predicate over the zone's rows
// (DESIGN.md §3): no row can satisfy it, every row does, or it cannot be told.
type Verdict uint8

// The verdicts. Some is the zero value: when unsure, read.
const (
	Some Verdict = iota
	None
	All
)

func (v Verdict) String() string { return [...]string{"some", "none", "all"}[v] }

// ColumnFacts are what a zone's statistics say of one column. Min and Max need not be
// values of the zone, only bounds on them (a truncated string bound is one), but they
// must hold every non-null value except NaN, which MayHaveNaN accounts for.
type ColumnFacts struct {
	Rows       int64
	Nulls      int64 // -1 when unknown
	Min, Max   types.Value
	Bounded    bool // Min and Max are set
	MayHaveNaN bool // a floating column whose NaNs (greater than every number) the bounds leave out
}

// Classify judges the filter e over a scan's zone, whose facts about scan column i
// are facts(i) (ok false when nothing is known). It follows SQL's three-valued logic:
// a row counts as satisfying only when e is TRUE, so NULLs make a comparison's zone
// Some unless its null count is known to be zero. Comparisons with literals, IN lists,
// IS [NOT] NULL, AND, OR and NOT are judged; anything else is Some.
func Classify(s *plan.Scan, e plan.Expr, facts func(col int) (ColumnFacts, bool)) Verdict {
	switch x := e.(type) {
	case *plan.Call:
		switch x.Fn.Name {
		case "and":
			out := All
			for _, c := range plan.Conjuncts(e) {
				switch Classify(s, c, facts) {
				case None:
					return None
				case Some:
					out = Some
				}
			}
			return out
		case "or":
			out := None
			for _, d := range plan.Disjuncts(e) {
				switch Classify(s, d, facts) {
				case All:
					return All
				case Some:
					out = Some
				}
			}
			return out
		case "not":
			if len(x.Args) != 1 {
				return Some
			}
			// NOT p is TRUE exactly where p is FALSE. It is All when p is None with no
			// NULL to hide behind. It is None when p is never FALSE: when p holds for
			// every row as if its NULLs were values within the bounds — a NULL then
			// makes p NULL or TRUE, never FALSE (three-valued logic is monotone), as
			// long as p does not test for NULL itself.
			if Classify(s, x.Args[0], facts) == None && nullFree(x.Args[0], facts) {
				return All
			}
			if testsNull(x.Args[0]) {
				return Some
			}
			noNulls := func(col int) (ColumnFacts, bool) {
				f, ok := facts(col)
				if ok && f.Nulls > 0 && f.Nulls < f.Rows {
					f.Nulls = 0
				}
				return f, ok
			}
			if Classify(s, x.Args[0], noNulls) == All {
				return None
			}
			return Some
		}
	}
	p, ok := predicate(s, e)
	if !ok {
		return Some
	}
	col, ok := columnOf(e)
	if !ok {
		return Some
	}
	f, ok := facts(col)
	if !ok {
		return Some
	}
	return judgeFacts(p, f)
}

// columnOf is the scan column a storage-form predicate reads.
func columnOf(e plan.Expr) (int, bool) {
	switch x := e.(type) {
	case *plan.Call:
		for _, a := range x.Args {
			if c, ok := a.(*plan.ColRef); ok {
				return c.Idx, true
			}
		}
	case *plan.InList:
		if c, ok := x.E.(*plan.ColRef); ok {
			return c.Idx, true
		}
	}
	return 0, false
}

// testsNull reports whether e asks whether something is NULL.
func testsNull(e plan.Expr) bool {
	found := false
	plan.WalkExpr(e, func(x plan.Expr) {
		if c, ok := x.(*plan.Call); ok && (c.Fn.Name == "is_null" || c.Fn.Name == "is_not_null") {
			found = true
		}
	})
	return found
}

// nullFree reports whether every column e reads is known to hold no NULL in the zone.
func nullFree(e plan.Expr, facts func(col int) (ColumnFacts, bool)) bool {
	free := true
	plan.WalkExpr(e, func(x plan.Expr) {
		if c, ok := x.(*plan.ColRef); ok {
			if f, ok := facts(c.Idx); !ok || f.Nulls != 0 {
				free = false
			}
		}
	})
	return free
}

// judgeFacts judges one storage-form predicate against one column's facts.
func judgeFacts(p source.Predicate, f ColumnFacts) Verdict {
	allNull := f.Nulls >= 0 && f.Nulls == f.Rows
	noNulls := f.Nulls == 0
	switch p.Op {
	case "is_null":
		switch {
		case noNulls:
			return None
		case allNull:
			return All
		}
		return Some
	case "is_not_null":
		switch {
		case allNull:
			return None
		case noNulls:
			return All
		}
		return Some
	}
	if allNull {
		return None // a comparison with NULL is never TRUE
	}
	if !f.Bounded {
		return Some
	}
	lo, hi := f.Min, f.Max
	// cmp orders a literal against a bound; types that do not compare are unsure.
	below := func(v, b types.Value) bool { return types.Compare(v, b) < 0 }
	above := func(v, b types.Value) bool { return !f.MayHaveNaN && types.Compare(v, b) > 0 }
	single := !f.MayHaveNaN && types.Compare(lo, hi) == 0
	all := func(cond bool) Verdict {
		if cond && noNulls {
			return All
		}
		return Some
	}
	switch p.Op {
	case "=":
		v := p.Values[0]
		if below(v, lo) || above(v, hi) {
			return None
		}
		return all(single && types.Compare(v, lo) == 0)
	case "<>":
		v := p.Values[0]
		if single && types.Compare(v, lo) == 0 {
			return None
		}
		return all(below(v, lo) || above(v, hi))
	case "<":
		v := p.Values[0]
		if types.Compare(lo, v) >= 0 {
			return None
		}
		return all(above(v, hi))
	case "<=":
		v := p.Values[0]
		if types.Compare(lo, v) > 0 {
			return None
		}
		return all(!f.MayHaveNaN && types.Compare(hi, v) <= 0)
	case ">":
		v := p.Values[0]
		if !f.MayHaveNaN && types.Compare(hi, v) <= 0 {
			return None
		}
		return all(below(v, lo))
	case ">=":
		v := p.Values[0]
		if !f.MayHaveNaN && types.Compare(hi, v) < 0 {
			return None
		}
		return all(types.Compare(lo, v) >= 0)
	case "in":
		none := true
		for _, v := range p.Values {
			if !(below(v, lo) || above(v, hi)) {
				none = false
			}
		}
		if none {
			return None
		}
		if single {
			for _, v := range p.Values {
				if types.Compare(v, lo) == 0 {
					return all(true)
				}
			}
		}
	}
	return Some
}
