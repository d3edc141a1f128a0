package publish

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/loredb/lore/errs"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPublishReplaces(t *testing.T) {
	loc := t.TempDir()
	write(t, filepath.Join(loc, "old.parquet"), "old")
	s, err := NewStage(loc, "a")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(s.Dir, "0.parquet"), "new")
	if err := s.Publish(Manifest{Add: []Move{{Staged: "0.parquet", Final: "new.parquet"}}, Remove: []string{"old.parquet"}}); err != nil {
		t.Fatal(err)
	}
	if got := names(t, loc); !slices.Equal(got, []string{Dir, "new.parquet"}) {
		t.Fatalf("location holds %v", got)
	}
	if Pending(loc) {
		t.Fatal("a finished rewrite is pending")
	}
}

func TestRecoverRollsBackWithoutManifest(t *testing.T) {
	loc := t.TempDir()
	write(t, filepath.Join(loc, "old.parquet"), "old")
	s, _ := NewStage(loc, "a")
	write(t, filepath.Join(s.Dir, "0.parquet"), "half")
	if !Pending(loc) {
		t.Fatal("not pending")
	}
	if ok, err := Recover(loc); err != nil || !ok {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	if got := names(t, loc); !slices.Equal(got, []string{Dir, "old.parquet"}) {
		t.Fatalf("location holds %v", got)
	}
}

func TestRecoverFinishesHalfDone(t *testing.T) {
	loc := t.TempDir()
	// Killed after the manifest, one rename and one delete.
	killedAt(t, loc, "deleted")
	if ok, err := Recover(loc); err != nil || !ok {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	if got := names(t, loc); !slices.Equal(got, []string{Dir, "n0.parquet", "n1.parquet"}) {
		t.Fatalf("location holds %v", got)
	}
	// Again: nothing left to do.
	if ok, err := Recover(loc); err != nil || ok {
		t.Fatalf("second Recover = %v, %v", ok, err)
	}
}

func TestManifestRefusesRemovingWhatItAdds(t *testing.T) {
	s, _ := NewStage(t.TempDir(), "a")
	err := s.Publish(Manifest{Add: []Move{{"0", "x.parquet"}}, Remove: []string{"x.parquet"}})
	if errs.CodeOf(err) != errs.Internal {
		t.Fatalf("got %v", err)
	}
	err = s.Publish(Manifest{Remove: []string{"../x.parquet"}})
	if errs.CodeOf(err) != errs.Internal {
		t.Fatalf("got %v", err)
	}
}

func TestLockIsExclusive(t *testing.T) {
	loc := t.TempDir()
	l, err := Acquire(loc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(loc); errs.CodeOf(err) != errs.OptimizeInProgress {
		t.Fatalf("second Acquire: %v", err)
	}
	if l2, err := TryAcquire(loc); l2 != nil || err != nil {
		t.Fatalf("TryAcquire = %v, %v", l2, err)
	}
	l.Release()
	l3, err := Acquire(loc)
	if err != nil {
		t.Fatal(err)
	}
	l3.Release()
}

// A publish that fails after its manifest is written is finished by recovery, never
// discarded by its caller: some of its files may be in place already.
func TestDiscardKeepsAManifestedRewrite(t *testing.T) {
	loc := t.TempDir()
	s := killedAt(t, loc, "renamed")
	if err := s.Discard(); err != nil || !Pending(loc) {
		t.Fatalf("Discard after the manifest: %v, pending %v", err, Pending(loc))
	}
	if _, err := Recover(loc); err != nil {
		t.Fatal(err)
	}
	if got := names(t, loc); !slices.Equal(got, []string{Dir, "n0.parquet", "n1.parquet"}) {
		t.Fatalf("location holds %v", got)
	}
}

// A listing waits while a publish holds the lock, and lists after it.
func TestViewWaitsForPublish(t *testing.T) {
	loc := t.TempDir()
	l, err := Acquire(loc)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	d, err := lockDir(context.Background(), filepath.Join(loc, Dir), true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(50 * time.Millisecond)
		released <- time.Now()
		unlock(d)
		d.Close()
	}()
	var listed time.Time
	err = View(context.Background(), loc, func() error { return nil }, func() error {
		listed = time.Now()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if at := <-released; listed.Before(at) {
		t.Fatalf("listed at %v, before the publish released its lock at %v", listed, at)
	}
}

// A publish that keeps the lock past ViewWait fails the listing with a code, and a
// canceled listing stops waiting.
func TestViewWaitIsBounded(t *testing.T) {
	loc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(loc, Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := lockDir(context.Background(), filepath.Join(loc, Dir), true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	defer func(w time.Duration) { ViewWait = w }(ViewWait)
	ViewWait = 30 * time.Millisecond
	list := func() error {
		t.Fatal("listed while a publish held the lock")
		return nil
	}
	if err := View(context.Background(), loc, func() error { return nil }, list); errs.CodeOf(err) != errs.OptimizeInProgress {
		t.Fatalf("got %v, want %s", err, errs.OptimizeInProgress)
	}
	ViewWait = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := View(ctx, loc, func() error { return nil }, list); errs.CodeOf(err) != errs.Canceled {
		t.Fatalf("got %v, want %s", err, errs.Canceled)
	}
}

// killedAt runs a publish of two new files over two old ones in loc that stops (as
// if killed) at the first step named step.
func killedAt(t *testing.T, loc, step string) *Stage {
	t.Helper()
	write(t, filepath.Join(loc, "old1.parquet"), "old")
	write(t, filepath.Join(loc, "old2.parquet"), "old")
	s, err := NewStage(loc, "a")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(s.Dir, "0.parquet"), "new")
	write(t, filepath.Join(s.Dir, "1.parquet"), "new")
	m := Manifest{Add: []Move{{"0.parquet", "n0.parquet"}, {"1.parquet", "n1.parquet"}}, Remove: []string{"old1.parquet", "old2.parquet"}}
	FailPoint = func(s string) {
		if s == step {
			panic("killed")
		}
	}
	defer func() { FailPoint = nil }()
	func() {
		defer func() { recover() }()
		s.Publish(m)
	}()
	return s
}

// A listing that finds a publish killed half way has it finished before it lists,
// and reports the recovery's error when it cannot be.
func TestViewSettlesHalfPublished(t *testing.T) {
	loc := t.TempDir()
	killedAt(t, loc, "renamed")
	settled := 0
	settle := func() error {
		settled++
		l, err := TryAcquire(loc)
		if err != nil || l == nil {
			return err
		}
		defer l.Release()
		_, err = Recover(loc)
		return err
	}
	var listed []string
	err := View(context.Background(), loc, settle, func() error {
		listed = names(t, loc)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{Dir, "n0.parquet", "n1.parquet"}; settled != 1 || !slices.Equal(listed, want) {
		t.Fatalf("settled %d times, listed %v, want once and %v", settled, listed, want)
	}

	// A settle that cannot finish it (its rewrite lock held): the wait is bounded.
	loc = t.TempDir()
	killedAt(t, loc, "renamed")
	defer func(w time.Duration) { ViewWait = w }(ViewWait)
	ViewWait = 30 * time.Millisecond
	err = View(context.Background(), loc, func() error { return nil }, func() error {
		t.Fatal("listed a half published rewrite")
		return nil
	})
	if errs.CodeOf(err) != errs.OptimizeInProgress {
		t.Fatalf("got %v, want %s", err, errs.OptimizeInProgress)
	}
}

// A manifest written but no file moved yet is the table before the publish: listed
// as it is, without waiting.
func TestViewListsPublishNotStarted(t *testing.T) {
	loc := t.TempDir()
	killedAt(t, loc, "manifest")
	called := false
	err := View(context.Background(), loc, func() error { called = true; return nil }, func() error {
		if got := names(t, loc); !slices.Equal(got, []string{Dir, "old1.parquet", "old2.parquet"}) {
			t.Fatalf("listed %v", got)
		}
		return nil
	})
	if err != nil || called {
		t.Fatalf("View = %v, settle called %v", err, called)
	}
}

// A location no rewrite ever touched is listed once, and nothing is made in it.
func TestViewWithoutRewrites(t *testing.T) {
	loc := t.TempDir()
	n := 0
	if err := View(context.Background(), loc, nil, func() error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("View = %v after %d listings", err, n)
	}
	if got := names(t, loc); len(got) != 0 {
		t.Fatalf("location holds %v", got)
	}
}

// The recovered mark is on disk from before a recovery changes anything until it is
// cleared; a recovery with nothing to do leaves none.
func TestRecoveredMark(t *testing.T) {
	loc := t.TempDir()
	killedAt(t, loc, "deleted")
	if Recovered(loc) {
		t.Fatal("marked before any recovery")
	}
	// A recovery killed part way leaves the mark too.
	FailPoint = func(s string) {
		if s == "renamed" {
			panic("killed")
		}
	}
	func() {
		defer func() { recover() }()
		Recover(loc)
	}()
	FailPoint = nil
	if !Recovered(loc) || !Pending(loc) {
		t.Fatalf("recovery killed: recovered %v, pending %v", Recovered(loc), Pending(loc))
	}
	if ok, err := Recover(loc); err != nil || !ok || !Recovered(loc) {
		t.Fatalf("Recover = %v, %v; recovered %v", ok, err, Recovered(loc))
	}
	if err := ClearRecovered(loc); err != nil || Recovered(loc) {
		t.Fatalf("ClearRecovered = %v; recovered %v", err, Recovered(loc))
	}
	if ok, err := Recover(loc); err != nil || ok || Recovered(loc) {
		t.Fatalf("Recover with nothing to do = %v, %v; recovered %v", ok, err, Recovered(loc))
	}
}
