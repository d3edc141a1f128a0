package exec

import (
	"context"
	"testing"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
)

// A chain of UNIONs, nested one level per branch by the grammar, runs as one
// operator over all its inputs, with the answer of the nested set operations.
func TestUnionChainIsOneOperator(t *testing.T) {
	cols := []plan.Column{{Name: "x", Type: types.Int64}}
	values := func(v int64) plan.Node {
		return &plan.Values{Cols: cols, Rows: [][]plan.Expr{{&plan.Literal{V: types.IntValue(v)}}}}
	}
	chain := func(all bool, vals ...int64) *plan.SetOp {
		var n plan.Node = values(vals[0])
		for _, v := range vals[1:] {
			n = &plan.SetOp{Kind: plan.Union, All: all, Left: n, Right: values(v), Cols: cols}
		}
		return n.(*plan.SetOp)
	}
	run := func(op Operator) (sum int64, rows int) {
		defer op.Close()
		for {
			b, err := op.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if b == nil {
				return sum, rows
			}
			for _, r := range b.Selection() {
				sum += types.ValueAt(b.Cols[0], int(r)).I
				rows++
			}
		}
	}
	bd := &builder{env: &Env{}}
	const n = 3000
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = int64(i % 1000)
	}
	op, err := bd.buildSetOp(chain(true, vals...))
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := op.(*unionAll); !ok || len(u.ins) != n {
		t.Fatalf("UNION ALL of %d branches built as %T", n, op)
	}
	if sum, rows := run(op); rows != n || sum != 3*(999*1000/2) {
		t.Errorf("UNION ALL: %d rows summing to %d", rows, sum)
	}
	op, err = bd.buildSetOp(chain(false, vals...))
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := op.(*setOp); !ok || s.right != nil {
		t.Fatalf("UNION of %d branches built as %T", n, op)
	}
	if sum, rows := run(op); rows != 1000 || sum != 999*1000/2 {
		t.Errorf("UNION: %d rows summing to %d", rows, sum)
	}
	// A UNION ALL under a UNION ends the UNION's chain and keeps its duplicates
	// for the UNION above to drop: (1 UNION ALL 1) UNION 2 is 1, 2.
	mixed := &plan.SetOp{Kind: plan.Union, Left: chain(true, 1, 1, 1), Right: values(2), Cols: cols}
	op, err = bd.buildSetOp(mixed)
	if err != nil {
		t.Fatal(err)
	}
	if sum, rows := run(op); rows != 2 || sum != 3 {
		t.Errorf("(1 UNION ALL 1 UNION ALL 1) UNION 2: %d rows summing to %d", rows, sum)
	}
}
