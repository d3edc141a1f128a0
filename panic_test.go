package lore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// syncBuffer is a log destination safe for the engine's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// settled waits until the process runs no more goroutines than before (those a
// failed statement started may take a moment to return) and fails otherwise.
func settled(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before the statement, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkContained checks that err is the INTERNAL error of a panic in the statement
// whose record the query log holds last, that the log has its stack, and that the
// engine is unharmed: no memory held, no goroutine left, and the next statement runs.
func checkContained(t *testing.T, e *lore.Engine, log *syncBuffer, err error, before int, next string) {
	t.Helper()
	if errs.CodeOf(err) != errs.Internal {
		t.Fatalf("want INTERNAL, got %v", err)
	}
	entries, lerr := e.Catalog().RecentQueries(context.Background(), 1)
	if lerr != nil || len(entries) != 1 {
		t.Fatalf("query log: %v %v", entries, lerr)
	}
	id := entries[0].ID
	if !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "bug") || entries[0].ErrorCode != string(errs.Internal) {
		t.Fatalf("the error does not name statement %s as a bug: %v (logged %s)", id, err, entries[0].ErrorCode)
	}
	if l := log.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, id) || !strings.Contains(l, "goroutine") {
		t.Fatalf("the log has no stack for statement %s:\n%s", id, l)
	}
	if used := lore.BudgetUsed(e); used != 0 {
		t.Fatalf("the failed statement left %d bytes reserved", used)
	}
	settled(t, before)
	if _, err := e.Query(context.Background(), next, nil); err != nil {
		t.Fatalf("the statement after the panic: %v", err)
	}
}

// A panic injected in each kind of goroutine a statement runs on fails that
// statement alone with INTERNAL.
func TestPanicIsContained(t *testing.T) {
	dir := events(t, 60_000, 3, 10_000, false)
	for _, c := range []struct {
		point string
		sql   string
		// after: the failure point is reached this many times before it panics.
		after int64
	}{
		{exec.PointScanWorker, "SELECT count(*) FROM '%[1]s' WHERE amount > 10", 2},
		{exec.PointAggregateUpdate, "SELECT category, sum(amount) FROM '%[1]s' GROUP BY category", 2},
		{exec.PointJoinBuild, "SELECT count(*) FROM '%[1]s' a JOIN (SELECT * FROM '%[1]s' WHERE status = 500) b ON a.user_id = b.user_id", 0},
		{exec.PointJoinProbe, "SELECT count(*) FROM '%[1]s' a JOIN (SELECT * FROM '%[1]s' WHERE status = 500) b ON a.user_id = b.user_id", 2},
		// The root goroutine panics with the scan's workers running and a sort holding
		// its rows.
		{exec.PointRoot, "SELECT * FROM '%[1]s' ORDER BY amount", 2},
		{exec.PointRoot, "SELECT * FROM '%[1]s'", 1},
	} {
		t.Run(c.point, func(t *testing.T) {
			log := &syncBuffer{}
			e := open(t, lore.Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
			sql := fmt.Sprintf(c.sql, dir)
			query(t, e, sql) // warm: the footer cache, the catalog's connections
			before := runtime.NumGoroutine()
			var reached atomic.Int64
			exec.SetFailAt(func(point string) {
				if point == c.point && reached.Add(1) > c.after {
					panic(fmt.Sprintf("injected at %s", point))
				}
			})
			// Computed again, not answered by the result cache: the point must be reached.
			_, err := e.Query(context.Background(), sql, map[string]string{"result_cache": "false"})
			exec.SetFailAt(nil)
			if reached.Load() <= c.after {
				t.Fatalf("the statement passed %s %d times; the test does not reach it", c.point, reached.Load())
			}
			checkContained(t, e, log, err, before, sql)
		})
	}
}

// A scalar function that panics fails its statement, wherever it runs: in the
// scan's workers, or in the statement's goroutine for a constant.
func TestPanickingFunctionIsContained(t *testing.T) {
	kernels.Register("test_boom", []arrow.DataType{types.Float64}, types.Float64, func([]arrow.Array, int) (arrow.Array, error) {
		var a []int
		return nil, fmt.Errorf("never: %d", a[len(a)-1])
	})
	dir := events(t, 30_000, 2, 10_000, false)
	log := &syncBuffer{}
	e := open(t, lore.Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	query(t, e, fmt.Sprintf("SELECT count(*) FROM '%s'", dir))
	for _, sql := range []string{
		fmt.Sprintf("SELECT sum(test_boom(amount)) FROM '%s'", dir),
		fmt.Sprintf("SELECT amount FROM '%s' ORDER BY test_boom(amount)", dir),
		"SELECT test_boom(1.5)",
	} {
		before := runtime.NumGoroutine()
		_, err := e.Query(context.Background(), sql, nil)
		if !strings.Contains(err.Error(), "index out of range") {
			t.Fatalf("%s: the panic is not in the error: %v", sql, err)
		}
		checkContained(t, e, log, err, before, fmt.Sprintf("SELECT count(*) FROM '%s'", dir))
	}
}

// panicStore panics on every call that does not carry the key calm in its context.
type panicStore struct{ storage.Local }

type calm struct{}

func (s panicStore) check(ctx context.Context) {
	if ctx.Value(calm{}) == nil {
		panic("store reached from a context without the key")
	}
}

func (s panicStore) Stat(ctx context.Context, path string) (storage.ObjectInfo, error) {
	s.check(ctx)
	return s.Local.Stat(ctx, path)
}

func (s panicStore) List(ctx context.Context, dir string) ([]storage.ObjectInfo, error) {
	s.check(ctx)
	return s.Local.List(ctx, dir)
}

func (s panicStore) Open(ctx context.Context, path string) (storage.Reader, error) {
	s.check(ctx)
	return s.Local.Open(ctx, path)
}

// Watch keeps every listing going to the store: its calls are what the tests observe.
func (panicStore) Watch(string) (storage.Stamp, bool) { return storage.Stamp{}, false }

// A background statistics refresh that panics is logged, keeps the old record and
// does not take the process down.
func TestPanicInARefreshIsLogged(t *testing.T) {
	dir := t.TempDir()
	writeStatsFile(t, filepath.Join(dir, "a.parquet"), 1, 1000, 500, true)
	log := &syncBuffer{}
	e := open(t, lore.Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	registerStats(t, e, dir)
	run(t, e, "ANALYZE t", nil)
	writeStatsFile(t, filepath.Join(dir, "b.parquet"), 2, 700, 500, true)
	lore.SetStore(e, panicStore{})
	// The statement reaches the store with the key; the refresh it starts, without.
	ctx := context.WithValue(context.Background(), calm{}, true)
	res, err := e.Query(ctx, "SELECT count(*) FROM t", nil)
	if err != nil || cell(res, 0, 0) != "1700" {
		t.Fatalf("the statement that starts the refresh: %v", err)
	}
	lore.WaitForRefreshes(e)
	if l := log.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "refresh panicked") || !strings.Contains(l, "without the key") {
		t.Fatalf("the refresh's panic is not logged:\n%s", l)
	}
	lore.SetStore(e, storage.Local{})
	if got := cell(run(t, e, "SHOW STATS FOR t", nil), 0, 9); strings.HasPrefix(got, "listing of 2 files") {
		t.Fatalf("a panicked refresh replaced the record: %s", got)
	}
}

// A panic in a statement's scan workers reading footers (errgroup) is contained too.
func TestPanicInFooterReadsIsContained(t *testing.T) {
	dir := events(t, 20_000, 4, 5_000, false)
	log := &syncBuffer{}
	e := open(t, lore.Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	query(t, e, "SELECT 1")
	before := runtime.NumGoroutine()
	lore.SetStore(e, panicStore{})
	_, err := e.Query(context.Background(), fmt.Sprintf("SELECT count(*) FROM '%s'", dir), nil)
	lore.SetStore(e, storage.Local{})
	if !errors.Is(err, errs.ErrInternal) {
		t.Fatalf("want INTERNAL, got %v", err)
	}
	checkContained(t, e, log, err, before, fmt.Sprintf("SELECT count(*) FROM '%s'", dir))
}

// readPanicStore's readers panic when asked their size while boom is set.
type readPanicStore struct {
	storage.Local
	boom *atomic.Bool
}

func (s readPanicStore) Open(ctx context.Context, path string) (storage.Reader, error) {
	r, err := s.Local.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return panicReader{r, s.boom}, nil
}

type panicReader struct {
	storage.Reader
	boom *atomic.Bool
}

func (r panicReader) Size() int64 {
	if r.boom.Load() {
		panic("size asked while boom is set")
	}
	return r.Reader.Size()
}

// A panic in ANALYZE's full read, on one of its workers, fails the statement alone.
func TestPanicInAFullReadIsContained(t *testing.T) {
	dir := events(t, 40_000, 4, 10_000, false)
	log := &syncBuffer{}
	e := open(t, lore.Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	boom := &atomic.Bool{}
	lore.SetStore(e, readPanicStore{boom: boom})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	query(t, e, "ANALYZE ev") // the footers, cached
	before := runtime.NumGoroutine()
	boom.Store(true)
	_, err := e.Query(context.Background(), "ANALYZE ev WITH (sketches = true)", nil)
	boom.Store(false)
	if !strings.Contains(log.String(), "stats/profile") {
		t.Fatalf("the panic was not raised in the full read (%v):\n%s", err, log.String())
	}
	checkContained(t, e, log, err, before, "ANALYZE ev WITH (sketches = true)")
}
