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
	// Each branch's conjuncts are looked up by their text in a map: comparing each
	// with every other would be quadratic in a long branch.
	sets := make([][]plan.Expr, len(branches))
	keys := make([]map[string]bool, len(branches))
	for i, b := range branches {
		sets[i] = plan.Conjuncts(b)
		keys[i] = make(map[string]bool, len(sets[i]))
		for _, e := range sets[i] {
			keys[i][e.String()] = true
		}
	}
	var common []plan.Expr
	shared := exprSet{}
	for _, cand := range sets[0] {
		key := cand.String()
		inAll := true
		for _, k := range keys[1:] {
			if !k[key] {
				inAll = false
				break
			}
		}
		if inAll && !shared[key] {
			shared[key] = true
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
			if !shared[e.String()] {
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

// exprSet holds expressions by their text: a list kept free of repeats through it
// costs O(n), where comparing each new expression with all before it is O(n²).
type exprSet map[string]bool

// add adds e and reports whether it was not there yet.
func (s exprSet) add(e plan.Expr) bool {
	k := e.String()
	if s[k] {
		return false
	}
	s[k] = true
	return true
}
