package server_test

import (
	"testing"
	"time"

	"github.com/loredb/lore/server"
)

func TestRateLimit(t *testing.T) {
	f := newFixture(t, fixtureOptions{serverOpts: server.Options{RateLimit: 2, RateBurst: 2}})
	for i := range 2 {
		if r := f.do("GET", "/v1/queries", f.reader, nil); r.status != 200 {
			t.Fatalf("request %d within the burst: %d %s", i, r.status, r.body)
		}
	}
	r := f.stmt(f.reader, map[string]any{"sql": "SELECT 1"})
	if r.status != 429 || r.code(t) != "RATE_LIMITED" || r.header.Get("Retry-After") != "1" {
		t.Fatalf("over the rate: %d %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	// Each token has its own bucket; health checks have none.
	if r := f.stmt(f.reader2, map[string]any{"sql": "SELECT 1"}); r.status != 200 {
		t.Errorf("another token: %d", r.status)
	}
	if r := f.do("GET", "/healthz", "", nil); r.status != 200 {
		t.Errorf("healthz: %d", r.status)
	}
	time.Sleep(600 * time.Millisecond) // one request's worth at 2 a second
	if r := f.stmt(f.reader, map[string]any{"sql": "SELECT 1"}); r.status != 200 {
		t.Errorf("after waiting: %d %s", r.status, r.body)
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{"10/s": 10, "5": 5, "600/m": 10, "36000/h": 10, " 0.5/s ": 0.5} {
		if got, err := server.ParseRate(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0/s", "-1", "x/s", "10/d", "NaN", "Inf/s"} {
		if _, err := server.ParseRate(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
