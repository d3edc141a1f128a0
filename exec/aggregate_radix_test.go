package exec

import (
	"context"
	"fmt"
	gosort "slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// aggregateRows aggregates batches as node says, fed to workers workers in turn
// (one: sequentially), and returns its rows as text, sorted, and whether the
// workers partitioned their groups.
func aggregateRows(t *testing.T, env *Env, node *plan.Aggregate, batches []*vector.Batch, workers int) ([]string, bool) {
	t.Helper()
	ctx := context.Background()
	op, err := (&builder{env: env}).buildAggregate(node)
	if err != nil {
		t.Fatal(err)
	}
	h := op.(*hashAggregate)
	h.started = true
	var final *aggState
	var parts []*aggState
	if workers == 1 {
		final, err = h.sequential(ctx, &batchesOp{batches: gosort.Clone(batches)})
	} else {
		final, parts, err = h.inParallel(ctx, func(sink func(w int, b *vector.Batch) error) error {
			for i, b := range batches {
				if err := sink(i%workers, b); err != nil {
					return err
				}
			}
			return nil
		}, nil)
	}
	if err == nil {
		err = h.finish(ctx, final, parts)
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	eachRow(t, h, func(b *vector.Batch, r int) {
		row := ""
		for _, c := range b.Cols {
			row += types.ValueAt(c, r).String() + "|"
		}
		out = append(out, row)
	})
	gosort.Sort(out)
	return out, h.radix.Load() == radixPartitioned
}

// A parallel aggregate whose first batch holds many groups partitions them by hash,
// and gives the groups and values one worker gives without partitions: keys of one
// and two columns, with NULL keys, through every kind of accumulator; one whose first
// batch holds few groups does not partition; and one that spills with partitioned
// workers gives the same groups too.
func TestAggregatePartitionedEqualsFlat(t *testing.T) {
	batches, in := spillWindowInput(60_000)
	col := func(i int) plan.Expr { return &plan.ColRef{Idx: i, T: in.Cols[i].Type} }
	gt, err := kernels.Resolve(">", []arrow.DataType{types.Int64, types.Int64})
	if err != nil {
		t.Fatal(err)
	}
	positive := &plan.Call{Fn: gt, Args: []plan.Expr{col(4), &plan.Literal{V: types.Value{Type: types.Int64, I: 0}}}}
	aggs := []plan.AggCall{
		{Func: "count_star", T: types.Int64},
		{Func: "sum", Arg: col(4), T: types.Int64},
		{Func: "min", Arg: col(3), T: types.String},
		{Func: "max", Arg: col(0), T: types.Int64},
		{Func: "count", Arg: col(4), T: types.Int64, Distinct: true},
		{Func: "avg", Arg: col(2), T: types.Float64, Filter: positive},
		{Func: "string_agg", Arg: col(3), T: types.String, Sep: ",", Order: []plan.SortKey{{E: col(3)}, {E: col(0)}}},
	}
	cases := []struct {
		name      string
		groups    []plan.Expr
		partition bool
	}{
		{"int key", []plan.Expr{col(1)}, true},
		{"string and int key", []plan.Expr{col(3), col(1)}, true},
		{"nullable int key", []plan.Expr{col(2), col(1)}, true},
		{"few groups", []plan.Expr{col(2)}, false},
	}
	for _, c := range cases {
		node := &plan.Aggregate{Input: in, Groups: c.groups, Aggs: aggs}
		for i, g := range c.groups {
			node.Cols = append(node.Cols, plan.Column{Name: fmt.Sprintf("g%d", i), Type: g.Type()})
		}
		for i, a := range aggs {
			node.Cols = append(node.Cols, plan.Column{Name: fmt.Sprintf("a%d", i), Type: a.T})
		}
		want, _ := aggregateRows(t, &Env{Threads: 1}, node, batches, 1)
		got, partitioned := aggregateRows(t, &Env{Threads: 2}, node, batches, 2)
		if partitioned != c.partition {
			t.Errorf("%s: partitioned %v, want %v", c.name, partitioned, c.partition)
		}
		if !gosort.Equal(got, want) {
			t.Errorf("%s: %d groups partitioned, %d flat; first %q, want %q", c.name, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
		}
		sp := NewSpillSpace(t.TempDir(), 1<<32).Statement()
		spilled, _ := aggregateRows(t, &Env{Threads: 2, Budget: NewBudget(3 << 20), Spill: sp}, node, batches, 2)
		if c.partition && sp.Bytes.Load() == 0 {
			t.Errorf("%s: the aggregate did not spill", c.name)
		}
		if !gosort.Equal(spilled, want) {
			t.Errorf("%s: %d groups spilled, %d in memory", c.name, len(spilled), len(want))
		}
	}
}
