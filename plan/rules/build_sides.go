package rules

import (
	"github.com/loredb/lore/plan"
)

// ChooseBuildSides makes the smaller input, by estimated rows, the build side of each
// inner hash join.
func ChooseBuildSides(n plan.Node) plan.Node {
	n = mapInputs(n, ChooseBuildSides)
	if j, ok := n.(*plan.Join); ok && j.Kind == plan.InnerJoin && len(j.LeftKeys) > 0 {
		j.BuildLeft = Estimate(j.Left) < Estimate(j.Right)
	}
	return n
}

// Estimate is a rough row count for n: a scan's rows from its footers (or, when
// unknown, its files' bytes at about 16 bytes a row), a third of the input per
// filter, a tenth for aggregates.
func Estimate(n plan.Node) float64 {
	switch x := n.(type) {
	case *plan.Scan:
		if x.Ref.Rows >= 0 {
			return float64(x.Ref.Rows) + 1
		}
		var bytes int64
		for _, f := range x.Ref.Listing.Files {
			bytes += f.Info.Size
		}
		return float64(bytes)/16 + 1
	case *plan.Values:
		return float64(len(x.Rows))
	case *plan.Stored:
		return float64(x.Rows)
	case *plan.Filter:
		if sel, ok := statsSelectivity(x); ok {
			return max(Estimate(x.Input)*sel, 1) // a sketch may see no row where a few are
		}
		return Estimate(x.Input) / 3
	case *plan.Aggregate:
		if len(x.Groups) == 0 {
			return 1
		}
		return Estimate(x.Input)/10 + 1
	case *plan.Limit:
		e := Estimate(x.Input)
		if x.Count >= 0 && float64(x.Count) < e {
			return float64(x.Count)
		}
		return e
	case *plan.Join:
		l, r := Estimate(x.Left), Estimate(x.Right)
		switch x.Kind {
		case plan.CrossJoin:
			return l * r
		case plan.SemiJoin, plan.AntiJoin:
			return l / 2
		}
		return max(l, r)
	case *plan.SetOp:
		return Estimate(x.Left) + Estimate(x.Right)
	}
	in := n.Inputs()
	if len(in) == 1 {
		return Estimate(in[0])
	}
	return 1000
}
