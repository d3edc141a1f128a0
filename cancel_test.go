package lore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec"
	"github.com/loredb/lore/gen"
)

// cancelTable writes a table large enough for every blocking operator to work for
// seconds.
func cancelTable(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "events")
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 1_000_000, Files: 4, Out: dir, Seed: 11, RowGroupRows: 1 << 17}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// cancelLatency is how long a statement may take to return after its context is
// canceled. The aim is 200 ms; the bound is generous for loaded test machines.
const cancelLatency = time.Second

// checkCancels runs sql and cancels it once it has run for after or, when at is
// not "", 50 ms after it first reaches failure point at (so that it is canceled in
// the blocking work there). It checks that the statement returns CANCELED within
// cancelLatency of the cancel, without leaving memory reserved or goroutines running.
func checkCancels(t *testing.T, e *lore.Engine, sql, at string, after time.Duration) {
	t.Helper()
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var canceledAt atomic.Pointer[time.Time]
	cancelIn := func(d time.Duration) *time.Timer {
		return time.AfterFunc(d, func() {
			now := time.Now()
			canceledAt.Store(&now)
			cancel()
		})
	}
	if at == "" {
		defer cancelIn(after).Stop()
	} else {
		var once sync.Once
		exec.SetFailAt(func(point string) {
			if point == at {
				once.Do(func() { cancelIn(50 * time.Millisecond) })
			}
		})
		defer exec.SetFailAt(nil)
	}
	_, err := e.Query(ctx, sql, nil)
	returned := time.Now()
	c := canceledAt.Load()
	if c == nil {
		t.Fatalf("the statement ended before it was canceled (%v): make it slower", err)
	}
	latency := returned.Sub(*c)
	t.Logf("returned %v after the cancel", latency.Round(time.Millisecond))
	if errs.CodeOf(err) != errs.Canceled {
		t.Fatalf("want CANCELED, got %v", err)
	}
	if latency > cancelLatency {
		t.Fatalf("returned %v after the cancel, want within %v", latency, cancelLatency)
	}
	if used := lore.BudgetUsed(e); used != 0 {
		t.Fatalf("the canceled statement left %d bytes reserved", used)
	}
	settled(t, before)
}

// Every blocking operator stops soon after its statement is canceled.
func TestCancelEveryOperator(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a table of a million rows")
	}
	dir := cancelTable(t)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	query(t, e, "SELECT count(*) FROM ev") // warm: the footers
	for _, c := range []struct{ name, at, sql string }{
		{"scan", "", "SELECT count(*) FROM ev WHERE regexp_matches(category || country || CAST(user_id AS VARCHAR), '^(c|a|t|_|0|1|2|3|4|5)*9$')"},
		{"join-build", exec.PointJoinBuild, "SELECT count(*) FROM ev a JOIN ev b ON a.user_id = b.user_id AND a.ts = b.ts"},
		{"join-probe", exec.PointJoinProbe, "SELECT count(*) FROM ev a JOIN ev b ON a.user_id = b.user_id"},
		{"nested-loop", exec.PointJoinProbe, "SELECT count(*) FROM ev a, ev b WHERE a.amount < b.amount"},
		{"aggregate", "", "SELECT count(*) FROM (SELECT user_id, ts, amount, count(*) FROM ev GROUP BY user_id, ts, amount) x"},
		{"distinct", "", "SELECT count(*) FROM (SELECT DISTINCT ts, user_id, category FROM ev) x"},
		{"sort", exec.PointSort, "SELECT count(*) FROM (SELECT * FROM ev ORDER BY category, country, amount) x"},
		{"top-n", exec.PointSort, "SELECT * FROM ev ORDER BY category, country, amount LIMIT 90000"},
		{"window", exec.PointWindow, "SELECT count(*) FROM (SELECT row_number() OVER (PARTITION BY category ORDER BY country, amount) FROM ev) x"},
		{"window-frame", exec.PointWindow, "SELECT count(*) FROM (SELECT sum(amount) OVER (ORDER BY ts ROWS BETWEEN 5000 PRECEDING AND CURRENT ROW) FROM ev) x"},
		{"except", "", "SELECT count(*) FROM (SELECT ts, user_id, amount FROM ev EXCEPT SELECT ts, user_id, latency_ms FROM ev) x"},
		{"union", "", "SELECT count(*) FROM (SELECT ts, user_id, amount FROM ev UNION SELECT ts, user_id, latency_ms FROM ev) x"},
		{"shared", "", "WITH s AS (SELECT user_id, ts FROM ev ORDER BY country, category, amount) SELECT count(*) FROM s a JOIN s b ON a.user_id = b.user_id"},
		// No pair passes: the LIMIT never fills, and the join goes on until canceled.
		{"limit", "", "SELECT * FROM ev a, ev b WHERE a.amount - b.amount > 1e15 LIMIT 5"},
		{"analyze-sketches", "", "ANALYZE ev WITH (sketches = true)"},
		{"analyze-distinct", "", "ANALYZE ev WITH (distinct = true)"},
	} {
		// ANALYZE of this table takes a few hundred milliseconds on a quiet machine:
		// it is canceled early in its work.
		after := 100 * time.Millisecond
		if strings.HasPrefix(c.name, "analyze") {
			after = 40 * time.Millisecond
		}
		t.Run(c.name, func(t *testing.T) { checkCancels(t, e, c.sql, c.at, after) })
	}
}
