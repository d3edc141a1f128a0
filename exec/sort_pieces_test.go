package exec

import (
	gosort "slices"
	"testing"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// sortedRows runs a sort of batches by keys and returns its rows, in order, as text.
func sortedRows(t *testing.T, env *Env, node *plan.Sort, batches []*vector.Batch) []string {
	t.Helper()
	bd := &builder{env: env}
	s := &sortOp{bd: bd, node: node, in: &batchesOp{batches: gosort.Clone(batches)}, limit: -1, res: reservation{budget: env.Budget}}
	for _, k := range node.Keys {
		ev, err := bd.compile(k.E)
		if err != nil {
			t.Fatal(err)
		}
		s.keys = append(s.keys, ev)
	}
	var out []string
	eachRow(t, s, func(b *vector.Batch, r int) {
		row := ""
		for _, c := range b.Cols {
			row += types.ValueAt(c, r).String() + "|"
		}
		out = append(out, row)
	})
	return out
}

// An input that fits memory, sorted in parts at once and merged, comes out row for
// row as sorted whole: ties (many, with NULLs) keep their input order.
func TestSortPiecesEqualWhole(t *testing.T) {
	batches, in := spillWindowInput(60_000)
	col := func(i int) plan.Expr { return &plan.ColRef{Idx: i, T: in.Cols[i].Type} }
	for _, keys := range [][]plan.SortKey{
		{{E: col(2)}},
		{{E: col(3), Desc: true, NullsFirst: true}, {E: col(2)}},
		{{E: col(1)}, {E: col(4), NullsFirst: true}},
	} {
		node := &plan.Sort{Input: in, Keys: keys}
		whole := sortedRows(t, &Env{Threads: 1}, node, batches)
		defer func(n int) { pieceRows = n }(pieceRows)
		pieceRows = 7_000 // 60,000 rows: 8 or 9 parts
		parts := sortedRows(t, &Env{Threads: 2}, node, batches)
		pieceRows = 1 << 20
		if len(whole) != 60_000 || !gosort.Equal(whole, parts) {
			t.Fatalf("keys %v: sorted in parts (%d rows) differs from sorted whole (%d rows)", keys, len(parts), len(whole))
		}
	}
}
