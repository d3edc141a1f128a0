package rules

import (
	"github.com/loredb/lore/plan"
)

// PushFilters moves filter conjuncts as close to the scans as they can go: through
// other filters and into the inputs of joins (both inputs of inner and cross joins,
// the preserved input of left joins, the left input of semi and anti joins), and
// turns equalities across the inputs of a cross or inner join into join keys.
//
// A join's own condition gives up the conjuncts over one input that the join kind
// lets go below it: either input of an inner join, the right (null-supplying) input
// of a left join and the left of a right join (a row that fails them is one without
// a match, exactly as if the input lacked it), the right input of semi and anti
// joins, and the left of a semi join.
//
// A disjunction over both inputs of a join, in a filter or in the join's condition,
// also pushes what it implies on each input (see implied) wherever a conjunct on
// that input could go, and stays where it was.
func PushFilters(n plan.Node) plan.Node {
	switch x := n.(type) {
	case *plan.Filter:
		// The filter's own subqueries are plans too.
		forSubqueries(x, PushFilters)
		return pushInto(x.Input, plan.Conjuncts(x.Cond))
	case *plan.Join:
		return pushInto(x, nil)
	}
	return mapInputs(n, PushFilters)
}

// pushInto places conjuncts (over n's columns) on n or below it.
func pushInto(n plan.Node, conds []plan.Expr) plan.Node {
	switch x := n.(type) {
	case *plan.Filter:
		return pushInto(x.Input, append(conds, plan.Conjuncts(x.Cond)...))
	case *plan.Join:
		forSubqueries(x, PushFilters)
		nl := len(x.Left.Columns())
		var left, right, keep []plan.Expr
		leftSeen, rightSeen := exprSet{}, exprSet{}
		toLeft := func(c plan.Expr) {
			if leftSeen.add(c) {
				left = append(left, c)
			}
		}
		toRight := func(c plan.Expr) { // c over the right input's columns
			if rightSeen.add(c) {
				right = append(right, c)
			}
		}
		// The join's own condition first: what it may give up, and what its
		// disjunctions imply.
		if x.Residual != nil && !x.NullAwareAnti {
			onLeft := x.Kind == plan.InnerJoin || x.Kind == plan.CrossJoin || x.Kind == plan.SemiJoin || x.Kind == plan.RightJoin
			onRight := x.Kind == plan.InnerJoin || x.Kind == plan.CrossJoin || x.Kind == plan.LeftJoin ||
				x.Kind == plan.SemiJoin || x.Kind == plan.AntiJoin
			var stay []plan.Expr
			for _, c := range plan.Conjuncts(x.Residual) {
				side := sideOf(c, nl)
				switch {
				case side == plan.SideLeft && onLeft && !pinned(c):
					toLeft(c)
					continue
				case side == plan.SideRight && onRight && !pinned(c):
					toRight(plan.ShiftColumns(c, -nl))
					continue
				}
				stay = append(stay, c)
				l, r := impliedOn(c, nl)
				if l != nil && onLeft {
					toLeft(l)
				}
				if r != nil && onRight {
					toRight(r)
				}
			}
			x.Residual = plan.AndAll(stay)
		}
		// Then the conjuncts from above.
		belowLeft := x.Kind == plan.InnerJoin || x.Kind == plan.CrossJoin || x.Kind == plan.LeftJoin ||
			x.Kind == plan.SemiJoin || x.Kind == plan.AntiJoin
		belowRight := x.Kind == plan.InnerJoin || x.Kind == plan.CrossJoin || x.Kind == plan.RightJoin
		for _, c := range conds {
			if pinned(c) {
				keep = append(keep, c)
				continue
			}
			switch sideOf(c, nl) {
			case plan.SideLeft, plan.SideNone:
				if belowLeft {
					toLeft(c)
					continue
				}
			case plan.SideRight:
				if belowRight {
					toRight(plan.ShiftColumns(c, -nl))
					continue
				}
			case plan.SideBoth:
				l, r := impliedOn(c, nl)
				if l != nil && belowLeft {
					toLeft(l)
				}
				if r != nil && belowRight {
					toRight(r)
				}
				if x.Kind == plan.InnerJoin || x.Kind == plan.CrossJoin {
					plan.AddJoinCondition(x, c)
					continue
				}
			}
			keep = append(keep, c)
		}
		x.Left = pushInto(x.Left, left)
		x.Right = pushInto(x.Right, right)
		return wrap(x, keep)
	}
	n = PushFilters(n)
	return wrap(n, conds)
}

func wrap(n plan.Node, conds []plan.Expr) plan.Node {
	if len(conds) == 0 {
		return n
	}
	return &plan.Filter{Input: n, Cond: plan.AndAll(conds)}
}

// pinned reports whether conjunct e stays where it is: it holds a subquery other than
// an uncorrelated scalar one. A scalar subquery is one value for the statement, so a
// conjunct comparing a column with it (d_month_seq = (SELECT …)) goes down to the
// scan of that column like one with a literal, and prunes there (ScanPredicates).
func pinned(e plan.Expr) bool {
	found := false
	plan.WalkExpr(e, func(x plan.Expr) {
		switch x.(type) {
		case *plan.InSubquery, *plan.OuterRef:
			found = true
		}
	})
	return found
}

// sideOf is plan.SideOf with uncorrelated scalar subqueries taken for the constants
// they are: it says which inputs of a join with nl left columns e reads.
func sideOf(e plan.Expr, nl int) plan.Side {
	if pinned(e) {
		return plan.SideBoth
	}
	s := plan.SideNone
	plan.WalkExpr(e, func(x plan.Expr) {
		if c, ok := x.(*plan.ColRef); ok {
			if c.Idx < nl {
				s |= plan.SideLeft
			} else {
				s |= plan.SideRight
			}
		}
	})
	return s
}

func hasSubquery(e plan.Expr) bool {
	found := false
	plan.WalkExpr(e, func(x plan.Expr) {
		switch x.(type) {
		case *plan.Subquery, *plan.InSubquery:
			found = true
		}
	})
	return found
}
