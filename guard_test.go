package lore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec"
)

// limitOf is the guardrail that stopped a statement, or fails the test.
func limitOf(t *testing.T, err error, setting string) *errs.LimitError {
	t.Helper()
	var le *errs.LimitError
	if errs.CodeOf(err) != errs.ResourceExhausted || !errors.As(err, &le) || le.Setting != setting ||
		!strings.Contains(err.Error(), setting) {
		t.Fatalf("want RESOURCE_EXHAUSTED naming %s, got %v", setting, err)
	}
	return le
}

// lastRecord is the newest record in the engine's query log.
func lastRecord(t *testing.T, e *lore.Engine) lore.Record {
	t.Helper()
	entries, err := e.Catalog().RecentQueries(context.Background(), 1)
	if err != nil || len(entries) != 1 {
		t.Fatalf("query log: %v, %d entries", err, len(entries))
	}
	var rec lore.Record
	if err := json.Unmarshal(entries[0].Record, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestGuardrailSettingsRefuseBadValues(t *testing.T) {
	e := open(t, lore.Options{})
	for _, kv := range [][2]string{
		{"max_execution_ms", "0"}, {"max_execution_ms", "1.5"}, {"max_execution_ms", "soon"},
		{"max_rows_scanned", "-1"}, {"max_rows_scanned", "1e9"}, {"max_result_rows", ""},
		{"max_result_bytes", "lots"}, {"max_result_bytes", "0"}, {"dry_run", "maybe"},
	} {
		_, err := e.Query(context.Background(), "SELECT 1", map[string]string{kv[0]: kv[1]})
		if errs.CodeOf(err) != errs.InvalidSetting || !strings.Contains(err.Error(), kv[0]) {
			t.Errorf("%s = %q: want INVALID_SETTING naming it, got %v", kv[0], kv[1], err)
		}
	}
	res, err := e.Query(context.Background(), "SET SESSION max_result_bytes = '64KiB'; SET SESSION max_rows_scanned = 10; SELECT 1", nil)
	if err != nil || res.Record.Settings["max_result_bytes"] != "64kib" {
		t.Fatalf("good values: %v %+v", err, res)
	}
	if _, err := lore.Open(context.Background(), lore.Options{Home: t.TempDir(), Ceilings: lore.Guardrails{MaxRowsScanned: -1}}); errs.CodeOf(err) != errs.InvalidSetting {
		t.Fatalf("a negative ceiling: %v", err)
	}
}

func TestMaxRowsScannedStopsTheScanEarly(t *testing.T) {
	dir := events(t, 400_000, 4, 8_192, false)
	e := open(t, lore.Options{Threads: 2})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	const limit = 20_000
	_, err := e.Query(context.Background(), "SELECT sum(amount) FROM ev", map[string]string{"max_rows_scanned": fmt.Sprint(limit)})
	if le := limitOf(t, err, "max_rows_scanned"); le.Limit != limit {
		t.Fatalf("limit %d", le.Limit)
	}
	rec := lastRecord(t, e)
	if rec.State != "failed" || rec.Error == nil || rec.Error.Code != "RESOURCE_EXHAUSTED" || len(rec.Scans) != 1 {
		t.Fatalf("record: %+v", rec)
	}
	// The breaker trips mid-scan: the scan read past the limit by at most a batch
	// per worker, far from the whole table.
	if got := rec.Scans[0].RowsScanned; got <= limit || got > limit+4*8_192 {
		t.Fatalf("rows scanned %d: want just past %d of 400000", got, limit)
	}
	// Under the limit the statement runs; answers from statistics read no rows.
	query(t, e, "ANALYZE ev")
	res, err := e.Query(context.Background(), "SELECT count(*), min(ts) FROM ev", map[string]string{"max_rows_scanned": "1"})
	if err != nil || res.Record.Execution.Mode != "context" || cell(res, 0, 0) != "400000" {
		t.Fatalf("answer from statistics under max_rows_scanned = 1: %v %+v", err, res)
	}
	if _, err := e.Query(context.Background(), "SELECT count(*) FROM ev WHERE amount > 10", map[string]string{"max_rows_scanned": "400000"}); err != nil {
		t.Fatalf("a scan of exactly the limit: %v", err)
	}
}

func TestMaxExecutionMsIsADeadline(t *testing.T) {
	dir := events(t, 20_000, 2, 4_000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	// Every batch a scan hands on takes 300 ms: the statement takes longer than its limit.
	exec.SetFailAt(func(point string) {
		if point == exec.PointScanWorker {
			time.Sleep(300 * time.Millisecond)
		}
	})
	defer exec.SetFailAt(nil)
	start := time.Now()
	_, err := e.Query(context.Background(), "SELECT sum(amount) FROM ev", map[string]string{"max_execution_ms": "100"})
	took := time.Since(start)
	limitOf(t, err, "max_execution_ms")
	if took > 2*time.Second {
		t.Fatalf("the deadline of 100 ms returned after %v", took)
	}
	if rec := lastRecord(t, e); rec.Error == nil || rec.Error.Code != "RESOURCE_EXHAUSTED" {
		t.Fatalf("record: %+v", rec)
	}
	// A caller's own cancellation stays CANCELED.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := e.Query(ctx, "SELECT sum(amount) FROM ev", map[string]string{"max_execution_ms": "60000"}); errs.CodeOf(err) != errs.Canceled {
		t.Fatalf("caller's deadline: %v", err)
	}
}

func TestResultLimitsFailRatherThanTruncate(t *testing.T) {
	dir := events(t, 20_000, 2, 4_000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	ctx := context.Background()
	_, err := e.Query(ctx, "SELECT user_id FROM ev LIMIT 1000", map[string]string{"max_result_rows": "999"})
	limitOf(t, err, "max_result_rows")
	res, err := e.Query(ctx, "SELECT user_id FROM ev LIMIT 1000", map[string]string{"max_result_rows": "1000"})
	if err != nil || res.NumRows() != 1000 {
		t.Fatalf("a result of exactly the limit: %v", err)
	}
	// 1000 BIGINTs hold 8000 bytes and their validity bits.
	_, err = e.Query(ctx, "SELECT user_id FROM ev LIMIT 1000", map[string]string{"max_result_bytes": "7KiB"})
	limitOf(t, err, "max_result_bytes")
	if _, err := e.Query(ctx, "SELECT user_id FROM ev LIMIT 1000", map[string]string{"max_result_bytes": "9KiB"}); err != nil {
		t.Fatalf("under max_result_bytes: %v", err)
	}
	// A subquery's rows are not the result.
	if _, err := e.Query(ctx, "SELECT count(*) FROM ev WHERE user_id IN (SELECT user_id FROM ev)", map[string]string{"max_result_rows": "1"}); err != nil {
		t.Fatalf("a subquery's rows counted as the result: %v", err)
	}
	// Statements whose result is not a plan's are bounded too.
	query(t, e, fmt.Sprintf("CREATE TABLE ev2 WITH (location = '%s', format = 'parquet')", dir))
	_, err = e.Query(ctx, "SHOW TABLES", map[string]string{"max_result_rows": "1"})
	limitOf(t, err, "max_result_rows")
}

func TestCeilingsCanBeLoweredNotRaised(t *testing.T) {
	dir := events(t, 20_000, 2, 4_000, false)
	e := open(t, lore.Options{Ceilings: lore.Guardrails{MaxRowsScanned: 5_000, MaxResultRows: 100, MaxExecution: time.Minute}})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	ctx := context.Background()
	for _, kv := range [][2]string{{"max_rows_scanned", "5001"}, {"max_result_rows", "1000000"}, {"max_execution_ms", "60001"}} {
		_, err := e.Query(ctx, "SELECT 1", map[string]string{kv[0]: kv[1]})
		if errs.CodeOf(err) != errs.InvalidSetting || !strings.Contains(err.Error(), "ceiling") || !strings.Contains(err.Error(), kv[0]) {
			t.Errorf("%s = %s above its ceiling: %v", kv[0], kv[1], err)
		}
	}
	if _, err := e.Query(ctx, "SET SESSION max_result_rows = 101; SELECT 1", nil); errs.CodeOf(err) != errs.InvalidSetting {
		t.Fatalf("SET SESSION above the ceiling: %v", err)
	}
	// With no request value the ceiling applies.
	_, err := e.Query(ctx, "SELECT sum(amount) FROM ev", nil)
	if le := limitOf(t, err, "max_rows_scanned"); le.Limit != 5_000 {
		t.Fatalf("limit %d, want the ceiling", le.Limit)
	}
	_, err = e.Query(ctx, "SELECT * FROM generate_series(1, 200)", nil)
	limitOf(t, err, "max_result_rows")
	// A request may lower a ceiling.
	_, err = e.Query(ctx, "SELECT * FROM generate_series(1, 50)", map[string]string{"max_result_rows": "10"})
	if le := limitOf(t, err, "max_result_rows"); le.Limit != 10 {
		t.Fatalf("limit %d, want the request's", le.Limit)
	}
}

func TestParseGuardrails(t *testing.T) {
	g, err := lore.ParseGuardrails(map[string]string{"max_execution_ms": "30000", "MAX_RESULT_BYTES": "1KiB",
		"max_rows_scanned": "1000000", "max_result_rows": "10"})
	want := lore.Guardrails{MaxExecution: 30 * time.Second, MaxResultBytes: 1024, MaxRowsScanned: 1_000_000, MaxResultRows: 10}
	if err != nil || g != want {
		t.Fatalf("got %+v, %v", g, err)
	}
	for _, m := range []map[string]string{{"use_statistics": "false"}, {"max_rows_scanned": "many"},
		{"max_execution_ms": "99999999999999"}, {"max_memory": "1GiB"}} {
		if _, err := lore.ParseGuardrails(m); errs.CodeOf(err) != errs.InvalidSetting {
			t.Errorf("%v: %v", m, err)
		}
	}
}
