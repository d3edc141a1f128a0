package lore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/storage/s3"
	"github.com/loredb/lore/storage/s3/s3test"
)

// s3Secret is the S3 test key's secret: no error text or record may hold it.
const s3Secret = "lore-engine-secret-51c7"

// s3Aggregates reads every column of every row group of every file.
const s3Aggregates = "SELECT count(*), sum(user_id), sum(status), count(amount), min(ts), max(ts), count(DISTINCT country) FROM ev"

// noCache makes a statement read its data: no statistics answer, no result cache.
var noCache = map[string]string{"use_statistics": "false", "result_cache": "false"}

// s3Events writes an events table of files files, uploads it to s3://lake/events and
// returns its local directory.
func s3Events(t *testing.T, srv *s3test.Server, rows int64, files, rowGroup int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "events")
	opts := gen.EventsOptions{Rows: rows, Files: files, Out: dir, Seed: 7, RowGroupRows: rowGroup, ClusteredBy: "ts"}
	if err := gen.Events(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	srv.Upload(t, dir, "s3://lake/events")
	return dir
}

// eventsEngine opens an engine reaching srv with cfg's changes, the events table defined
// over s3://lake/events.
func eventsEngine(t *testing.T, srv *s3test.Server, change func(*s3.Config)) *lore.Engine {
	t.Helper()
	cfg := srv.Config()
	cfg.Credentials = s3.StaticCredentials("lore-engine-key", s3Secret)
	cfg.Backoff = time.Millisecond
	if change != nil {
		change(&cfg)
	}
	e := open(t, lore.Options{S3: &cfg, NoAutoRefresh: true})
	query(t, e, "CREATE TABLE ev WITH (location = 's3://lake/events', format = 'parquet')")
	return e
}

// localAnswer is s3Aggregates over the table on local disk.
func localAnswer(t *testing.T, dir string) string {
	t.Helper()
	e := open(t, lore.Options{NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	return resultText(run(t, e, s3Aggregates, noCache))
}

// checkNoSecret fails the test when err's text holds the secret key.
func checkNoSecret(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), s3Secret) {
		t.Fatalf("an error holds the secret key: %v", err)
	}
}

// TestS3FaultsGiveTheRightAnswer: under each fault a store or the network gives for a
// while — throttling, server errors, connections reset or cut short mid-body, stalls
// past the timeout — a scan of a multi-file table in S3 gives the answer it gives on
// local disk, having retried; never a partial one.
func TestS3FaultsGiveTheRightAnswer(t *testing.T) {
	srv := s3test.Start(t, "lake")
	dir := s3Events(t, srv, 40_000, 6, 4_000)
	want := localAnswer(t, dir)
	faults := []s3test.Fault{s3test.SlowDown, s3test.InternalError, s3test.Reset, s3test.Truncate, s3test.Stall, s3test.StallBody}
	for _, f := range faults {
		t.Run(f.String(), func(t *testing.T) {
			e := eventsEngine(t, srv, func(c *s3.Config) { c.Timeout = 250 * time.Millisecond })
			srv.Heal()
			srv.Reset()
			// Every third request fails: the listing, footers and column chunks
			// alike, and some request fails on its retry too.
			srv.Inject(s3test.Rule{Fault: f, Every: 3})
			defer srv.Heal()
			res, err := e.Query(context.Background(), s3Aggregates, noCache)
			if err != nil {
				t.Fatalf("%v\n%s", err, strings.Join(srv.Log(), "\n"))
			}
			if got := resultText(res); got != want {
				t.Fatalf("under %s: %s, want %s", f, got, want)
			}
			if n, _ := srv.Faults(); n < 3 {
				t.Fatalf("only %d faults made: %s", n, strings.Join(srv.Log(), "\n"))
			}
		})
	}
}

// TestS3PersistentFaultFailsTheStatement: a fault that does not pass fails the
// statement with SOURCE_UNAVAILABLE (HTTP 502), never a partial answer.
func TestS3PersistentFaultFailsTheStatement(t *testing.T) {
	srv := s3test.Start(t, "lake")
	s3Events(t, srv, 20_000, 4, 5_000)
	for _, f := range []s3test.Fault{s3test.SlowDown, s3test.Reset, s3test.Stall} {
		t.Run(f.String(), func(t *testing.T) {
			e := eventsEngine(t, srv, func(c *s3.Config) { c.Timeout = 100 * time.Millisecond; c.Attempts = 3 })
			srv.Heal()
			// The listing passes; every read fails.
			srv.Inject(s3test.Rule{Fault: f, Kind: s3test.KindGet, Every: 1})
			defer srv.Heal()
			start := time.Now()
			_, err := e.Query(context.Background(), s3Aggregates, noCache)
			if errs.CodeOf(err) != errs.SourceUnavailable || errs.Status(errs.CodeOf(err)) != 502 {
				t.Fatalf("%v (%s), want SOURCE_UNAVAILABLE", err, errs.CodeOf(err))
			}
			t.Logf("%v after %v", err, time.Since(start))
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("gave up after %v", d)
			}
			checkNoSecret(t, err)
		})
	}
}

// TestS3AccessDenied: 403 fails the statement with SOURCE_UNAVAILABLE naming denied
// access, and nothing says the secret key.
func TestS3AccessDenied(t *testing.T) {
	srv := s3test.Start(t, "lake")
	s3Events(t, srv, 2_000, 2, 1_000)
	e := eventsEngine(t, srv, nil)
	for _, kind := range []string{s3test.KindList, s3test.KindGet} {
		srv.Heal()
		srv.Inject(s3test.Rule{Fault: s3test.AccessDenied, Kind: kind, Every: 1})
		_, err := e.Query(context.Background(), s3Aggregates, noCache)
		if errs.CodeOf(err) != errs.SourceUnavailable || !strings.Contains(err.Error(), "access denied") {
			t.Fatalf("denied %s: %v, want SOURCE_UNAVAILABLE naming access denied", kind, err)
		}
		checkNoSecret(t, err)
		t.Logf("denied %s: %v", kind, err)
	}
	srv.Heal()
}

// TestS3Unreachable: a store at a closed port fails a statement with
// SOURCE_UNAVAILABLE (HTTP 502) after its attempts, within bounded time.
func TestS3Unreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := s3.Config{Endpoint: "http://" + addr, AllowHTTP: true, Region: "us-east-1",
		Credentials: s3.StaticCredentials("lore-engine-key", s3Secret), Attempts: 3, Backoff: 10 * time.Millisecond}
	e := open(t, lore.Options{S3: &cfg, NoAutoRefresh: true})
	start := time.Now()
	_, err = e.Query(context.Background(), "SELECT count(*) FROM 's3://lake/events'", noCache)
	if err == nil {
		_, err = e.Query(context.Background(), "CREATE TABLE ev WITH (location = 's3://lake/events', format = 'parquet')", nil)
	}
	if errs.CodeOf(err) != errs.SourceUnavailable || errs.Status(errs.CodeOf(err)) != 502 {
		t.Fatalf("%v (%s), want SOURCE_UNAVAILABLE", err, errs.CodeOf(err))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("gave up after %v", d)
	}
	t.Logf("%v after %v", err, time.Since(start))
	if !strings.Contains(err.Error(), "cannot be reached") {
		t.Errorf("%v does not say the store cannot be reached", err)
	}
	checkNoSecret(t, err)
}

// TestS3CancelStopsScan: a statement whose reads stall on a slow server returns
// CANCELED promptly when its context is cancelled, and its requests go away.
func TestS3CancelStopsScan(t *testing.T) {
	srv := s3test.Start(t, "lake")
	s3Events(t, srv, 20_000, 4, 5_000)
	e := eventsEngine(t, srv, func(c *s3.Config) { c.Timeout = time.Minute })
	for _, f := range []s3test.Fault{s3test.Stall, s3test.StallBody} {
		srv.Heal()
		srv.Inject(s3test.Rule{Fault: f, Kind: s3test.KindGet, Every: 1})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := e.Query(ctx, s3Aggregates, noCache)
			done <- err
		}()
		s3WaitFor(t, func() bool { _, n := srv.Faults(); return n >= 1 })
		time.Sleep(20 * time.Millisecond)
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			if errs.CodeOf(err) != errs.Canceled || !errors.Is(err, context.Canceled) {
				t.Fatalf("%s: cancelled statement gave %v (%s)", f, err, errs.CodeOf(err))
			}
		case <-time.After(cancelLatency):
			t.Fatalf("%s: a cancelled statement did not return within %v", f, cancelLatency)
		}
		t.Logf("%s: returned %v after the cancel", f, time.Since(start))
		s3WaitFor(t, func() bool { _, n := srv.Faults(); return n == 0 })
	}
	srv.Heal()
}

// TestS3ObjectChangedAfterListing: a file replaced or deleted between a statement's
// listing and its read of that file fails the statement with SOURCE_CHANGED — never
// an answer mixing two versions of the table.
func TestS3ObjectChangedAfterListing(t *testing.T) {
	srv := s3test.Start(t, "lake")
	s3Events(t, srv, 20_000, 4, 5_000)
	// Another table's file, valid Parquet of the same schema and other rows.
	other := filepath.Join(t.TempDir(), "other")
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 5_000, Files: 1, Out: other, Seed: 99}); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(other, "*.parquet"))
	replacement, err := os.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, change := range []string{"replaced", "deleted"} {
		t.Run(change, func(t *testing.T) {
			e := eventsEngine(t, srv, nil)
			var once sync.Once
			var changed string
			srv.Before(func(kind, url string) {
				if kind == s3test.KindGet && strings.HasSuffix(url, ".parquet") {
					once.Do(func() {
						changed = url
						if change == "replaced" {
							srv.Put(t, url, replacement)
						} else {
							srv.Delete(t, url)
						}
					})
				}
			})
			defer srv.Before(nil)
			_, err := e.Query(context.Background(), s3Aggregates, noCache)
			if errs.CodeOf(err) != errs.SourceChanged || errs.Status(errs.CodeOf(err)) != 409 {
				t.Fatalf("%s %s after listing: %v (%s), want SOURCE_CHANGED", change, changed, err, errs.CodeOf(err))
			}
			t.Logf("%s: %v", change, err)
			if !strings.Contains(err.Error(), strings.TrimPrefix(changed, "s3://")) {
				t.Errorf("%v does not name %s", err, changed)
			}
		})
	}
}

// s3WaitFor waits up to 5 s for cond.
func s3WaitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(end) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
