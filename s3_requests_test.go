package lore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage/s3/s3test"
)

// TestS3RequestsPerStatement checks what a statement over an S3 table asks of the
// store, counted by the engine (Engine.S3Requests) and, independently, by the
// server: with no footer cached, count(*) is one listing and one read per file —
// each footer, under 64 KiB, comes whole with the file's last bytes — and a scan
// reads the chunks it needs in a few more; with the footers cached, count(*) is the
// listing alone.
func TestS3RequestsPerStatement(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const files = 3
	if err := gen.Events(ctx, gen.EventsOptions{Rows: 30_000, Files: files, Out: dir, Seed: 1, RowGroupRows: 5000}); err != nil {
		t.Fatal(err)
	}
	srv := s3test.Start(t, "lake")
	if n := srv.Upload(t, dir, "s3://lake/events"); n != files {
		t.Fatalf("uploaded %d files, want %d", n, files)
	}
	cfg := srv.Config()
	eng, err := lore.Open(ctx, lore.Options{Home: filepath.Join(t.TempDir(), "home"), S3: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.Query(ctx, "CREATE TABLE events WITH (location = 's3://lake/events', format = 'parquet')", nil); err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{"use_statistics": "false", "result_cache": "false"}
	source.DropCachedFooters()
	srv.Reset()
	before := eng.S3Requests()
	if _, err := eng.Query(ctx, "SELECT count(*) FROM events", settings); err != nil {
		t.Fatal(err)
	}
	got, served := eng.S3Requests().Sub(before), srv.Counts()
	if got.List != 1 || got.Get != files || got.Head != 0 || got.Total() != int64(served.Total()) {
		t.Fatalf("cold count(*): engine counted %+v, server %+v; want 1 list and %d gets (one per footer)\n%v", got, served, files, srv.Log())
	}
	before = eng.S3Requests()
	if _, err := eng.Query(ctx, "SELECT count(*) FROM events", settings); err != nil {
		t.Fatal(err)
	}
	if got := eng.S3Requests().Sub(before); got.Total() != 1 || got.List != 1 {
		t.Fatalf("warm count(*): %+v, want the listing alone", got)
	}
	before = eng.S3Requests()
	if _, err := eng.Query(ctx, "SELECT sum(user_id), max(category) FROM events", settings); err != nil {
		t.Fatal(err)
	}
	got = eng.S3Requests().Sub(before)
	if got.Get == 0 || got.Bytes == 0 {
		t.Fatalf("a scan read nothing: %+v", got)
	}
	// 6 row groups of two columns: coalesced, a few requests per file, not one per chunk.
	if got.Get > 2*files {
		t.Errorf("a scan made %d reads for %d files: the chunks were not coalesced\n%v", got.Get, files, srv.Log())
	}
}
