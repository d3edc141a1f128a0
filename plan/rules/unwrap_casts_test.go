package rules

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
)

// A comparison of a widened decimal column with a literal becomes one of the column
// with the literal in the column's type when the literal fits it: not when its digits
// do not fit, its scale differs or the cast narrows.
func TestUnwrapCasts(t *testing.T) {
	dec := func(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }
	col := &plan.ColRef{Idx: 0, T: dec(7, 2), Name: "price"}
	lit := func(unscaled int64, dt arrow.DataType) plan.Expr {
		return &plan.Literal{V: decValue(unscaled, dt)}
	}
	widened := &plan.Cast{E: col, To: dec(12, 2)}
	cases := []struct {
		e    plan.Expr
		want string
	}{
		{call(t, ">=", widened, lit(10000, dec(12, 2))), ">=(#0, 100.00::DECIMAL(7,2))"},
		{call(t, "<", lit(-5050, dec(12, 2)), widened), "<(-50.50::DECIMAL(7,2), #0)"},
		{&plan.InList{E: widened, List: []plan.Expr{lit(100, dec(12, 2)), lit(250, dec(12, 2))}}, "#0 IN (1.00::DECIMAL(7,2), 2.50::DECIMAL(7,2))"},
		// 100000.00 has eight digits: DECIMAL(7,2) cannot hold it.
		{call(t, "=", widened, lit(10000000, dec(12, 2))), "=(CAST(#0 AS DECIMAL(12,2)), 100000.00::DECIMAL(12,2))"},
		{&plan.InList{E: widened, List: []plan.Expr{lit(100, dec(12, 2)), lit(10000000, dec(12, 2))}}, "CAST(#0 AS DECIMAL(12,2)) IN (1.00::DECIMAL(12,2), 100000.00::DECIMAL(12,2))"},
		// Another scale changes the values.
		{call(t, "=", &plan.Cast{E: col, To: dec(12, 3)}, lit(1000, dec(12, 3))), "=(CAST(#0 AS DECIMAL(12,3)), 1.000::DECIMAL(12,3))"},
	}
	for _, c := range cases {
		if got := unwrapCasts(c.e).String(); got != c.want {
			t.Errorf("%s: rewritten to %s, want %s", c.e, got, c.want)
		}
	}
}

func decValue(unscaled int64, dt arrow.DataType) types.Value {
	return types.Value{Type: dt, D: decimal128.FromI64(unscaled)}
}
