package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/storage/s3"
	"github.com/loredb/lore/storage/s3/s3test"
)

// newStore is a store of srv's, its configuration changed by edit.
func newStore(t *testing.T, srv *s3test.Server, edit ...func(*s3.Config)) *s3.Store {
	t.Helper()
	cfg := srv.Config()
	for _, e := range edit {
		e(&cfg)
	}
	st, err := s3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

func TestListStatOpen(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t, "lake")
	for _, k := range []string{"t/a.parquet", "t/b/c.parquet", "t.crc", "t-old/x", "u/y"} {
		srv.Put(t, "s3://lake/"+k, []byte("object "+k))
	}
	st := newStore(t, srv)
	var s storage.Store = st
	list, err := s.List(ctx, "s3://lake/t")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range list {
		got = append(got, o.Path)
		if o.ETag == "" || o.Size == 0 || o.ModTime.IsZero() {
			t.Errorf("%s: %+v", o.Path, o)
		}
	}
	if want := []string{"s3://lake/t/a.parquet", "s3://lake/t/b/c.parquet"}; !slices.Equal(got, want) {
		t.Fatalf("list s3://lake/t = %v, want %v", got, want)
	}
	one, err := s.List(ctx, "s3://lake/t/a.parquet")
	if err != nil || len(one) != 1 || one[0].Path != "s3://lake/t/a.parquet" {
		t.Fatalf("list of one object = %v, %v", one, err)
	}
	if none, err := s.List(ctx, "s3://lake/nothing"); err != nil || len(none) != 0 {
		t.Fatalf("list of nothing = %v, %v", none, err)
	}
	from, err := st.ListFrom(ctx, "s3://lake/t", "a.parquet")
	if err != nil || len(from) != 1 || from[0].Path != "s3://lake/t/b/c.parquet" {
		t.Fatalf("list from a.parquet = %v, %v", from, err)
	}
	info, err := s.Stat(ctx, "s3://lake/t/a.parquet")
	if err != nil || info.Size != int64(len("object t/a.parquet")) || info.ETag != list[0].ETag {
		t.Fatalf("stat = %+v, %v (listed %+v)", info, err, list[0])
	}
	if dir, err := s.Stat(ctx, "s3://lake/t/b"); err != nil || dir.Size != 0 {
		t.Fatalf("stat of a directory = %+v, %v", dir, err)
	}
	_, err = s.Stat(ctx, "s3://lake/t/nope")
	if !errors.Is(err, fs.ErrNotExist) || errs.CodeOf(err) != errs.SourceUnavailable {
		t.Fatalf("stat of a missing object: %v", err)
	}
	if _, err := s.Open(ctx, "s3://lake/t/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open of a missing object: %v", err)
	}
	if _, err := s.List(ctx, "s3://nobucket/t"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("list of a missing bucket: %v", err)
	}
}

func TestReadsAreRangedAndPinned(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t, "lake")
	data := payload(5<<20 + 123)
	srv.Put(t, "s3://lake/big", data)
	st := newStore(t, srv)
	list, err := st.List(ctx, "s3://lake/big")
	if err != nil {
		t.Fatal(err)
	}
	srv.Reset()
	r, err := st.OpenInfo(ctx, list[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if c := srv.Counts(); c.Total() != 0 {
		t.Fatalf("opening a listed object made %d requests", c.Total())
	}
	// Three ranges, two of them close enough to be read in one request.
	ranges := []storage.Range{{Off: 100, Len: 1000}, {Off: 2000, Len: 500}, {Off: 4 << 20, Len: 1 << 20}}
	if err := storage.Prefetch(ctx, r, ranges); err != nil {
		t.Fatal(err)
	}
	if c := srv.Counts(); c.Get != 2 {
		t.Fatalf("prefetch made %d GETs, want 2: %v", c.Get, srv.Log())
	}
	for _, g := range ranges {
		b := make([]byte, g.Len)
		if _, err := r.ReadAt(b, g.Off); err != nil || !bytes.Equal(b, data[g.Off:g.Off+g.Len]) {
			t.Fatalf("read at %d: %v", g.Off, err)
		}
	}
	if c := srv.Counts(); c.Get != 2 {
		t.Fatalf("reads of prefetched ranges made requests: %v", srv.Log())
	}
	// A read past what was fetched fetches, and the tail reads as EOF.
	b := make([]byte, 200)
	n, err := r.ReadAt(b, int64(len(data))-100)
	if n != 100 || err != io.EOF || !bytes.Equal(b[:n], data[len(data)-100:]) {
		t.Fatalf("tail read: %d, %v", n, err)
	}

	// The object is replaced: the open reader is held to the ETag it was listed with.
	srv.Put(t, "s3://lake/big", payload(5<<20 + 123)[1:])
	_, err = r.ReadAt(make([]byte, 10), 3<<20)
	if errs.CodeOf(err) != errs.SourceChanged {
		t.Fatalf("read of a replaced object: %v", err)
	}
	srv.Delete(t, "s3://lake/big")
	r2, _ := st.OpenInfo(ctx, list[0])
	if _, err = r2.ReadAt(make([]byte, 10), 0); errs.CodeOf(err) != errs.SourceChanged {
		t.Fatalf("read of a deleted listed object: %v", err)
	}
}

// TestPrefetchPinsOneETag: a reader opened with a size but no ETag (as a table's
// metadata states files) is pinned by the first response of a Prefetch whose parts
// run at once, and holds every later read to it. Under -race this also checks that
// the parts pin it safely.
func TestPrefetchPinsOneETag(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t, "lake")
	data := payload(8 << 20)
	srv.Put(t, "s3://lake/f", data)
	st := newStore(t, srv, func(c *s3.Config) { c.Part, c.Coalesce, c.Parallel = 1<<20, -1, 8 })
	for round := range 4 {
		r, err := st.OpenInfo(ctx, storage.ObjectInfo{Path: "s3://lake/f", Size: int64(len(data))})
		if err != nil {
			t.Fatal(err)
		}
		if err := storage.Prefetch(ctx, r, []storage.Range{{Off: 0, Len: int64(len(data))}}); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		b := make([]byte, len(data))
		if _, err := r.ReadAt(b, 0); err != nil || !bytes.Equal(b, data) {
			t.Fatalf("round %d: read of the prefetched object: %v", round, err)
		}
		r.Close()
	}
	r, err := st.OpenInfo(ctx, storage.ObjectInfo{Path: "s3://lake/f", Size: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := storage.Prefetch(ctx, r, []storage.Range{{Off: 0, Len: 2 << 20}}); err != nil {
		t.Fatal(err)
	}
	srv.Put(t, "s3://lake/f", payload(8<<20 + 1)[1:])
	if _, err := r.ReadAt(make([]byte, 10), 5<<20); errs.CodeOf(err) != errs.SourceChanged {
		t.Fatalf("read of a replaced object after a prefetch: %v", err)
	}
}

func TestOpenByPathReadsSmallObjectsInOneRequest(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t, "lake")
	data := payload(300 << 10)
	srv.Put(t, "s3://lake/meta.json", data)
	srv.Put(t, "s3://lake/empty", nil)
	st := newStore(t, srv)
	srv.Reset()
	r, err := st.Open(ctx, "s3://lake/meta.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read: %v", err)
	}
	if c := srv.Counts(); c.Total() != 1 {
		t.Fatalf("%d requests, want 1: %v", c.Total(), srv.Log())
	}
	e, err := st.Open(ctx, "s3://lake/empty")
	if err != nil || e.Size() != 0 {
		t.Fatalf("empty object: %v", err)
	}
}

func TestDiskCache(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t, "lake")
	data := payload(3 << 20)
	srv.Put(t, "s3://lake/f", data)
	st := newStore(t, srv, func(c *s3.Config) { c.Cache = s3.NewDiskCache(t.TempDir(), 64<<20) })
	list, _ := st.List(ctx, "s3://lake/f")
	ranges := []storage.Range{{Off: 10, Len: 1 << 20}, {Off: 2 << 20, Len: 1000}}
	read := func() {
		r, err := st.OpenInfo(ctx, list[0])
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := storage.Prefetch(ctx, r, ranges); err != nil {
			t.Fatal(err)
		}
		for _, g := range ranges {
			b := make([]byte, g.Len)
			if _, err := r.ReadAt(b, g.Off); err != nil || !bytes.Equal(b, data[g.Off:g.Off+g.Len]) {
				t.Fatalf("read at %d: %v", g.Off, err)
			}
		}
	}
	read()
	srv.Reset()
	read()
	if c := srv.Counts(); c.Total() != 0 {
		t.Fatalf("a second read of cached ranges made requests: %v", srv.Log())
	}
	// A new version of the object is another key.
	data = payload(3<<20 + 1)
	srv.Put(t, "s3://lake/f", data)
	list, _ = st.List(ctx, "s3://lake/f")
	srv.Reset()
	read()
	if c := srv.Counts(); c.Get == 0 {
		t.Fatal("a new version was served from the cache of the old")
	}
}

func TestLongListingsAreSplitByDirectory(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t, "lake")
	var want []string
	for p := range 12 {
		for f := range 230 {
			k := fmt.Sprintf("s3://lake/t/day=%02d/part-%04d.parquet", p, f)
			want = append(want, k)
			srv.Put(t, k, []byte{byte(f)})
		}
	}
	srv.Put(t, "s3://lake/t/_SUCCESS", []byte("x"))
	srv.Put(t, "s3://lake/tother/x", []byte("x"))
	want = append(want, "s3://lake/t/_SUCCESS")
	slices.Sort(want)
	st := newStore(t, srv)
	for _, dir := range []string{"s3://lake/t", "s3://lake/t/"} {
		srv.Reset()
		list, err := st.List(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]string, len(list))
		for i, o := range list {
			got[i] = o.Path
		}
		if !slices.Equal(got, want) {
			t.Fatalf("list %s: %d objects, want %d", dir, len(got), len(want))
		}
		// The first page, one listing of the directories, then ranges at once: more
		// requests than three pages in a row, but in fewer round trips.
		if c := srv.Counts(); c.List < 3 || c.List > 12 {
			t.Fatalf("list %s made %d requests", dir, c.List)
		}
	}
}

// TestCheckSizeOfAClaimedSize: a reader opened with the size a table's metadata
// states (no ETag) learns the real size before a footer is looked for at its end.
// When the claim is right, the check is the footer's own read: one request serves
// both. When it is wrong (larger or smaller), Size becomes the object's and the bytes
// read are the object's.
func TestCheckSizeOfAClaimedSize(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t, "lake")
	data := payload(200 << 10)
	srv.Put(t, "s3://lake/t/f.parquet", data)
	st := newStore(t, srv)
	for _, claim := range []int64{int64(len(data)), int64(len(data)) + 477, int64(len(data)) - 50_000, 10} {
		srv.Reset()
		r, err := st.OpenInfo(ctx, storage.ObjectInfo{Path: "s3://lake/t/f.parquet", Size: claim})
		if err != nil {
			t.Fatal(err)
		}
		if err := storage.CheckSize(r); err != nil {
			t.Fatalf("claim %d: %v", claim, err)
		}
		if r.Size() != int64(len(data)) {
			t.Fatalf("claim %d: size %d, want %d", claim, r.Size(), len(data))
		}
		tail := make([]byte, 8)
		if _, err := r.ReadAt(tail, r.Size()-8); err != nil || !bytes.Equal(tail, data[len(data)-8:]) {
			t.Fatalf("claim %d: tail %v, %v", claim, tail, err)
		}
		if got := srv.Counts().Get; claim == int64(len(data)) && got != 1 {
			t.Errorf("a right claim took %d GETs, want 1 (the check is the footer's read)", got)
		}
		r.Close()
	}
	// A claim of an object that is gone is the store's error, not a size.
	r, err := st.OpenInfo(ctx, storage.ObjectInfo{Path: "s3://lake/t/gone.parquet", Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.CheckSize(r); err == nil || !errors.Is(err, fs.ErrNotExist) && errs.CodeOf(err) != errs.SourceChanged {
		t.Errorf("check of a missing object: %v", err)
	}
}

func TestPutDir(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t, "lake")
	st := newStore(t, srv)
	dir := t.TempDir()
	files := map[string]string{"a.parquet": "one", "b/c.parquet": "two", "b/d/e.json": "three"}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n, err := st.PutDir(ctx, dir, "s3://lake/t/")
	if err != nil || n != len(files) {
		t.Fatalf("PutDir = %d, %v; want %d files", n, err, len(files))
	}
	for name, body := range files {
		if got := readAll(t, st, "s3://lake/t/"+name); string(got) != body {
			t.Errorf("%s = %q, want %q", name, got, body)
		}
	}
	if n, err := st.PutDir(ctx, filepath.Join(dir, "a.parquet"), "s3://lake/one"); err != nil || n != 1 {
		t.Fatalf("PutDir of one file = %d, %v", n, err)
	}
	if got := readAll(t, st, "s3://lake/one"); string(got) != "one" {
		t.Errorf("one file uploaded as %q", got)
	}
	if _, err := st.PutDir(ctx, filepath.Join(dir, "missing"), "s3://lake/x"); errs.CodeOf(err) != errs.SourceUnavailable {
		t.Errorf("PutDir of a missing directory: %v, want %s", err, errs.SourceUnavailable)
	}
	if _, err := st.PutDir(ctx, dir, "/local/path"); errs.CodeOf(err) != errs.SourceUnavailable {
		t.Errorf("PutDir to a local path: %v, want %s", err, errs.SourceUnavailable)
	}
}

func readAll(t *testing.T, st *s3.Store, p string) []byte {
	t.Helper()
	r, err := st.Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := make([]byte, r.Size())
	if _, err := r.ReadAt(b, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return b
}

// A delayed or throttled transport still carries requests whole, and one canceled
// while it waits fails rather than going on.
func TestDelay(t *testing.T) {
	s, err := s3test.Serve("lake")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Put(t, "s3://lake/k", []byte("value"))
	cfg := s.Config()
	cfg.Transport = s3test.Delay(nil, time.Millisecond)
	st, err := s3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, st, "s3://lake/k"); string(got) != "value" {
		t.Fatalf("read through the delay = %q", got)
	}
	big := payload(300_000)
	s.Put(t, "s3://lake/big", big)
	cfg.Transport = s3test.Throttle(s3test.Delay(nil, time.Millisecond), 64<<20)
	thr, err := s3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, thr, "s3://lake/big"); !bytes.Equal(got, big) {
		t.Fatalf("read through the throttle: %d bytes, not the %d written", len(got), len(big))
	}
	cfg.Transport = s3test.Throttle(nil, 1024)
	cfg.Attempts = 1
	crawl, err := s3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tctx, tcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer tcancel()
	if _, err := crawl.Open(tctx, "s3://lake/big"); err == nil {
		t.Fatal("a read of 1 MiB at 1 KiB/s canceled after 50 ms succeeded")
	}
	cfg.Transport = s3test.Delay(nil, time.Hour)
	cfg.Attempts = 1
	slow, err := s3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := slow.Open(ctx, "s3://lake/k"); err == nil {
		t.Fatal("a canceled read through an hour's delay succeeded")
	}
}

// TestDiskCacheRefusesCorruptFiles: a cache file whose bytes no longer match their
// checksum is dropped and the range read from the store again, whether it was
// damaged before this process looked at it or after it had been read once.
func TestDiskCacheRefusesCorruptFiles(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t, "lake")
	data := payload(1 << 20)
	srv.Put(t, "s3://lake/f", data)
	dir := t.TempDir()
	st := newStore(t, srv, func(c *s3.Config) { c.Cache = s3.NewDiskCache(dir, 64<<20) })
	list, _ := st.List(ctx, "s3://lake/f")
	g := storage.Range{Off: 100, Len: 200 << 10}
	read := func() []byte {
		r, err := st.OpenInfo(ctx, list[0])
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := storage.Prefetch(ctx, r, []storage.Range{g}); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, g.Len)
		if _, err := r.ReadAt(b, g.Off); err != nil {
			t.Fatal(err)
		}
		return b
	}
	read() // fills the cache
	read() // a verified hit
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 1 {
		t.Fatalf("%d cache files", len(files))
	}
	b, _ := os.ReadFile(files[0])
	b[len(b)-1] ^= 0xff
	if err := os.WriteFile(files[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Reset()
	if got := read(); !bytes.Equal(got, data[g.Off:g.Off+g.Len]) {
		t.Fatal("a damaged cache file was read")
	}
	if srv.Counts().Get == 0 {
		t.Fatal("the range was not read from the store again")
	}
}
