package lore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// endless is a recursion that never adds no row.
const endless = "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t"

// A recursion without end holds every row it made under the statement's memory
// limit, and fails when it is reached instead of running for ever.
func TestEndlessRecursionReachesTheMemoryLimit(t *testing.T) {
	e := open(t, lore.Options{MemoryLimit: 4 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := e.Query(ctx, endless, nil)
	if errs.CodeOf(err) != errs.ResourceExhausted {
		t.Fatalf("want RESOURCE_EXHAUSTED, got %v", err)
	}
	if used := lore.BudgetUsed(e); used != 0 {
		t.Fatalf("the failed statement left %d bytes reserved", used)
	}
	// The engine still answers.
	if got := cell(query(t, e, "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT sum(n) FROM t"), 0, 0); got != "15" {
		t.Fatalf("sum = %s, want 15", got)
	}
}

// A recursion without end stops between iterations when its statement is canceled.
func TestEndlessRecursionStopsOnCancel(t *testing.T) {
	e := open(t, lore.Options{})
	checkCancels(t, e, endless, "", 100*time.Millisecond)
}

// EXPLAIN draws a recursive query as its anchor and its recursive part, which reads
// the work table.
func TestExplainRecursive(t *testing.T) {
	e := open(t, lore.Options{})
	plan := explain(t, e, "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT sum(n) FROM t", nil)
	for _, want := range []string{"Recursive union all until an iteration adds no row", "WorkTable t", "1 rows"} {
		if !strings.Contains(plan, want) {
			t.Errorf("EXPLAIN has no %q:\n%s", want, plan)
		}
	}
}
