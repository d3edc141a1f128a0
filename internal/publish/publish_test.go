package publish

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

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
	write(t, filepath.Join(loc, "old1.parquet"), "old")
	write(t, filepath.Join(loc, "old2.parquet"), "old")
	s, _ := NewStage(loc, "a")
	write(t, filepath.Join(s.Dir, "0.parquet"), "new")
	write(t, filepath.Join(s.Dir, "1.parquet"), "new")
	m := Manifest{Add: []Move{{"0.parquet", "n0.parquet"}, {"1.parquet", "n1.parquet"}}, Remove: []string{"old1.parquet", "old2.parquet"}}
	// Killed after the manifest, one rename and one delete.
	FailPoint = func(step string) {
		if step == "deleted" {
			panic("killed")
		}
	}
	func() {
		defer func() { recover() }()
		s.Publish(m)
	}()
	FailPoint = nil
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
	write(t, filepath.Join(loc, "old1.parquet"), "old")
	write(t, filepath.Join(loc, "old2.parquet"), "old")
	s, _ := NewStage(loc, "a")
	write(t, filepath.Join(s.Dir, "0.parquet"), "new")
	write(t, filepath.Join(s.Dir, "1.parquet"), "new")
	m := Manifest{Add: []Move{{"0.parquet", "n0.parquet"}, {"1.parquet", "n1.parquet"}}, Remove: []string{"old1.parquet", "old2.parquet"}}
	FailPoint = func(step string) {
		if step == "renamed" {
			panic("failed")
		}
	}
	func() {
		defer func() { recover() }()
		s.Publish(m)
	}()
	FailPoint = nil
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
