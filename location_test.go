package lore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// TestRelativeLocationsResolveOnceAtCreate creates tables with relative locations (a
// directory and a glob), then moves to another directory: the tables still read their
// files, and SHOW CREATE TABLE shows the absolute locations. A path in a query still
// resolves against the directory the statement runs in. (t.Chdir: not in parallel.)
func TestRelativeLocationsResolveOnceAtCreate(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeDrift(t, filepath.Join(root, "data", "a.parquet"), driftCol{"x", i64, vals(int64(1), int64(2), int64(3))})
	e := open(t, lore.Options{})
	t.Chdir(root)
	run(t, e, "CREATE TABLE dir WITH (location = 'data', format = 'parquet')", nil)
	run(t, e, "CREATE TABLE glob WITH (location = 'data/*.parquet', format = 'parquet')", nil)
	run(t, e, "CREATE TABLE dot WITH (location = './data/', format = 'parquet')", nil)

	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	for table, loc := range map[string]string{
		"dir":  filepath.Join(root, "data"),
		"glob": filepath.Join(root, "data", "*.parquet"),
		"dot":  filepath.Join(root, "data") + "/",
	} {
		if got := resultText(run(t, e, "SELECT count(*), sum(x) FROM "+table, nil)); got != "3|6|\n" {
			t.Errorf("%s from another directory: %q", table, got)
		}
		want := "CREATE TABLE " + table + " WITH (location = '" + loc + "', format = 'parquet')|\n"
		if got := resultText(run(t, e, "SHOW CREATE TABLE "+table, nil)); got != want {
			t.Errorf("SHOW CREATE TABLE %s: %q, want %q", table, got, want)
		}
	}
	// A path in a query resolves where the statement runs: here, there is none.
	if _, err := e.Query(t.Context(), "SELECT count(*) FROM 'data/*.parquet'", nil); errs.CodeOf(err) != errs.SourceUnavailable {
		t.Errorf("a relative path in a query from another directory: %v", err)
	}
	t.Chdir(root)
	for _, loc := range []string{"data/*.parquet", "./data/*.parquet", "data", "./data/"} {
		if got := resultText(run(t, e, "SELECT count(*) FROM '"+loc+"'", nil)); got != "3|\n" {
			t.Errorf("relative path %s in a query: %q", loc, got)
		}
	}
}
