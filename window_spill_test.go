package lore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// windowOrderKeys order the rows of a user (and of the whole table) totally: ts is
// nearly unique, and the other columns tell apart what it does not. With a total
// order every function's result is defined, so the spilling and the in-memory
// evaluation must agree row for row.
const windowOrderKeys = "ts, category, amount, latency_ms, status, country, flag"

// windowShapes are windows over many small partitions (a user's events of one
// category, most of a few rows) and a few large ones (the first users' hold
// thousands: more than a pass computes at once), of every kind of function, over
// strings, NULLs and decimals. Sums and averages are of decimals: a
// float sum's last bits depend on how the rows are grouped when added.
var windowShapes = []string{
	// Ranking and navigation over one window, and ranks over ties.
	"SELECT user_id, ts, row_number() OVER w, ntile(7) OVER w, lag(amount, 2) OVER w, lead(country) OVER w, " +
		"lag(category, 1, 'none') OVER w, first_value(latency_ms) OVER w, last_value(country) OVER w, " +
		"nth_value(flag, 3) OVER w, first_value(amount IGNORE NULLS) OVER w, " +
		"rank() OVER (PARTITION BY user_id, category ORDER BY status), dense_rank() OVER (PARTITION BY user_id, category ORDER BY country DESC), " +
		"percent_rank() OVER (PARTITION BY user_id, category ORDER BY country), cume_dist() OVER (PARTITION BY user_id, category ORDER BY flag NULLS FIRST) " +
		"FROM events WINDOW w AS (PARTITION BY user_id, category ORDER BY " + windowOrderKeys + ")",
	// Aggregates over ROWS, RANGE and GROUPS frames, partitions of two keys.
	"SELECT user_id, ts, " +
		"sum(CAST(amount AS DECIMAL(14,2))) OVER (PARTITION BY user_id, category ORDER BY " + windowOrderKeys + " ROWS BETWEEN 5 PRECEDING AND 3 FOLLOWING), " +
		"avg(CAST(latency_ms AS DECIMAL(12,2))) OVER (PARTITION BY user_id, category ORDER BY " + windowOrderKeys + " ROWS UNBOUNDED PRECEDING), " +
		"count(*) OVER (PARTITION BY user_id, category, status ORDER BY ts RANGE BETWEEN INTERVAL '1 day' PRECEDING AND CURRENT ROW), " +
		"count(amount) OVER (PARTITION BY user_id, category ORDER BY status RANGE BETWEEN 100 PRECEDING AND 50 FOLLOWING), " +
		"min(country) OVER (PARTITION BY user_id, category ORDER BY status GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING), " +
		"max(country) OVER (PARTITION BY user_id, category), " +
		"sum(CAST(amount AS DECIMAL(14,2))) FILTER (WHERE flag) OVER (PARTITION BY user_id, category ORDER BY " + windowOrderKeys + " ROWS BETWEEN 40 PRECEDING AND 40 FOLLOWING EXCLUDE CURRENT ROW) " +
		"FROM events",
	// Partitions by an expression and by strings, ordered by a string DESC; an
	// ORDER BY over the result.
	"SELECT user_id, ts, category, row_number() OVER (PARTITION BY user_id % 997, category ORDER BY country DESC, ts, user_id, amount), " +
		"max(amount) OVER (PARTITION BY user_id % 997, category ORDER BY country DESC RANGE UNBOUNDED PRECEDING) " +
		"FROM events ORDER BY user_id, ts, category, amount, latency_ms, status, country, flag",
	// Partitions by lists, which the sort orders by their encodings.
	"SELECT user_id, ts, row_number() OVER (PARTITION BY user_id, string_split(country || '_' || category, '_') ORDER BY " + windowOrderKeys + "), " +
		"count(*) OVER (PARTITION BY string_split(CAST(user_id % 1000 AS VARCHAR) || '-' || country, '-')) FROM events",
}

// testWindowSpill checks the window shapes under a small budget against the
// in-memory evaluation; every one of them spills.
func testWindowSpill(t *testing.T, rows int64, limit string) {
	testMultisetSpill(t, windowShapes, rows, limit, len(windowShapes))
}

// TestWindowSpillShort: the window shapes over 50,000 rows with a 3 MiB budget.
func TestWindowSpillShort(t *testing.T) { testWindowSpill(t, 50_000, "3MiB") }

// TestWindowSpill: the window shapes over 2M rows (the largest user has 56,000,
// about 5,000 in one category) with a 16 MiB budget.
func TestWindowSpill(t *testing.T) {
	if testing.Short() {
		t.Skip("windows over 2M rows several times")
	}
	testWindowSpill(t, 2_000_000, "16MiB")
}

// TestWindowSpillLimits: a partition larger than the budget still fails, with
// RESOURCE_EXHAUSTED, whether the window spills or (without PARTITION BY) not; and a spilling window that fails computing a function or is
// canceled leaves no file behind.
func TestWindowSpillLimits(t *testing.T) {
	e, spill := spillEngine(t, 100_000, lore.Options{})
	settings := map[string]string{"memory_limit": "3MiB"}
	stmt := "SELECT ts, sum(amount) OVER (ORDER BY ts) FROM events"
	if _, err := e.QueryStream(context.Background(), stmt, settings, newDigest()); errs.CodeOf(err) != errs.ResourceExhausted {
		t.Fatalf("a window of one partition larger than the budget: %v", err)
	}
	spillEmpty(t, spill)
	stmt = "SELECT ts, sum(amount) OVER (PARTITION BY status ORDER BY ts) FROM events"
	_, err := e.QueryStream(context.Background(), stmt, settings, newDigest())
	if errs.CodeOf(err) != errs.ResourceExhausted || !strings.Contains(err.Error(), "window's partitions") {
		t.Fatalf("a window of partitions larger than the budget: %v", err)
	}
	spillEmpty(t, spill)
	bad := "SELECT user_id, max(CAST(category AS INTEGER)) OVER (PARTITION BY user_id) FROM events"
	rec, err := e.QueryStream(context.Background(), bad, settings, newDigest())
	if err == nil || errs.CodeOf(err) == errs.ResourceExhausted {
		t.Fatalf("a failing function in a spilling window: %v", err)
	}
	if rec.Execution.SpilledBytes == 0 {
		t.Fatalf("the failing window did not spill before it failed: %v", err)
	}
	spillEmpty(t, spill)
	ctx, cancel := context.WithCancel(context.Background())
	d := newDigest()
	d.cancel, d.cancelAt = cancel, 1
	rec, err = e.QueryStream(ctx, windowShapes[1], settings, d)
	if errs.CodeOf(err) != errs.Canceled {
		t.Fatalf("canceled spilling window: %v", err)
	}
	if rec.Execution.SpilledBytes == 0 {
		t.Fatal("the canceled window did not spill before it was canceled")
	}
	cancel()
	spillEmpty(t, spill)
}
