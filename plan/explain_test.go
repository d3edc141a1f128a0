package plan

import (
	"testing"

	"github.com/loredb/lore/types"
)

// A chain of UNION ALLs is drawn as one operator over its branches, all at one
// indentation; a UNION over it keeps its own level.
func TestExplainDrawsAUnionChainFlat(t *testing.T) {
	cols := []Column{{Name: "x", Type: types.Int64}}
	values := func() Node { return &Values{Cols: cols, Rows: [][]Expr{{&Literal{V: types.IntValue(1)}}}} }
	var n Node = values()
	for range 3 {
		n = &SetOp{Kind: Union, All: true, Left: n, Right: values(), Cols: cols}
	}
	n = &SetOp{Kind: Union, Left: n, Right: values(), Cols: cols}
	want := "SetOp union\n" +
		"  SetOp union all\n" +
		"    Values rows=1\n" +
		"    Values rows=1\n" +
		"    Values rows=1\n" +
		"    Values rows=1\n" +
		"  Values rows=1\n"
	if got := Explain(n, nil); got != want {
		t.Errorf("EXPLAIN:\n%s\nwant:\n%s", got, want)
	}
	if ins := UnionInputs(n.(*SetOp)); len(ins) != 2 {
		t.Errorf("a UNION over a UNION ALL chain has %d inputs, want 2", len(ins))
	}
}
