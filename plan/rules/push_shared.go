package rules

import "github.com/loredb/lore/plan"

// PushIntoShared narrows a shared plan (a common table expression read several
// times, computed once) to the rows its readers keep: when every reference to s in
// the statement root (its subqueries and the other shared plans it reads included)
// sits right under a filter, the OR of those filters' conditions filters s's input
// too, where the later rules push it down (to the group keys of an aggregate, the
// scans of a join). Each reader keeps its own filter, so it sees the rows it saw
// before. A reference found elsewhere (a recursive CTE), or not under a filter,
// leaves s as it is.
func PushIntoShared(s *plan.Shared, root plan.Node) {
	var conds []plan.Expr
	found, ok := 0, true
	seen := exprSet{}
	walked := map[*plan.Shared]bool{}
	var walk func(n plan.Node)
	walk = func(n plan.Node) {
		for _, in := range n.Inputs() {
			if in != plan.Node(s) {
				walk(in)
				continue
			}
			found++
			f, isFilter := n.(*plan.Filter)
			if !isFilter {
				ok = false
				continue
			}
			var mine []plan.Expr
			for _, c := range plan.Conjuncts(f.Cond) {
				if movable(c) {
					mine = append(mine, c)
				}
			}
			if len(mine) == 0 {
				ok = false
				continue
			}
			if c := plan.AndAll(mine); seen.add(c) {
				conds = append(conds, c)
			}
		}
		if sh, isShared := n.(*plan.Shared); isShared && sh != s && !walked[sh] {
			walked[sh] = true
			walk(sh.Input)
		}
		plan.ForEachSubquery(n, walk)
	}
	if root == plan.Node(s) {
		return
	}
	walk(root)
	if !ok || found != s.Refs || len(conds) == 0 {
		return
	}
	s.Input = &plan.Filter{Input: s.Input, Cond: plan.OrAll(conds)}
}
