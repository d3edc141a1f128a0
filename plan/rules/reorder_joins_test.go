package rules

import (
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
)

// Column equalities between inputs imply the ones they do not state, once per pair
// of inputs; other conditions imply nothing.
func TestImpliedEqualities(t *testing.T) {
	// Inputs 0..3, two columns each: column c belongs to input c/2.
	relOf := func(c int) int { return c / 2 }
	col := func(c int, dt arrow.DataType) plan.Expr { return &plan.ColRef{Idx: c, T: dt} }
	eq := func(a, b plan.Expr) cond {
		fn, err := kernels.Resolve("=", []arrow.DataType{a.Type(), b.Type()})
		if err != nil {
			t.Fatal(err)
		}
		used := map[int]bool{}
		for _, c := range []plan.Expr{a, b} {
			used[relOf(c.(*plan.ColRef).Idx)] = true
		}
		return cond{e: &plan.Call{Fn: fn, Args: []plan.Expr{a, b}}, rels: used}
	}
	i64, i32 := types.Int64, types.Int32
	lt, _ := kernels.Resolve("<", []arrow.DataType{i64, i64})
	conds := []cond{
		eq(col(1, i64), col(3, i64)), // input 0 = input 1
		eq(col(3, i64), col(5, i64)), // input 1 = input 2: implies 0 = 2
		eq(col(0, i32), col(6, i32)), // input 0 = input 3, another class of two
		{e: &plan.Call{Fn: lt, Args: []plan.Expr{col(2, i64), col(7, i64)}}, rels: map[int]bool{1: true, 3: true}},
	}
	var got []string
	for _, c := range impliedEqualities(conds, relOf) {
		var rels []int
		for r := range c.rels {
			rels = append(rels, r)
		}
		sort.Ints(rels)
		got = append(got, c.e.String())
		if len(rels) != 2 || rels[0] != 0 || rels[1] != 2 {
			t.Errorf("%s joins inputs %v, want [0 2]", c.e, rels)
		}
	}
	if len(got) != 1 || got[0] != "=(#1, #5)" {
		t.Errorf("implied %v, want [=(#1, #5)]", got)
	}
}
