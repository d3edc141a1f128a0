package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// loreCommand is the lore command with args, to run in a fresh process.
func loreCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LORE_TEST_AS_COMMAND=1", "LORE_HOME=")
	return cmd
}

// lore runs the lore command in a fresh process.
func lore(t *testing.T, args ...string) string {
	t.Helper()
	out, err := loreCommand(args...).CombinedOutput()
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

// The command links package ahead, whose init starts lore sql's work: nothing else
// imports it, so without main's import the catalog would open only once main runs.
func TestSQLStartsAhead(t *testing.T) {
	cmd := loreCommand("sql", "--home", filepath.Join(t.TempDir(), "home"), "-c", "SELECT 1")
	cmd.Env = append(cmd.Env, "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "init github.com/loredb/lore/internal/ahead @") {
		t.Fatalf("the lore process did not initialise package ahead:\n%s", out)
	}
}

// Ctrl-C cancels a `lore sql` statement that has run a while: the process reports
// the cancellation, exits with an error, and leaves the statement's record in the
// query log.
func TestSQLInterrupt(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	cmd := loreCommand("sql", "--home", home, "-c", "SELECT count(*) FROM range(100000000000) a")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Well past the moment the handler is installed (interruptAfter).
	time.Sleep(time.Second)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("lore sql ended with %v after Ctrl-C, want exit status 1\n%s", err, stderr.String())
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("lore sql did not end within a minute of Ctrl-C")
	}
	if !strings.Contains(stderr.String(), "CANCELED") {
		t.Errorf("stderr: %q, want the statement's cancellation", stderr.String())
	}
	c, err := catalog.Open(context.Background(), filepath.Join(home, "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	logged, err := c.RecentQueries(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) != 1 || logged[0].State != "failed" || logged[0].ErrorCode != "CANCELED" {
		t.Fatalf("query log: %+v, want one canceled statement", logged)
	}
}
