package rules

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
)

func call(t *testing.T, name string, args ...plan.Expr) plan.Expr {
	t.Helper()
	ts := make([]arrow.DataType, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	fn, err := kernels.Resolve(name, ts)
	if err != nil {
		t.Fatal(err)
	}
	return &plan.Call{Fn: fn, Args: args}
}

func str(s string) plan.Expr { return &plan.Literal{V: types.Value{Type: types.String, S: s}} }

// TestImpliedOn derives per-input predicates from disjunctions over two inputs of a
// join whose left input has columns #0 and #1 and right input #2 and #3.
func TestImpliedOn(t *testing.T) {
	c := func(i int) plan.Expr { return &plan.ColRef{Idx: i, T: types.String} }
	eq := func(i int, s string) plan.Expr { return call(t, "=", c(i), str(s)) }
	and := func(a, b plan.Expr) plan.Expr { return call(t, "and", a, b) }
	or := func(a, b plan.Expr) plan.Expr { return call(t, "or", a, b) }
	cases := []struct {
		name        string
		e           plan.Expr
		left, right string // "" for none
	}{
		{"both inputs in every branch",
			or(and(eq(0, "FRANCE"), eq(2, "GERMANY")), and(eq(0, "GERMANY"), eq(2, "FRANCE"))),
			"#0 IN ('FRANCE', 'GERMANY')", "#0 IN ('GERMANY', 'FRANCE')"},
		{"a branch without the right input",
			or(and(eq(0, "a"), eq(2, "b")), eq(1, "c")),
			"or(=(#0, 'a'), =(#1, 'c'))", ""},
		{"repeated values collapse",
			or(and(eq(0, "a"), eq(3, "x")), and(eq(0, "a"), eq(3, "y"))),
			"=(#0, 'a')", "#1 IN ('x', 'y')"},
		// (x OR b) bounds neither input alone: the first branch gives only a.
		{"nested disjunction",
			or(and(eq(0, "a"), or(eq(2, "x"), eq(1, "b"))), and(eq(1, "c"), eq(3, "z"))),
			"or(=(#0, 'a'), =(#1, 'c'))", ""},
		{"nested disjunction over one input",
			or(and(eq(0, "a"), or(eq(1, "x"), eq(1, "y"))), and(eq(0, "b"), eq(3, "z"))),
			"or(and(=(#0, 'a'), or(=(#1, 'x'), =(#1, 'y'))), =(#0, 'b'))", ""},
		{"one input only: nothing new",
			or(eq(0, "a"), eq(1, "b")), "", ""},
		{"not a disjunction", and(eq(0, "a"), eq(2, "b")), "", ""},
	}
	for _, tc := range cases {
		l, r := impliedOn(tc.e, 2)
		got := func(e plan.Expr) string {
			if e == nil {
				return ""
			}
			return e.String()
		}
		if got(l) != tc.left || got(r) != tc.right {
			t.Errorf("%s: %s\n got left %q right %q\nwant left %q right %q", tc.name, tc.e, got(l), got(r), tc.left, tc.right)
		}
	}
}
