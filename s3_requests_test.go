package lore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage/s3/s3test"
)

// TestS3RequestCounts guards what a statement over a 100-file Parquet table in S3
// asks of the store once ANALYZE has recorded the table: an answer from statistics
// (mode context) makes the one LIST that establishes the table's version and nothing
// else; a point lookup makes at most that LIST and GETs of the files the record's
// per-file bounds admit. The answer from statistics makes one LIST in a new process
// over the same home too, with no footer in memory (the listing's schema and rows
// come from source.ListingFacts), and so does the lookup: the record's per-file
// bounds rule the other files out before their footers are read.
func TestS3RequestCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("a 100-file table")
	}
	srv := s3test.Start(t, "lake")
	s3Events(t, srv, 100*200, 100, 200)
	cfg := srv.Config()
	home := t.TempDir()
	e := open(t, lore.Options{Home: home, S3: &cfg, NoAutoRefresh: true})
	query(t, e, "CREATE TABLE ev WITH (location = 's3://lake/events', format = 'parquet')")
	query(t, e, "ANALYZE ev")
	// A value of one file: the table is clustered by ts, so one file's bounds hold it.
	ts := cell(run(t, e, "SELECT ts::VARCHAR FROM ev ORDER BY ts LIMIT 1 OFFSET 5050", noCache), 0, 0)
	checkRequestCounts(t, srv, e, ts)
	// Another process over the same catalog: nothing cached in memory.
	e.Close()
	source.DropCachedFooters()
	checkRequestCounts(t, srv, open(t, lore.Options{Home: home, S3: &cfg, NoAutoRefresh: true}), ts)
}

// checkRequestCounts checks the requests of an answer from statistics and of a point
// lookup of ts.
func checkRequestCounts(t *testing.T, srv *s3test.Server, e *lore.Engine, ts string) {
	t.Helper()
	srv.Reset()
	res := query(t, e, "SELECT count(*) FROM ev")
	if m := res.Record.Execution.Mode; m != "context" {
		t.Fatalf("count(*) after ANALYZE: mode %q, want context", m)
	}
	if c := srv.Counts(); c.List != 1 || c.Total() != 1 {
		t.Errorf("count(*) answered from statistics made %+v, want one LIST:\n%s", c, strings.Join(srv.Log(), "\n"))
	}

	srv.Reset()
	res, err := e.Query(context.Background(), "SELECT user_id, status FROM ev WHERE ts = '"+ts+"'", map[string]string{"result_cache": "false"})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumRows() == 0 {
		t.Fatalf("the lookup of %s found no row", ts)
	}
	c := srv.Counts()
	files := map[string]bool{}
	for _, l := range srv.Log() {
		if f, ok := strings.CutPrefix(l, "GET /lake/events/"); ok {
			key, _, _ := strings.Cut(strings.Fields(f)[0], "?")
			files[key] = true
		}
	}
	// Per admitted file: its footer (unless cached), page index and chunks.
	if c.List > 1 || c.Head > 0 || len(files) > 2 || c.Total() > 1+4*len(files) {
		t.Errorf("the lookup made %+v over %d files, want at most one LIST and GETs of the 1 or 2 files it may be in:\n%s",
			c, len(files), strings.Join(srv.Log(), "\n"))
	}
	t.Logf("lookup: %+v over %d files", c, len(files))
}

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

// TestS3PageIndexFromFooterRead checks that a filter that consults the page index
// reads no index on its own: the indexes lie just before the footer, and the
// footer's read of the file's last 64 KiB already brought them. Each file's end is
// read once.
func TestS3PageIndexFromFooterRead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const files = 2
	if err := gen.TPCH(ctx, gen.TPCHOptions{SF: 0.01, Out: dir, Files: files, RowGroupRows: 10_000}); err != nil {
		t.Fatal(err)
	}
	srv := s3test.Start(t, "lake")
	srv.Upload(t, filepath.Join(dir, "lineitem"), "s3://lake/lineitem")
	sizes := map[string]int64{}
	objs, err := srv.Store().List(ctx, "s3://lake/lineitem/")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		sizes["/lake/lineitem/"+strings.TrimPrefix(o.Path, "s3://lake/lineitem/")] = o.Size
	}
	cfg := srv.Config()
	eng, err := lore.Open(ctx, lore.Options{Home: filepath.Join(t.TempDir(), "home"), S3: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.Query(ctx, "CREATE TABLE lineitem WITH (location = 's3://lake/lineitem', format = 'parquet')", nil); err != nil {
		t.Fatal(err)
	}
	source.DropCachedFooters()
	srv.Reset()
	_, err = eng.Query(ctx, "SELECT sum(l_extendedprice * l_discount) FROM lineitem WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
		map[string]string{"use_statistics": "false", "result_cache": "false"})
	if err != nil {
		t.Fatal(err)
	}
	ends := map[string]int{}
	for _, l := range srv.Log() {
		var method, uri, rng string
		fmt.Sscanf(l, "%s %s %s", &method, &uri, &rng)
		path, _, _ := strings.Cut(uri, "?")
		size, ok := sizes[path]
		if !ok || rng == "" {
			continue
		}
		var from, to int64
		fmt.Sscanf(rng, "bytes=%d-%d", &from, &to)
		if to == size-1 {
			ends[path]++
		}
	}
	for p := range sizes {
		if ends[p] != 1 {
			t.Errorf("%s: its end was read %d times, want once (the footer with the page index)\n%s", p, ends[p], strings.Join(srv.Log(), "\n"))
		}
	}
}

// TestS3PrefetchWithinTheMemoryBudget: what a scan fetches ahead from a store is
// held from the statement's memory budget. With room for it, a row group's chunks
// come in a few coalesced requests; with none, the same scan reads them piece by
// piece, in more requests, and still gives the same answer.
func TestS3PrefetchWithinTheMemoryBudget(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := gen.Events(ctx, gen.EventsOptions{Rows: 400_000, Files: 2, Out: dir, Seed: 5, RowGroupRows: 200_000}); err != nil {
		t.Fatal(err)
	}
	srv := s3test.Start(t, "lake")
	srv.Upload(t, dir, "s3://lake/events")
	cfg := srv.Config()
	e := open(t, lore.Options{S3: &cfg, NoAutoRefresh: true})
	query(t, e, "CREATE TABLE ev WITH (location = 's3://lake/events', format = 'parquet')")
	q := "SELECT sum(user_id), count(DISTINCT status), max(ts) FROM ev"
	settings := func(limit string) map[string]string {
		return map[string]string{"use_statistics": "false", "result_cache": "false", "memory_limit": limit}
	}
	runWith := func(limit string) (string, int) {
		t.Helper()
		query(t, e, "SELECT count(*) FROM ev") // footers in memory
		srv.Reset()
		res, err := e.Query(ctx, q, settings(limit))
		if err != nil {
			t.Fatalf("memory_limit %s: %v", limit, err)
		}
		return fmt.Sprint(cell(res, 0, 0), cell(res, 0, 1), cell(res, 0, 2)), srv.Counts().Get
	}
	wide, wideGets := runWith("1GiB")
	narrow, narrowGets := runWith("1MiB")
	if wide != narrow {
		t.Fatalf("answers differ: %s with room, %s without", wide, narrow)
	}
	if narrowGets <= wideGets {
		t.Fatalf("without room to prefetch the scan made %d reads, with room %d: the budget was not consulted", narrowGets, wideGets)
	}
	t.Logf("reads: %d with room to prefetch, %d without", wideGets, narrowGets)
}

// TestS3LakeContextRequests: an answer from statistics over a Delta or an Iceberg
// table in S3 makes only the requests that establish the table's version, every
// time: for Delta the _last_checkpoint hint and one listing of the log from that
// checkpoint; for Iceberg one listing of the metadata folder and its version hint.
// No data file, checkpoint, manifest or metadata file is read again.
func TestS3LakeContextRequests(t *testing.T) {
	root := shareddata.Dir(t)
	srv := s3test.Start(t, "lake")
	srv.Upload(t, filepath.Join(root, "delta", "golden", "basic-with-inserts-deletes-checkpoint"), "s3://lake/d")
	srv.Upload(t, filepath.Join(root, "iceberg", "duckdb-iceberg", "data", "persistent", "partition_bigint"), "s3://lake/i")
	cfg := srv.Config()
	e := open(t, lore.Options{S3: &cfg, NoAutoRefresh: true})
	query(t, e, "CREATE TABLE d WITH (location = 's3://lake/d', format = 'delta')")
	query(t, e, "CREATE TABLE i WITH (location = 's3://lake/i', format = 'iceberg')")
	query(t, e, "ANALYZE d")
	query(t, e, "ANALYZE i")
	want := map[string][]string{
		"d": {"GET /lake/d/_delta_log/_last_checkpoint", "GET /lake?encoding-type=url&list-type=2&prefix=d%2F_delta_log%2F&start-after="},
		"i": {"GET /lake?encoding-type=url&list-type=2&prefix=i%2Fmetadata", "GET /lake/i/metadata/version-hint.text"},
	}
	for _, tb := range []string{"d", "i"} {
		for range 2 {
			srv.Reset()
			res := run(t, e, "SELECT count(*) FROM "+tb, map[string]string{"result_cache": "false"})
			if m := res.Record.Execution.Mode; m != "context" {
				t.Fatalf("%s: mode %q, want context", tb, m)
			}
			log := srv.Log()
			ok := len(log) == len(want[tb])
			for i := 0; ok && i < len(log); i++ {
				ok = strings.HasPrefix(log[i], want[tb][i])
			}
			if !ok {
				t.Errorf("%s: the answer from statistics made\n%s\nwant requests starting\n%s", tb, strings.Join(log, "\n"), strings.Join(want[tb], "\n"))
			}
		}
	}
}

// TestS3PathsKnowTheirFormatInOneRequest: a location named by path in a statement is
// read as the table it holds — Delta, Iceberg or Parquet — and on S3 telling which
// costs one listing of its top level, not a probe for each format.
func TestS3PathsKnowTheirFormatInOneRequest(t *testing.T) {
	root := shareddata.Dir(t)
	srv := s3test.Start(t, "lake")
	delta := filepath.Join(root, "delta", "golden", "basic-with-inserts-deletes-checkpoint")
	ice := filepath.Join(root, "iceberg", "duckdb-iceberg", "data", "persistent", "partition_bigint")
	srv.Upload(t, delta, "s3://lake/d")
	srv.Upload(t, ice, "s3://lake/i")
	events := s3Events(t, srv, 3000, 3, 500)
	cfg := srv.Config()
	e := open(t, lore.Options{S3: &cfg, NoAutoRefresh: true})
	for local, remote := range map[string]string{delta: "s3://lake/d", ice: "s3://lake/i", events: "s3://lake/events"} {
		want := cell(query(t, e, fmt.Sprintf("SELECT count(*) FROM '%s'", local)), 0, 0)
		srv.Reset()
		got := cell(query(t, e, fmt.Sprintf("SELECT count(*) FROM '%s'", remote)), 0, 0)
		if got != want {
			t.Errorf("%s: %s rows, on disk %s", remote, got, want)
		}
		delimited := 0
		for _, l := range srv.Log() {
			if strings.Contains(l, "delimiter=%2F") {
				delimited++
			}
		}
		if c := srv.Counts(); delimited != 1 || c.Head != 0 {
			t.Errorf("%s: %d listings of its top level and %d HEADs, want one and none:\n%s", remote, delimited, c.Head, strings.Join(srv.Log(), "\n"))
		}
	}
}
