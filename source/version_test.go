package source

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

func versionOf(t *testing.T, location string) Version {
	t.Helper()
	l, err := Resolve(context.Background(), storage.Local{}, location)
	if err != nil {
		t.Fatal(err)
	}
	v, err := l.Version()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVersionTracksEveryChange(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.parquet")
	writeParquet(t, a, 10, col{"x", types.Int64, ints(1, 2, 3)})
	writeParquet(t, filepath.Join(dir, "b.parquet"), 10, col{"x", types.Int64, ints(4)})

	v1 := versionOf(t, dir)
	if v1.Kind != KindListing || v1.Files != 2 || len(v1.IdentitySHA256) != 64 {
		t.Fatalf("version = %+v", v1)
	}
	if again := versionOf(t, dir); !again.Same(v1) {
		t.Fatalf("the same files gave two versions: %+v and %+v", v1, again)
	}
	if want := "listing of 2 files (" + v1.IdentitySHA256[:12] + ")"; v1.Label() != want {
		t.Fatalf("label = %q, want %q", v1.Label(), want)
	}

	// The same bytes with a new modification time are a new version.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(a, later, later); err != nil {
		t.Fatal(err)
	}
	v2 := versionOf(t, dir)
	if v2.Same(v1) {
		t.Fatal("a new modification time did not change the version")
	}

	// A file added, then removed.
	c := filepath.Join(dir, "c.parquet")
	writeParquet(t, c, 10, col{"x", types.Int64, ints(5)})
	v3 := versionOf(t, dir)
	if v3.Same(v2) || v3.Files != 3 {
		t.Fatalf("adding a file: %+v after %+v", v3, v2)
	}
	if err := os.Remove(c); err != nil {
		t.Fatal(err)
	}
	if v4 := versionOf(t, dir); !v4.Same(v2) {
		t.Fatalf("removing the added file should give the earlier version back: %+v, want %+v", v4, v2)
	}

	// A glob over the same files names the same state of the same files.
	if g := versionOf(t, filepath.Join(dir, "*.parquet")); !g.Same(v2) {
		t.Fatalf("glob version %+v differs from the directory's %+v", g, v2)
	}
}

func TestVersionOfOneFile(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.parquet")
	writeParquet(t, a, 10, col{"x", types.Int64, ints(1, 2, 3)})
	v := versionOf(t, a)
	if v.Kind != KindFile || v.Files != 0 || !strings.HasPrefix(v.Label(), "file (") {
		t.Fatalf("version = %+v, label %q", v, v.Label())
	}
	// A one-file directory is a listing, not the file.
	if d := versionOf(t, dir); d.Kind != KindListing || d.Files != 1 || d.Same(v) {
		t.Fatalf("directory version = %+v", d)
	}
}

func TestVersionRefusesUntrackableObjects(t *testing.T) {
	l := &Listing{Files: []FileRef{{Info: storage.ObjectInfo{Path: "s3://b/x.parquet", Size: 10}}}}
	if _, err := l.Version(); errs.CodeOf(err) != errs.SourceUnavailable {
		t.Fatalf("err = %v", err)
	}
	l.Files[0].Info.ETag = `"abc"`
	e1, err := l.Version()
	if err != nil {
		t.Fatal(err)
	}
	l.Files[0].Info.ETag = `"abd"`
	if e2, _ := l.Version(); e2.Same(e1) {
		t.Fatal("a new ETag did not change the version")
	}
}

func TestChangeMarkerOnLocalDisk(t *testing.T) {
	mtime := time.Unix(1_700_000_000, 123)
	base := storage.ObjectInfo{Path: "/t/a", Size: 10, ModTime: mtime, ChangeTime: time.Unix(1_700_000_001, 0), Inode: 42, Device: 3}
	marker := func(o storage.ObjectInfo) string {
		t.Helper()
		m, err := ChangeMarker(o)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := marker(base)
	if !strings.HasPrefix(m, "l:") || m != marker(base) {
		t.Fatalf("local marker %q", m)
	}
	changed := map[string]func(*storage.ObjectInfo){
		"change time": func(o *storage.ObjectInfo) { o.ChangeTime = o.ChangeTime.Add(time.Nanosecond) },
		"inode":       func(o *storage.ObjectInfo) { o.Inode++ },
		"device":      func(o *storage.ObjectInfo) { o.Device++ },
		"mtime":       func(o *storage.ObjectInfo) { o.ModTime = o.ModTime.Add(time.Nanosecond) },
	}
	for name, change := range changed {
		o := base
		change(&o)
		if marker(o) == m {
			t.Errorf("a new %s left the marker as it was", name)
		}
	}
	// Where the platform reports no inode, the modification time alone.
	if m := marker(storage.ObjectInfo{Path: "/t/a", ModTime: mtime}); !strings.HasPrefix(m, "m:") || len(m) != 10 {
		t.Errorf("marker without an inode: %q", m)
	}
}

// TestVersionSeesARewriteWithItsTimesRestored rewrites a file in place with the same
// size and restores its modification time: the version must change.
func TestVersionSeesARewriteWithItsTimesRestored(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the inode change time is read on Linux")
	}
	dir := t.TempDir()
	a := filepath.Join(dir, "a.parquet")
	writeParquet(t, a, 10, col{"x", types.Int64, ints(1, 2, 3)})
	v1 := versionOf(t, dir)
	st, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	// The same bytes written again: the inode change time moves, at the kernel
	// clock's tick, so wait for a tick to pass first.
	time.Sleep(20 * time.Millisecond)
	if err := os.WriteFile(a, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(a, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if v2 := versionOf(t, dir); v2.Same(v1) {
		t.Fatal("a rewrite with the size and modification time restored kept the version")
	}
}
