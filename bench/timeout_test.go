package main

import (
	"context"
	"testing"
	"time"
)

// This file sorts after the other tests on purpose: an engine that ignores the
// cancellation keeps a core busy until its query ends, which would slow the tests
// that follow it.

// TestTimeoutAndError: a query past the timeout is reported as a timeout, a bad
// query as an error with Lore's code, and the run goes on.
func TestTimeoutAndError(t *testing.T) {
	ctx := context.Background()
	s, err := EventsSuite(ctx, EventsConfig{Rows: 20_000, Files: 1, DataDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Queries = []Query{
		{Name: "bad", SQL: "SELECT no_such_column FROM events"},
		// A cross join too large to finish within the timeout (4e8 pairs).
		{Name: "slow", SQL: "SELECT count(*) FROM events a, events b WHERE a.amount + b.amount > -1"},
		{Name: "fine", SQL: "SELECT count(*) FROM events"},
	}
	res, err := RunSuite(ctx, Config{Threads: 1, Rounds: 1, Timeout: 300 * time.Millisecond, Grace: 2 * time.Second}, s)
	if err != nil {
		t.Fatal(err)
	}
	bad, slow, fine := res.Queries[0], res.Queries[1], res.Queries[2]
	if bad.Lore.ErrorCode != "ANALYSIS_ERROR" || bad.DuckDB.OK() || bad.Equal != nil {
		t.Errorf("bad: %+v", bad)
	}
	t.Logf("slow: lore %s, duckdb %s", slow.Lore.Status(), slow.DuckDB.Status())
	// Either engine may stop promptly or be left running; both are timeouts.
	if !slow.Lore.Timeout || !slow.DuckDB.Timeout || slow.Lore.Status() == "" {
		t.Errorf("slow: lore %+v, duckdb %+v", slow.Lore, slow.DuckDB)
	}
	if !fine.Lore.OK() || !fine.DuckDB.OK() || fine.Equal == nil || !*fine.Equal {
		t.Errorf("fine: %+v", fine)
	}
}
