package exec

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// unnestInput is one batch of rows (id, list of BIGINT) whose lists have the given
// lengths (-1 for a NULL list); the elements count up from 0 across all rows.
func unnestInput(lens ...int) (*vector.Batch, []plan.Column) {
	lb := array.NewListBuilder(vector.Allocator, types.Int64)
	vb := lb.ValueBuilder().(*array.Int64Builder)
	ib := array.NewInt64Builder(vector.Allocator)
	next := int64(0)
	for i, n := range lens {
		ib.Append(int64(i))
		if n < 0 {
			lb.AppendNull()
			continue
		}
		lb.Append(true)
		for k := 0; k < n; k++ {
			vb.Append(next)
			next++
		}
	}
	cols := []plan.Column{{Name: "id", Type: types.Int64}, {Name: "l", Type: arrow.ListOf(types.Int64)}}
	return vector.New([]arrow.Array{ib.NewArray(), lb.NewArray()}, len(lens)), cols
}

// A row whose list is longer than a batch is split over several batches, none over
// BatchSize rows, with its other columns repeated and no element lost or reordered;
// empty and NULL lists give no rows.
func TestUnnestSplitsLongListsIntoBatches(t *testing.T) {
	in, cols := unnestInput(3, 0, 2*vector.BatchSize+5, -1, 1)
	out := append([]plan.Column(nil), cols...)
	out[1].Type = types.Int64
	op := &unnestOp{in: &batchesOp{batches: []*vector.Batch{in}}, node: &plan.Unnest{Lists: []int{1}, Cols: out}, lstOf: []int{-1, 0}}
	defer op.Close()
	want := int64(0)
	var ids []int64
	for {
		b, err := op.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			break
		}
		if b.Len() > vector.BatchSize {
			t.Fatalf("a batch of %d rows", b.Len())
		}
		for _, r := range b.Selection() {
			if v := types.ValueAt(b.Cols[1], int(r)).I; v != want {
				t.Fatalf("element %d is %d", want, v)
			}
			want++
			id := types.ValueAt(b.Cols[0], int(r)).I
			if len(ids) == 0 || ids[len(ids)-1] != id {
				ids = append(ids, id)
			}
		}
	}
	if total := int64(3 + 2*vector.BatchSize + 5 + 1); want != total {
		t.Fatalf("%d rows, want %d", want, total)
	}
	if len(ids) != 3 || ids[0] != 0 || ids[1] != 2 || ids[2] != 4 {
		t.Fatalf("rows of ids %v, want those of 0, 2 and 4", ids)
	}
}

// A canceled statement stops the operator between batches, even in the middle of
// one row's list.
func TestUnnestStopsWhenCanceled(t *testing.T) {
	in, cols := unnestInput(4 * vector.BatchSize)
	op := &unnestOp{in: &batchesOp{batches: []*vector.Batch{in}}, node: &plan.Unnest{Lists: []int{1}, Cols: cols}, lstOf: []int{-1, 0}}
	defer op.Close()
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := op.Next(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	_, err := op.Next(ctx)
	var e *errs.Error
	if !errors.As(err, &e) || e.Code != errs.Canceled {
		t.Fatalf("got %v, want CANCELED", err)
	}
}
