package lore_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/storage"
)

// listCounter counts the listings asked of local disk; it watches as local disk does.
type listCounter struct {
	storage.Local
	lists atomic.Int64
}

func (s *listCounter) List(ctx context.Context, dir string) ([]storage.ObjectInfo, error) {
	s.lists.Add(1)
	return s.Local.List(ctx, dir)
}

// A table on local disk is listed once while nothing under it changes; every change
// a writer makes is seen by the next statement, which lists again and is answered
// from what it lists (SPEC §4's staleness rule holds with the listing kept).
func TestListingKeptWhileUnchanged(t *testing.T) {
	dir := t.TempDir()
	writeStatsFile(t, filepath.Join(dir, "a.parquet"), 1, 1000, 500, true)
	e := open(t, lore.Options{NoAutoRefresh: true})
	store := &listCounter{}
	lore.SetStore(e, store)
	registerStats(t, e, dir)
	run(t, e, "ANALYZE t", nil)

	count := func(want, mode string) {
		t.Helper()
		res := run(t, e, "SELECT count(*) FROM t", map[string]string{"result_cache": "false"})
		if got := cell(res, 0, 0); got != want || res.Record.Execution.Mode != mode {
			t.Fatalf("count %s in mode %s, want %s in mode %s", got, res.Record.Execution.Mode, want, mode)
		}
	}
	count("1000", "context")
	before := store.lists.Load()
	for range 5 {
		count("1000", "context")
	}
	if n := store.lists.Load() - before; n != 0 {
		t.Errorf("an unchanged table was listed %d times by 5 statements", n)
	}

	// A file lands: the next statement lists, scans, and counts it.
	writeStatsFile(t, filepath.Join(dir, "b.parquet"), 2, 700, 500, true)
	count("1700", "scan")
	if store.lists.Load() == before {
		t.Error("a file landed and the table was not listed again")
	}
	// A file is replaced under its name by a writer's rename.
	writeStatsFile(t, filepath.Join(dir, ".b.tmp"), 3, 300, 500, true)
	if err := os.Rename(filepath.Join(dir, ".b.tmp"), filepath.Join(dir, "b.parquet")); err != nil {
		t.Fatal(err)
	}
	count("1300", "scan")
	// A file is removed.
	if err := os.Remove(filepath.Join(dir, "b.parquet")); err != nil {
		t.Fatal(err)
	}
	count("1000", "context")
}

// A table OPTIMIZE rewrote is listed under the publish lock of its _lore_optimize
// directory; taking that lock is no change, so the listing is kept all the same.
func TestListingKeptAfterOptimize(t *testing.T) {
	dir := events(t, 10_000, 2, 2_000, false)
	e := open(t, lore.Options{NoAutoRefresh: true})
	store := &listCounter{}
	lore.SetStore(e, store)
	query(t, e, "CREATE TABLE ev WITH (location = '"+dir+"', clustered_by = ARRAY['user_id'])")
	query(t, e, "OPTIMIZE ev")
	if _, err := os.Stat(filepath.Join(dir, "_lore_optimize")); err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{"result_cache": "false", "use_statistics": "false"}
	if got := cell(run(t, e, "SELECT count(*) FROM ev", settings), 0, 0); got != "10000" {
		t.Fatalf("count %s", got)
	}
	before := store.lists.Load()
	for range 5 {
		run(t, e, "SELECT count(*) FROM ev", settings)
	}
	if n := store.lists.Load() - before; n != 0 {
		t.Errorf("an optimized, unchanged table was listed %d times by 5 statements", n)
	}
}

// An engine watches a location from its second resolution on: the first statement
// lists it without a watch (a process that runs one statement never uses one), the
// second lists it and sets the watch, and from the third on an unchanged location
// is not listed; a change between the first two is seen all the same.
func TestListingWatchedFromTheSecondResolution(t *testing.T) {
	dir := t.TempDir()
	writeStatsFile(t, filepath.Join(dir, "a.parquet"), 1, 1000, 500, true)
	home := t.TempDir()
	setup := open(t, lore.Options{Home: home, NoAutoRefresh: true})
	registerStats(t, setup, dir)
	run(t, setup, "ANALYZE t", nil)
	setup.Close()

	e := open(t, lore.Options{Home: home, NoAutoRefresh: true})
	store := &listCounter{}
	lore.SetStore(e, store)
	count := func(want string) int64 {
		t.Helper()
		before := store.lists.Load()
		res := run(t, e, "SELECT count(*) FROM t", map[string]string{"result_cache": "false"})
		if got := cell(res, 0, 0); got != want {
			t.Fatalf("count %s, want %s", got, want)
		}
		return store.lists.Load() - before
	}
	if n := count("1000"); n == 0 {
		t.Fatal("the first statement did not list the table")
	}
	writeStatsFile(t, filepath.Join(dir, "b.parquet"), 2, 700, 500, true)
	if n := count("1700"); n == 0 {
		t.Fatal("the second statement did not list the table")
	}
	for range 3 {
		if n := count("1700"); n != 0 {
			t.Fatalf("a watched, unchanged table was listed %d times", n)
		}
	}
}
