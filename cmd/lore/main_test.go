package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/cli"
)

// TestMain runs the test binary as the lore command when a test asks it to, so that
// a test sees what a fresh lore process does, package initialisation included.
func TestMain(m *testing.M) {
	if os.Getenv("LORE_TEST_AS_COMMAND") == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// lore runs the lore command in a fresh process.
func lore(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LORE_TEST_AS_COMMAND=1", "LORE_HOME=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("lore %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Statements of fresh `lore sql` processes, whose catalog opens and whose first
// request parses while the program initialises (package ahead), answer, change the
// catalog and keep their query log as any other's.
func TestSQLProcesses(t *testing.T) {
	dir := t.TempDir()
	home, data := filepath.Join(dir, "home"), filepath.Join(dir, "events")
	lore(t, "gen", "events", "--rows", "5000", "--files", "3", "--out", data)
	lore(t, "sql", "--home", home, "-c", "CREATE TABLE t WITH (location = '"+data+"', format = 'parquet')")
	if out := lore(t, "sql", "--home="+home, "--format", "csv", "-c", "SELECT count(*) FROM t"); !strings.Contains(out, "\n5000\n") {
		t.Fatalf("count: %q", out)
	}
	lore(t, "sql", "-home", home, "-c", "ANALYZE t")
	for range 2 {
		out := lore(t, "sql", "--home", home, "--format", "csv", "--timer", "-c", "SELECT count(*), min(ts) <= max(ts) FROM t")
		if !strings.Contains(out, "\n5000,true\n") || !strings.Contains(out, "context") {
			t.Fatalf("answer from statistics: %q", out)
		}
	}
	// Two requests; the second names a table the first creates.
	lore(t, "sql", "--home", home, "-c", "CREATE TABLE u WITH (location = '"+data+"', format = 'parquet'); SELECT count(*) FROM u")

	c, err := catalog.Open(context.Background(), filepath.Join(home, "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.IntegrityCheck(context.Background()); err != nil {
		t.Fatal(err)
	}
	logged, err := c.RecentQueries(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) != 7 {
		t.Fatalf("the query log holds %d statements, want 7", len(logged))
	}
	for _, q := range logged {
		if q.State != "finished" {
			t.Errorf("%q: %s", q.SQL, q.State)
		}
	}
}
