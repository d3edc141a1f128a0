package storage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/loredb/lore/errs"
)

func TestLocal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, p := range []string{"b.txt", "a/z.bin", "a/b/c.bin", "c"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("hello "+p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var s Store = Local{}
	list, err := s.List(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range list {
		rel, _ := filepath.Rel(dir, o.Path)
		got = append(got, filepath.ToSlash(rel))
		if o.Size == 0 || o.ModTime.IsZero() {
			t.Errorf("%s: size %d, mtime %v", rel, o.Size, o.ModTime)
		}
		if runtime.GOOS == "linux" && (o.ChangeTime.IsZero() || o.Inode == 0) {
			t.Errorf("%s: listed without its inode change time or inode: %+v", rel, o)
		}
	}
	if want := []string{"a/b/c.bin", "a/z.bin", "b.txt", "c"}; !slices.Equal(got, want) {
		t.Errorf("List: %v, want %v", got, want)
	}

	info, err := s.Stat(ctx, filepath.Join(dir, "b.txt"))
	if err != nil || info.Size != int64(len("hello b.txt")) {
		t.Fatalf("Stat: %+v, %v", info, err)
	}
	// Stat and List describe a file alike (the listing uses fstatat, Stat os.Stat).
	if i := slices.IndexFunc(list, func(o ObjectInfo) bool { return o.Path == info.Path }); i < 0 || list[i] != info {
		t.Errorf("Stat: %+v, List: %+v", info, list)
	}
	r, err := s.Open(ctx, info.Path)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if _, err := r.ReadAt(buf, 6); err != nil || string(buf) != "b.t" || r.Size() != info.Size {
		t.Errorf("ReadAt: %q, %v, size %d", buf, err, r.Size())
	}
	r.Close()

	for name, err := range map[string]error{
		"stat": func() error { _, err := s.Stat(ctx, filepath.Join(dir, "nope")); return err }(),
		"list": func() error { _, err := s.List(ctx, filepath.Join(dir, "nope")); return err }(),
		"open": func() error { _, err := s.Open(ctx, filepath.Join(dir, "nope")); return err }(),
	} {
		if errs.CodeOf(err) != errs.SourceUnavailable || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s of a missing path: %v", name, err)
		}
	}
	if _, err := s.Open(ctx, dir); errs.CodeOf(err) != errs.SourceUnavailable {
		t.Errorf("open of a directory: %v", err)
	}
}

func TestListFollowsARootLinkAndFileLinks(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(filepath.Join(data, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.parquet", "sub/b.parquet"} {
		if err := os.WriteFile(filepath.Join(data, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(data, "a.parquet"), filepath.Join(data, "link.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(data, "sub"), filepath.Join(data, "dirlink")); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "root")
	if err := os.Symlink(data, root); err != nil {
		t.Fatal(err)
	}
	got, err := Local{}.List(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range got {
		rel, _ := filepath.Rel(root, o.Path)
		names = append(names, rel)
		if o.Size != 1 || o.ModTime.IsZero() {
			t.Errorf("%s: %+v", rel, o)
		}
	}
	if want := []string{"a.parquet", "link.parquet", "sub/b.parquet"}; !slices.Equal(names, want) {
		t.Fatalf("listed %v, want %v (a root link walked, a file link followed, a directory link not)", names, want)
	}
}
