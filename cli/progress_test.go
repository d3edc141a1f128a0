package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressBar(&buf, "events")
	p.update(0, 2_000_000)
	p.update(1, 2_000_000) // throttled: within 100ms of the last draw
	p.update(2_000_000, 2_000_000)
	p.finish()
	out := buf.String()
	if n := strings.Count(out, "\r"); n != 2 {
		t.Errorf("%d redraws, want 2 (the second update is throttled): %q", n, out)
	}
	if !strings.Contains(out, "[..............................]   0%") ||
		!strings.Contains(out, "[##############################] 100%  2.0M/2.0M rows") ||
		!strings.HasSuffix(out, "\n") {
		t.Errorf("progress output = %q", out)
	}
}

func TestHumanCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 9999: "9999", 12_345: "12.3K", 2_500_000: "2.5M", 3e9: "3.0G"} {
		if got := humanCount(n); got != want {
			t.Errorf("humanCount(%d) = %q, want %q", n, got, want)
		}
	}
}
