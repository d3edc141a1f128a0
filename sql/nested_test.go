package sql

import (
	"strings"
	"testing"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
)

// A list literal is read with ARRAY inserted before it; every Location after it, in
// a plain or a FROM-first query, is still an offset into the request.
func TestNestedLiteralLocations(t *testing.T) {
	for _, text := range []string{
		"SELECT 1; SELECT [1, [2, ARRAY[3]]], {'k': [x]}, MAP {'m': []}, after FROM tbl",
		"SELECT 1; FROM tbl SELECT [1, [2, ARRAY[3]]], {'k': [x]}, MAP {'m': []}, after",
	} {
		sts, err := Parse(text)
		if err != nil {
			t.Fatal(errs.Describe(err, text))
		}
		q := sts[1].(*Query)
		items := q.Select.TargetList
		if len(items) != 4 {
			t.Fatalf("%s: %d items", text, len(items))
		}
		list := items[0].GetResTarget().Val.GetAArrayExpr()
		if list == nil || int(list.Location) != strings.Index(text, "[1,") {
			t.Errorf("%s: list at %v, want %d", text, list, strings.Index(text, "[1,"))
		}
		inner := list.Elements[1].GetAArrayExpr()
		if inner == nil || int(inner.Location) != strings.Index(text, "[2,") {
			t.Errorf("%s: inner list at %v", text, inner)
		}
		row := items[1].GetResTarget().Val.GetRowExpr()
		if row == nil || !q.Dialect.IsStructLiteral(row.Location) || int(row.Location) != strings.Index(text, "{'k'") {
			t.Errorf("%s: struct literal %v", text, row)
		}
		m := items[2].GetResTarget().Val.GetFuncCall()
		if m == nil || !q.Dialect.IsMapLiteral(m.Location) || len(m.Args) != 2 {
			t.Errorf("%s: map literal %v", text, m)
		}
		col := items[3].GetResTarget().Val.GetColumnRef()
		if col == nil || int(col.Location) != strings.Index(text, "after") {
			t.Errorf("%s: column at %v, want %d", text, col, strings.Index(text, "after"))
		}
	}
}

// A [ after a name, a constant, a closing bracket or a type name subscripts or
// bounds; it is not a list.
func TestSubscriptsAreNotLists(t *testing.T) {
	const text = "SELECT l[1], (l)[1:2], x::INTEGER[], CAST(y AS VARCHAR[]) FROM t"
	sts, err := Parse(text)
	if err != nil {
		t.Fatal(errs.Describe(err, text))
	}
	for i, it := range sts[0].(*Query).Select.TargetList {
		if it.GetResTarget().Val.GetAArrayExpr() != nil {
			t.Errorf("item %d read as a list", i)
		}
	}
}

func TestUnclosedStructLiteral(t *testing.T) {
	for _, text := range []string{"SELECT {'a': 1", "SELECT {'a': 1)", "SELECT 1}"} {
		_, err := Parse(text)
		if errs.CodeOf(err) != errs.Syntax {
			t.Errorf("%s: %v", text, err)
		}
	}
}

// DuckDB subscripts and selects fields of constants, literals and calls, which the
// grammar takes only after a name or parentheses: they are read parenthesized.
func TestSubscriptsOfLiteralsAndCalls(t *testing.T) {
	const text = "SELECT [1, 2, 3][2], 'abc'[1:2], {'a': 1}.a, MAP {'k': 1}['k'], s.f(x)[1], {'a': [1]}['a'][1], l[1][2]"
	sts, err := Parse(text)
	if err != nil {
		t.Fatal(errs.Describe(err, text))
	}
	items := sts[0].(*Query).Select.TargetList
	wantArg := []string{"[1,", "'abc'", "{'a': 1}", "MAP", "s.f", "{'a': [1]}", "l[1]"}
	for i, it := range items {
		ind := it.GetResTarget().Val.GetAIndirection()
		if ind == nil {
			t.Errorf("item %d: %v is not an indirection", i, it.GetResTarget().Val)
			continue
		}
		if got, want := location(ind.Arg), strings.Index(text, wantArg[i]); got != want && i != 6 {
			t.Errorf("item %d: operand at %d, want %d", i, got, want)
		}
	}
}

// location is the Location of the common operand nodes.
func location(n *pg.Node) int {
	switch {
	case n.GetAArrayExpr() != nil:
		return int(n.GetAArrayExpr().Location)
	case n.GetAConst() != nil:
		return int(n.GetAConst().Location)
	case n.GetRowExpr() != nil:
		return int(n.GetRowExpr().Location)
	case n.GetFuncCall() != nil:
		return int(n.GetFuncCall().Location)
	case n.GetColumnRef() != nil:
		return int(n.GetColumnRef().Location)
	}
	return -1
}
