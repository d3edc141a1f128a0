package vector

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/types"
)

func TestTakeCompactAndValues(t *testing.T) {
	vals := []types.Value{types.IntValue(10), types.NullOf(types.Int64), types.IntValue(30), types.IntValue(40)}
	a := FromValues(types.Int64, vals)
	s := FromValues(types.String, []types.Value{types.StringValue("a"), types.StringValue("b"), types.NullOf(types.String), types.StringValue("d")})
	b := &Batch{Cols: []arrow.Array{a, nil, s}, Rows: 4, Sel: []int32{0, 2, 3}}
	if b.Len() != 3 {
		t.Fatalf("len %d", b.Len())
	}
	c := b.Compact()
	if c.Rows != 3 || c.Sel != nil || c.Cols[1] != nil {
		t.Fatalf("compacted: %+v", c)
	}
	if got := []string{types.ValueAt(c.Cols[0], 0).String(), types.ValueAt(c.Cols[0], 2).String(), types.ValueAt(c.Cols[2], 1).String()}; got[0] != "10" || got[1] != "40" || got[2] != "NULL" {
		t.Fatalf("values %v", got)
	}
	// A negative position gathers a NULL.
	g := Take(s, []int32{3, -1, 0})
	if g.Len() != 3 || !g.IsNull(1) || g.(*array.String).Value(0) != "d" {
		t.Fatalf("take: %v", g)
	}
	if whole := (&Batch{Cols: []arrow.Array{a}, Rows: 4}); whole.Compact() != whole || len(whole.Selection()) != 4 {
		t.Fatal("a batch without a selection is its own compaction")
	}
}
