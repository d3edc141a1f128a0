package rules

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

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
		// The filter's own conjuncts first: they may guard what those from above
		// compute (a cast of the rows they let through).
		return pushInto(x.Input, append(plan.Conjuncts(x.Cond), conds...))
	case *plan.Join:
		forSubqueries(x, PushFilters)
		nl := len(x.Left.Columns())
		simplifyOuterJoin(x, conds, nl)
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
	case *plan.Project:
		forSubqueries(x, PushFilters)
		var below, keep []plan.Expr
		for _, c := range conds {
			if d, ok := throughProject(c, x.Exprs); ok {
				below = append(below, d)
			} else {
				keep = append(keep, c)
			}
		}
		x.Input = pushInto(x.Input, below)
		return wrap(x, keep)
	case *plan.Aggregate:
		forSubqueries(x, PushFilters)
		var below, keep []plan.Expr
		groupsOnly := func(e plan.Expr) bool { _, ok := throughAggregate(e, x); return ok }
		for _, c := range conds {
			if d, ok := throughAggregate(c, x); ok {
				below = append(below, d)
				continue
			}
			keep = append(keep, c)
			// What an OR implies on the groups alone goes down (the OR stays):
			// (year = 2001 AND total > 0) OR year = 2002 keeps only those years.
			if movable(c) {
				if imp := implied(c, groupsOnly); imp != nil {
					if d, ok := throughAggregate(imp, x); ok {
						below = append(below, d)
					}
				}
			}
		}
		x.Input = pushInto(x.Input, below)
		return wrap(x, keep)
	case *plan.Sort:
		below, keep := split(conds, movable)
		x.Input = pushInto(x.Input, below)
		return wrap(x, keep)
	case *plan.Distinct:
		below, keep := split(conds, movable)
		x.Input = pushInto(x.Input, below)
		return wrap(x, keep)
	case *plan.SetOp:
		// A row is in the result of UNION, INTERSECT or EXCEPT only if it is in an
		// input with the same values: a condition on the values holds on both.
		both, keep := split(conds, func(c plan.Expr) bool {
			return movable(c) && sameTypes(c, x.Cols, x.Left.Columns()) && sameTypes(c, x.Cols, x.Right.Columns())
		})
		x.Left = pushInto(x.Left, both)
		x.Right = pushInto(x.Right, both)
		return wrap(x, keep)
	}
	n = PushFilters(n)
	return wrap(n, conds)
}

// simplifyOuterJoin turns an outer join into the join that keeps fewer unmatched
// rows when a condition above it rejects the NULLs those rows carry: a LEFT JOIN
// under `right.x > 5` keeps only matched rows, so it is an inner join (whose
// conditions then go down to both inputs); a FULL JOIN under a condition on one side
// keeps only that side's rows.
func simplifyOuterJoin(x *plan.Join, conds []plan.Expr, nl int) {
	if x.Kind != plan.LeftJoin && x.Kind != plan.RightJoin && x.Kind != plan.FullJoin {
		return
	}
	var leftRejected, rightRejected bool
	for _, c := range conds {
		if pinned(c) {
			continue
		}
		l, r := rejectsNulls(c, nl)
		leftRejected, rightRejected = leftRejected || l, rightRejected || r
	}
	switch {
	case x.Kind == plan.LeftJoin && rightRejected, x.Kind == plan.RightJoin && leftRejected,
		x.Kind == plan.FullJoin && leftRejected && rightRejected:
		x.Kind = plan.InnerJoin
	case x.Kind == plan.FullJoin && rightRejected:
		x.Kind = plan.RightJoin
	case x.Kind == plan.FullJoin && leftRejected:
		x.Kind = plan.LeftJoin
	}
}

// rejectsNulls reports whether conjunct c is false or NULL on every row whose left
// columns (those below nl) are all NULL, and on every row whose right ones are: a
// comparison, or IS NOT NULL, of a column (through casts) of that side.
func rejectsNulls(c plan.Expr, nl int) (left, right bool) {
	call, ok := c.(*plan.Call)
	if !ok {
		return false, false
	}
	var args []plan.Expr
	switch call.Fn.Name {
	case "=", "<>", "<", "<=", ">", ">=":
		args = call.Args
	case "is_not_null":
		args = call.Args[:1]
	default:
		return false, false
	}
	for _, a := range args {
		for {
			cast, isCast := a.(*plan.Cast)
			if !isCast {
				break
			}
			a = cast.E
		}
		if r, isRef := a.(*plan.ColRef); isRef {
			if r.Idx < nl {
				left = true
			} else {
				right = true
			}
		}
	}
	return left, right
}

// split divides conds into those ok accepts and the others, in order.
func split(conds []plan.Expr, ok func(plan.Expr) bool) (yes, no []plan.Expr) {
	for _, c := range conds {
		if ok(c) {
			yes = append(yes, c)
		} else {
			no = append(no, c)
		}
	}
	return yes, no
}

// movable reports whether conjunct c may be evaluated on other rows than those it
// was written over, before the operators between: it holds no subquery (a
// correlated one, or one evaluated per row, belongs where it was written).
func movable(c plan.Expr) bool {
	return !pinned(c) && !HasSubquery(c)
}

// throughProject returns conjunct c, over the columns of a projection, over the
// projection's input instead: each column replaced by the expression that makes it.
func throughProject(c plan.Expr, exprs []plan.Expr) (plan.Expr, bool) {
	if !movable(c) {
		return nil, false
	}
	ok := true
	out, _ := plan.MapExpr(c, func(e plan.Expr) (plan.Expr, error) {
		r, isRef := e.(*plan.ColRef)
		if !isRef {
			return e, nil
		}
		src := exprs[r.Idx]
		if _, unused := src.(*plan.Unused); unused || HasSubquery(src) || pinned(src) {
			ok = false
		}
		return src, nil
	})
	return out, ok
}

// throughAggregate returns conjunct c, over the columns of an aggregate, over the
// aggregate's input, when it reads only groups: a group is kept or dropped whole, so
// its rows may be dropped before they are aggregated. With grouping sets, only
// groups every set keeps qualify (a set that leaves a group out makes it NULL). An
// aggregate that makes a row of no rows (without groups, or with the empty grouping
// set) keeps every condition above it.
func throughAggregate(c plan.Expr, x *plan.Aggregate) (plan.Expr, bool) {
	if !movable(c) || len(x.Seeds) > 0 || len(x.Groups) == 0 {
		// An aggregate without groups makes its one row from no rows too.
		return nil, false
	}
	for _, set := range x.Sets {
		if len(set) == 0 {
			return nil, false // nor does the empty grouping set
		}
	}
	used := map[int]bool{}
	plan.ColumnsUsed(c, used)
	for i := range used {
		if i >= len(x.Groups) {
			return nil, false
		}
		for _, set := range x.Sets {
			if !slices.Contains(set, i) {
				return nil, false
			}
		}
	}
	return throughProject(c, x.Groups)
}

// sameTypes reports whether the columns c reads have the same types in cols and in.
func sameTypes(c plan.Expr, cols, in []plan.Column) bool {
	used := map[int]bool{}
	plan.ColumnsUsed(c, used)
	for i := range used {
		if !arrow.TypeEqual(cols[i].Type, in[i].Type) {
			return false
		}
	}
	return true
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

// HasSubquery reports whether e holds a subquery.
func HasSubquery(e plan.Expr) bool {
	found := false
	plan.WalkExpr(e, func(x plan.Expr) {
		switch x.(type) {
		case *plan.Subquery, *plan.InSubquery:
			found = true
		}
	})
	return found
}
