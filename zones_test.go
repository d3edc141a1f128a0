package lore_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
)

// TestZoneAnswersEqualScans runs random filtered aggregates over events clustered by
// ts in many row groups: answered zone by zone (skipping, taking partials, reading
// the rest) they give what a full scan gives.
func TestZoneAnswersEqualScans(t *testing.T) {
	for _, depth := range []string{"ANALYZE t", "ANALYZE t WITH (sketches = true)"} {
		t.Run(depth, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "events")
			if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 40_000, Files: 3, Out: dir, Seed: 5,
				ClusteredBy: "ts", RowGroupRows: 2_000}); err != nil {
				t.Fatal(err)
			}
			e := open(t, lore.Options{NoAutoRefresh: true})
			query(t, e, fmt.Sprintf("CREATE TABLE t WITH (location = '%s', format = 'parquet')", dir))
			query(t, e, depth)
			r := rand.New(rand.NewPCG(11, 12))
			aggs := []string{"count(*)", "count(amount)", "min(ts)", "max(ts)", "min(status)", "max(user_id)",
				"sum(status)", "avg(status)", "sum(amount)", "min(amount)", "max(latency_ms)", "count(flag)"}
			answered, contexts := 0, 0
			for n := 0; n < 80; n++ {
				pred := randomPredicate(r)
				k := 1 + r.IntN(4)
				var sel []string
				for i := 0; i < k; i++ {
					sel = append(sel, aggs[r.IntN(len(aggs))])
				}
				sql := fmt.Sprintf("SELECT %s FROM t WHERE %s", strings.Join(sel, ", "), pred)
				want := run(t, e, sql, scanned)
				got := run(t, e, sql, nil)
				tol := 0.0
				if strings.Contains(sql, "(amount)") || strings.Contains(sql, "avg(") {
					tol = 1e-9 // float sums add in another order
				}
				if w, g := resultText(want), resultText(got); w != g && (tol == 0 || !closeResults(w, g, tol)) {
					t.Fatalf("%s:\nanswered %s\nscanned  %s\nrecord %+v", sql, g, w, got.Record.Execution)
				}
				if got.Record.Execution.Mode == "context" {
					contexts++
				}
				for _, s := range got.Record.Scans {
					answered += int(s.RowGroupsAnswered)
				}
			}
			if answered == 0 {
				t.Fatal("no row group was answered from statistics")
			}
			t.Logf("%s: %d row groups answered, %d statements without reading", depth, answered, contexts)
		})
	}
}

// randomPredicate draws a filter over the events columns: ranges on ts (which the
// data is clustered by), comparisons on the others, combined with AND, OR and NOT.
func randomPredicate(r *rand.Rand) string {
	var leaf func() string
	leaf = func() string {
		switch r.IntN(7) {
		case 0, 1:
			day := 1 + r.IntN(28)
			op := []string{">=", "<", ">", "<=", "="}[r.IntN(5)]
			return fmt.Sprintf("ts %s TIMESTAMP '2024-0%d-%02d %02d:00:00'", op, 1+r.IntN(3), day, r.IntN(24))
		case 2:
			return fmt.Sprintf("status %s %d", []string{"=", "<>", ">=", "<"}[r.IntN(4)], []int{200, 201, 404, 500, 503}[r.IntN(5)])
		case 3:
			return fmt.Sprintf("amount %s %d", []string{">", "<=", "<"}[r.IntN(3)], r.IntN(2000))
		case 4:
			return fmt.Sprintf("user_id IN (%d, %d)", r.IntN(1_000_000), r.IntN(1_000_000))
		case 5:
			return []string{"amount IS NULL", "flag IS NOT NULL", "latency_ms IS NULL"}[r.IntN(3)]
		}
		return fmt.Sprintf("ts BETWEEN TIMESTAMP '2024-01-%02d' AND TIMESTAMP '2024-02-%02d'", 1+r.IntN(28), 1+r.IntN(28))
	}
	return predicateTree(r, 2, leaf)
}

// TestZoneAlignedPredicateReadsNothing: a range whose edge falls on row-group
// boundaries of data clustered by it is answered without reading.
func TestZoneAlignedPredicateReadsNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "events")
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 20_000, Files: 2, Out: dir, Seed: 5,
		ClusteredBy: "ts", RowGroupRows: 1_000}); err != nil {
		t.Fatal(err)
	}
	e := open(t, lore.Options{NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE t WITH (location = '%s', format = 'parquet')", dir))
	query(t, e, "ANALYZE t WITH (sketches = true)")
	// The first row group's greatest ts, read from the data: ts > it is exactly the
	// other row groups.
	edge := cell(query(t, e, "SELECT max(ts) FROM (SELECT ts FROM t ORDER BY ts LIMIT 1000)"), 0, 0)
	sql := fmt.Sprintf("SELECT count(*), min(amount), max(amount), sum(status), avg(status) FROM t WHERE ts > TIMESTAMP '%s'", edge)
	want := run(t, e, sql, scanned)
	if d := want.Record.Execution.Detail; !strings.HasSuffix(d, "; statistics bypassed") {
		t.Errorf("use_statistics = false: detail %q", d)
	}
	got := run(t, e, sql, nil)
	if got.Record.Execution.Mode != "context" || len(got.Record.Scans) != 0 {
		t.Fatalf("%s: %+v", sql, got.Record.Execution)
	}
	if resultText(got) != resultText(want) {
		t.Fatalf("answered %s, scanned %s", resultText(got), resultText(want))
	}
	// A predicate inside one row group reads that row group only.
	mid := cell(query(t, e, "SELECT max(ts) FROM (SELECT ts FROM t ORDER BY ts LIMIT 1500)"), 0, 0)
	sql = fmt.Sprintf("SELECT count(*), sum(status) FROM t WHERE ts > TIMESTAMP '%s'", mid)
	got = run(t, e, sql, nil)
	if len(got.Record.Scans) != 1 || got.Record.Scans[0].RowGroupsRead != 1 {
		t.Fatalf("%s: scans %+v", sql, got.Record.Scans)
	}
	if want := run(t, e, sql, scanned); resultText(got) != resultText(want) {
		t.Fatalf("answered %s, scanned %s", resultText(got), resultText(want))
	}
}

// TestGroupsByPartitionFromZones answers aggregates grouped by Hive partition
// columns per partition, with and without filters, and checks them against scans.
func TestGroupsByPartitionFromZones(t *testing.T) {
	for _, layout := range statsLayouts {
		if !strings.HasPrefix(layout.name, "hive") {
			continue
		}
		t.Run(layout.name, func(t *testing.T) {
			e := open(t, lore.Options{NoAutoRefresh: true})
			registerStats(t, e, layout.write(t, t.TempDir()))
			query(t, e, "ANALYZE t WITH (sketches = true)")
			contexts := 0
			for _, sql := range []string{
				"SELECT region, count(*), min(i64), max(s), sum(i32), avg(dec) FROM t GROUP BY region ORDER BY region NULLS FIRST",
				"SELECT day, region, count(some_null), sum(some_null) FROM t GROUP BY day, region ORDER BY day, region NULLS FIRST",
				"SELECT region, count(*) FROM t WHERE day = 1 GROUP BY region ORDER BY region NULLS FIRST",
				"SELECT region, count(*), max(d) FROM t WHERE region <> 'eu' OR day > 1 GROUP BY region ORDER BY 1 NULLS FIRST LIMIT 5",
				"SELECT day, count(*) FROM t WHERE i64 > 0 GROUP BY day ORDER BY day",
				"SELECT region, min(i32) FROM t WHERE i32 > 1000 GROUP BY region ORDER BY region",
			} {
				want := run(t, e, sql, scanned)
				got := run(t, e, sql, nil)
				if resultText(got) != resultText(want) {
					t.Errorf("%s:\nanswered\n%s\nscanned\n%s\nrecord %+v", sql, resultText(got), resultText(want), got.Record.Execution)
				}
				if got.Record.Execution.Mode == "context" {
					contexts++
				}
			}
			if contexts < 3 {
				t.Errorf("only %d statements answered without reading", contexts)
			}
		})
	}
}

// TestZonesWithNaN: NaN is greater than every number and is never a bound, so a
// float column's row groups that may hold NaN are never skipped or answered on the
// strength of their upper bound.
func TestZonesWithNaN(t *testing.T) {
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for i := 0; i < 4000; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		switch {
		case i%1000 == 500 && i < 2000: // NaN in the first two row groups
			b.Field(1).(*array.Float64Builder).Append(math.NaN())
		case i%7 == 0:
			b.Field(1).AppendNull()
		default:
			b.Field(1).(*array.Float64Builder).Append(float64(i%1000) / 10)
		}
	}
	rec := b.NewRecord()
	f, err := os.Create(filepath.Join(dir, "nan.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, pq.NewWriterProperties(pq.WithMaxRowGroupLength(1000)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{"ANALYZE t", "ANALYZE t WITH (sketches = true)"} {
		e := open(t, lore.Options{NoAutoRefresh: true})
		registerStats(t, e, dir)
		query(t, e, form)
		for _, sql := range []string{
			"SELECT count(*), max(f), min(f) FROM t WHERE f > 50",
			"SELECT count(*), sum(x) FROM t WHERE f > 99.95",
			"SELECT count(*), max(x) FROM t WHERE f < 200",
			"SELECT count(*), max(f) FROM t WHERE x >= 2000",
			"SELECT count(*) FROM t WHERE NOT (f <= 1000)",
			"SELECT count(f), max(f) FROM t WHERE x < 1000",
			"SELECT max(f), min(f), count(*) FROM t",
		} {
			want := run(t, e, sql, scanned)
			got := run(t, e, sql, nil)
			if resultText(got) != resultText(want) {
				t.Errorf("%s after %s:\nanswered %s\nscanned  %s\n%+v", sql, form, resultText(got), resultText(want), got.Record.Execution)
			}
		}
	}
}

// predicateTree combines leaves drawn by leaf with AND, OR and NOT, up to depth levels.
func predicateTree(r *rand.Rand, depth int, leaf func() string) string {
	if depth == 0 || r.IntN(2) == 0 {
		return leaf()
	}
	switch r.IntN(3) {
	case 0:
		return "(" + predicateTree(r, depth-1, leaf) + " AND " + predicateTree(r, depth-1, leaf) + ")"
	case 1:
		return "(" + predicateTree(r, depth-1, leaf) + " OR " + predicateTree(r, depth-1, leaf) + ")"
	}
	return "NOT (" + predicateTree(r, depth-1, leaf) + ")"
}
