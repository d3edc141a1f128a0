package catalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestQueryLogRoundTrip(t *testing.T) {
	ctx := context.Background()
	c, _ := openTest(t)
	start := time.Date(2026, 3, 4, 5, 6, 7, 891_234_567, time.UTC)
	e := QueryLogEntry{
		ID:        "q-1",
		SQL:       "SELECT count(*) FROM t WHERE name = 'it''s'",
		State:     "finished",
		Mode:      "context",
		StartedAt: start,
		ElapsedMS: 1.875,
		Rows:      1,
		Record:    []byte(`{"id":"q-1","execution":{"mode":"context"}}`),
	}
	if err := c.LogQuery(ctx, e); err != nil {
		t.Fatal(err)
	}
	got, err := c.Query(ctx, "q-1")
	if err != nil {
		t.Fatal(err)
	}
	want := e
	want.StartedAt = start.Truncate(time.Millisecond)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip\n got %+v\nwant %+v", got, want)
	}

	// Logging the same id again replaces the entry (a statement logged at start and end).
	e2 := QueryLogEntry{ID: "q-1", SQL: e.SQL, State: "failed", Mode: "scan", StartedAt: start,
		ElapsedMS: 20, ErrorCode: "SOURCE_CHANGED"}
	if err := c.LogQuery(ctx, e2); err != nil {
		t.Fatal(err)
	}
	got, _ = c.Query(ctx, "q-1")
	if got.State != "failed" || got.ErrorCode != "SOURCE_CHANGED" || got.Record != nil {
		t.Errorf("after update: %+v", got)
	}

	_, err = c.Query(ctx, "nope")
	if !errors.Is(err, ErrQueryNotFound) {
		t.Errorf("Query(nope): %v, want ErrQueryNotFound", err)
	}

	if err := c.LogQuery(ctx, QueryLogEntry{ID: "bad", Record: []byte("{not json")}); err == nil {
		t.Error("a record that is not JSON was logged")
	}
	if err := c.LogQuery(ctx, QueryLogEntry{SQL: "SELECT 1"}); err == nil {
		t.Error("an entry without an id was logged")
	}
}

func TestRecentQueriesOrder(t *testing.T) {
	ctx := context.Background()
	c, _ := openTest(t)
	base := time.Now()
	// Started out of logging order; two share a millisecond.
	for _, q := range []struct {
		id string
		at time.Duration
	}{{"b", 2 * time.Second}, {"a", time.Second}, {"d", 3 * time.Second}, {"c", 2 * time.Second}} {
		if err := c.LogQuery(ctx, QueryLogEntry{ID: q.id, SQL: "SELECT 1", State: "finished",
			StartedAt: base.Add(q.at), Record: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := c.RecentQueries(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range all {
		ids = append(ids, e.ID)
	}
	if want := []string{"d", "c", "b", "a"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("order %q, want %q", ids, want)
	}
	two, err := c.RecentQueries(ctx, 2)
	if err != nil || len(two) != 2 || two[0].ID != "d" {
		t.Errorf("limit 2: %+v, %v", two, err)
	}
}

func TestConcurrentLogQuery(t *testing.T) {
	ctx := context.Background()
	c, _ := openTest(t)
	if _, _, err := c.CreateTable(ctx, sampleTable("t"), false); err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errc := make(chan error, workers*each*2)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := c.LogQuery(ctx, QueryLogEntry{ID: id, SQL: "SELECT 1", State: "finished",
					StartedAt: time.Now(), Rows: int64(i), Record: []byte(`{"id":"` + id + `"}`)}); err != nil {
					errc <- err
					return
				}
				// Reads run beside the writes.
				if _, err := c.Query(ctx, id); err != nil {
					errc <- err
					return
				}
				if _, err := c.Table(ctx, "t"); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	all, err := c.RecentQueries(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != workers*each {
		t.Errorf("%d entries logged, want %d", len(all), workers*each)
	}
}

func TestConcurrentCatalogWrites(t *testing.T) {
	ctx := context.Background()
	c, _ := openTest(t)
	const workers = 8
	var wg sync.WaitGroup
	created := make([]bool, workers)
	errc := make(chan error, workers*3)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Everyone races to create the same table; exactly one wins.
			_, ok, err := c.CreateTable(ctx, sampleTable("shared"), true)
			if err != nil {
				errc <- err
				return
			}
			created[w] = ok
			name := fmt.Sprintf("own_%d", w)
			if _, _, err := c.CreateTable(ctx, sampleTable(name), false); err != nil {
				errc <- err
				return
			}
			if err := c.SetBloom(ctx, name, []string{"id"}); err != nil {
				errc <- err
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	wins := 0
	for _, ok := range created {
		if ok {
			wins++
		}
	}
	if wins != 1 {
		t.Errorf("%d goroutines created the shared table, want 1", wins)
	}
	list, _ := c.Tables(ctx)
	if len(list) != workers+1 {
		t.Errorf("%d tables, want %d", len(list), workers+1)
	}
	// 1 shared create + per worker a create and an alter.
	if n := countEvents(t, c); n != 1+2*workers {
		t.Errorf("%d audit events, want %d", n, 1+2*workers)
	}
}

// TestQueryLogSurvivesClose: entries logged just before Close are written by it.
func TestQueryLogSurvivesClose(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/catalog.db"
	c, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 500; i++ {
		if err := c.LogQuery(ctx, QueryLogEntry{ID: fmt.Sprint("q", i), SQL: "SELECT 1", State: "finished", StartedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.LogQuery(ctx, QueryLogEntry{ID: "late"}); err == nil {
		t.Fatal("a closed catalog took a log entry")
	}
	c, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	all, err := c.RecentQueries(ctx, 0)
	if err != nil || len(all) != 500 {
		t.Fatalf("%d entries after reopening, want 500 (%v)", len(all), err)
	}
	// The order of logging is kept: the newest first among equal start times.
	if all[len(all)-1].ID != "q0" && all[0].StartedAt.Equal(all[len(all)-1].StartedAt) {
		t.Fatalf("first logged is %s", all[len(all)-1].ID)
	}
}

// TestCloseCheckpointsOnlyWhatMustLast: a catalog that only logged queries closes
// without checkpointing its write-ahead log, which the next open replays; one that
// changed the catalog, or whose log grew past walCheckpointBytes, checkpoints it
// and leaves no log file behind.
func TestCloseCheckpointsOnlyWhatMustLast(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/catalog.db"
	wal := path + "-wal"
	walSize := func() int64 {
		fi, err := os.Stat(wal)
		if errors.Is(err, os.ErrNotExist) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	session := func(fn func(c *Catalog)) {
		t.Helper()
		c, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		fn(c)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	logged := 0
	logSome := func(c *Catalog, n int) {
		for i := 0; i < n; i++ {
			if err := c.LogQuery(ctx, QueryLogEntry{ID: fmt.Sprint("q", logged), SQL: "SELECT 1",
				State: "finished", StartedAt: time.Now(), Record: []byte(`{"pad":"` + strings.Repeat("x", 2000) + `"}`)}); err != nil {
				t.Fatal(err)
			}
			logged++
		}
	}

	session(func(c *Catalog) {}) // creates and migrates: a change
	if n := walSize(); n != 0 {
		t.Fatalf("after creating the catalog the log holds %d bytes, want it checkpointed", n)
	}
	session(func(c *Catalog) { logSome(c, 1) })
	if walSize() == 0 {
		t.Fatal("a catalog that only logged a query checkpointed on close")
	}
	session(func(c *Catalog) {
		if _, err := c.Query(ctx, "q0"); err != nil {
			t.Fatalf("the entry left in the write-ahead log was not replayed: %v", err)
		}
		if _, _, err := c.CreateTable(ctx, sampleTable("t"), false); err != nil {
			t.Fatal(err)
		}
	})
	if n := walSize(); n != 0 {
		t.Fatalf("after CREATE TABLE the log holds %d bytes, want it checkpointed", n)
	}
	var grown int64
	session(func(c *Catalog) {
		for walSize() <= walCheckpointBytes {
			logSome(c, 20)
			if err := c.FlushLog(ctx); err != nil {
				t.Fatal(err)
			}
		}
		grown = walSize()
	})
	if n := walSize(); n != 0 {
		t.Fatalf("a log of %d bytes, more than walCheckpointBytes, was kept (%d bytes)", grown, n)
	}
	session(func(c *Catalog) {
		all, err := c.RecentQueries(ctx, 0)
		if err != nil || len(all) != logged {
			t.Fatalf("%d entries after the checkpoints, want %d (%v)", len(all), logged, err)
		}
		if _, err := c.Lookup(ctx, "t"); err != nil {
			t.Fatal(err)
		}
	})
}
