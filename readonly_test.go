package lore_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// readOnly makes dir and the files in it unwritable for the rest of the test: by
// permissions for an ordinary user, and for root, whom permissions do not stop, by
// the immutable attribute. It skips the test where neither is possible.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{dir}
	for _, e := range entries {
		paths = append(paths, filepath.Join(dir, e.Name()))
	}
	if os.Geteuid() != 0 {
		for _, p := range paths[1:] {
			if err := os.Chmod(p, 0o444); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return
	}
	if out, err := exec.Command("chattr", append([]string{"+i"}, paths...)...).CombinedOutput(); err != nil {
		t.Skipf("cannot make %s read-only as root (chattr +i: %v: %s)", dir, err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", append([]string{"-i"}, paths...)...).Run() })
	if err := os.WriteFile(filepath.Join(dir, "probe"), nil, 0o644); err == nil {
		t.Fatalf("%s is still writable", dir)
	}
}

// TestReadOnlyHome checks that a home that cannot be written still serves every
// statement that only reads — from the catalog it holds, or from none — while
// statements that would change the catalog fail with FORBIDDEN.
func TestReadOnlyHome(t *testing.T) {
	ctx := context.Background()
	data := events(t, 2_000, 2, 1_000, false)

	withCatalog := t.TempDir()
	e := open(t, lore.Options{Home: withCatalog})
	query(t, e, "CREATE TABLE ev WITH (location = '"+data+"', format = 'parquet')")
	query(t, e, "ANALYZE ev")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	readOnly(t, withCatalog)
	empty := t.TempDir()
	readOnly(t, empty)

	for _, home := range []string{withCatalog, empty} {
		e := open(t, lore.Options{Home: home})
		if got := cell(query(t, e, "SELECT 1 + 1"), 0, 0); got != "2" {
			t.Errorf("%s: SELECT 1 + 1 = %s", home, got)
		}
		if got := cell(query(t, e, "SELECT count(*) FROM '"+data+"'"), 0, 0); got != "2000" {
			t.Errorf("%s: count over a path = %s", home, got)
		}
		if _, err := e.Query(ctx, "CREATE TABLE t2 WITH (location = '"+data+"', format = 'parquet')", nil); errs.CodeOf(err) != errs.Forbidden {
			t.Errorf("%s: CREATE TABLE in a read-only home: %v (code %s), want FORBIDDEN", home, err, errs.CodeOf(err))
		}
	}
	e = open(t, lore.Options{Home: withCatalog})
	res := query(t, e, "SELECT count(*) FROM ev")
	if got := cell(res, 0, 0); got != "2000" || res.Record.Execution.Mode != "context" {
		t.Errorf("count(*) from the read-only catalog's table = %s (mode %s), want 2000 answered from statistics", got, res.Record.Execution.Mode)
	}
	for _, stmt := range []string{"ANALYZE ev", "DROP TABLE ev", "ALTER TABLE ev SET CLUSTERED BY (ts)"} {
		if _, err := e.Query(ctx, stmt, nil); errs.CodeOf(err) != errs.Forbidden {
			t.Errorf("%s in a read-only home: %v (code %s), want FORBIDDEN", stmt, err, errs.CodeOf(err))
		}
	}
	if got := cell(query(t, e, "SHOW TABLES"), 0, 0); got != "ev" {
		t.Errorf("SHOW TABLES after refused writes: %s", got)
	}
}
