package rules

import (
	"github.com/loredb/lore/plan"
)

// ChooseBuildSides makes the smaller input, by estimated rows, the build side of each
// inner, left, semi and anti hash join with keys (the executor tracks the matches of
// a left input it builds; NOT IN keeps its right input built).
func ChooseBuildSides(n plan.Node) plan.Node {
	n = mapInputs(n, ChooseBuildSides)
	j, ok := n.(*plan.Join)
	if !ok || len(j.LeftKeys) == 0 || j.NullAwareAnti {
		return n
	}
	switch j.Kind {
	case plan.InnerJoin, plan.LeftJoin, plan.SemiJoin, plan.AntiJoin:
		j.BuildLeft = Estimate(j.Left) < Estimate(j.Right)
	}
	return n
}

// Estimate is a rough row count for n (see estimate).
func Estimate(n plan.Node) float64 { return estimate(n).rows }

// card is an estimate: rows, and base, the rows n would have without the filters
// and equi-joins with smaller inputs below it; rows/base is the fraction of its
// base rows that n keeps.
type card struct{ rows, base float64 }

func (c card) fraction() float64 {
	if c.base <= 0 {
		return 1
	}
	return min(1, c.rows/c.base)
}

// estimate guesses rows without statistics: a scan's rows from its footers (or,
// when unknown, its files' bytes at about 16 bytes a row), a fraction of the input
// per filter (see selectivity), a tenth for aggregates. An equi-join is taken for a key join between the
// input with the larger base (the fact side, each of whose rows finds at most one
// partner) and the other (the dimension side, whose filters remove the fact rows
// that referred to what they removed): the fact side's rows times the fraction the
// dimension side keeps. A nation table filtered to 2 of 25 rows thus cuts a join
// with suppliers to 2/25 of them, and the joins above see it.
func estimate(n plan.Node) card {
	switch x := n.(type) {
	case *plan.Scan:
		var r float64
		if x.Ref.Rows >= 0 {
			r = float64(x.Ref.Rows) + 1
		} else {
			var bytes int64
			for _, f := range x.Ref.Listing.Files {
				bytes += f.Info.Size
			}
			r = float64(bytes)/16 + 1
		}
		return card{r, r}
	case *plan.Values:
		r := float64(len(x.Rows))
		return card{r, r}
	case *plan.Stored:
		r := float64(x.Rows)
		return card{r, r}
	case *plan.Series:
		r := x.Rows()
		return card{r, r}
	case *plan.Shared:
		return estimate(x.Input)
	case *plan.Filter:
		in := estimate(x.Input)
		if sel, ok := statsSelectivity(x); ok {
			// A record judges the filter; a sketch may see no row where a few are.
			return card{max(in.rows*sel, 1), in.base}
		}
		return card{in.rows * selectivity(x.Cond), in.base}
	case *plan.Aggregate:
		sets := float64(max(1, len(x.Sets)))
		if len(x.Groups) == 0 {
			return card{sets, sets}
		}
		r := sets * (estimate(x.Input).rows/10 + 1)
		return card{r, r}
	case *plan.LimitPercent:
		in := estimate(x.Input)
		return card{in.rows * x.Percent / 100, in.base}
	case *plan.Limit:
		in := estimate(x.Input)
		if x.Count >= 0 && float64(x.Count) < in.rows {
			return card{float64(x.Count), in.base}
		}
		return in
	case *plan.Join:
		l, r := estimate(x.Left), estimate(x.Right)
		switch x.Kind {
		case plan.CrossJoin:
			return card{l.rows * r.rows, l.base * r.base}
		case plan.SemiJoin:
			// Taking the right input's keys for a key of its own: left rows keep the
			// fraction of it that its filters keep.
			return card{l.rows * min(0.5, r.fraction()), l.base}
		case plan.AntiJoin:
			return card{l.rows / 2, l.base}
		}
		if len(x.LeftKeys) == 0 {
			// Only a residual condition: a third of the pairs.
			return card{l.rows * r.rows / 3, l.base * r.base}
		}
		fact, dim := l, r
		if r.base > l.base {
			fact, dim = r, l
		}
		out := card{fact.rows * dim.fraction(), fact.base}
		if x.Residual != nil {
			out.rows /= 3
		}
		switch x.Kind {
		case plan.LeftJoin:
			out.rows = max(out.rows, l.rows)
		case plan.RightJoin:
			out.rows = max(out.rows, r.rows)
		case plan.FullJoin:
			out.rows = max(out.rows, l.rows+r.rows)
		}
		return out
	case *plan.SetOp:
		l, r := estimate(x.Left), estimate(x.Right)
		return card{l.rows + r.rows, l.base + r.base}
	}
	in := n.Inputs()
	if len(in) == 1 {
		return estimate(in[0])
	}
	return card{1000, 1000}
}

// selectivity guesses the fraction of rows a filter condition keeps: a tenth for an
// equality with a constant or a LIKE, a tenth per listed value of an IN (at most a
// half), a third for the comparisons that bound one column (a BETWEEN is one range,
// not two), a third for anything else; conjuncts multiply.
func selectivity(cond plan.Expr) float64 {
	sel := 1.0
	ranged := map[string]bool{}
	for _, c := range plan.Conjuncts(cond) {
		f := 1.0 / 3
		switch x := c.(type) {
		case *plan.InList:
			if !x.Not {
				f = min(0.5, 0.1*float64(len(x.List)))
			}
		case *plan.Call:
			switch x.Fn.Name {
			case "like", "ilike":
				f = 0.1
			case "=":
				if constantSide(x.Args) != nil {
					f = 0.1
				}
			case "<", "<=", ">", ">=":
				if col := constantSide(x.Args); col != nil {
					key := col.String()
					if ranged[key] {
						f = 1
					}
					ranged[key] = true
				}
			}
		}
		sel *= f
	}
	return sel
}

// constantSide returns the other operand of a comparison with a literal, or nil.
func constantSide(args []plan.Expr) plan.Expr {
	if len(args) != 2 {
		return nil
	}
	if _, ok := args[1].(*plan.Literal); ok {
		return args[0]
	}
	if _, ok := args[0].(*plan.Literal); ok {
		return args[1]
	}
	return nil
}
