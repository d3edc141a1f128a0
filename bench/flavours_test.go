package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tinyFlavourQueries are the queries the flavour tests run: a scan and aggregate
// over lineitem, a join, a filtered scan and a correlated subquery.
const tinyFlavourQueries = "q01,q03,q06,q17"

// TestFlavoursTiny writes every flavour at SF 0.01 and requires both engines to
// return equal results on them, and each flavour's footer to say what it should.
func TestFlavoursTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("writes six TPC-H data sets")
	}
	ctx := context.Background()
	root := t.TempDir()
	footers := map[string][]string{
		"duckdb":        {"ZSTD", "PLAIN_DICTIONARY", "DuckDB"},
		"duckdb-snappy": {"SNAPPY", "PLAIN_DICTIONARY", "DuckDB"},
		"arrow":         {"SNAPPY", "RLE_DICTIONARY", "FIXED_LEN_BYTE_ARRAY", "v2 data pages"},
		"spark":         {"SNAPPY", "PLAIN_DICTIONARY", "l_quantity INT64", "v1 data pages"},
		"small-files":   {"SNAPPY", "59 rows"},
	}
	for _, f := range Flavours {
		s, err := TPCHSuite(ctx, TPCHConfig{SF: 0.01, Files: 2, DataDir: root, Flavour: f, SmallFiles: 1000, Threads: 2}, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, want := range footers[f] {
			if !strings.Contains(s.Data.Description, want) {
				t.Errorf("%s: the description does not say %q: %s", f, want, s.Data.Description)
			}
		}
		if f == "small-files" {
			if n, _ := parquetFiles(filepath.Join(root, "tpch-sf0.01-small-files", "lineitem")); len(n) != 1000 {
				t.Errorf("small-files: lineitem in %d files, want 1000", len(n))
			}
		}
		filterQueries(s, tinyFlavourQueries)
		res, err := RunSuite(ctx, Config{Threads: 2, Rounds: 1, Timeout: time.Minute}, s)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, q := range res.Queries {
			switch {
			case !q.DuckDB.OK():
				t.Errorf("%s/%s: DuckDB failed: %s", f, q.Name, q.DuckDB.Error)
			case !q.Lore.OK():
				t.Errorf("%s/%s: Lore failed: %s", f, q.Name, q.Lore.Error)
			case q.Equal == nil || !*q.Equal:
				t.Errorf("%s/%s: results differ: %s", f, q.Name, q.Diff)
			}
		}
	}
}

// TestSplitWriterQuotas checks that a table split into more files than it has
// rows still writes every row, each file at least one.
func TestSplitWriterQuotas(t *testing.T) {
	sw := &splitWriter{total: 7, files: 7}
	sum := int64(0)
	for i := range sw.files {
		if sw.quota(i) != 1 {
			t.Errorf("file %d: quota %d, want 1", i, sw.quota(i))
		}
		sum += sw.quota(i)
	}
	sw = &splitWriter{total: 1000, files: 3}
	sum = 0
	for i := range sw.files {
		sum += sw.quota(i)
	}
	if sum != 1000 {
		t.Errorf("quotas sum to %d, want 1000", sum)
	}
}

// TestProcessesTiny runs two queries in the processes mode at SF 0.01 on the
// spark flavour: the lore CLI and the DuckDB child must both answer, with equal
// row counts and a measured peak.
func TestProcessesTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the lore CLI")
	}
	ctx := context.Background()
	s, err := TPCHSuite(ctx, TPCHConfig{SF: 0.01, Files: 2, DataDir: t.TempDir(), Flavour: "spark", Threads: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	filterQueries(s, "q01,q13")
	res, err := RunProcesses(ctx, Config{Threads: 2, Rounds: 1, Timeout: 2 * time.Minute,
		LoreSettings: map[string]string{"use_statistics": "false", "result_cache": "false"}}, s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"q01": 4, "q13": 0}
	for _, q := range res.Queries {
		if q.Lore.Error != "" || q.DuckDB.Error != "" {
			t.Fatalf("%s: lore %q, duckdb %q", q.Name, q.Lore.Error, q.DuckDB.Error)
		}
		if q.RowsEqual == nil || !*q.RowsEqual {
			t.Errorf("%s: lore %d rows, duckdb %d", q.Name, q.Lore.Rows, q.DuckDB.Rows)
		}
		if n := want[q.Name]; n > 0 && q.Lore.Rows != n {
			t.Errorf("%s: %d rows, want %d", q.Name, q.Lore.Rows, n)
		}
		for _, r := range []ProcessRun{q.Lore, q.DuckDB} {
			if r.PeakRSSBytes < 10<<20 || len(r.WallMS) != 1 {
				t.Errorf("%s: peak %d bytes, %d timed runs", q.Name, r.PeakRSSBytes, len(r.WallMS))
			}
		}
	}
	if res.GeoMeanRSSRatio <= 0 {
		t.Error("no geometric mean of the RSS ratios")
	}
}
