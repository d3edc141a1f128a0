package rules

import (
	"github.com/loredb/lore/plan"
)

// PushFilters moves filter conjuncts as close to the scans as they can go: through
// other filters and into the inputs of joins (both inputs of inner and cross joins,
// the preserved input of left joins, the left input of semi and anti joins), and
// turns equalities across the inputs of a cross or inner join into join keys.
func PushFilters(n plan.Node) plan.Node {
	if f, ok := n.(*plan.Filter); ok {
		// The filter's own subqueries are plans too.
		forSubqueries(f, PushFilters)
		return pushInto(f.Input, plan.Conjuncts(f.Cond))
	}
	return mapInputs(n, PushFilters)
}

// pushInto places conjuncts (over n's columns) on n or below it.
func pushInto(n plan.Node, conds []plan.Expr) plan.Node {
	switch x := n.(type) {
	case *plan.Filter:
		return pushInto(x.Input, append(conds, plan.Conjuncts(x.Cond)...))
	case *plan.Join:
		nl := len(x.Left.Columns())
		var left, right, keep []plan.Expr
		for _, c := range conds {
			if hasSubquery(c) {
				keep = append(keep, c)
				continue
			}
			switch plan.SideOf(c, nl) {
			case plan.SideLeft, plan.SideNone:
				if x.Kind == plan.InnerJoin || x.Kind == plan.CrossJoin || x.Kind == plan.LeftJoin ||
					x.Kind == plan.SemiJoin || x.Kind == plan.AntiJoin {
					left = append(left, c)
					continue
				}
			case plan.SideRight:
				if x.Kind == plan.InnerJoin || x.Kind == plan.CrossJoin || x.Kind == plan.RightJoin {
					right = append(right, plan.ShiftColumns(c, -nl))
					continue
				}
			case plan.SideBoth:
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
