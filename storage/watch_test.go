package storage_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/loredb/lore/storage"
)

// TestWatchSeesEveryChange takes a stamp of a directory and makes each kind of change
// a writer makes under it: every one leaves the stamp changed at once, and a new
// stamp taken after it is unchanged until the next.
func TestWatchSeesEveryChange(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("changes are watched on Linux only")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.parquet"), "a")
	changes := []struct {
		name string
		fn   func()
	}{
		{"a file lands", func() { write(t, filepath.Join(dir, "b.parquet"), "b") }},
		{"a file is rewritten in place", func() { appendTo(t, filepath.Join(dir, "a.parquet"), "more") }},
		{"a file's time changes", func() {
			later := time.Now().Add(time.Hour)
			must(t, os.Chtimes(filepath.Join(dir, "a.parquet"), later, later))
		}},
		{"a file is renamed over another", func() {
			write(t, filepath.Join(dir, ".tmp"), "new")
			must(t, os.Rename(filepath.Join(dir, ".tmp"), filepath.Join(dir, "b.parquet")))
		}},
		{"a partition directory appears", func() { must(t, os.Mkdir(filepath.Join(dir, "p=1"), 0o755)) }},
		{"a file lands in the new directory", func() { write(t, filepath.Join(dir, "p=1", "c.parquet"), "c") }},
		{"a file in a subdirectory changes", func() { appendTo(t, filepath.Join(dir, "p=1", "c.parquet"), "x") }},
		{"a file is removed", func() { must(t, os.Remove(filepath.Join(dir, "b.parquet"))) }},
		{"a directory is removed", func() { must(t, os.RemoveAll(filepath.Join(dir, "p=1"))) }},
	}
	for _, c := range changes {
		s, ok := storage.Watch(storage.Local{}, dir)
		if !ok {
			t.Fatalf("%s: %s cannot be watched", c.name, dir)
		}
		if !unchanged(dir, s) {
			t.Fatalf("%s: a fresh stamp is changed", c.name)
		}
		c.fn()
		if unchanged(dir, s) {
			t.Errorf("%s: the stamp is unchanged", c.name)
		}
	}
	// Reading is no change.
	s, _ := storage.Watch(storage.Local{}, dir)
	if _, err := os.ReadFile(filepath.Join(dir, "a.parquet")); err != nil {
		t.Fatal(err)
	}
	if _, err := (storage.Local{}).List(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	if !unchanged(dir, s) {
		t.Error("reading the directory changed its stamp")
	}
}

// TestWatchRoots covers the locations that are not a plain directory: a file, a
// glob, a directory replaced under its name, and what cannot be watched.
func TestWatchRoots(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("changes are watched on Linux only")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "t", "a.parquet")
	must(t, os.MkdirAll(filepath.Dir(file), 0o755))
	write(t, file, "a")

	s, ok := storage.Watch(storage.Local{}, file)
	if !ok || !unchanged(file, s) {
		t.Fatal("a file cannot be watched")
	}
	appendTo(t, file, "b")
	if unchanged(file, s) {
		t.Error("a file's change left its stamp unchanged")
	}

	s, ok = storage.Watch(storage.Local{}, filepath.Join(dir, "t", "*.parquet"))
	if !ok {
		t.Fatal("a glob cannot be watched")
	}
	write(t, filepath.Join(dir, "t", "b.parquet"), "b")
	if unchanged(filepath.Join(dir, "t", "*.parquet"), s) {
		t.Error("a file landing under a glob's base left its stamp unchanged")
	}

	// The table's directory is swapped for another under its name.
	s, _ = storage.Watch(storage.Local{}, filepath.Join(dir, "t"))
	must(t, os.MkdirAll(filepath.Join(dir, "t2"), 0o755))
	must(t, os.Rename(filepath.Join(dir, "t"), filepath.Join(dir, "old")))
	must(t, os.Rename(filepath.Join(dir, "t2"), filepath.Join(dir, "t")))
	if unchanged(filepath.Join(dir, "t"), s) {
		t.Error("a directory replaced under its name left its stamp unchanged")
	}
	s, ok = storage.Watch(storage.Local{}, filepath.Join(dir, "t"))
	if !ok || !unchanged(filepath.Join(dir, "t"), s) {
		t.Fatal("the replacing directory cannot be watched")
	}
	write(t, filepath.Join(dir, "t", "c.parquet"), "c")
	if unchanged(filepath.Join(dir, "t"), s) {
		t.Error("a file landing in the replacing directory left its stamp unchanged")
	}

	// A link inside the tree could change where it leads unseen.
	must(t, os.Symlink(filepath.Join(dir, "old", "a.parquet"), filepath.Join(dir, "t", "link.parquet")))
	if _, ok := storage.Watch(storage.Local{}, filepath.Join(dir, "t")); ok {
		t.Error("a tree with a symbolic link was watched")
	}
	if _, ok := storage.Watch(storage.Local{}, filepath.Join(dir, "missing")); ok {
		t.Error("a missing location was watched")
	}
	if _, ok := storage.Watch(storage.Local{}, "s3://bucket/t"); ok {
		t.Error("an object store location was watched by the local store")
	}
	if (storage.Stamp{}).UnchangedSince(storage.Stamp{}) {
		t.Error("the zero stamp is unchanged")
	}
}

// unchanged reports whether nothing under location changed since s, as a statement
// asks it: a new Watch (which reads the kernel's queue) compared with s.
func unchanged(location string, s storage.Stamp) bool {
	now, _ := storage.Watch(storage.Local{}, location)
	return now.UnchangedSince(s)
}

func write(t *testing.T, p, s string) {
	t.Helper()
	must(t, os.WriteFile(p, []byte(s), 0o644))
}

func appendTo(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(s)
	must(t, err)
	must(t, f.Close())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
