package rules

import (
	"github.com/loredb/lore/plan"
)

// PruneColumns marks, on every scan, the columns that something above reads, and
// marks projection outputs that nothing reads as Unused, so that unread columns are
// neither read from storage nor computed.
func PruneColumns(n plan.Node) {
	need := map[int]bool{}
	for i := range n.Columns() {
		need[i] = true
	}
	prune(n, need)
}

func prune(n plan.Node, need map[int]bool) {
	used := func(es ...plan.Expr) map[int]bool {
		m := map[int]bool{}
		for _, e := range es {
			if e != nil {
				plan.ColumnsUsed(e, m)
				pruneSubqueries(e)
			}
		}
		return m
	}
	union := func(a, b map[int]bool) map[int]bool {
		for k := range b {
			a[k] = true
		}
		return a
	}
	all := func(k plan.Node) map[int]bool {
		m := map[int]bool{}
		for i := range k.Columns() {
			m[i] = true
		}
		return m
	}
	switch x := n.(type) {
	case *plan.Scan:
		req := make([]bool, len(x.Cols))
		for i := range x.Cols {
			req[i] = need[i]
		}
		x.Required = req
	case *plan.Values, *plan.Stored, *plan.Batches, *plan.Series:
	case *plan.Filter:
		prune(x.Input, union(used(x.Cond), need))
	case *plan.Project:
		in := map[int]bool{}
		for i, e := range x.Exprs {
			if need[i] {
				union(in, used(e))
			} else {
				x.Exprs[i] = &plan.Unused{T: e.Type()}
			}
		}
		prune(x.Input, in)
	case *plan.Aggregate:
		prune(x.Input, used(x.InputExprs()...))
	case *plan.Join:
		nl := len(x.Left.Columns())
		left, right := used(x.LeftKeys...), used(x.RightKeys...)
		all := need
		if x.Residual != nil {
			all = union(used(x.Residual), need)
		}
		for k := range all {
			if k < nl {
				left[k] = true
			} else {
				right[k-nl] = true
			}
		}
		prune(x.Left, left)
		prune(x.Right, right)
	case *plan.Sort:
		in := map[int]bool{}
		union(in, need)
		for _, k := range x.Keys {
			union(in, used(k.E))
		}
		prune(x.Input, in)
	case *plan.Limit:
		prune(x.Input, need)
	case *plan.LimitPercent:
		prune(x.Input, need)
	case *plan.Distinct:
		prune(x.Input, all(x.Input))
	case *plan.SetOp:
		prune(x.Left, all(x.Left))
		prune(x.Right, all(x.Right))
	case *plan.Unnest:
		// The lists are read whatever is needed: they set the number of rows.
		in := union(map[int]bool{}, need)
		for _, k := range x.Lists {
			in[k] = true
		}
		prune(x.Input, in)
	case *plan.Window:
		nin := len(x.Input.Columns())
		in := map[int]bool{}
		for k := range need {
			if k < nin {
				in[k] = true
			}
		}
		for _, w := range x.Funcs {
			union(in, used(w.Exprs()...))
		}
		prune(x.Input, in)
	}
}

func pruneSubqueries(e plan.Expr) {
	plan.WalkExpr(e, func(x plan.Expr) {
		switch s := x.(type) {
		case *plan.Subquery:
			PruneColumns(s.Plan)
		case *plan.InSubquery:
			PruneColumns(s.Plan)
		}
	})
}
