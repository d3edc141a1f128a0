// Package rules rewrites logical plans without changing their results: each rule in
// its own file does one job. Optimize runs them in order.
package rules

import "github.com/loredb/lore/plan"

// Optimize applies every rule to n and returns the rewritten plan.
func Optimize(n plan.Node) plan.Node {
	n = optimizeTree(n)
	root := n
	// Each shared plan is optimized once, on its own, with every column it produces
	// needed, after its readers' filters narrow it (PushIntoShared); those that
	// ShareSubplans makes of optimized subplans are not optimized again.
	done, made := map[*plan.Shared]bool{}, map[*plan.Shared]bool{}
	for _, s := range ShareSubplans(n) {
		made[s] = true
	}
	var walk func(plan.Node)
	walk = func(n plan.Node) {
		if s, ok := n.(*plan.Shared); ok && !done[s] {
			done[s] = true
			if !made[s] {
				PushIntoShared(s, root)
				s.Input = optimizeTree(s.Input)
			}
			walk(s.Input)
		}
		if r, ok := n.(*plan.RecursiveCTE); ok {
			r.Anchor, r.Step = optimizeTree(r.Anchor), optimizeTree(r.Step)
			walk(r.Anchor)
			walk(r.Step)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
		plan.ForEachSubquery(n, walk)
	}
	walk(n)
	return n
}

func optimizeTree(n plan.Node) plan.Node {
	n = UnwrapCasts(n)
	n = FactorOr(n)
	n = PushFilters(n)
	n = PushSemiJoins(n)
	n = ReorderJoins(n)
	n = SplitOr(n)
	n = ScanPredicates(n)
	n = ChooseBuildSides(n)
	PruneColumns(n)
	return n
}

// mapInputs rebuilds the inputs of n with f (used by top-down rules).
func mapInputs(n plan.Node, f func(plan.Node) plan.Node) plan.Node {
	switch x := n.(type) {
	case *plan.Filter:
		x.Input = f(x.Input)
	case *plan.Project:
		x.Input = f(x.Input)
	case *plan.Aggregate:
		x.Input = f(x.Input)
	case *plan.Join:
		x.Left, x.Right = f(x.Left), f(x.Right)
	case *plan.Sort:
		x.Input = f(x.Input)
	case *plan.Limit:
		x.Input = f(x.Input)
	case *plan.LimitPercent:
		x.Input = f(x.Input)
	case *plan.Distinct:
		x.Input = f(x.Input)
	case *plan.SetOp:
		x.Left, x.Right = f(x.Left), f(x.Right)
	case *plan.Window:
		x.Input = f(x.Input)
	case *plan.Unnest:
		x.Input = f(x.Input)
	}
	forSubqueries(n, f)
	return n
}

// forSubqueries applies f to the plans of the scalar subqueries in n's expressions.
func forSubqueries(n plan.Node, f func(plan.Node) plan.Node) {
	visit := func(e plan.Expr) {
		plan.WalkExpr(e, func(x plan.Expr) {
			switch s := x.(type) {
			case *plan.Subquery:
				s.Plan = f(s.Plan)
			case *plan.InSubquery:
				s.Plan = f(s.Plan)
			}
		})
	}
	switch x := n.(type) {
	case *plan.Filter:
		visit(x.Cond)
	case *plan.Project:
		for _, e := range x.Exprs {
			visit(e)
		}
	case *plan.Join:
		if x.Residual != nil {
			visit(x.Residual)
		}
	}
}
