package lore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
)

// zoneLine is what EXPLAIN says of one scan's (or stored result's) zones.
type zoneLine struct {
	considered int
	// outcome ("skipped", "answered", "read") → reason → zones
	by map[string]map[string]int
}

func (z zoneLine) total(outcome string) int {
	n := 0
	for _, k := range z.by[outcome] {
		n += k
	}
	return n
}

var (
	zonesRe   = regexp.MustCompile(`zones: considered=(\d+)((?: (?:skipped|answered|read)=\d+ \([^)]*\))*)`)
	outcomeRe = regexp.MustCompile(` (skipped|answered|read)=(\d+) \(([^)]*)\)`)
	countsRe  = regexp.MustCompile(`row_groups: considered=(\d+) pruned=(\d+) answered=(\d+) read=(\d+)`)
)

// parseZones reads the zones of the one plan line that has them, and checks that the
// counts by reason add up to each outcome's.
func parseZones(t *testing.T, plan string) zoneLine {
	t.Helper()
	m := zonesRe.FindAllStringSubmatch(plan, -1)
	if len(m) != 1 {
		t.Fatalf("%d zone lines in\n%s", len(m), plan)
	}
	z := zoneLine{by: map[string]map[string]int{}}
	z.considered, _ = strconv.Atoi(m[0][1])
	sum := 0
	for _, o := range outcomeRe.FindAllStringSubmatch(m[0][2], -1) {
		n, _ := strconv.Atoi(o[2])
		sum += n
		reasons := map[string]int{}
		parts := strings.Split(o[3], ", ")
		if len(parts) == 1 {
			reasons[parts[0]] = n
		} else {
			k := 0
			for _, p := range parts {
				i := strings.LastIndexByte(p, ' ')
				c, _ := strconv.Atoi(p[i+1:])
				reasons[p[:i]] = c
				k += c
			}
			if k != n {
				t.Fatalf("%s=%d, but its reasons add up to %d:\n%s", o[1], n, k, plan)
			}
		}
		z.by[o[1]] = reasons
	}
	if sum != z.considered {
		t.Fatalf("zones considered=%d, but skipped, answered and read add up to %d:\n%s", z.considered, sum, plan)
	}
	return z
}

// explain runs EXPLAIN ANALYZE and returns its text.
func explain(t *testing.T, e *lore.Engine, sql string, settings map[string]string) string {
	t.Helper()
	return strings.ReplaceAll(resultText(run(t, e, "EXPLAIN ANALYZE "+sql, settings)), "|\n", "\n")
}

// TestExplainAnalyzeZoneReasons checks that EXPLAIN ANALYZE tells, per scan, how
// many zones were considered, skipped, answered and read and why, that those add up
// to the table's row groups, and that the executed counters agree.
func TestExplainAnalyzeZoneReasons(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "events")
	const groups = 20
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: groups * 1000, Files: 2, Out: dir, Seed: 5,
		ClusteredBy: "ts", RowGroupRows: 1_000}); err != nil {
		t.Fatal(err)
	}
	e := open(t, lore.Options{NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE t WITH (location = '%s', format = 'parquet')", dir))
	query(t, e, "ANALYZE t WITH (sketches = true)")
	edge := cell(query(t, e, "SELECT max(ts) FROM (SELECT ts FROM t ORDER BY ts LIMIT 3000)"), 0, 0)
	mid := cell(query(t, e, "SELECT max(ts) FROM (SELECT ts FROM t ORDER BY ts LIMIT 3500)"), 0, 0)

	// Aligned: three row groups below the edge, the others above it; nothing is read.
	aligned := fmt.Sprintf("SELECT count(*), sum(status), max(amount) FROM t WHERE ts > TIMESTAMP '%s'", edge)
	p := explain(t, e, aligned, nil)
	t.Log(p)
	z := parseZones(t, p)
	if z.considered != groups || z.by["skipped"]["bounds exclude"] != 3 || z.by["answered"]["all rows match"] != groups-3 || z.total("read") != 0 {
		t.Errorf("aligned predicate: %+v\n%s", z, p)
	}
	if !strings.Contains(p, "Stored rows=1") || countsRe.MatchString(p) {
		t.Errorf("aligned predicate: something was read\n%s", p)
	}

	// Straddling: one row group is read, and the counters agree with the plan.
	straddling := fmt.Sprintf("SELECT count(*), sum(status), max(amount) FROM t WHERE ts > TIMESTAMP '%s'", mid)
	p = explain(t, e, straddling, nil)
	t.Log(p)
	z = parseZones(t, p)
	if z.considered != groups || z.by["skipped"]["bounds exclude"] != 3 || z.by["answered"]["all rows match"] != groups-4 ||
		z.by["read"]["straddles"] != 1 || z.total("read") != 1 {
		t.Errorf("straddling predicate: %+v\n%s", z, p)
	}
	c := countsRe.FindStringSubmatch(p)
	if c == nil || c[1] != strconv.Itoa(groups) || c[2] != "3" || c[3] != strconv.Itoa(groups-4) || c[4] != "1" {
		t.Errorf("straddling predicate: counters %v\n%s", c, p)
	}

	// use_statistics = false: every zone is read, for that reason; the footers still prune.
	p = explain(t, e, straddling, scanned)
	t.Log(p)
	z = parseZones(t, p)
	if z.considered != groups || z.by["read"]["statistics bypassed"] != groups {
		t.Errorf("use_statistics = false: %+v\n%s", z, p)
	}
	c = countsRe.FindStringSubmatch(p)
	if c == nil || c[1] != strconv.Itoa(groups) || c[2] != "3" || c[3] != "0" || c[4] != strconv.Itoa(groups-3) {
		t.Errorf("use_statistics = false: counters %v\n%s", c, p)
	}
	// A metadata record (of u) has no sums, and its string bounds are not values.
	query(t, e, fmt.Sprintf("CREATE TABLE u WITH (location = '%s', format = 'parquet')", dir))
	query(t, e, "ANALYZE u")
	for _, tc := range []struct {
		sql, reason string
	}{
		{fmt.Sprintf("SELECT count(DISTINCT status) FROM t WHERE ts > TIMESTAMP '%s'", edge), "aggregate needs rows"},
		{fmt.Sprintf("SELECT max(status + 1) FROM t WHERE ts > TIMESTAMP '%s'", edge), "aggregate needs rows"},
		{fmt.Sprintf("SELECT sum(status) FROM u WHERE ts > TIMESTAMP '%s'", edge), "partials missing"},
		{fmt.Sprintf("SELECT count(*), max(country) FROM u WHERE ts > TIMESTAMP '%s'", edge), "bounds inexact"},
	} {
		p := explain(t, e, tc.sql, nil)
		t.Log(p)
		z := parseZones(t, p)
		if z.by["skipped"]["bounds exclude"] != 3 || z.by["read"][tc.reason] != groups-3 {
			t.Errorf("%s: want %d zones read for %q: %+v\n%s", tc.sql, groups-3, tc.reason, z, p)
		}
	}

	// A record made stale by a file's change decides nothing.
	files, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files in %s: %v", dir, err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(files[0], later, later); err != nil {
		t.Fatal(err)
	}
	p = explain(t, e, "SELECT count(*) FROM u WHERE status = 200", nil)
	if !strings.Contains(p, "zones: record stale") {
		t.Errorf("stale record:\n%s", p)
	}
}

// TestExplainZonesExcludedByPartition: zones of files whose partition values the
// filter excludes are told apart from zones whose bounds exclude it.
func TestExplainZonesExcludedByPartition(t *testing.T) {
	dir := t.TempDir()
	for _, region := range []string{"eu", "us"} {
		for day := 1; day <= 2; day++ {
			writeStatsFile(t, filepath.Join(dir, "region="+region, fmt.Sprintf("day=%d", day), "data.parquet"), uint64(day), 800, 300, true)
		}
	}
	e := open(t, lore.Options{NoAutoRefresh: true})
	registerStats(t, e, dir)
	query(t, e, "ANALYZE t WITH (sketches = true)")
	// 4 files of 3 row groups; day = 2 excludes 6 of them by partition, and i32 > 498
	// excludes by bounds the row groups of day 1 whose i32 stays below it.
	p := explain(t, e, "SELECT region, count(*), sum(i32) FROM t WHERE day = 1 AND i32 > 498 GROUP BY region", nil)
	t.Log(p)
	z := parseZones(t, p)
	if z.considered != 12 || z.by["skipped"]["partition excludes"] != 6 {
		t.Errorf("%+v\n%s", z, p)
	}
	p = explain(t, e, "SELECT region, count(*), sum(i32) FROM t WHERE day = 1 GROUP BY region", nil)
	t.Log(p)
	z = parseZones(t, p)
	if z.considered != 12 || z.by["skipped"]["partition excludes"] != 6 || z.by["answered"]["all rows match"] != 6 {
		t.Errorf("%+v\n%s", z, p)
	}
}
