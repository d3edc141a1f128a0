package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestDSSmoke runs the 99 decision-support queries on toy-sized data (store_sales
// 4000 rows) through the whole harness: every query must succeed on both engines
// with equal results. Times are not checked.
func TestDSSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("the 99 queries take about half a minute")
	}
	ctx := context.Background()
	s, err := DSSuite(ctx, DSConfig{SF: 0.001, DataDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tables) != 24 || len(s.Queries) != 99 {
		t.Fatalf("%d tables, %d queries", len(s.Tables), len(s.Queries))
	}
	cfg := Config{Threads: 2, Rounds: 1, Timeout: time.Minute,
		LoreSettings: map[string]string{"use_statistics": "false", "result_cache": "false"}}
	res, err := RunSuite(ctx, cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range res.Queries {
		if !q.Lore.OK() || !q.DuckDB.OK() {
			t.Errorf("%s: lore %q, duckdb %q", q.Name, q.Lore.Error, q.DuckDB.Error)
			continue
		}
		if q.Equal == nil || !*q.Equal {
			t.Errorf("%s: results differ: %s", q.Name, q.Diff)
		}
	}
}

// TestDSQueriesParse checks the query files' headers against their texts: an ORDER
// BY without an order line is compared as a multiset only where it orders by an
// expression that is not an output column.
func TestDSQueriesParse(t *testing.T) {
	qs, err := DSQueries()
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 99 {
		t.Fatalf("%d queries, want 99", len(qs))
	}
	for i, q := range qs {
		if want := "q" + twoDigits(i+1); q.Name != want {
			t.Errorf("query %d is %s, want %s", i, q.Name, want)
		}
		if strings.Contains(q.SQL, "--") || strings.HasSuffix(q.SQL, ";") {
			t.Errorf("%s: comments or the semicolon left", q.Name)
		}
		upper := strings.ToUpper(q.SQL)
		limited := strings.Contains(upper[max(0, strings.LastIndex(upper, ")")):], "LIMIT")
		if len(q.Order.Keys) > 0 && q.Order.Limited != limited {
			t.Errorf("%s: final LIMIT %v but limited %v", q.Name, limited, q.Order.Limited)
		}
	}
}
