package lore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/loredb/lore"
	"github.com/loredb/lore/dist/disttest"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/internal/publish"
	"github.com/loredb/lore/parquet"
)

// fingerprint is what must not change when a table is rewritten: the row count, a
// column's sum and an order-independent checksum of every row.
func fingerprint(t *testing.T, e *lore.Engine, table string) string {
	t.Helper()
	res := query(t, e, "SELECT count(*), sum(user_id), sum(hash(ts, user_id, category, amount, latency_ms, status, country, flag) % 1000000007) FROM "+table)
	return cell(res, 0, 0) + "/" + cell(res, 0, 1) + "/" + cell(res, 0, 2)
}

// optimizeRow runs OPTIMIZE and returns its result row by column name.
func optimizeRow(t *testing.T, e *lore.Engine, stmt string) map[string]string {
	t.Helper()
	res := query(t, e, stmt)
	out := map[string]string{}
	for i, f := range res.Schema.Fields() {
		out[f.Name] = cell(res, 0, i)
	}
	return out
}

func TestOptimizeClustersEvents(t *testing.T) {
	dir := events(t, 60_000, 4, 5_000, false)
	e := open(t, lore.Options{})
	query(t, e, "CREATE TABLE ev WITH (location = '"+dir+"', clustered_by = ARRAY['user_id'], bloom = ARRAY['country'])")
	query(t, e, "ANALYZE ev")
	before := fingerprint(t, e, "ev")
	oldFiles := disttest.ParquetFiles(t, dir)

	row := optimizeRow(t, e, "OPTIMIZE ev WITH (row_group_rows = 4000, file_bytes = 400000)")
	t.Logf("fingerprint %s, result %v", before, row)
	// The record learnt before is stale now.
	show := query(t, e, "SHOW STATS FOR ev")
	if stale := cell(show, 0, show.Schema.NumFields()-1); stale != "true" {
		t.Fatalf("the record is not stale after OPTIMIZE (%s)", stale)
	}
	if row["files_replaced"] != "4" || row["rows"] != "60000" || row["clustered_by"] != "user_id" || row["recovered"] != "false" {
		t.Fatalf("result row %v", row)
	}
	if after := fingerprint(t, e, "ev"); after != before {
		t.Fatalf("rows changed: %s, was %s", after, before)
	}
	files := disttest.ParquetFiles(t, dir)
	for _, f := range files {
		if slices.Contains(oldFiles, f) {
			t.Fatalf("replaced file %s is still there", f)
		}
	}
	if len(files) < 2 || row["files_written"] != strconv.Itoa(len(files)) {
		t.Fatalf("files %v, result %v", files, row)
	}
	// Across files and row groups, user_id only grows; every row group has at most
	// 4000 rows, a bloom filter on user_id and country, and the footer says how it
	// is sorted.
	var prevMax int64 = -1 << 63
	groups := 0
	for _, p := range files {
		r, err := file.OpenParquetFile(p, false)
		if err != nil {
			t.Fatal(err)
		}
		md := r.MetaData()
		if v := md.KeyValueMetadata().FindValue(parquet.LayoutKeyClusteredBy); v == nil || *v != "user_id" {
			t.Fatalf("%s: clustered_by key %v", p, v)
		}
		if !strings.HasPrefix(md.GetCreatedBy(), "lore ") {
			t.Fatalf("%s: created_by %q", p, md.GetCreatedBy())
		}
		bf := r.GetBloomFilterReader()
		for g := 0; g < md.NumRowGroups(); g++ {
			groups++
			rg := md.RowGroup(g)
			if rg.NumRows() > 4000 {
				t.Fatalf("%s: row group %d has %d rows", p, g, rg.NumRows())
			}
			if sc := rg.SortingColumns(); len(sc) != 1 || sc[0].ColumnIdx != 1 {
				t.Fatalf("%s: sorting columns %+v", p, sc)
			}
			col, _ := rg.ColumnChunk(1)
			st, err := col.Statistics()
			if err != nil || st == nil {
				t.Fatalf("%s: no statistics on user_id", p)
			}
			mn, mx := st.(*metadata.Int64Statistics).Min(), st.(*metadata.Int64Statistics).Max()
			if mn < prevMax {
				t.Fatalf("%s row group %d: min %d below the previous max %d", p, g, mn, prevMax)
			}
			prevMax = mx
			rgf, err := bf.RowGroup(g)
			if err != nil {
				t.Fatal(err)
			}
			f, err := rgf.GetColumnBloomFilter(1)
			if err != nil || f == nil || !f.CheckHash(metadata.GetHash(f.Hasher(), mn)) {
				t.Fatalf("%s row group %d: no bloom filter holding %d (%v)", p, g, mn, err)
			}
			if f, err := rgf.GetColumnBloomFilter(6); err != nil || f == nil {
				t.Fatalf("%s row group %d: no bloom filter on country (%v)", p, g, err)
			}
		}
		r.Close()
	}
	if row["row_groups"] != strconv.Itoa(groups) {
		t.Fatalf("result says %s row groups, files hold %d", row["row_groups"], groups)
	}
	// A statement reading the table started the refresh, which learns the new files.
	lore.WaitForRefreshes(e)
	show = query(t, e, "SHOW STATS FOR ev")
	if stale := cell(show, 0, show.Schema.NumFields()-1); stale != "false" {
		t.Fatalf("the record is still stale after the refresh (%s)", stale)
	}

	// What the layout is for: a point lookup on the clustering column reads at most
	// two row groups (the files' bounds and the row groups' skip the rest), and one on
	// a bloom column prunes row groups by their filters.
	noCache := map[string]string{"result_cache": "false"}
	res := run(t, e, "SELECT count(*) FROM ev WHERE user_id = 4242", noCache)
	if sc := res.Record.Scans; len(sc) != 1 || sc[0].RowGroupsRead > 2 {
		t.Fatalf("a point lookup on the clustering column read %+v", res.Record.Scans)
	}
	res = run(t, e, "SELECT count(*) FROM ev WHERE country = 'QQ'", noCache)
	if sc := res.Record.Scans; len(sc) != 1 || sc[0].RowGroupsRead != 0 || sc[0].RowGroupsPrunedByBloom == 0 {
		t.Fatalf("a lookup of an absent value on a bloom column read %+v", res.Record.Scans)
	}
}

func TestOptimizeWhereRewritesSelectedFiles(t *testing.T) {
	dir := events(t, 40_000, 4, 5_000, true) // file k holds the k-th quarter of ts
	e := open(t, lore.Options{})
	query(t, e, "CREATE TABLE ev WITH (location = '"+dir+"', clustered_by = ARRAY['user_id'])")
	before := fingerprint(t, e, "ev")
	old := disttest.ParquetFiles(t, dir)
	row := optimizeRow(t, e, "OPTIMIZE ev WHERE ts < TIMESTAMP '2024-01-15'")
	if row["files_replaced"] != "1" {
		t.Fatalf("result row %v, want one file replaced", row)
	}
	now := disttest.ParquetFiles(t, dir)
	kept := 0
	for _, f := range old {
		if slices.Contains(now, f) {
			kept++
		}
	}
	if kept != 3 || slices.Contains(now, old[0]) {
		t.Fatalf("files now %v, were %v", now, old)
	}
	if after := fingerprint(t, e, "ev"); after != before {
		t.Fatalf("rows changed: %s, was %s", after, before)
	}
}

func TestOptimizeRewritesPerPartition(t *testing.T) {
	src := events(t, 30_000, 3, 5_000, false)
	dir := filepath.Join(t.TempDir(), "part")
	for i, f := range disttest.ParquetFiles(t, src) {
		d := filepath.Join(dir, "region="+string(rune('a'+i%2)))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(f, filepath.Join(d, filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
	}
	e := open(t, lore.Options{})
	query(t, e, "CREATE TABLE pt WITH (location = '"+dir+"', clustered_by = ARRAY['ts'])")
	before := fingerprint(t, e, "pt")
	perRegion := cell(query(t, e, "SELECT string_agg(region || ':' || n, ',' ORDER BY region) FROM (SELECT region, count(*) AS n FROM pt GROUP BY region) x"), 0, 0)
	row := optimizeRow(t, e, "OPTIMIZE pt")
	if row["files_replaced"] != "3" || row["files_written"] != "2" {
		t.Fatalf("result row %v", row)
	}
	if after := fingerprint(t, e, "pt"); after != before {
		t.Fatalf("rows changed: %s, was %s", after, before)
	}
	if got := cell(query(t, e, "SELECT string_agg(region || ':' || n, ',' ORDER BY region) FROM (SELECT region, count(*) AS n FROM pt GROUP BY region) x"), 0, 0); got != perRegion {
		t.Fatalf("rows per partition %s, were %s", got, perRegion)
	}
	for _, f := range disttest.ParquetFiles(t, dir) {
		if !strings.Contains(f, "region=") {
			t.Fatalf("file %s left its partition", f)
		}
	}
	// WHERE on the partition column rewrites that partition alone.
	row = optimizeRow(t, e, "OPTIMIZE pt WHERE region = 'a'")
	if row["files_replaced"] != "1" {
		t.Fatalf("result row %v", row)
	}
}

func TestOptimizeErrors(t *testing.T) {
	dir := events(t, 1000, 1, 1000, false)
	e := open(t, lore.Options{})
	query(t, e, "CREATE TABLE plain WITH (location = '"+dir+"')")
	query(t, e, "CREATE TABLE ev WITH (location = '"+dir+"', clustered_by = ARRAY['user_id'])")
	cases := []struct {
		sql  string
		code errs.Code
	}{
		{"OPTIMIZE plain", errs.OptimizeInvalid},
		{"OPTIMIZE ev WITH (row_group_rows = 0)", errs.OptimizeInvalid},
		{"OPTIMIZE ev WITH (target = 3)", errs.OptimizeInvalid},
		{"OPTIMIZE missing", errs.TableNotFound},
	}
	for _, c := range cases {
		_, err := e.Query(context.Background(), c.sql, nil)
		if errs.CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", c.sql, err, c.code)
		}
	}
	_, err := e.Query(context.Background(), "OPTIMIZE plain", nil)
	if err == nil || !strings.Contains(err.Error(), "SET CLUSTERED BY") {
		t.Errorf("no clustered_by: %v does not say how to set it", err)
	}
	// A mistake in WHERE is placed in the statement's text.
	const bad = "OPTIMIZE ev WHERE nope = 1"
	if _, err := e.Query(context.Background(), bad, nil); err == nil || errs.PositionOf(err) != strings.Index(bad, "nope") {
		t.Errorf("%s: %v at %d, want an error at %d", bad, err, errs.PositionOf(err), strings.Index(bad, "nope"))
	}
	// A Delta table's files belong to its log.
	ddir := t.TempDir()
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 1000, Files: 1, Out: ddir, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	var schema [][2]string
	for _, f := range gen.EventsSchema.Fields() {
		schema = append(schema, [2]string{f.Name, deltaType(t, f.Type)})
	}
	deltaCommit(t, ddir, 0, schema, nil, nil, []deltaFile{{path: gen.EventsFileName(0)}})
	query(t, e, "CREATE TABLE dt WITH (location = '"+ddir+"', format = 'delta', clustered_by = ARRAY['user_id'])")
	if _, err := e.Query(context.Background(), "OPTIMIZE dt", nil); errs.CodeOf(err) != errs.OptimizeUnsupported {
		t.Errorf("Delta: %v, want %s", err, errs.OptimizeUnsupported)
	}
	// Clustering by a partition column cannot be declared at all.
	pdir := filepath.Join(t.TempDir(), "p")
	copyDir(t, dir, filepath.Join(pdir, "region=a"))
	if _, err := e.Query(context.Background(), "CREATE TABLE pc WITH (location = '"+pdir+"', clustered_by = ARRAY['region'])", nil); err == nil {
		t.Error("a table clustered by its partition column was created")
	}
	// One rewrite at a time: a held lock is 409.
	lock, err := publish.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Query(context.Background(), "OPTIMIZE ev", nil)
	lock.Release()
	if errs.CodeOf(err) != errs.OptimizeInProgress {
		t.Errorf("locked: %v, want %s", err, errs.OptimizeInProgress)
	}
	if errs.Status(errs.OptimizeInProgress) != 409 {
		t.Errorf("OPTIMIZE_IN_PROGRESS is HTTP %d", errs.Status(errs.OptimizeInProgress))
	}
	optimizeRow(t, e, "OPTIMIZE ev") // released: it runs
	// A reader may not rewrite.
	ctx := lore.WithPrincipal(context.Background(), lore.Principal{Name: "r", Role: lore.RoleReader})
	if _, err := e.Query(ctx, "OPTIMIZE ev", nil); errs.CodeOf(err) != errs.Forbidden {
		t.Errorf("reader: %v", err)
	}
}

// TestOptimizeConcurrentReaders counts the table over and over while OPTIMIZE
// rewrites it: a count may fail (its files were replaced under it) but is never
// another number.
func TestOptimizeConcurrentReaders(t *testing.T) {
	dir := events(t, 40_000, 8, 2_000, false)
	e := open(t, lore.Options{})
	query(t, e, "CREATE TABLE ev WITH (location = '"+dir+"', clustered_by = ARRAY['user_id'])")
	want := cell(query(t, e, "SELECT count(*) FROM ev"), 0, 0)
	stop := make(chan struct{})
	done := make(chan error)
	go func() {
		var bad error
		for {
			select {
			case <-stop:
				done <- bad
				return
			default:
			}
			res, err := e.Query(context.Background(), "SELECT count(*) FROM ev", map[string]string{"use_statistics": "false", "result_cache": "false"})
			if err == nil && cell(res, 0, 0) != want && bad == nil {
				bad = fmt.Errorf("a reader counted %s rows, want %s", cell(res, 0, 0), want)
			}
		}
	}()
	for i := 0; i < 5; i++ {
		optimizeRow(t, e, "OPTIMIZE ev WITH (file_bytes = 100000)")
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestOptimizeFailsCleanly stops OPTIMIZE midway — past its memory budget, and
// canceled while writing — and checks that the table is as it was, with nothing
// staged left behind.
func TestOptimizeFailsCleanly(t *testing.T) {
	dir := events(t, 40_000, 4, 5_000, false)
	// Past the memory budget the sort spills; a spill bound of 1 KiB makes the
	// rewrite fail instead.
	e := open(t, lore.Options{SpillLimit: 1 << 10})
	query(t, e, "CREATE TABLE ev WITH (location = '"+dir+"', clustered_by = ARRAY['user_id'])")
	want := fingerprint(t, e, "ev")
	files := disttest.ParquetFiles(t, dir)
	check := func(what string) {
		t.Helper()
		if got := fingerprint(t, e, "ev"); got != want {
			t.Fatalf("%s: the table holds %s, want %s", what, got, want)
		}
		if got := disttest.ParquetFiles(t, dir); !slices.Equal(got, files) {
			t.Fatalf("%s: files %v, want %v", what, got, files)
		}
		if publish.Pending(dir) {
			t.Fatalf("%s: a staging directory is left", what)
		}
	}
	_, err := e.Query(context.Background(), "OPTIMIZE ev", map[string]string{"memory_limit": "1MiB"})
	if errs.CodeOf(err) != errs.ResourceExhausted {
		t.Fatalf("a 1 MiB budget and a 1 KiB spill bound: %v, want %s", err, errs.ResourceExhausted)
	}
	check("over budget")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lore.SetOptimizeHook(cancel)
	defer lore.SetOptimizeHook(nil)
	_, err = e.Query(ctx, "OPTIMIZE ev WITH (row_group_rows = 1000)", nil)
	if errs.CodeOf(err) != errs.Canceled {
		t.Fatalf("canceled: %v, want %s", err, errs.Canceled)
	}
	lore.SetOptimizeHook(nil)
	check("canceled")
}

// A table larger than the statement's memory budget is rewritten all the same: the
// sort spills, and the rows are the table's.
func TestOptimizeSpills(t *testing.T) {
	dir := events(t, 40_000, 4, 5_000, false)
	e := open(t, lore.Options{})
	query(t, e, "CREATE TABLE ev WITH (location = '"+dir+"', clustered_by = ARRAY['user_id'])")
	want := fingerprint(t, e, "ev")
	res, err := e.Query(context.Background(), "OPTIMIZE ev", map[string]string{"memory_limit": "1MiB"})
	if err != nil {
		t.Fatalf("OPTIMIZE under 1 MiB: %v", err)
	}
	if res.Record.Execution.SpilledBytes == 0 {
		t.Fatalf("nothing spilled under a 1 MiB budget: %+v", res.Record.Execution)
	}
	if got := fingerprint(t, e, "ev"); got != want {
		t.Fatalf("the table holds %s, want %s", got, want)
	}
}
