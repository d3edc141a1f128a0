package rules

import (
	"github.com/loredb/lore/plan"
)

// PushSemiJoins moves semi and anti joins (EXISTS, IN and their negations after
// decorrelation) down to the input that provides the columns they test. Such a join
// only keeps or drops rows of its left input by those rows' own columns, so it
// commutes with a projection of plain columns and with an inner or cross join (or
// the preserved input of a left join) when the tested columns all come from one
// input and that input is estimated no larger than the join. Filtering there shrinks
// the joins above: TPC-H Q18 keeps its 57 large orders before joining them with
// customer and lineitem rather than after.
func PushSemiJoins(n plan.Node) plan.Node {
	n = mapInputs(n, PushSemiJoins)
	if j, ok := n.(*plan.Join); ok && (j.Kind == plan.SemiJoin || j.Kind == plan.AntiJoin) {
		return pushSemi(j)
	}
	return n
}

// pushSemi pushes the semi or anti join s as far down its left input as it goes and
// returns what replaces s.
func pushSemi(s *plan.Join) plan.Node {
	nl := len(s.Left.Columns())
	used := map[int]bool{} // left columns s reads
	for _, k := range s.LeftKeys {
		plan.ColumnsUsed(k, used)
	}
	for _, k := range s.LeftKeys {
		if HasSubquery(k) {
			return s
		}
	}
	if s.Residual != nil {
		// A subquery's plan may refer to these columns by position: leave it be.
		if HasSubquery(s.Residual) {
			return s
		}
		res := map[int]bool{}
		plan.ColumnsUsed(s.Residual, res)
		for c := range res {
			if c < nl {
				used[c] = true
			}
		}
	}
	if len(used) == 0 {
		return s
	}
	switch x := s.Left.(type) {
	case *plan.Project:
		// Through a projection whose tested outputs are input columns.
		m := len(x.Input.Columns())
		to := map[int]int{}
		for c := range used {
			r, ok := x.Exprs[c].(*plan.ColRef)
			if !ok {
				return s
			}
			to[c] = r.Idx
		}
		inner := rebase(s, x.Input, func(c int) int {
			if c < nl {
				return to[c]
			}
			return c - nl + m
		})
		x.Input = pushSemi(inner)
		return x
	case *plan.Join:
		a := len(x.Left.Columns())
		allLeft, allRight := true, true
		for c := range used {
			if c < a {
				allRight = false
			} else {
				allLeft = false
			}
		}
		// Only where the semi join sees no more rows than above the join: below a
		// join that shrinks its input (supplier with its one nation) it would test
		// rows the join is about to drop.
		here := Estimate(x)
		switch {
		case allLeft && (x.Kind == plan.InnerJoin || x.Kind == plan.CrossJoin || x.Kind == plan.LeftJoin) &&
			Estimate(x.Left) <= here:
			x.Left = pushSemi(rebase(s, x.Left, func(c int) int {
				if c < nl {
					return c
				}
				return c - nl + a
			}))
			return x
		case allRight && (x.Kind == plan.InnerJoin || x.Kind == plan.CrossJoin) && Estimate(x.Right) <= here:
			x.Right = pushSemi(rebase(s, x.Right, func(c int) int { return c - a }))
			return x
		}
	}
	return s
}

// rebase returns a copy of the semi or anti join s over the new left input left;
// move maps a column of s's left and right inputs (left first) to its position in
// left's columns followed by the right input's.
func rebase(s *plan.Join, left plan.Node, move func(int) int) *plan.Join {
	out := *s
	out.Left = left
	out.Cols = left.Columns()
	out.LeftKeys = make([]plan.Expr, len(s.LeftKeys))
	for i, k := range s.LeftKeys {
		out.LeftKeys[i] = moveColumns(k, move)
	}
	if s.Residual != nil {
		out.Residual = moveColumns(s.Residual, move)
	}
	return &out
}

func moveColumns(e plan.Expr, move func(int) int) plan.Expr {
	out, _ := plan.MapExpr(e, func(x plan.Expr) (plan.Expr, error) {
		if c, ok := x.(*plan.ColRef); ok {
			return &plan.ColRef{Idx: move(c.Idx), T: c.T, Name: c.Name}, nil
		}
		return x, nil
	})
	return out
}
