package cli

import (
	"strings"
	"testing"
)

// TestMemoryLimitFlag: every command that opens an engine takes --memory-limit, and
// the engine runs with it (a statement may lower it, not raise it).
func TestMemoryLimitFlag(t *testing.T) {
	home := t.TempDir()
	for _, args := range [][]string{
		{"sql", "--home", home, "--memory-limit", "lots", "-c", "SELECT 1"},
		{"table", "stats", "t", "--home", home, "--memory-limit", "lots"},
		{"analyze", "t", "--home", home, "--memory-limit", "lots"},
		{"demo", "--home", home, "--memory-limit", "lots"},
	} {
		status, _, stderr := run(t, "", args...)
		if status != exitUsage || !strings.Contains(stderr, `invalid memory limit "lots"`) {
			t.Errorf("%v: status %d, stderr %q", args, status, stderr)
		}
	}
	status, _, stderr := run(t, "", "sql", "--home", home, "--memory-limit", "64MiB", "-c", "SET SESSION memory_limit = '128MiB'; SELECT 1")
	if status != exitError || !strings.Contains(stderr, "above the engine's memory limit of 67108864 bytes") {
		t.Errorf("raising a 64MiB engine limit: status %d, stderr %q", status, stderr)
	}
	status, out, stderr := run(t, "", "sql", "--home", home, "--memory-limit", "64MiB", "--format", "csv", "-c", "SET SESSION memory_limit = '32MiB'; SELECT 1 AS x")
	if status != exitOK || !strings.Contains(out, "1") {
		t.Errorf("lowering it: status %d, out %q, stderr %q", status, out, stderr)
	}
	t.Setenv("LORE_MEMORY_LIMIT", "bad")
	status, _, stderr = run(t, "", "sql", "--home", home, "-c", "SELECT 1")
	if status != exitError || !strings.Contains(stderr, "INVALID_SETTING: LORE_MEMORY_LIMIT") {
		t.Errorf("a bad LORE_MEMORY_LIMIT: status %d, stderr %q", status, stderr)
	}
	status, _, stderr = run(t, "", "sql", "--home", home, "--memory-limit", "64MiB", "-c", "SELECT 1")
	if status != exitOK {
		t.Errorf("--memory-limit overrides LORE_MEMORY_LIMIT: status %d, stderr %q", status, stderr)
	}
}
