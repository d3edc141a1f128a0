package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/source"
	"github.com/loredb/lore/source/iceberg"
	"github.com/loredb/lore/storage"
)

// TestStatisticsSmoke runs the statistics suite on a tiny data set: every query is
// answered by Lore from statistics (mode context) and agrees with DuckDB's scan.
func TestStatisticsSmoke(t *testing.T) {
	ctx := context.Background()
	// An even number of files, so that zone_aligned_agg's day starts one of them.
	s, err := StatisticsSuite(ctx, EventsConfig{Rows: 20_000, Files: 4, RowGroupRows: 4096, DataDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Threads: 2, Rounds: 2, Timeout: time.Minute,
		LoreSettings: map[string]string{"use_statistics": "false", "result_cache": "false"}}
	res, err := RunSuite(ctx, cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Setup) != 1 || res.LoreSettings["use_statistics"] != "true" {
		t.Fatalf("setup %+v, settings %v", res.Setup, res.LoreSettings)
	}
	for _, q := range res.Queries {
		if !q.Lore.OK() || !q.DuckDB.OK() {
			t.Errorf("%s: lore %q, duckdb %q", q.Name, q.Lore.Error, q.DuckDB.Error)
			continue
		}
		if q.Equal == nil || !*q.Equal {
			t.Errorf("%s: results differ: %s", q.Name, q.Diff)
		}
		rec := q.Lore.Record
		switch {
		case rec == nil:
			t.Errorf("%s: no record", q.Name)
		case q.Name == "zone_filtered_agg":
			// Answered zone by zone: partials for some row groups, the rest read.
			if rec.Execution.Mode != "context" && (len(rec.Scans) != 1 || rec.Scans[0].RowGroupsAnswered == 0) {
				t.Errorf("%s: no row group answered from statistics: %+v", q.Name, rec)
			}
		case rec.Execution.Mode != "context":
			t.Errorf("%s: not answered from statistics: %+v", q.Name, rec)
		}
	}
}

// TestEventsSmoke runs the events suite on a tiny data set through the whole
// harness and requires every query to succeed on both engines with equal results.
func TestEventsSmoke(t *testing.T) {
	ctx := context.Background()
	s, err := EventsSuite(ctx, EventsConfig{Rows: 20_000, Files: 3, RowGroupRows: 4096, DataDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Data.Files != 3 || s.Data.Bytes == 0 {
		t.Fatalf("data: %+v", s.Data)
	}
	cfg := Config{Threads: 2, Rounds: 2, Timeout: time.Minute,
		LoreSettings: map[string]string{"use_statistics": "false", "result_cache": "false"}}
	res, err := RunSuite(ctx, cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Queries) != len(eventsQueries) {
		t.Fatalf("%d results for %d queries", len(res.Queries), len(eventsQueries))
	}
	for _, q := range res.Queries {
		if !q.Lore.OK() || !q.DuckDB.OK() {
			t.Errorf("%s: lore %q, duckdb %q", q.Name, q.Lore.Error, q.DuckDB.Error)
			continue
		}
		if q.Equal == nil || !*q.Equal {
			t.Errorf("%s: results differ: %s", q.Name, q.Diff)
		}
		if len(q.Lore.TimesMS) != 2 || len(q.DuckDB.TimesMS) != 2 || q.Ratio <= 0 {
			t.Errorf("%s: times %v / %v, ratio %v", q.Name, q.Lore.TimesMS, q.DuckDB.TimesMS, q.Ratio)
		}
	}
	if res.GeoMeanRatio <= 0 || res.Compared != len(eventsQueries) || res.Unequal != 0 {
		t.Errorf("summary: geomean %v, compared %d, unequal %d", res.GeoMeanRatio, res.Compared, res.Unequal)
	}
	// The point lookup must find rows, or it compares nothing.
	for _, q := range res.Queries {
		if q.Name == "count_star" && q.Lore.Rows != 1 {
			t.Errorf("count_star: %d rows", q.Lore.Rows)
		}
	}
}

// TestRunCommand drives the command line: a suite, a query filter, the JSON file
// and the CPU profile.
func TestRunCommand(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "out.json")
	prof := filepath.Join(dir, "cpu.prof")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"--suite", "events", "--rows", "5000", "--files", "2", "--rounds", "1",
		"--data", dir, "--queries", "count_star,group_low_card", "--json", jsonPath, "--cpuprofile", prof}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"machine:", "DuckDB v", "| count_star", "| group_low_card", "geometric mean"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	var rep Report
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Suites) != 1 || len(rep.Suites[0].Queries) != 2 || rep.Rounds != 1 || rep.Machine.DuckDBVersion == "" {
		t.Errorf("report: %+v", rep)
	}
	if r := rep.Suites[0].Queries[0].Lore.Record; r == nil || len(r.Scans) != 1 || r.Scans[0].FilesOpened != 2 {
		t.Errorf("Lore's query record: %+v", r)
	}
	if st, err := os.Stat(prof); err != nil || st.Size() == 0 {
		t.Errorf("cpu profile: %v", err)
	}
}

// TestRenderAgrees runs literals of many types through both engines: their
// rendered rows must be identical text, not merely equal within the tolerance.
func TestRenderAgrees(t *testing.T) {
	ctx := context.Background()
	l, err := openLore(ctx, t.TempDir(), 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	d, err := openDuckDB(ctx, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	q := `SELECT 1, CAST(2 AS BIGINT), 1.5::DOUBLE, 100.0::DOUBLE, 1e20::DOUBLE, 0.1::DOUBLE + 0.2::DOUBLE,
		CAST(12.5 AS DECIMAL(10,2)), CAST(-0.05 AS DECIMAL(10,2)), 'text', '', NULL, true, false,
		DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05.25', TIMESTAMP '2024-01-02 00:00:00',
		INTERVAL '1 day', date_trunc('day', TIMESTAMP '2024-03-05 10:00:00')`
	lr, _, err := l.run(ctx, q, true)
	if err != nil {
		t.Fatal(err)
	}
	dr, _, err := d.run(ctx, q, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(lr) != 1 || len(dr) != 1 || len(lr[0]) != len(dr[0]) {
		t.Fatalf("lore %q, duckdb %q", lr, dr)
	}
	for i := range lr[0] {
		if lr[0][i] != dr[0][i] {
			t.Errorf("column %d: lore %q, duckdb %q", i+1, lr[0][i], dr[0][i])
		}
	}
}

func TestTPCHQueriesParse(t *testing.T) {
	qs, err := TPCHQueries()
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 22 {
		t.Fatalf("%d TPC-H queries, want 22", len(qs))
	}
	for i, q := range qs {
		if want := "q" + twoDigits(i+1); q.Name != want {
			t.Errorf("query %d is %s, want %s", i, q.Name, want)
		}
		if strings.Contains(q.SQL, "--") || strings.HasSuffix(q.SQL, ";") {
			t.Errorf("%s: comments or the semicolon left in %q", q.Name, q.SQL)
		}
		hasOrder := strings.Contains(strings.ToUpper(q.SQL), "ORDER BY")
		if hasOrder != (len(q.Order.Keys) > 0) {
			t.Errorf("%s: ORDER BY %v but order keys %v", q.Name, hasOrder, q.Order.Keys)
		}
		if hasLimit := strings.Contains(strings.ToUpper(q.SQL), "LIMIT"); hasLimit != q.Order.Limited {
			t.Errorf("%s: LIMIT %v but limited %v", q.Name, hasLimit, q.Order.Limited)
		}
	}
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

// TestDeltaFormatSmoke writes Delta tables over the tiny events files and runs the
// events queries through Lore on both formats: every query succeeds on both with
// equal results, and the log states every file's rows.
func TestDeltaFormatSmoke(t *testing.T) {
	ctx := context.Background()
	s, err := EventsSuite(ctx, EventsConfig{Rows: 20_000, Files: 3, RowGroupRows: 4096, DataDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for i, tb := range s.Tables {
		s.Tables[i].Lake, s.Tables[i].LakeDir = "delta", filepath.Join(out, tb.Name)
		if err := writeDeltaTable(ctx, tb.Dir, s.Tables[i].LakeDir); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "events", "_delta_log", "00000000000000000000.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows, adds int64
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var a struct {
			Add *struct{ Stats string } `json:"add"`
		}
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatal(err)
		}
		if a.Add == nil {
			continue
		}
		var st struct {
			NumRecords int64 `json:"numRecords"`
			MinValues  map[string]any
		}
		if err := json.Unmarshal([]byte(a.Add.Stats), &st); err != nil {
			t.Fatal(err)
		}
		if st.MinValues["ts"] == nil || st.MinValues["user_id"] == nil {
			t.Errorf("stats without bounds: %s", a.Add.Stats)
		}
		rows += st.NumRecords
		adds++
	}
	if adds != 3 || rows != 20_000 {
		t.Fatalf("%d adds stating %d rows, want 3 and 20000", adds, rows)
	}
	compareFormats(t, ctx, s, "delta")
}

// TestIcebergFormatSmoke writes Iceberg tables over the tiny events files and runs the
// events queries through Lore on both formats: every query succeeds on both with
// equal results, and the manifest states every file's rows and the bounds of every
// column the footers bound, as values of the column's type.
func TestIcebergFormatSmoke(t *testing.T) {
	ctx := context.Background()
	s, err := EventsSuite(ctx, EventsConfig{Rows: 20_000, Files: 3, RowGroupRows: 4096, DataDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for i, tb := range s.Tables {
		s.Tables[i].Lake, s.Tables[i].LakeDir = "iceberg", filepath.Join(out, tb.Name)
		if err := writeIcebergTable(ctx, tb.Dir, s.Tables[i].LakeDir); err != nil {
			t.Fatal(err)
		}
	}
	l, err := iceberg.Open(ctx, storage.Local{}, filepath.Join(out, "events"), source.AsOf{})
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, f := range l.Files {
		if f.Meta == nil || len(f.Meta.Columns) != l.Schema.NumFields() {
			t.Fatalf("%s: no per-column statistics in the manifest", f.Info.Path)
		}
		rows += f.Meta.Rows
		for c, cs := range f.Meta.Columns {
			name := l.Schema.Field(c).Name
			if !cs.HasNullCount {
				t.Errorf("%s: no null count of %s", f.Info.Path, name)
			}
			if (name == "ts" || name == "user_id") && (!cs.HasMinMax || !arrow.TypeEqual(cs.Min.Type, l.Schema.Field(c).Type)) {
				t.Errorf("%s: bounds of %s are %v, %v", f.Info.Path, name, cs.Min, cs.Max)
			}
		}
	}
	if len(l.Files) != 3 || rows != 20_000 {
		t.Fatalf("%d files stating %d rows, want 3 and 20000", len(l.Files), rows)
	}
	compareFormats(t, ctx, s, "iceberg")
}

// compareFormats runs the events queries on Parquet and on the lake format's tables
// of suite s, and checks every answer is equal and the table was written.
func compareFormats(t *testing.T, ctx context.Context, s *Suite, format string) {
	t.Helper()
	cfg := Config{Threads: 2, Rounds: 1, Timeout: time.Minute,
		LoreSettings: map[string]string{"use_statistics": "false", "result_cache": "false"}}
	var w bytes.Buffer
	res, geo, err := CompareFormats(ctx, cfg, s, format, &w)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(eventsQueries) || geo <= 0 {
		t.Fatalf("%d results for %d queries, geometric mean %g", len(res), len(eventsQueries), geo)
	}
	for _, r := range res {
		if !r.Parquet.OK() || !r.Lake.OK() {
			t.Errorf("%s: parquet %q, %s %q", r.Name, r.Parquet.Error, format, r.Lake.Error)
		} else if r.Equal == nil || !*r.Equal {
			t.Errorf("%s: results differ: %s", r.Name, r.Diff)
		}
	}
	if !strings.Contains(w.String(), format+"/parquet") {
		t.Errorf("no table written:\n%s", w.String())
	}
}
