package rules

import (
	"sort"

	"github.com/loredb/lore/plan"
)

// SplitOr puts before an OR in a filter directly over a scan what the OR implies on
// each column alone when that has a storage form: the OR
//
//	(status = 'M' AND education = 'College') OR (status = 'S' AND education = 'Primary')
//
// implies status IN ('M', 'S') and education IN ('College', 'Primary'), which run
// first — once per dictionary value of a dictionary column, before the other columns
// are decoded — and prune the scan; the OR stays after them and decides.
func SplitOr(n plan.Node) plan.Node {
	if f, ok := n.(*plan.Filter); ok {
		if s, ok := f.Input.(*plan.Scan); ok {
			f.Cond = splitOr(s, f.Cond)
			return f
		}
	}
	return mapInputs(n, SplitOr)
}

func splitOr(s *plan.Scan, cond plan.Expr) plan.Expr {
	conjuncts := plan.Conjuncts(cond)
	seen := exprSet{}
	for _, c := range conjuncts {
		seen.add(c)
	}
	var first []plan.Expr
	for _, c := range conjuncts {
		if len(plan.Disjuncts(c)) < 2 || HasSubquery(c) {
			continue
		}
		cols := make([]int, 0, 4)
		for k := range columnsOf(c) {
			cols = append(cols, k)
		}
		sort.Ints(cols)
		for _, k := range cols {
			only := func(x plan.Expr) bool {
				used := columnsOf(x)
				return len(used) == 1 && used[k] && !HasSubquery(x)
			}
			p := implied(c, only)
			if p == nil {
				continue
			}
			if _, ok := predicate(s, p); ok && seen.add(p) {
				first = append(first, p)
			}
		}
	}
	if len(first) == 0 {
		return cond
	}
	return plan.AndAll(append(first, conjuncts...))
}
