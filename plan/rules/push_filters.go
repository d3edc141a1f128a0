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
			switch sideOf(c, nl) {
			case sideLeft, sideNone:
				if x.Kind == plan.InnerJoin || x.Kind == plan.CrossJoin || x.Kind == plan.LeftJoin ||
					x.Kind == plan.SemiJoin || x.Kind == plan.AntiJoin {
					left = append(left, c)
					continue
				}
			case sideRight:
				if x.Kind == plan.InnerJoin || x.Kind == plan.CrossJoin || x.Kind == plan.RightJoin {
					right = append(right, plan.ShiftColumns(c, -nl))
					continue
				}
			case sideBoth:
				if x.Kind == plan.InnerJoin || x.Kind == plan.CrossJoin {
					addJoinCondition(x, c)
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

// addJoinCondition adds c (over left ++ right) to an inner or cross join, as a key
// pair when it is an equality between the two inputs.
func addJoinCondition(j *plan.Join, c plan.Expr) {
	nl := len(j.Left.Columns())
	if call, ok := c.(*plan.Call); ok && call.Fn.Name == "=" && len(call.Args) == 2 {
		a, b := sideOf(call.Args[0], nl), sideOf(call.Args[1], nl)
		if a == sideLeft && b == sideRight {
			j.LeftKeys = append(j.LeftKeys, call.Args[0])
			j.RightKeys = append(j.RightKeys, plan.ShiftColumns(call.Args[1], -nl))
			j.Kind = plan.InnerJoin
			return
		}
		if a == sideRight && b == sideLeft {
			j.LeftKeys = append(j.LeftKeys, call.Args[1])
			j.RightKeys = append(j.RightKeys, plan.ShiftColumns(call.Args[0], -nl))
			j.Kind = plan.InnerJoin
			return
		}
	}
	if j.Residual == nil {
		j.Residual = c
	} else {
		j.Residual = plan.AndAll([]plan.Expr{j.Residual, c})
	}
	j.Kind = plan.InnerJoin
}

type side int

const (
	sideNone side = iota
	sideLeft
	sideRight
	sideBoth
)

func sideOf(e plan.Expr, nl int) side {
	s := sideNone
	plan.WalkExpr(e, func(x plan.Expr) {
		if c, ok := x.(*plan.ColRef); ok {
			if c.Idx < nl {
				s |= sideLeft
			} else {
				s |= sideRight
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
