//go:build cgo

package plan

import (
	"context"
	"testing"

	"github.com/loredb/lore/types"
)

// decorrTest is an outer input of one BIGINT column a, its scope, and a subquery
// input of BIGINT columns x, y.
func decorrTest(t *testing.T) (*binder, Node, *scope, Node) {
	t.Helper()
	b := &binder{ctx: context.Background()}
	outer := &Values{Cols: []Column{{Name: "a", Type: types.Int64}}, Rows: [][]Expr{{&Literal{V: types.IntValue(1)}}}}
	sc := newScope(outer.Cols)
	inner := &Values{Cols: []Column{{Name: "x", Type: types.Int64}, {Name: "y", Type: types.Int64}},
		Rows: [][]Expr{{&Literal{V: types.IntValue(1)}, &Literal{V: types.IntValue(2)}}}}
	return b, outer, sc, inner
}

// correlatedFilter is inner WHERE x = outer a.
func correlatedFilter(t *testing.T, b *binder, sc *scope, inner Node) Node {
	t.Helper()
	eq, err := b.call("=", []Expr{&ColRef{Idx: 0, T: types.Int64, Name: "x"}, &OuterRef{Idx: 0, Col: sc.cols[0], scope: sc}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return &Filter{Input: inner, Cond: eq}
}

// An aggregate without groups gives a row for every outer value: grouped by D, then
// left-joined onto D with NULLs matching, its counts 0 where nothing matched.
func TestDecorrelateUngroupedAggregate(t *testing.T) {
	b, outer, sc, inner := decorrTest(t)
	sub := &Aggregate{Input: correlatedFilter(t, b, sc, inner), Aggs: []AggCall{{Func: "count_star", T: types.Int64}},
		Cols: []Column{{Name: "n", Type: types.Int64}}}
	c, err := b.attachCorrelated(outer, map[*scope]outerMap{sc: columnsOf(sc)}, sub, 0)
	if err != nil {
		t.Fatal(err)
	}
	back := c.node.(*Join)
	if back.Kind != LeftJoin || !back.NullEq || len(back.LeftKeys) != 1 || c.at != 2 {
		t.Fatalf("join back: %s", Explain(c.node, nil))
	}
	p, ok := back.Right.(*Project)
	if !ok {
		t.Fatalf("no projection of the counts:\n%s", Explain(c.node, nil))
	}
	if got := p.Exprs[1].String(); got != "coalesce(#2, 0::BIGINT)" {
		t.Errorf("count over no rows: %s, want coalesce(#2, 0::BIGINT)", got)
	}
	j, ok := p.Input.(*Join)
	if !ok || j.Kind != LeftJoin || !j.NullEq {
		t.Fatalf("the aggregate is not left-joined onto D:\n%s", Explain(c.node, nil))
	}
	ag, ok := j.Right.(*Aggregate)
	if !ok || len(ag.Groups) != 1 {
		t.Fatalf("the aggregate is not grouped by D:\n%s", Explain(c.node, nil))
	}
	if hasOuterRefs(c.node) {
		t.Fatalf("outer references are left:\n%s", Explain(c.node, nil))
	}
}

// ORDER BY … LIMIT inside a correlated subquery limits each outer value's rows: a
// row number partitioned by D, in the sort's order.
func TestDecorrelateLimitPerOuterValue(t *testing.T) {
	b, outer, sc, inner := decorrTest(t)
	sub := &Limit{Count: 2, Offset: 1, Input: &Sort{Input: correlatedFilter(t, b, sc, inner),
		Keys: []SortKey{{E: &ColRef{Idx: 1, T: types.Int64, Name: "y"}, Desc: true}}}}
	c, err := b.attachCorrelated(outer, map[*scope]outerMap{sc: columnsOf(sc)}, sub, 0)
	if err != nil {
		t.Fatal(err)
	}
	var w *Window
	var f *Filter
	var walk func(Node)
	walk = func(n Node) {
		switch x := n.(type) {
		case *Window:
			w = x
		case *Filter:
			if _, ok := x.Input.(*Window); ok {
				f = x
			}
		case *Shared:
			walk(x.Input)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(c.node)
	if w == nil || f == nil {
		t.Fatalf("no row number over D:\n%s", Explain(c.node, nil))
	}
	fn := w.Funcs[0]
	if fn.Func != "row_number" || len(fn.Partition) != 1 || len(fn.Order) != 1 || !fn.Order[0].Desc {
		t.Fatalf("row number: %+v", fn)
	}
	// The sort key y moved right by D's one column.
	if r, ok := fn.Order[0].E.(*ColRef); !ok || r.Idx != 2 {
		t.Fatalf("sort key %s, want #2", fn.Order[0].E)
	}
	// Rows 2 and 3 of each D value: the number is column 3 (D, x, y, number).
	if got, want := f.Cond.String(), "and(>(#3, 1::BIGINT), <=(#3, 3::BIGINT))"; got != want {
		t.Errorf("condition on the row number %s, want %s", got, want)
	}
	if hasOuterRefs(c.node) {
		t.Fatalf("outer references are left:\n%s", Explain(c.node, nil))
	}
}
