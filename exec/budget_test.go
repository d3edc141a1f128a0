package exec

import (
	"context"
	"errors"
	"testing"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
)

// TestChildBudget: a statement's budget takes from the engine's as well, cannot pass
// its own limit, and gives back what it still holds when closed.
func TestChildBudget(t *testing.T) {
	engine := NewBudget(1000)
	a, b := engine.Child(600), engine.Child(0)
	if b.Limit() != 1000 || engine.Child(5000).Limit() != 1000 {
		t.Fatalf("a child's limit is at most its parent's")
	}
	if err := a.Reserve(601); !errors.Is(err, errs.ErrResourceExhausted) {
		t.Fatalf("past the child's limit: %v", err)
	}
	if err := a.Reserve(500); err != nil {
		t.Fatal(err)
	}
	if err := b.Reserve(501); !errors.Is(err, errs.ErrResourceExhausted) {
		t.Fatalf("past the engine's limit: %v", err)
	}
	if b.Used() != 0 || engine.Used() != 500 {
		t.Fatalf("a refused reservation left %d in the child, %d in the engine", b.Used(), engine.Used())
	}
	a.Close()
	if engine.Used() != 0 {
		t.Fatalf("closing a child left %d bytes in the engine's budget", engine.Used())
	}
}

// TestResultIsReserved: the rows a statement collects count against its budget.
func TestResultIsReserved(t *testing.T) {
	k := make([]int64, 100_000)
	rows := stored(t, k, k) // 1.6 MB
	budget := NewBudget(1 << 20)
	_, err := Run(context.Background(), &Env{Budget: budget, Threads: 1}, &plan.Project{Input: rows,
		Exprs: []plan.Expr{&plan.ColRef{Idx: 0, T: types.Int64}, &plan.ColRef{Idx: 1, T: types.Int64}}, Cols: rows.Columns()})
	if !errors.Is(err, errs.ErrResourceExhausted) {
		t.Fatalf("a 1.6 MB result under a 1 MiB budget: %v", err)
	}
	if budget.Used() != 0 {
		t.Fatalf("%d bytes still reserved", budget.Used())
	}
}

// TestSizedFunctionAsksTheBudget: a padding that would make more than an eighth of
// the budget for one batch fails before it is made.
func TestSizedFunctionAsksTheBudget(t *testing.T) {
	k := make([]int64, 1000)
	rows := stored(t, k, k)
	pad := func(width int64) plan.Node {
		s := &plan.Cast{E: &plan.ColRef{Idx: 0, T: types.Int64}, To: types.String}
		e := call(t, "lpad", s, &plan.Literal{V: types.Value{Type: types.Int64, I: width}}, &plan.Literal{V: types.StringValue("x")})
		return &plan.Project{Input: rows, Exprs: []plan.Expr{e}, Cols: []plan.Column{{Name: "p", Type: types.String}}}
	}
	budget := NewBudget(64 << 20)
	if _, err := Run(context.Background(), &Env{Budget: budget, Threads: 1}, pad(100)); err != nil {
		t.Fatal(err)
	}
	// 1000 rows of 10,000 bytes: 10 MB, more than 64 MiB / 8.
	_, err := Run(context.Background(), &Env{Budget: budget, Threads: 1}, pad(10_000))
	if !errors.Is(err, errs.ErrResourceExhausted) {
		t.Fatalf("lpad to 10,000 over 1000 rows under 64 MiB: %v", err)
	}
	if budget.Used() != 0 {
		t.Fatalf("%d bytes still reserved", budget.Used())
	}
}

// TestWindowReservesItsWork: a window function holds its ordering, frames and values
// per row while it is computed, more than its input's columns; the budget counts it.
func TestWindowReservesItsWork(t *testing.T) {
	k := make([]int64, 100_000)
	rows := stored(t, k, k) // 1.6 MB; the work is about 8 MB
	w := &plan.Window{Input: rows, Cols: append(rows.Columns(), plan.Column{Name: "n", Type: types.Int64}),
		Funcs: []plan.WindowCall{{Func: "row_number", Order: []plan.SortKey{{E: &plan.ColRef{Idx: 1, T: types.Int64}}}, T: types.Int64}}}
	budget := NewBudget(6 << 20)
	_, err := Run(context.Background(), &Env{Budget: budget, Threads: 1}, &plan.Aggregate{Input: w, Cols: []plan.Column{{Name: "c", Type: types.Int64}},
		Aggs: []plan.AggCall{{Func: "count_star"}}})
	if !errors.Is(err, errs.ErrResourceExhausted) {
		t.Fatalf("row_number over 100,000 rows under 6 MiB: %v", err)
	}
	if budget.Used() != 0 {
		t.Fatalf("%d bytes still reserved", budget.Used())
	}
	if _, err := Run(context.Background(), &Env{Budget: NewBudget(64 << 20), Threads: 1}, w); err != nil {
		t.Fatalf("under 64 MiB: %v", err)
	}
}
