package lore_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"

	"github.com/loredb/lore"
)

// writeStar writes a fact table of 40,000 rows in 20 row groups, in the order of its
// day (100 rows a day, days 0..399), with the day as an integer, a date and a string
// key, and a dimension of the 400 days with their month (30 days each).
func writeStar(t *testing.T, dir string) {
	t.Helper()
	fact := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "day", Type: arrow.PrimitiveTypes.Int32},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32},
		{Name: "code", Type: arrow.BinaryTypes.String},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, fact)
	defer b.Release()
	for i := 0; i < 40_000; i++ {
		day := i / 100
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int32Builder).Append(int32(day))
		b.Field(2).(*array.Date32Builder).Append(arrow.Date32(10957 + day))
		b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("c%04d", day))
		b.Field(4).(*array.Int64Builder).Append(int64(i % 7))
	}
	writeRecord(t, filepath.Join(dir, "fact.parquet"), b, pq.NewWriterProperties(pq.WithMaxRowGroupLength(2000), pq.WithStats(true)))
	dim := arrow.NewSchema([]arrow.Field{
		{Name: "day", Type: arrow.PrimitiveTypes.Int32},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32},
		{Name: "code", Type: arrow.BinaryTypes.String},
		{Name: "month", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	db := array.NewRecordBuilder(memory.DefaultAllocator, dim)
	defer db.Release()
	for day := 0; day < 400; day++ {
		db.Field(0).(*array.Int32Builder).Append(int32(day))
		db.Field(1).(*array.Date32Builder).Append(arrow.Date32(10957 + day))
		db.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("c%04d", day))
		db.Field(3).(*array.Int32Builder).Append(int32(day / 30))
	}
	writeRecord(t, filepath.Join(dir, "dim.parquet"), db, nil)
}

func starEngine(t *testing.T) *lore.Engine {
	t.Helper()
	dir := t.TempDir()
	writeStar(t, dir)
	e := open(t, lore.Options{})
	for _, name := range []string{"fact", "dim"} {
		query(t, e, fmt.Sprintf("CREATE TABLE %s WITH (location = '%s', format = 'parquet')", name, filepath.Join(dir, name+".parquet")))
	}
	return e
}

// factPruned returns the row groups of the fact table the statement's scan of it
// skipped, failing unless its counters add up.
func factPruned(t *testing.T, res *lore.Result) int64 {
	t.Helper()
	for _, s := range res.Record.Scans {
		if s.Table == "fact" {
			if s.RowGroupsConsidered != 20 || s.RowGroupsRead+s.RowGroupsPruned != s.RowGroupsConsidered {
				t.Fatalf("fact scan counters: %+v", s)
			}
			return s.RowGroupsPruned
		}
	}
	t.Fatalf("no scan of fact in %+v", res.Record.Scans)
	return 0
}

// A scalar subquery compared with a column is computed before the scan of that
// column, whose row groups it prunes like a literal: alone, beside a join, and as
// both bounds of a BETWEEN with arithmetic on one. The answers are those of the
// literal it stands for.
func TestScalarSubqueryPrunesTheScanItFilters(t *testing.T) {
	e := starEngine(t)
	for _, c := range []struct{ sql, literal string }{
		{"SELECT count(*), sum(qty) FROM fact WHERE day = (SELECT max(day) FROM dim WHERE month = 3)",
			"SELECT count(*), sum(qty) FROM fact WHERE day = 119"},
		{"SELECT count(*) FROM fact WHERE day BETWEEN (SELECT min(day) FROM dim WHERE month = 5) AND (SELECT min(day) FROM dim WHERE month = 5) + 11",
			"SELECT count(*) FROM fact WHERE day BETWEEN 150 AND 161"},
		{"SELECT count(*), max(f.id) FROM fact f, dim m WHERE f.day = m.day AND f.d < (SELECT min(d) FROM dim WHERE month = 1) AND m.month >= 0",
			"SELECT count(*), max(f.id) FROM fact f, dim m WHERE f.day = m.day AND f.d < DATE '2000-01-31' AND m.month >= 0"},
		{"SELECT count(*) FROM fact WHERE code >= (SELECT max(code) FROM dim)",
			"SELECT count(*) FROM fact WHERE code >= 'c0399'"},
	} {
		got := run(t, e, c.sql, nil)
		want := run(t, e, c.literal, nil)
		if g, w := resultText(got), resultText(want); g != w {
			t.Errorf("%s:\n%s\nwant (%s)\n%s", c.sql, g, c.literal, w)
		}
		if p, w := factPruned(t, got), factPruned(t, want); p != w || p == 0 {
			t.Errorf("%s: %d row groups of 20 pruned, the literal %d", c.sql, p, w)
		}
	}
}

// A hash join narrows its probe side's scan to the range of its build keys: a
// filtered dimension prunes the row groups of the fact table outside the keys it
// kept, for keys that are integers, dates, strings or several columns, and not for
// a join whose unmatched fact rows are kept. The answers are those of the same join
// on expressions of the keys, which nothing narrows.
func TestJoinKeysPruneTheProbeScan(t *testing.T) {
	e := starEngine(t)
	for _, c := range []struct {
		sql, plain string
		prunes     bool
	}{
		{"SELECT count(*), sum(f.qty) FROM fact f JOIN dim m ON f.day = m.day WHERE m.month = 5",
			"SELECT count(*), sum(f.qty) FROM fact f JOIN dim m ON f.day + 0 = m.day WHERE m.month = 5", true},
		{"SELECT count(*) FROM fact f JOIN dim m ON f.d = m.d WHERE m.d BETWEEN DATE '2000-03-01' AND DATE '2000-03-10'",
			"SELECT count(*) FROM fact f JOIN dim m ON f.d + 0 = m.d WHERE m.d BETWEEN DATE '2000-03-01' AND DATE '2000-03-10'", true},
		{"SELECT count(*) FROM fact f JOIN dim m ON f.code = m.code WHERE m.month IN (2, 3)",
			"SELECT count(*) FROM fact f JOIN dim m ON f.code || '' = m.code WHERE m.month IN (2, 3)", true},
		{"SELECT count(*) FROM fact f JOIN dim m ON f.code = m.code AND f.day = m.day WHERE m.month = 12",
			"SELECT count(*) FROM fact f JOIN dim m ON f.code || '' = m.code AND f.day + 0 = m.day WHERE m.month = 12", true},
		{"SELECT count(*) FROM fact f WHERE f.day IN (SELECT day FROM dim WHERE month = 7)",
			"SELECT count(*) FROM fact f WHERE f.day + 0 IN (SELECT day FROM dim WHERE month = 7)", true},
		{"SELECT count(*), count(m.day) FROM fact f LEFT JOIN dim m ON f.day = m.day AND m.month = 5",
			"SELECT count(*), count(m.day) FROM fact f LEFT JOIN dim m ON f.day + 0 = m.day AND m.month = 5", false},
	} {
		got := run(t, e, c.sql, nil)
		want := run(t, e, c.plain, nil)
		if g, w := resultText(got), resultText(want); g != w {
			t.Errorf("%s:\n%s\nwant (%s)\n%s", c.sql, g, c.plain, w)
		}
		if p := factPruned(t, want); p != 0 {
			t.Errorf("%s: %d row groups pruned", c.plain, p)
		}
		if p := factPruned(t, got); (p > 0) != c.prunes {
			t.Errorf("%s: %d row groups of 20 pruned, want pruning %v", c.sql, p, c.prunes)
		}
	}
}

// EXPLAIN shows a scan's deferred predicates: the subquery the scan prunes with once
// it is computed, below the join that used to filter after it.
func TestExplainShowsDeferredPruning(t *testing.T) {
	e := starEngine(t)
	res := query(t, e, "EXPLAIN SELECT count(*) FROM fact f, dim m WHERE f.day = m.day AND m.month = (SELECT month FROM dim WHERE day = 100)")
	var plan strings.Builder
	for i := 0; i < int(res.NumRows()); i++ {
		plan.WriteString(cell(res, i, 0) + "\n")
	}
	if !strings.Contains(plan.String(), "Scan dim") || !strings.Contains(plan.String(), "prune at run=[month = (subquery)]") {
		t.Fatalf("want the scan of dim to prune with the subquery:\n%s", plan.String())
	}
}

// The join keys of a join above another narrow the scan at the bottom of the chain
// when they are its columns: the filtered days of the top join prune the fact
// table's row groups through the LEFT JOIN below it. The answers are those of a key
// the scan cannot see.
func TestJoinKeysAboveAChainPruneTheBottomScan(t *testing.T) {
	e := starEngine(t)
	sql := "SELECT count(*), sum(f.qty), count(a.code) FROM fact f LEFT JOIN dim a ON f.code = a.code AND a.month < 9 JOIN dim m ON f.day = m.day WHERE m.month = 5"
	plain := "SELECT count(*), sum(f.qty), count(a.code) FROM fact f LEFT JOIN dim a ON f.code = a.code AND a.month < 9 JOIN dim m ON f.day + 0 = m.day WHERE m.month = 5"
	got, want := run(t, e, sql, nil), run(t, e, plain, nil)
	if g, w := resultText(got), resultText(want); g != w {
		t.Fatalf("%s:\n%s\nwant\n%s", sql, g, w)
	}
	if p := factPruned(t, want); p != 0 {
		t.Errorf("%s: %d row groups pruned", plain, p)
	}
	if p := factPruned(t, got); p == 0 {
		t.Errorf("%s: no row group pruned\n%s", sql, resultText(run(t, e, "EXPLAIN "+sql, nil)))
	}
}
