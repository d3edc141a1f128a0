package sql

import (
	"errors"
	"strings"
	"testing"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
)

// A lambda's body is the whole rest of its argument (x -> x > 2 is not (x -> x) >
// 2), in each of DuckDB's spellings, nested too, after a FROM-first rewrite too; an
// -> anywhere else is left as the grammar reads it.
func TestLambdaTrees(t *testing.T) {
	cases := []struct {
		text   string
		params []string
		body   string // the body's kind: a deparsed-enough check
	}{
		{"SELECT list_filter(l, x -> x > 2 AND x < 5) FROM t", []string{"x"}, "BoolExpr"},
		{"SELECT list_filter(l, (x, i) -> i > 1) FROM t", []string{"x", "i"}, "A_Expr"},
		{"SELECT list_reduce(l, lambda a, b: a + b, 0) FROM t", []string{"a", "b"}, "A_Expr"},
		{"SELECT LIST_TRANSFORM(l, \"X\" -> \"X\" IS NULL) FROM t", []string{"X"}, "NullTest"},
		{"FROM t SELECT filter(l, x -> NOT x)", []string{"x"}, "BoolExpr"},
		{"SELECT list_transform(l, x -> {'v': x, 'w': [x, 1]}) FROM t", []string{"x"}, "RowExpr"},
	}
	for _, c := range cases {
		q := parseQuery(t, c.text)
		fc := q.Select.TargetList[0].GetResTarget().Val.GetFuncCall()
		if fc == nil || len(fc.Args) < 2 {
			t.Fatalf("%s: no call: %v", c.text, q.Select.TargetList[0])
		}
		names, at, body, ok := LambdaParams(fc.Args[1])
		if !ok || strings.Join(names, ",") != strings.Join(c.params, ",") {
			t.Errorf("%s: parameters %v (%v), want %v", c.text, names, ok, c.params)
			continue
		}
		from := strings.Index(c.text, "(l, ") + len("(l, ")
		if strings.HasPrefix(c.text[from:], "lambda ") {
			from += len("lambda ")
		}
		for k, p := range c.params {
			if strings.Contains(c.text, `"`+p+`"`) {
				p = `"` + p + `"`
			}
			want := from + strings.Index(c.text[from:], p)
			from = want + len(p)
			if at[k] != want {
				t.Errorf("%s: parameter %s at %d, want %d", c.text, p, at[k], want)
			}
		}
		var kind string
		switch {
		case body.GetBoolExpr() != nil:
			kind = "BoolExpr"
		case body.GetAExpr() != nil:
			kind = "A_Expr"
		case body.GetNullTest() != nil:
			kind = "NullTest"
		case body.GetRowExpr() != nil:
			kind = "RowExpr"
		}
		if kind != c.body {
			t.Errorf("%s: body %v, want a %s", c.text, body, c.body)
		}
	}

	q := parseQuery(t, "SELECT list_transform(l, x -> list_filter(x, y -> y > x)) FROM t")
	_, _, body, ok := LambdaParams(q.Select.TargetList[0].GetResTarget().Val.GetFuncCall().Args[1])
	if !ok || body.GetFuncCall() == nil {
		t.Fatalf("outer lambda: %v %v", ok, body)
	}
	if names, _, inner, ok := LambdaParams(body.GetFuncCall().Args[1]); !ok || names[0] != "y" || inner.GetAExpr() == nil {
		t.Errorf("inner lambda: %v %v %v", names, ok, inner)
	}

	// An -> outside a lambda function stays an operator, for the binder to refuse.
	q = parseQuery(t, "SELECT abs(x -> x > 1) FROM t")
	arg := q.Select.TargetList[0].GetResTarget().Val.GetFuncCall().Args[0]
	if a := arg.GetAExpr(); a == nil || a.Name[0].GetString_().GetSval() != ">" {
		t.Errorf("abs(x -> x > 1) argument %v, want the grammar's comparison", arg)
	}
}

// Error positions in and after a lambda are where they were written.
func TestLambdaErrorPositions(t *testing.T) {
	for _, text := range []string{
		"SELECT list_transform(l, x -> x + ) FROM t",
		"SELECT list_reduce(l, lambda a, b: a +, 0) FROM t",
		"SELECT list_filter(l, (x, i) -> i > 1) FROM t WHERE )",
	} {
		_, err := Parse(text)
		var e *errs.Error
		want := strings.LastIndex(text, ")")
		if strings.Contains(text, "b: a +,") {
			want = strings.Index(text, ", 0")
		}
		if !errors.As(err, &e) || e.Code != errs.Syntax || e.Pos != want {
			t.Errorf("%s: error %v, want SYNTAX_ERROR at %d", text, err, want)
		}
	}
}

// A list comprehension is read as a call of Comprehension with the list, the
// element's lambda and the condition's, each part at its place in the text; inner
// ones nest, and positions of errors in a part and after it stay right.
func TestComprehensions(t *testing.T) {
	text := "SELECT [x * i FOR x, i IN l IF x > 1 AND i < 3], [[y FOR y IN x] FOR x IN m] FROM t"
	q := parseQuery(t, text)
	fc := q.Select.TargetList[0].GetResTarget().Val.GetFuncCall()
	if fc == nil || funcNameOf(fc) != Comprehension || len(fc.Args) != 3 {
		t.Fatalf("first item %v, want a comprehension of three arguments", q.Select.TargetList[0])
	}
	if cr := fc.Args[0].GetColumnRef(); cr == nil || int(cr.Location) != strings.Index(text, "l IF") {
		t.Errorf("list %v, want the column l at %d", fc.Args[0], strings.Index(text, "l IF"))
	}
	names, _, body, ok := LambdaParams(fc.Args[1])
	if !ok || strings.Join(names, ",") != "x,i" || body.GetAExpr() == nil || int(body.GetAExpr().Location) != strings.Index(text, "* i") {
		t.Errorf("element lambda %v %v %v", names, ok, body)
	}
	if _, _, cond, ok := LambdaParams(fc.Args[2]); !ok || cond.GetBoolExpr() == nil {
		t.Errorf("condition %v %v, want the whole AND", cond, ok)
	}
	outer := q.Select.TargetList[1].GetResTarget().Val.GetFuncCall()
	if outer == nil || funcNameOf(outer) != Comprehension {
		t.Fatalf("second item %v, want a comprehension", q.Select.TargetList[1])
	}
	if _, _, inner, ok := LambdaParams(outer.Args[1]); !ok || inner.GetFuncCall() == nil || funcNameOf(inner.GetFuncCall()) != Comprehension {
		t.Errorf("inner %v, want a comprehension", inner)
	}

	for _, bad := range []string{
		"SELECT [x + FOR x IN l] FROM t",
		"SELECT [x FOR x IN l IF x >] FROM t",
		"SELECT [x FOR x IN l] FROM t WHERE )",
	} {
		_, err := Parse(bad)
		var e *errs.Error
		want := strings.Index(bad, "FOR")
		if strings.Contains(bad, "x >]") {
			want = strings.Index(bad, "]")
		} else if strings.Contains(bad, "WHERE )") {
			want = strings.LastIndex(bad, ")")
		}
		if !errors.As(err, &e) || e.Code != errs.Syntax || e.Pos != want {
			t.Errorf("%s: error %v, want SYNTAX_ERROR at %d", bad, err, want)
		}
	}
}

func funcNameOf(fc *pg.FuncCall) string {
	return fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval()
}
