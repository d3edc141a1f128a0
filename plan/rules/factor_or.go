package rules

import (
	"github.com/loredb/lore/plan"
)

// FactorOr takes the conjuncts that every branch of an OR shares out of it:
// (a AND b) OR (a AND c) becomes a AND (b OR c). The shared conjuncts can then be
// pushed down or become join keys (TPC-H Q19 joins on a key that each branch repeats).
func FactorOr(n plan.Node) plan.Node {
	switch x := n.(type) {
	case *plan.Filter:
		x.Cond = factor(x.Cond)
	case *plan.Join:
		if x.Residual != nil {
			x.Residual = factor(x.Residual)
		}
	}
	return mapInputs(n, FactorOr)
}

func factor(cond plan.Expr) plan.Expr {
	var out []plan.Expr
	for _, c := range plan.Conjuncts(cond) {
		out = append(out, factorOne(c)...)
	}
	return plan.AndAll(out)
}

// factorOne rewrites one conjunct, returning the conjuncts that replace it.
func factorOne(c plan.Expr) []plan.Expr {
	branches := plan.Disjuncts(c)
	if len(branches) < 2 {
		return []plan.Expr{c}
	}
	sets := make([][]plan.Expr, len(branches))
	for i, b := range branches {
		sets[i] = plan.Conjuncts(b)
	}
	var common []plan.Expr
	for _, cand := range sets[0] {
		key := cand.String()
		inAll := true
		for _, s := range sets[1:] {
			found := false
			for _, e := range s {
				if e.String() == key {
					found = true
					break
				}
			}
			if !found {
				inAll = false
				break
			}
		}
		if inAll && !containsKey(common, key) {
			common = append(common, cand)
		}
	}
	if len(common) == 0 {
		return []plan.Expr{c}
	}
	var rest []plan.Expr
	for _, s := range sets {
		var left []plan.Expr
		for _, e := range s {
			if !containsKey(common, e.String()) {
				left = append(left, e)
			}
		}
		if len(left) == 0 {
			// This branch is only the shared conjuncts: the OR adds nothing.
			return common
		}
		rest = append(rest, plan.AndAll(left))
	}
	return append(common, plan.OrAll(rest))
}

func containsKey(es []plan.Expr, key string) bool {
	for _, e := range es {
		if e.String() == key {
			return true
		}
	}
	return false
}
