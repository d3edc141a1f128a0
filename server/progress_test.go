package server_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loredb/lore/exec"
)

// poll asks GET /v1/queries/{id} until cond holds of its answer.
func (f *fixture) poll(id, what string, cond func(map[string]any) bool) map[string]any {
	f.t.Helper()
	var m map[string]any
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if m = f.do("GET", "/v1/queries/"+id, f.admin, nil).json(f.t); cond(m) {
			return m
		}
	}
	f.t.Fatalf("query %s: never %s; last %v", id, what, m)
	return nil
}

// TestQueuedAndProgress: with one slot, a scan held at its third batch shows its
// progress, and a second scan is QUEUED until the first ends.
func TestQueuedAndProgress(t *testing.T) {
	f := newFixture(t, fixtureOptions{threads: 1, maxRunning: 1, maxQueued: 4, rowGroupRows: 1024})
	gate := make(chan struct{})
	var batches atomic.Int64
	exec.SetFailAt(func(point string) {
		if point == exec.PointScanWorker && batches.Add(1) > 2 {
			<-gate
		}
	})
	defer exec.SetFailAt(nil)
	var wg sync.WaitGroup
	replies := map[string]reply{}
	var mu sync.Mutex
	run := func(id, sql string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f.stmt(f.admin, map[string]any{"sql": sql, "query_id": id, "settings": map[string]any{"use_statistics": false}})
			mu.Lock()
			replies[id] = r
			mu.Unlock()
		}()
	}
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
		wg.Wait()
	}()
	run("first", "SELECT sum(amount) FROM ev")
	m := f.poll("first", "shows progress", func(m map[string]any) bool {
		p, _ := m["progress"].(map[string]any)
		return m["state"] == "RUNNING" && p != nil && p["row_groups_done"].(float64) >= 1 && p["bytes_read"].(float64) > 0
	})
	p := m["progress"].(map[string]any)
	if p["files_planned"] != 2.0 || p["files_done"] != 2.0 || p["row_groups_planned"].(float64) < 10 ||
		p["row_groups_done"].(float64) >= p["row_groups_planned"].(float64) {
		t.Errorf("progress of the held scan: %v", p)
	}
	run("second", "SELECT max(amount) FROM ev")
	f.poll("second", "is QUEUED", func(m map[string]any) bool { return m["state"] == "QUEUED" })
	qs := f.do("GET", "/v1/queries?state=queued", f.admin, nil).json(t)["queries"].([]any)
	if len(qs) != 1 || qs[0].(map[string]any)["query_id"] != "second" {
		t.Errorf("?state=queued: %v", qs)
	}
	// A queued statement is canceled like a running one.
	run("third", "SELECT min(amount) FROM ev")
	f.poll("third", "is QUEUED", func(m map[string]any) bool { return m["state"] == "QUEUED" })
	if r := f.do("DELETE", "/v1/queries/third", f.admin, nil); r.status != 202 {
		t.Errorf("cancel a queued statement: %d %s", r.status, r.body)
	}
	f.poll("third", "is CANCELED", func(m map[string]any) bool { return m["state"] == "CANCELED" })
	close(gate)
	wg.Wait()
	for _, id := range []string{"first", "second"} {
		if replies[id].status != 200 {
			t.Fatalf("%s: %d %s", id, replies[id].status, replies[id].body)
		}
	}
	m = f.do("GET", "/v1/queries/second", f.admin, nil).json(t)
	if m["state"] != "FINISHED" || m["progress"] != nil || m["record"].(map[string]any)["queued_ms"].(float64) <= 0 {
		t.Errorf("the second after it ran: %v", m)
	}
}
