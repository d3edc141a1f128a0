//go:build cgo

package enginetest

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/dist/beam/beamtest"
	"github.com/loredb/lore/dist/disttest"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/types"
)

// rows renders a result's rows, a line each, its cells separated by tabs.
func rows(res *lore.Result) []string {
	var out []string
	for _, b := range res.Batches {
		for r := 0; r < int(b.NumRows()); r++ {
			cells := make([]string, b.NumCols())
			for c := range cells {
				cells[c] = b.Column(c).ValueStr(r)
			}
			out = append(out, strings.Join(cells, "\t"))
		}
	}
	return out
}

// sameRows reports how got differs from want, or "": the same rows in the same
// order, cells equal, or — floating-point sums merged in another order — within a
// relative 1e-9.
func sameRows(got, want []string) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d rows, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := strings.Split(got[i], "\t"), strings.Split(want[i], "\t")
		if len(g) != len(w) {
			return fmt.Sprintf("row %d: %q, want %q", i, got[i], want[i])
		}
		for c := range g {
			if g[c] == w[c] {
				continue
			}
			a, err1 := strconv.ParseFloat(g[c], 64)
			b, err2 := strconv.ParseFloat(w[c], 64)
			if err1 != nil || err2 != nil || math.Abs(a-b) > 1e-9*math.Max(math.Abs(a), math.Abs(b)) {
				return fmt.Sprintf("row %d: %q, want %q", i, got[i], want[i])
			}
		}
	}
	return ""
}

// distributedEqualsLocal runs text locally and under execution = 'beam' and checks
// that the results agree and that the record says which zones the workers read.
// It returns the distributed run's result.
func distributedEqualsLocal(t *testing.T, e *lore.Engine, runner, text string) *lore.Result {
	t.Helper()
	want := query(t, e, text, nil)
	got := query(t, e, text, beam)
	if diff := sameRows(rows(got), rows(want)); diff != "" {
		t.Errorf("%s\non Beam: %s", text, diff)
	}
	d := got.Record.Execution.Distributed
	if d == nil || d.Runner != runner {
		t.Errorf("%s\nthe record has no distributed part on %s: %+v", text, runner, d)
		return got
	}
	read := int(got.Record.Scans[0].Snapshot.RowGroupsRead)
	if d.ZonesShipped != read || want.Record.Scans[0].Snapshot.RowGroupsRead != int64(read) {
		t.Errorf("%s\n%d zones shipped, %d read here, %d read by the local run", text, d.ZonesShipped, read, want.Record.Scans[0].Snapshot.RowGroupsRead)
	}
	if d.ZonesShipped > 0 && (d.PipelineMS <= 0 || d.WorkerMS <= 0 || d.SlowestZoneMS <= 0 || d.SlowestZoneMS > d.WorkerMS) {
		t.Errorf("%s\ntimes of the distributed part: %+v", text, d)
	}
	return got
}

// tpchQuery is TPC-H query q of the bench's set.
func tpchQuery(t *testing.T, q string) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "bench", "queries", "tpch", q+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAggregatesOnPrism: aggregates over one table's scan — TPC-H Q1 and Q6, and
// every kind of aggregate, grouping, filter and expression the workers compute —
// give on Beam the results they give locally.
func TestAggregatesOnPrism(t *testing.T) {
	dir := t.TempDir()
	if err := gen.TPCH(context.Background(), gen.TPCHOptions{SF: 0.01, Out: dir, Files: 3, RowGroupRows: 8192}); err != nil {
		t.Fatal(err)
	}
	e := open(t, lore.BeamOptions{})
	query(t, e, fmt.Sprintf("CREATE TABLE lineitem WITH (location = %s, format = 'parquet')", types.QuoteString(filepath.Join(dir, "lineitem"))), nil)
	for _, text := range []string{
		tpchQuery(t, "q01"),
		tpchQuery(t, "q06"),
		`SELECT count(*), count(l_comment), sum(l_quantity), avg(l_discount), min(l_shipdate), max(l_comment),
			count(DISTINCT l_suppkey), approx_count_distinct(l_partkey), stddev_samp(l_extendedprice),
			bool_and(l_quantity > 1), string_agg(DISTINCT l_shipmode, ',' ORDER BY l_shipmode),
			sum(l_quantity) FILTER (WHERE l_returnflag = 'R')
		FROM lineitem`,
		`SELECT l_shipmode, extract(year FROM l_shipdate) AS y,
			sum(CASE WHEN l_linestatus = 'F' THEN l_extendedprice ELSE 0 END) AS f,
			count(*) AS n, max(l_receiptdate - l_shipdate) AS lag, median(l_quantity) AS m
		FROM lineitem
		WHERE l_shipinstruct IN ('DELIVER IN PERSON', 'COLLECT COD') AND l_comment LIKE '%the%'
		GROUP BY l_shipmode, y HAVING count(*) > 1 ORDER BY l_shipmode, y`,
		`SELECT l_returnflag, l_linestatus, sum(l_quantity) AS q FROM lineitem
		GROUP BY ROLLUP (l_returnflag, l_linestatus) ORDER BY l_returnflag NULLS LAST, l_linestatus NULLS LAST`,
		`SELECT upper(l_shipmode) AS m, round(avg(l_tax * 100), 4) AS t FROM lineitem
		WHERE l_partkey % 7 = 3 GROUP BY m ORDER BY t DESC, m LIMIT 3`,
		`SELECT count(*), sum(q) FROM (SELECT l_quantity AS q, l_comment AS c, l_tax * 2 AS t, l_shipdate AS d FROM lineitem) s
		WHERE q > 10 AND d < DATE '1995-06-01'`,
	} {
		distributedEqualsLocal(t, e, "prism", text)
	}
}

// TestAggregatesWithStatistics: over a learnt table, the zones the statistics answer
// stay with the coordinator, only those a filter straddles are shipped, and the
// merged result is the local one — on the events table, and on a Hive, a Delta and
// an Iceberg table.
func TestAggregatesWithStatistics(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 60_000, Files: 3, Out: dir, Seed: 5, ClusteredBy: "ts", RowGroupRows: 5000}); err != nil {
		t.Fatal(err)
	}
	e := open(t, lore.BeamOptions{})
	query(t, e, fmt.Sprintf("CREATE TABLE events WITH (location = %s, format = 'parquet')", types.QuoteString(dir)), nil)
	query(t, e, "ANALYZE events", nil)
	mid := rows(query(t, e, "SELECT CAST(min(ts) + (max(ts) - min(ts)) / 2 AS VARCHAR) FROM events", nil))[0]
	for i, text := range []string{
		fmt.Sprintf("SELECT count(*), max(status), min(user_id), count(category) FROM events WHERE ts < TIMESTAMP '%s'", mid),
		fmt.Sprintf("SELECT country, count(*) AS n, avg(amount) AS a FROM events WHERE ts >= TIMESTAMP '%s' AND status = 200 GROUP BY country ORDER BY country", mid),
	} {
		res := distributedEqualsLocal(t, e, "prism", text)
		s := res.Record.Scans[0].Snapshot
		if s.FilesSkipped == 0 || (i == 0 && s.RowGroupsAnswered == 0) {
			t.Errorf("%s\nno file skipped, or no zone answered, by statistics: %+v", text, s)
		}
	}
	for _, tb := range tables(t) {
		t.Run(tb.name, func(t *testing.T) {
			query(t, e, fmt.Sprintf("CREATE TABLE %s WITH (location = %s, format = '%s')", tb.name, types.QuoteString(tb.location), tb.format), nil)
			query(t, e, "ANALYZE "+tb.name, nil)
			cols := query(t, e, "SELECT * FROM "+tb.name+" LIMIT 0", nil).Schema
			first := cols.Field(0).Name
			distributedEqualsLocal(t, e, "prism", fmt.Sprintf("SELECT count(*), count(DISTINCT %[1]s), min(%[1]s), max(%[1]s) FROM %[2]s", first, tb.name))
		})
	}
}

// TestAggregatesThatCannotRunOnBeam: a statement of another shape is refused with
// INVALID_SETTING and a reason; one that reads nothing runs.
func TestAggregatesThatCannotRunOnBeam(t *testing.T) {
	e := open(t, lore.BeamOptions{})
	dir := disttest.WriteHive(t)
	query(t, e, fmt.Sprintf("CREATE TABLE h WITH (location = %s, format = 'parquet')", types.QuoteString(dir)), nil)
	for _, text := range []string{
		"SELECT * FROM h",
		"SELECT count(*) FROM h a JOIN h b USING (id)",
		"SELECT count(*) FROM h WHERE x > (SELECT avg(x) FROM h)",
		"SELECT count(*) OVER () FROM h",
		"WITH s AS (SELECT * FROM h) SELECT count(*) FROM s a JOIN s b USING (id)",
	} {
		_, err := e.Query(context.Background(), text, beam)
		if errs.CodeOf(err) != errs.InvalidSetting || !strings.Contains(err.Error(), "execution = 'beam'") {
			t.Errorf("%s: %v, want INVALID_SETTING", text, err)
		}
	}
	// An aggregate over the table inside a WITH query read twice runs on Beam.
	distributedEqualsLocal(t, e, "prism", "WITH s AS (SELECT p, count(*) AS n, sum(x) AS x FROM h GROUP BY p) SELECT a.p, a.n, b.x FROM s a JOIN s b USING (p) ORDER BY a.p")
	res := query(t, e, "SELECT 1 + 1", beam)
	if got := rows(res); len(got) != 1 || got[0] != "2" {
		t.Errorf("SELECT 1 + 1 on Beam: %v", got)
	}
}

// TestAggregateOnJobServer: the same through a prism job server over the Job API.
func TestAggregateOnJobServer(t *testing.T) {
	e := open(t, lore.BeamOptions{Runner: "universal", Endpoint: beamtest.JobServer(t),
		Flags: []string{"--environment_type=LOOPBACK"}})
	query(t, e, fmt.Sprintf("CREATE TABLE h WITH (location = %s, format = 'parquet')", types.QuoteString(disttest.WriteHive(t))), nil)
	distributedEqualsLocal(t, e, "universal", "SELECT p, count(*) AS n, sum(x) AS x, max(s) AS s FROM h WHERE id % 3 = 1 GROUP BY p ORDER BY p")
}

// TestChangedFileFailsTheAggregate: a file rewritten after the engine planned the
// statement fails it with SOURCE_CHANGED: no result mixes versions.
func TestChangedFileFailsTheAggregate(t *testing.T) {
	dir := disttest.WriteHive(t)
	e := open(t, lore.BeamOptions{})
	query(t, e, fmt.Sprintf("CREATE TABLE h WITH (location = %s, format = 'parquet')", types.QuoteString(dir)), nil)
	t.Setenv(rewriteEnv, filepath.Join(dir, "p=a", "1.parquet"))
	_, err := e.Query(context.Background(), "SELECT count(*), sum(x) FROM h", beam)
	if errs.CodeOf(err) != errs.SourceChanged {
		t.Fatalf("%v, want SOURCE_CHANGED", err)
	}
}

// TestNothingToShip: when pruning leaves no zone to read, nothing runs on Beam, the
// result is the aggregate over no row, and the scan is recorded once.
func TestNothingToShip(t *testing.T) {
	e := open(t, lore.BeamOptions{Command: "/nonexistent/lore-beam"})
	query(t, e, fmt.Sprintf("CREATE TABLE h WITH (location = %s, format = 'parquet')", types.QuoteString(disttest.WriteHive(t))), nil)
	res := query(t, e, "SELECT count(*), max(x) FROM h WHERE id > 1000000000", beam)
	if got := rows(res); len(got) != 1 || got[0] != "0\t(null)" {
		t.Errorf("rows %q, want 0 and NULL", got)
	}
	if d := res.Record.Execution.Distributed; d == nil || d.ZonesShipped != 0 || len(res.Record.Scans) != 1 || res.Record.Scans[0].Snapshot.RowGroupsRead != 0 {
		t.Errorf("distributed %+v, scans %+v", d, res.Record.Scans)
	}
}

// TestBeamAbove: under execution = 'auto', the default, on an engine given a size
// threshold, an aggregate that reads at least it and a full ANALYZE of a table at
// least that large run on Beam unasked; a statement of a shape Beam does not run,
// and every statement under execution = 'local', runs here.
func TestBeamAbove(t *testing.T) {
	dir := disttest.WriteHive(t)
	create := fmt.Sprintf("CREATE TABLE h WITH (location = %s, format = 'parquet')", types.QuoteString(dir))
	e := open(t, lore.BeamOptions{Above: 1})
	query(t, e, create, nil)
	text := "SELECT p, count(*) AS n, sum(x) AS x FROM h WHERE id % 5 <> 0 GROUP BY p ORDER BY p"
	noCache := map[string]string{"result_cache": "false"}
	local := query(t, e, text, map[string]string{"execution": "local", "result_cache": "false"})
	got := query(t, e, text, noCache)
	if diff := sameRows(rows(got), rows(local)); diff != "" {
		t.Errorf("on Beam unasked: %s", diff)
	}
	if d := local.Record.Execution.Distributed; d != nil {
		t.Errorf("execution = 'local' ran on Beam: %+v", d)
	}
	d := got.Record.Execution.Distributed
	if d == nil || d.Runner != "prism" || d.Bytes <= 0 || int64(d.ZonesShipped) != got.Record.Scans[0].Snapshot.RowGroupsRead {
		t.Errorf("the aggregate did not run on Beam by itself: %+v", d)
	}
	if d := query(t, e, "SELECT count(*) FROM h a JOIN h b USING (id)", noCache).Record.Execution.Distributed; d != nil {
		t.Errorf("a join ran on Beam: %+v", d)
	}
	res := query(t, e, "ANALYZE h WITH (sketches = true)", nil)
	if v := res.Batches[0].Column(3).ValueStr(0); v != "beam:prism" {
		t.Errorf("full_read %q, want beam:prism", v)
	}

	big := open(t, lore.BeamOptions{Above: 1 << 40})
	query(t, big, create, nil)
	if d := query(t, big, text, noCache).Record.Execution.Distributed; d != nil {
		t.Errorf("an aggregate below the threshold ran on Beam: %+v", d)
	}
	res = query(t, big, "ANALYZE h WITH (sketches = true)", nil)
	if v := res.Batches[0].Column(3).ValueStr(0); v != "local" {
		t.Errorf("full_read %q below the threshold, want local", v)
	}
}
