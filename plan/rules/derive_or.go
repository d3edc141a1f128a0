package rules

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
)

// implied returns a predicate that holds on every row where e is true and that is
// built only from sub-expressions own accepts, or nil when e implies none. It serves
// PushFilters: an OR across the inputs of a join, such as
//
//	(n1.name = 'FRANCE' AND n2.name = 'GERMANY') OR (n1.name = 'GERMANY' AND n2.name = 'FRANCE')
//
// cannot go below the join, but implies n1.name IN ('FRANCE', 'GERMANY') on one input
// and the same on the other, which can; the OR itself stays above.
//
// An expression own accepts implies itself; a conjunction implies the conjunction of
// what its parts imply; a disjunction implies the disjunction of what its branches
// imply, only when every branch implies something. Nothing else is looked into: the
// derived predicate is weaker than e but never wrong, with NULLs too, because a row
// where e is true has a true conjunct (or branch) wherever the rewrite keeps one.
func implied(e plan.Expr, own func(plan.Expr) bool) plan.Expr {
	if own(e) {
		return e
	}
	c, ok := e.(*plan.Call)
	if !ok || len(c.Args) != 2 {
		return nil
	}
	switch c.Fn.Name {
	case "and":
		var parts []plan.Expr
		for _, x := range plan.Conjuncts(e) {
			if p := implied(x, own); p != nil {
				parts = append(parts, p)
			}
		}
		return plan.AndAll(parts)
	case "or":
		var branches []plan.Expr
		seen := exprSet{}
		for _, x := range plan.Disjuncts(e) {
			p := implied(x, own)
			if p == nil {
				return nil // a branch that says nothing about these columns: no bound
			}
			if seen.add(p) {
				branches = append(branches, p)
			}
		}
		if in := asInList(branches); in != nil {
			return in
		}
		return plan.OrAll(branches)
	}
	return nil
}

// asInList rewrites branches that each compare the same expression with literals
// (x = a, x IN (b, c)) as one x IN (a, b, c), the form scans prune with; nil when
// they do not all have that shape.
func asInList(branches []plan.Expr) *plan.InList {
	if len(branches) < 2 {
		return nil
	}
	var subject plan.Expr
	var subjectKey string
	var items []plan.Expr
	seen := exprSet{}
	for _, b := range branches {
		var x plan.Expr
		var lits []plan.Expr
		switch t := b.(type) {
		case *plan.Call:
			if t.Fn.Name != "=" || len(t.Args) != 2 {
				return nil
			}
			x, lits = t.Args[0], t.Args[1:]
			if _, ok := x.(*plan.Literal); ok {
				x, lits = t.Args[1], t.Args[:1]
			}
		case *plan.InList:
			if t.Not {
				return nil
			}
			x, lits = t.E, t.List
		default:
			return nil
		}
		if subject == nil {
			subject, subjectKey = x, x.String()
		} else if x.String() != subjectKey {
			return nil
		}
		for _, l := range lits {
			lit, ok := l.(*plan.Literal)
			if !ok || lit.V.Null || !arrow.TypeEqual(types.Unwrap(lit.V.Type), types.Unwrap(subject.Type())) {
				return nil
			}
			if seen.add(l) {
				items = append(items, l)
			}
		}
	}
	if _, ok := subject.(*plan.Literal); ok {
		return nil
	}
	return &plan.InList{E: subject, List: items}
}

// impliedOn returns the predicates that conjunct c implies on the left and on the
// right input of a join with nl left columns (nil where none); the right one is over
// the right input's own columns. Only disjunctions that read both inputs imply
// anything new: a conjunct over one input is pushed whole.
func impliedOn(c plan.Expr, nl int) (left, right plan.Expr) {
	if len(plan.Disjuncts(c)) < 2 || plan.SideOf(c, nl) != plan.SideBoth || HasSubquery(c) {
		return nil, nil
	}
	side := func(s plan.Side) func(plan.Expr) bool {
		return func(x plan.Expr) bool { return plan.SideOf(x, nl) == s }
	}
	left = implied(c, side(plan.SideLeft))
	if right = implied(c, side(plan.SideRight)); right != nil {
		right = plan.ShiftColumns(right, -nl)
	}
	return left, right
}
