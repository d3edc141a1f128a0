package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// slowSQL scans every row of ev through a regular expression: seconds of work over
// the million-row table, row group by row group.
const slowSQL = "SELECT count(*) FROM ev WHERE regexp_matches(category || country || CAST(user_id AS VARCHAR), '^(c|a|t|_|0|1|2|3|4|5)*9$')"

const slowRows = 1_000_000

func slowFixture(t *testing.T) *fixture {
	if testing.Short() {
		t.Skip("writes a table of a million rows")
	}
	return newFixture(t, fixtureOptions{rows: slowRows, rowGroupRows: 1 << 14, threads: 2})
}

// waitRunning waits until query id is RUNNING on the server.
func (f *fixture) waitRunning(id string) {
	f.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		r := f.do("GET", "/v1/queries?state=running", f.admin, nil)
		for _, q := range r.json(f.t)["queries"].([]any) {
			if q.(map[string]any)["query_id"] == id {
				return
			}
		}
	}
	f.t.Fatalf("query %s never ran", id)
}

// waitEnded waits until query id has ended and returns its state and record.
func (f *fixture) waitEnded(id string) (string, map[string]any) {
	f.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		m := f.do("GET", "/v1/queries/"+id, f.admin, nil).json(f.t)
		if m["state"] != "RUNNING" {
			rec, _ := m["record"].(map[string]any)
			return m["state"].(string), rec
		}
	}
	f.t.Fatalf("query %s never ended", id)
	return "", nil
}

// rowsScanned adds up the rows a record's scans read.
func rowsScanned(rec map[string]any) float64 {
	var n float64
	for _, s := range rec["scans"].([]any) {
		n += s.(map[string]any)["rows_scanned"].(float64)
	}
	return n
}

func TestCancelByID(t *testing.T) {
	f := slowFixture(t)
	done := make(chan reply, 1)
	go func() { done <- f.stmt(f.reader, map[string]any{"sql": slowSQL, "query_id": "slow-1"}) }()
	f.waitRunning("slow-1")
	// The same id again while it runs is 409; another reader may not cancel it.
	if r := f.stmt(f.reader, map[string]any{"sql": "SELECT 1", "query_id": "slow-1"}); r.status != 409 || r.code(t) != "QUERY_ID_IN_USE" {
		t.Errorf("duplicate running id: %d %s", r.status, r.body)
	}
	if r := f.do("DELETE", "/v1/queries/slow-1", f.reader2, nil); r.status != 404 {
		t.Errorf("another reader cancels: %d", r.status)
	}
	time.Sleep(100 * time.Millisecond)
	if r := f.do("DELETE", "/v1/queries/slow-1", f.reader, nil); r.status != 202 {
		t.Fatalf("owner cancels: %d %s", r.status, r.body)
	}
	r := <-done
	if r.status != 499 || r.code(t) != "CANCELED" || r.header.Get("X-Lore-Query-Id") != "slow-1" {
		t.Fatalf("canceled statement: %d %s", r.status, r.body)
	}
	state, rec := f.waitEnded("slow-1")
	if state != "CANCELED" || rec == nil {
		t.Fatalf("state %s, record %v", state, rec)
	}
	if n := rowsScanned(rec); n >= slowRows {
		t.Fatalf("the scan read %v rows of %d: it did not stop", n, slowRows)
	} else {
		t.Logf("canceled after %v of %d rows", n, slowRows)
	}
	// Canceling again reports how it ended.
	if m := f.do("DELETE", "/v1/queries/slow-1", f.admin, nil).json(t); m["state"] != "CANCELED" {
		t.Errorf("second cancel: %v", m)
	}
	// The id is free again.
	if r := f.stmt(f.reader, map[string]any{"sql": "SELECT 1", "query_id": "slow-1"}); r.status != 200 {
		t.Errorf("reuse of an ended id: %d", r.status)
	}
}

func TestCancelByDisconnect(t *testing.T) {
	f := slowFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body, _ := json.Marshal(map[string]any{"sql": slowSQL, "query_id": "gone-1"})
	req, _ := http.NewRequestWithContext(ctx, "POST", f.url+"/v1/statement", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+f.reader)
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	f.waitRunning("gone-1")
	time.Sleep(100 * time.Millisecond)
	cancel() // the client goes away
	if err := <-errc; err == nil {
		t.Fatal("the request finished before the client left: make the statement slower")
	}
	state, rec := f.waitEnded("gone-1")
	if state != "CANCELED" || rec == nil || rec["error"].(map[string]any)["code"] != "CANCELED" {
		t.Fatalf("state %s, record %v", state, rec)
	}
	if n := rowsScanned(rec); n >= slowRows {
		t.Fatalf("the scan read %v rows of %d: it did not stop", n, slowRows)
	}
}

// TestAdmissionQueueFull: with one statement running and no room to queue, a
// statement that reads data is 503 RESOURCE_EXHAUSTED with Retry-After, and one that
// statistics answer is not held back; a guardrail's RESOURCE_EXHAUSTED carries no
// Retry-After (sending it again would fail again).
func TestAdmissionQueueFull(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a table of a million rows")
	}
	f := newFixture(t, fixtureOptions{rows: slowRows, rowGroupRows: 1 << 14, threads: 2, maxRunning: 1, maxQueued: -1})
	f.ok(f.admin, "ANALYZE ev")
	done := make(chan reply, 1)
	go func() { done <- f.stmt(f.admin, map[string]any{"sql": slowSQL, "query_id": "slow-q"}) }()
	f.waitRunning("slow-q")
	time.Sleep(100 * time.Millisecond) // past planning, into its slot
	r := f.stmt(f.reader, map[string]any{"sql": "SELECT sum(user_id) FROM ev WHERE status = 404", "settings": map[string]string{"result_cache": "false"}})
	if r.status != 503 || r.code(t) != "RESOURCE_EXHAUSTED" || r.header.Get("Retry-After") == "" {
		t.Errorf("a scan with the queue full: %d %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	if r := f.stmt(f.reader, map[string]any{"sql": "SELECT count(*) FROM ev"}); r.status != 200 {
		t.Errorf("an answer from statistics with the queue full: %d %s", r.status, r.body)
	}
	f.do("DELETE", "/v1/queries/slow-q", f.admin, nil)
	<-done
	r = f.stmt(f.reader, map[string]any{"sql": "SELECT user_id FROM ev", "settings": map[string]string{"max_result_rows": "10"}})
	if r.status != 503 || r.code(t) != "RESOURCE_EXHAUSTED" || r.header.Get("Retry-After") != "" {
		t.Errorf("a guardrail: %d %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
}
