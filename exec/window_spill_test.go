package exec

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// spillWindowInput is n rows of (id, k, o, s, v): id numbers the rows; k, the
// partition, is small for most rows and one of three large values for a tenth of
// them; o, the order, ties often and is sometimes NULL; s is a string or NULL; v an
// integer or NULL.
func spillWindowInput(n int) ([]*vector.Batch, *plan.Stored) {
	rng := rand.New(rand.NewSource(3))
	mem := memory.DefaultAllocator
	ib, kb, ob, vb := array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	sb := array.NewStringBuilder(mem)
	for i := range n {
		ib.Append(int64(i))
		if rng.Intn(10) == 0 {
			kb.Append(int64(rng.Intn(3)))
		} else {
			kb.Append(3 + int64(rng.Intn(n/20)))
		}
		if rng.Intn(20) == 0 {
			ob.AppendNull()
		} else {
			ob.Append(int64(rng.Intn(50)))
		}
		if rng.Intn(60) == 0 {
			sb.AppendNull()
		} else {
			sb.Append(fmt.Sprintf("s%03d", rng.Intn(300)))
		}
		if rng.Intn(9) == 0 {
			vb.AppendNull()
		} else {
			vb.Append(rng.Int63n(1000) - 500)
		}
	}
	cols := []arrow.Array{ib.NewArray(), kb.NewArray(), ob.NewArray(), sb.NewArray(), vb.NewArray()}
	var batches []*vector.Batch
	for lo := 0; lo < n; lo += 3000 {
		hi := min(lo+3000, n)
		b := &vector.Batch{Rows: hi - lo}
		for _, c := range cols {
			b.Cols = append(b.Cols, array.NewSlice(c, int64(lo), int64(hi)))
		}
		batches = append(batches, b)
	}
	in := &plan.Stored{Cols: []plan.Column{{Name: "id", Type: types.Int64}, {Name: "k", Type: types.Int64},
		{Name: "o", Type: types.Int64}, {Name: "s", Type: types.String}, {Name: "v", Type: types.Int64}}}
	return batches, in
}

// windowRows runs node over batches and returns each output row's values by its id
// (column 0).
func windowRows(t *testing.T, env *Env, node *plan.Window, batches []*vector.Batch) map[int64][]string {
	t.Helper()
	w := &windowOp{bd: &builder{env: env}, node: node, in: &batchesOp{batches: batches}, res: reservation{budget: env.Budget}}
	out := map[int64][]string{}
	eachRow(t, w, func(b *vector.Batch, r int) {
		var row []string
		for _, c := range b.Cols {
			row = append(row, types.ValueAt(c, r).String())
		}
		out[b.Cols[0].(*array.Int64).Value(r)] = row
	})
	return out
}

// eachRow runs op to its end, calls f with each of its rows (a compacted batch and
// the row's position in it), and closes op.
func eachRow(t *testing.T, op Operator, f func(b *vector.Batch, r int)) {
	t.Helper()
	defer op.Close()
	for {
		b, err := op.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			return
		}
		b = b.Compact()
		for r := range b.Rows {
			f(b, r)
		}
	}
}

// A window that does not fit its budget spills and gives every row the results the
// in-memory evaluation gives it: over partitions small and large, orders with ties
// (which both break by input order) and NULLs, several orderings (one of them
// again after others), and functions of every kind.
func TestWindowSpillEqualsMemory(t *testing.T) {
	const n = 120_000
	batches, in := spillWindowInput(n)
	col := func(i int) plan.Expr { return &plan.ColRef{Idx: i, T: in.Cols[i].Type} }
	k, o, s, v := col(1), col(2), col(3), col(4)
	part := []plan.Expr{k}
	byO := []plan.SortKey{{E: o}}
	sum := func(frame plan.Frame) plan.WindowCall {
		return plan.WindowCall{Func: "sum", Arg: v, Agg: &plan.AggCall{Func: "sum", Arg: v, T: types.Int64},
			Partition: part, Order: byO, Frame: frame, T: types.Int64}
	}
	rows := plan.Frame{Rows: true, Start: plan.FrameBound{Kind: plan.Preceding, N: 3}, End: plan.FrameBound{Kind: plan.Following, N: 2}}
	running := plan.Frame{Start: plan.FrameBound{Kind: plan.UnboundedPreceding}, End: plan.FrameBound{Kind: plan.CurrentRow}}
	funcs := []plan.WindowCall{
		{Func: "row_number", Partition: part, Order: byO, T: types.Int64},
		{Func: "rank", Partition: part, Order: byO, T: types.Int64},
		sum(rows),
		sum(running),
		{Func: "lag", Arg: s, Args: []plan.Expr{&plan.Literal{V: types.Value{Type: types.Int64, I: 1}}}, Partition: part, Order: byO, T: types.String},
		{Func: "first_value", Arg: v, Partition: []plan.Expr{s}, Order: []plan.SortKey{{E: o, Desc: true, NullsFirst: true}},
			Frame: rows, T: types.Int64},
		{Func: "count", Agg: &plan.AggCall{Func: "count_star", T: types.Int64}, Partition: []plan.Expr{k, s}, T: types.Int64,
			Frame: plan.Frame{Start: plan.FrameBound{Kind: plan.UnboundedPreceding}, End: plan.FrameBound{Kind: plan.UnboundedFollowing}}},
		// The first functions' ordering again, computed in their pass.
		{Func: "dense_rank", Partition: part, Order: byO, T: types.Int64},
	}
	cols := append([]plan.Column(nil), in.Cols...)
	for i, f := range funcs {
		cols = append(cols, plan.Column{Name: fmt.Sprintf("f%d", i), Type: f.T})
	}
	node := &plan.Window{Input: in, Funcs: funcs, Cols: cols}

	want := windowRows(t, &Env{Budget: NewBudget(1 << 30)}, node, batches)
	dir := t.TempDir()
	sp := NewSpillSpace(dir, 1<<32).Statement()
	got := windowRows(t, &Env{Budget: NewBudget(4 << 20), Spill: sp}, node, batches)
	if sp.Bytes.Load() == 0 {
		t.Fatal("the window did not spill")
	}
	if g := fmt.Sprint(orderingGroups(funcs)); g != "[[0 1 2 3 4 7] [5] [6]]" {
		t.Fatalf("orderings %s", g)
	}
	sp.Close()
	if len(got) != n || len(want) != n {
		t.Fatalf("%d rows spilling, %d in memory, want %d", len(got), len(want), n)
	}
	for id, w := range want {
		g := got[id]
		for c := range w {
			if g[c] != w[c] {
				t.Fatalf("row %d column %s: %s spilling, %s in memory", id, cols[c].Name, g[c], w[c])
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("%d entries left in the spill directory", len(entries))
	}
}

// partitionStarts finds where partitions start within a batch and against the
// batch before; splitBatches cuts batches at any row.
func TestPartitionStartsAndSplit(t *testing.T) {
	mem := memory.DefaultAllocator
	ints := func(vals ...int64) arrow.Array {
		b := array.NewInt64Builder(mem)
		for _, v := range vals {
			if v < 0 {
				b.AppendNull()
			} else {
				b.Append(v)
			}
		}
		return b.NewArray()
	}
	prev := []arrow.Array{ints(1, 2)}
	for _, c := range []struct {
		keys []int64
		prev []arrow.Array
		want string
	}{
		{[]int64{2, 2, 3, -1, -1, 4}, prev, "[2 3 5]"},
		{[]int64{5, 5}, prev, "[0]"},
		{[]int64{5, 5}, nil, "[0]"},
		{[]int64{2}, prev, "[]"},
	} {
		if got := fmt.Sprint(partitionStarts([]arrow.Array{ints(c.keys...)}, c.prev)); got != c.want {
			t.Errorf("starts of %v after %v: %s, want %s", c.keys, c.prev, got, c.want)
		}
	}
	if got := partitionStarts(nil, nil); got != nil {
		t.Errorf("starts without keys: %v", got)
	}
	batches := []*vector.Batch{{Rows: 3, Cols: []arrow.Array{ints(0, 1, 2)}}, {Rows: 2, Cols: []arrow.Array{ints(3, 4)}}}
	for cut := 0; cut <= 5; cut++ {
		before, after := splitBatches(batches, cut)
		var seen []int64
		rows := 0
		for i, part := range [][]*vector.Batch{before, after} {
			for _, b := range part {
				for r := range b.Rows {
					seen = append(seen, b.Cols[0].(*array.Int64).Value(r))
				}
				if i == 0 {
					rows += b.Rows
				}
			}
		}
		if rows != cut || fmt.Sprint(seen) != "[0 1 2 3 4]" {
			t.Errorf("split at %d: %d rows before, rows %v", cut, rows, seen)
		}
	}
}

// BenchmarkWindowSpill is row_number and a sliding sum over 1M rows in partitions of
// about 40 rows (and three of 33,000), in memory and spilling under 16 MiB.
func BenchmarkWindowSpill(b *testing.B) {
	const n = 1_000_000
	batches, in := spillWindowInput(n)
	k, o, v := &plan.ColRef{Idx: 1, T: types.Int64}, &plan.ColRef{Idx: 2, T: types.Int64}, &plan.ColRef{Idx: 4, T: types.Int64}
	frame := plan.Frame{Rows: true, Start: plan.FrameBound{Kind: plan.Preceding, N: 3}, End: plan.FrameBound{Kind: plan.Following, N: 2}}
	funcs := []plan.WindowCall{
		{Func: "row_number", Partition: []plan.Expr{k}, Order: []plan.SortKey{{E: o}}, T: types.Int64},
		{Func: "sum", Arg: v, Agg: &plan.AggCall{Func: "sum", Arg: v, T: types.Int64},
			Partition: []plan.Expr{k}, Order: []plan.SortKey{{E: o}}, Frame: frame, T: types.Int64},
	}
	node := &plan.Window{Input: in, Funcs: funcs, Cols: append(append([]plan.Column(nil), in.Cols...),
		plan.Column{Name: "rn", Type: types.Int64}, plan.Column{Name: "s", Type: types.Int64})}
	for _, c := range []struct {
		name  string
		limit int64
	}{{"memory", 4 << 30}, {"spill16MiB", 16 << 20}} {
		b.Run(c.name, func(b *testing.B) {
			space := NewSpillSpace(b.TempDir(), 1<<34)
			var spilled int64
			for range b.N {
				sp := space.Statement()
				env := &Env{Budget: NewBudget(c.limit), Spill: sp}
				w := &windowOp{bd: &builder{env: env}, node: node, in: &batchesOp{batches: batches}, res: reservation{budget: env.Budget}}
				rows := 0
				for {
					out, err := w.Next(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					if out == nil {
						break
					}
					rows += out.Len()
				}
				w.Close()
				spilled = sp.Bytes.Load()
				sp.Close()
				if rows != n {
					b.Fatalf("%d rows", rows)
				}
			}
			b.ReportMetric(float64(spilled), "spilled-bytes/op")
		})
	}
}
