package rules

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// An OR over one scan puts before it, as conjuncts the scan prunes with, what it
// implies on each column alone: IN lists of the values its branches compare a column
// with. A column some branch says nothing about, or bounds only by a range, implies
// nothing with a storage form.
func TestSplitOr(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "status", Type: types.String}, {Name: "edu", Type: types.String}, {Name: "n", Type: types.Int64}}, nil)
	scan := &plan.Scan{Ref: &plan.TableRef{Listing: &source.Listing{Schema: schema}},
		Cols: []plan.Column{{Name: "status", Type: types.String}, {Name: "edu", Type: types.String}, {Name: "n", Type: types.Int64}}}
	col := func(i int) plan.Expr { return &plan.ColRef{Idx: i, T: scan.Cols[i].Type, Name: scan.Cols[i].Name} }
	str := func(s string) plan.Expr { return lit(types.StringValue(s)) }
	branch := func(s, e string, lo int64) plan.Expr {
		return plan.AndAll([]plan.Expr{call(t, "=", col(0), str(s)), call(t, "=", col(1), str(e)), call(t, ">", col(2), lit(types.IntValue(lo)))})
	}
	cases := []struct {
		cond plan.Expr
		want string
	}{
		{plan.OrAll([]plan.Expr{branch("M", "College", 1), branch("S", "Primary", 2)}),
			"and(and(#0 IN ('M', 'S'), #1 IN ('College', 'Primary')), or(and(and(=(#0, 'M'), =(#1, 'College')), >(#2, 1::BIGINT)), and(and(=(#0, 'S'), =(#1, 'Primary')), >(#2, 2::BIGINT))))"},
		// The second branch says nothing about edu.
		{plan.OrAll([]plan.Expr{branch("M", "College", 1), call(t, "=", col(0), str("W"))}),
			"and(#0 IN ('M', 'W'), or(and(and(=(#0, 'M'), =(#1, 'College')), >(#2, 1::BIGINT)), =(#0, 'W')))"},
		{plan.OrAll([]plan.Expr{call(t, ">", col(2), lit(types.IntValue(5))), call(t, "=", col(0), str("W"))}),
			"or(>(#2, 5::BIGINT), =(#0, 'W'))"},
	}
	for _, c := range cases {
		f := SplitOr(&plan.Filter{Input: scan, Cond: c.cond}).(*plan.Filter)
		if got := f.Cond.String(); got != c.want {
			t.Errorf("%s:\ngot  %s\nwant %s", c.cond, got, c.want)
		}
	}
}
