package main

import (
	"context"
	"io"
	"testing"
	"time"
)

// TestServeSmoke is the load test's short form: a few clients for a few seconds over
// tiny data, every request kind in the mix. Nothing may be lost, every statement must
// be in the query log, and the catalog must pass its integrity check.
func TestServeSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and runs it for seconds")
	}
	ev := EventsConfig{Rows: 50_000, Files: 4, RowGroupRows: 8192, DataDir: t.TempDir()}
	cfg := ServeConfig{Clients: 8, Duration: 4 * time.Second}
	rep, err := RunServe(context.Background(), ev, cfg, Machine{Cores: 2}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lost > 0 || rep.MissingFromLog > 0 || !rep.CatalogOK {
		for _, k := range rep.Kinds {
			if k.LostSample != "" {
				t.Logf("%s lost: %s", k.Kind, k.LostSample)
			}
		}
		t.Fatalf("lost %d, missing from the log %d, catalog ok %v", rep.Lost, rep.MissingFromLog, rep.CatalogOK)
	}
	seen := map[string]int64{}
	for _, k := range rep.Kinds {
		seen[k.Kind] = k.Requests
		if k.Statuses[200] == 0 && k.Kind != "cancel" {
			t.Errorf("%s: no request answered 200: %v %v", k.Kind, k.Statuses, k.Codes)
		}
	}
	for _, kind := range []string{"context", "cache", "zones", "scan", "version"} {
		if seen[kind] == 0 {
			t.Errorf("no %s request was sent: %v", kind, seen)
		}
	}
	if rep.GoroutinesAfter > 2 {
		t.Errorf("%d goroutines outlived the run", rep.GoroutinesAfter)
	}
}
