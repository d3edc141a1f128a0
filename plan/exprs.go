package plan

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
)

// AddJoinCondition adds c, an expression over the left columns followed by the right
// ones, to a join: as a key pair when it is an equality between an expression of each
// input, else to the residual. A cross join becomes an inner join.
func AddJoinCondition(j *Join, c Expr) {
	nl := len(j.Left.Columns())
	if j.Kind == CrossJoin {
		j.Kind = InnerJoin
	}
	if call, ok := c.(*Call); ok && call.Fn.Name == "=" && len(call.Args) == 2 {
		a, b := SideOf(call.Args[0], nl), SideOf(call.Args[1], nl)
		if a == SideLeft && b == SideRight {
			j.LeftKeys = append(j.LeftKeys, call.Args[0])
			j.RightKeys = append(j.RightKeys, ShiftColumns(call.Args[1], -nl))
			return
		}
		if a == SideRight && b == SideLeft {
			j.LeftKeys = append(j.LeftKeys, call.Args[1])
			j.RightKeys = append(j.RightKeys, ShiftColumns(call.Args[0], -nl))
			return
		}
	}
	if j.Residual == nil {
		j.Residual = c
	} else {
		j.Residual = AndAll([]Expr{j.Residual, c})
	}
}

// Side says which inputs of a join an expression reads.
type Side int

// The sides; SideBoth is also the side of an expression with a subquery or an outer
// reference, which no single input can evaluate.
const (
	SideNone Side = iota
	SideLeft
	SideRight
	SideBoth
)

// SideOf says which input of a join an expression over left++right columns reads,
// nl being the number of left columns.
func SideOf(e Expr, nl int) Side {
	s := SideNone
	bad := false
	WalkExpr(e, func(x Expr) {
		switch c := x.(type) {
		case *ColRef:
			if c.Idx < nl {
				s |= SideLeft
			} else {
				s |= SideRight
			}
		case *OuterRef, *Subquery, *InSubquery:
			bad = true
		}
	})
	if bad {
		return SideBoth
	}
	return s
}

// OrAll combines disjuncts with OR; nil for none.
func OrAll(es []Expr) Expr {
	if len(es) == 0 {
		return nil
	}
	out := es[0]
	for _, e := range es[1:] {
		out = &Call{Fn: mustResolve("or", out.Type(), e.Type()), Args: []Expr{out, e}}
	}
	return out
}

// Disjuncts splits e at its top-level ORs.
func Disjuncts(e Expr) []Expr {
	return appendDisjuncts(nil, e)
}

// appendDisjuncts appends e's disjuncts to out, in one slice for the whole tree
// (see appendConjuncts).
func appendDisjuncts(out []Expr, e Expr) []Expr {
	for {
		c, ok := e.(*Call)
		if !ok || c.Fn.Name != "or" || len(c.Args) == 0 {
			return append(out, e)
		}
		for _, a := range c.Args[:len(c.Args)-1] {
			out = appendDisjuncts(out, a)
		}
		e = c.Args[len(c.Args)-1]
	}
}

// AndAll combines conjuncts with AND; nil for none.
func AndAll(es []Expr) Expr {
	if len(es) == 0 {
		return nil
	}
	out := es[0]
	for _, e := range es[1:] {
		out = &Call{Fn: mustResolve("and", out.Type(), e.Type()), Args: []Expr{out, e}}
	}
	return out
}

func checkNoOuterRefs(n Node) error {
	var err error
	walkNodeExprs(n, func(e Expr) {
		WalkExpr(e, func(x Expr) {
			if _, ok := x.(*OuterRef); ok && err == nil {
				err = errs.New(errs.Analysis, "this correlated subquery is not supported")
			}
		})
	})
	return err
}

// walkNodeExprs calls f on every expression of n and its inputs.
func walkNodeExprs(n Node, f func(Expr)) {
	walkOwnExprs(n, f)
	for _, in := range n.Inputs() {
		walkNodeExprs(in, f)
	}
}

// walkOwnExprs calls f on the expressions of n itself.
func walkOwnExprs(n Node, f func(Expr)) {
	switch x := n.(type) {
	case *Filter:
		f(x.Cond)
	case *Project:
		for _, e := range x.Exprs {
			f(e)
		}
	case *Aggregate:
		for _, e := range x.Groups {
			f(e)
		}
		for _, a := range x.Aggs {
			for _, e := range a.Inputs() {
				f(e)
			}
			if a.Filter != nil {
				f(a.Filter)
			}
		}
	case *Join:
		for _, e := range x.LeftKeys {
			f(e)
		}
		for _, e := range x.RightKeys {
			f(e)
		}
		if x.Residual != nil {
			f(x.Residual)
		}
	case *Sort:
		for _, k := range x.Keys {
			f(k.E)
		}
	case *Window:
		for _, w := range x.Funcs {
			for _, e := range w.Exprs() {
				f(e)
			}
		}
	case *Values:
		for _, r := range x.Rows {
			for _, e := range r {
				f(e)
			}
		}
	}
}

// ForEachSubquery calls f with the plan of every subquery in n's own expressions.
func ForEachSubquery(n Node, f func(Node)) {
	forEachSubqueryExpr(n, func(e Expr) {
		switch s := e.(type) {
		case *Subquery:
			f(s.Plan)
		case *InSubquery:
			f(s.Plan)
		}
	})
}

// WalkNodes calls f on n and on every node under it, parents first: its inputs, the
// plans of its subqueries, a shared plan's input (once, however often the plan is
// referenced) and a recursive query's anchor and step.
func WalkNodes(n Node, f func(Node)) {
	seen := map[*Shared]bool{}
	var walk func(Node)
	walk = func(n Node) {
		f(n)
		switch x := n.(type) {
		case *Shared:
			if !seen[x] {
				seen[x] = true
				walk(x.Input)
			}
		case *RecursiveCTE:
			walk(x.Anchor)
			walk(x.Step)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
		ForEachSubquery(n, walk)
	}
	walk(n)
}

// ScalarSubqueries returns the scalar subqueries of n's own expressions (not of its
// inputs').
func ScalarSubqueries(n Node) []*Subquery {
	var out []*Subquery
	forEachSubqueryExpr(n, func(e Expr) {
		if s, ok := e.(*Subquery); ok {
			out = append(out, s)
		}
	})
	return out
}

// forEachSubqueryExpr calls f on every subquery expression of n's own expressions.
func forEachSubqueryExpr(n Node, f func(Expr)) {
	walkOwnExprs(n, func(e Expr) {
		WalkExpr(e, func(x Expr) {
			switch x.(type) {
			case *Subquery, *InSubquery:
				f(x)
			}
		})
	})
}

// mustResolve resolves a function the planner itself builds a call of, with
// arguments it knows the function takes.
func mustResolve(name string, args ...arrow.DataType) *kernels.Function {
	fn, err := kernels.Resolve(name, args)
	if err != nil {
		panic(fmt.Sprintf("BUG: resolving %s: %v", name, err))
	}
	return fn
}

// GroupingValue is GROUPING(args…) for the rows of grouping set set: a bit per
// argument, the first the most significant, set when the set leaves it out.
func GroupingValue(set, args []int) int64 {
	var v int64
	for _, i := range args {
		v <<= 1
		if !slices.Contains(set, i) {
			v |= 1
		}
	}
	return v
}
