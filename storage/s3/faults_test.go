package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/storage/s3"
	"github.com/loredb/lore/storage/s3/s3test"
)

// secret is the test key's secret: no error text may hold it.
const secret = "lore-fault-secret-9f3a"

// quick is a store that gives up fast: short attempts and backoff, so tests of
// stalls and persistent faults take well under a second each.
func quick(t *testing.T, srv *s3test.Server, attempts int, timeout time.Duration) *s3.Store {
	t.Helper()
	cfg := srv.Config()
	cfg.Credentials = s3.StaticCredentials("lore-fault-key", secret)
	cfg.Timeout = timeout
	cfg.Backoff = time.Millisecond
	cfg.Attempts = attempts
	st, err := s3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// noSecret fails the test when an error's text holds the secret key.
func noSecret(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Fatalf("an error text holds the secret key: %v", err)
	}
}

// ops are the store's requests, each checked for the right answer.
var ops = []struct {
	name, kind string
	run        func(ctx context.Context, st *s3.Store, data []byte) error
}{
	{"list", s3test.KindList, func(ctx context.Context, st *s3.Store, data []byte) error {
		l, err := st.List(ctx, "s3://lake/t")
		if err == nil && (len(l) != 1 || l[0].Size != int64(len(data))) {
			err = fmt.Errorf("listed %v", l)
		}
		return err
	}},
	{"stat", s3test.KindHead, func(ctx context.Context, st *s3.Store, data []byte) error {
		o, err := st.Stat(ctx, "s3://lake/t/f")
		if err == nil && o.Size != int64(len(data)) {
			err = fmt.Errorf("stat %+v", o)
		}
		return err
	}},
	{"open", s3test.KindGet, func(ctx context.Context, st *s3.Store, data []byte) error {
		r, err := st.Open(ctx, "s3://lake/t/f")
		if err != nil {
			return err
		}
		defer r.Close()
		return readsAs(r, data, storage.Range{Off: 0, Len: 1000})
	}},
	{"prefetch", s3test.KindGet, func(ctx context.Context, st *s3.Store, data []byte) error {
		r, err := st.OpenInfo(ctx, storage.ObjectInfo{Path: "s3://lake/t/f", Size: int64(len(data))})
		if err != nil {
			return err
		}
		defer r.Close()
		g := storage.Range{Off: 3 << 20, Len: 600 << 10}
		if err := storage.Prefetch(ctx, r, []storage.Range{g}); err != nil {
			return err
		}
		return readsAs(r, data, g)
	}},
	{"read", s3test.KindGet, func(ctx context.Context, st *s3.Store, data []byte) error {
		r, err := st.OpenInfo(ctx, storage.ObjectInfo{Path: "s3://lake/t/f", Size: int64(len(data))})
		if err != nil {
			return err
		}
		defer r.Close()
		return readsAs(r, data, storage.Range{Off: int64(len(data)) - 5000, Len: 5000})
	}},
}

func readsAs(r storage.Reader, data []byte, g storage.Range) error {
	b := make([]byte, g.Len)
	if _, err := r.ReadAt(b, g.Off); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if !bytes.Equal(b, data[g.Off:g.Off+g.Len]) {
		return fmt.Errorf("bytes at %d differ from the object's", g.Off)
	}
	return nil
}

var transient = []s3test.Fault{s3test.SlowDown, s3test.InternalError, s3test.Reset, s3test.Truncate, s3test.Stall, s3test.StallBody}

// TestTransientFaultsAreRetried: every request kind, under each fault a store or the
// network gives for a while, returns the right answer once the fault passes, having
// retried as many times as the server failed it.
func TestTransientFaultsAreRetried(t *testing.T) {
	ctx := context.Background()
	for _, f := range transient {
		for _, op := range ops {
			t.Run(fmt.Sprintf("%s/%s", op.name, f), func(t *testing.T) {
				t.Parallel()
				srv, data := faultServer(t)
				st := quick(t, srv, 4, 200*time.Millisecond)
				srv.Inject(s3test.Rule{Fault: f, Kind: op.kind, Next: 2})
				if err := op.run(ctx, st, data); err != nil {
					t.Fatalf("%v\n%s", err, strings.Join(srv.Log(), "\n"))
				}
				faults, _ := srv.Faults()
				if faults != 2 || st.Requests().Retries < 2 {
					t.Fatalf("%d faults, %d retries: %s", faults, st.Requests().Retries, strings.Join(srv.Log(), "\n"))
				}
			})
		}
	}
}

// faultServer is a server of its own for one test, holding one 4 MiB object.
func faultServer(t *testing.T) (*s3test.Server, []byte) {
	srv := s3test.Start(t, "lake")
	data := payload(4 << 20)
	srv.Put(t, "s3://lake/t/f", data)
	srv.Reset()
	return srv, data
}

// TestPersistentFaultsAreNamed: a fault that does not pass is SOURCE_UNAVAILABLE
// after the configured attempts, within bounded time, and never a partial answer.
func TestPersistentFaultsAreNamed(t *testing.T) {
	ctx := context.Background()
	for _, f := range transient {
		for _, op := range ops {
			t.Run(fmt.Sprintf("%s/%s", op.name, f), func(t *testing.T) {
				t.Parallel()
				srv, data := faultServer(t)
				st := quick(t, srv, 3, 100*time.Millisecond)
				srv.Inject(s3test.Rule{Fault: f, Kind: op.kind, Every: 1})
				start := time.Now()
				err := op.run(ctx, st, data)
				if errs.CodeOf(err) != errs.SourceUnavailable {
					t.Fatalf("error %v (%s), want SOURCE_UNAVAILABLE", err, errs.CodeOf(err))
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Fatalf("gave up after %v", d)
				}
				if !strings.Contains(err.Error(), "3 attempts") {
					t.Errorf("error does not say how often it tried: %v", err)
				}
				noSecret(t, err)
			})
		}
	}
}

// TestAccessDeniedIsNotRetried: 403 is SOURCE_UNAVAILABLE naming denied access at
// once; retrying cannot help.
func TestAccessDeniedIsNotRetried(t *testing.T) {
	ctx := context.Background()
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			srv, data := faultServer(t)
			st := quick(t, srv, 4, time.Second)
			srv.Inject(s3test.Rule{Fault: s3test.AccessDenied, Kind: op.kind, Every: 1})
			err := op.run(ctx, st, data)
			if errs.CodeOf(err) != errs.SourceUnavailable || !strings.Contains(err.Error(), "access denied") {
				t.Fatalf("error %v, want SOURCE_UNAVAILABLE naming access denied", err)
			}
			if faults, _ := srv.Faults(); faults != 1 {
				t.Fatalf("denied %d times: %s", faults, strings.Join(srv.Log(), "\n"))
			}
			noSecret(t, err)
		})
	}
}

// TestUnreachableStore: a closed port is SOURCE_UNAVAILABLE, HTTP 502, after the
// configured attempts and no longer.
func TestUnreachableStore(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	st, err := s3.New(s3.Config{Endpoint: "http://" + addr, AllowHTTP: true, Region: "us-east-1",
		Credentials: s3.StaticCredentials("lore-fault-key", secret), Attempts: 3, Backoff: time.Millisecond,
		Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		start := time.Now()
		err := op.run(context.Background(), st, payload(4<<20))
		if errs.CodeOf(err) != errs.SourceUnavailable || errs.Status(errs.CodeOf(err)) != 502 {
			t.Fatalf("%s: %v (%s), want SOURCE_UNAVAILABLE", op.name, err, errs.CodeOf(err))
		}
		if !strings.Contains(err.Error(), "cannot be reached") {
			t.Errorf("%s: %v does not say the store cannot be reached", op.name, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s: gave up after %v", op.name, d)
		}
		noSecret(t, err)
	}
	if r := st.Requests(); r.Retries == 0 {
		t.Errorf("a refused connection was not retried: %+v", r)
	}
}

// TestCancelStopsRequests: cancelling the statement's context stops a read stalled
// on the server at once, with the context's error, and the server sees the request
// go away.
func TestCancelStopsRequests(t *testing.T) {
	srv := s3test.Start(t, "lake")
	data := payload(4 << 20)
	srv.Put(t, "s3://lake/t/f", data)
	st := newStore(t, srv, func(c *s3.Config) { c.Timeout = time.Minute }) // only the cancellation can end the stall
	for _, f := range []s3test.Fault{s3test.Stall, s3test.StallBody} {
		srv.Heal()
		srv.Inject(s3test.Rule{Fault: f, Kind: s3test.KindGet, Every: 1})
		ctx, cancel := context.WithCancel(context.Background())
		r, err := st.OpenInfo(ctx, storage.ObjectInfo{Path: "s3://lake/t/f", Size: int64(len(data))})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			done <- storage.Prefetch(ctx, r, []storage.Range{{Off: 0, Len: 1 << 20}, {Off: 3 << 20, Len: 1 << 20}})
		}()
		waitFor(t, func() bool { _, n := srv.Faults(); return n >= 2 })
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%s: cancelled prefetch gave %v", f, err)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("%s: a cancelled prefetch did not return", f)
		}
		t.Logf("%s: returned %v after the cancel", f, time.Since(start))
		waitFor(t, func() bool { _, n := srv.Faults(); return n == 0 })
	}
	srv.Heal()
}

// waitFor waits up to 5 s for cond.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(end) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
