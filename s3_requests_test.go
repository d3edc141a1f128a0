package lore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/loredb/lore"
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
