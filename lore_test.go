package lore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/types"
)

// events writes a small events table and returns its directory.
func events(t *testing.T, rows int64, files, rowGroup int, clustered bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "events")
	opts := gen.EventsOptions{Rows: rows, Files: files, Out: dir, Seed: 7, RowGroupRows: rowGroup}
	if clustered {
		opts.ClusteredBy = "ts"
	}
	if err := gen.Events(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	return dir
}

func open(t *testing.T, opts lore.Options) *lore.Engine {
	t.Helper()
	if opts.Home == "" {
		opts.Home = t.TempDir()
	}
	e, err := lore.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func query(t *testing.T, e *lore.Engine, sql string) *lore.Result {
	t.Helper()
	res, err := e.Query(context.Background(), sql, nil)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return res
}

// cell renders row r, column c of a result.
func cell(res *lore.Result, r, c int) string {
	for _, b := range res.Batches {
		if r < int(b.NumRows()) {
			return types.ValueAt(b.Column(c), r).String()
		}
		r -= int(b.NumRows())
	}
	return "<no row>"
}

func TestRecordOfAScan(t *testing.T) {
	dir := events(t, 20_000, 2, 4_000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE events WITH (location = '%s', format = 'parquet')", dir))
	res := query(t, e, "SELECT count(*), count(amount) FROM events")
	if got := cell(res, 0, 0); got != "20000" {
		t.Fatalf("count(*) = %s, want 20000", got)
	}
	rec := res.Record
	if rec.State != "finished" || rec.Execution.Mode != "scan" || rec.Rows != 1 || rec.ID == "" {
		t.Fatalf("record: %+v", rec)
	}
	if len(rec.Scans) != 1 {
		t.Fatalf("want one scan, got %+v", rec.Scans)
	}
	s := rec.Scans[0]
	if s.Table != "events" || s.FilesOpened != 2 || s.RowGroupsConsidered != 6 || s.RowGroupsRead != 6 ||
		s.RowsScanned != 20_000 || s.CompressedBytesRead <= 0 {
		t.Fatalf("scan counters: %+v", s)
	}
	// The record is in the query log, as JSON.
	entry, err := e.Catalog().Query(context.Background(), rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	var logged lore.Record
	if err := json.Unmarshal(entry.Record, &logged); err != nil {
		t.Fatal(err)
	}
	if logged.ID != rec.ID || logged.Execution.Mode != "scan" || logged.Scans[0].RowsScanned != 20_000 {
		t.Fatalf("logged record differs: %+v", logged)
	}
}

func TestRowGroupPruningIsCountedAndCorrect(t *testing.T) {
	dir := events(t, 40_000, 4, 2_000, true)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	all := query(t, e, "SELECT count(*) FROM ev WHERE ts >= TIMESTAMP '2024-03-01' AND ts IS NOT NULL")
	// The same count computed without a prunable predicate.
	ref := query(t, e, "SELECT sum(CASE WHEN ts >= TIMESTAMP '2024-03-01' THEN 1 ELSE 0 END) FROM ev")
	if cell(all, 0, 0) != cell(ref, 0, 0) {
		t.Fatalf("pruned count %s, full count %s", cell(all, 0, 0), cell(ref, 0, 0))
	}
	s := all.Record.Scans[0]
	if s.RowGroupsPruned == 0 || s.RowGroupsRead+s.RowGroupsPruned != s.RowGroupsConsidered {
		t.Fatalf("clustered data should prune row groups: %+v", s)
	}
	if full := ref.Record.Scans[0]; full.RowGroupsPruned != 0 || full.RowGroupsRead != 20 {
		t.Fatalf("unfiltered scan: %+v", full)
	}
}

func TestErrorsCarryCodesPositionsAndRecords(t *testing.T) {
	e := open(t, lore.Options{})
	cases := []struct {
		sql  string
		code errs.Code
		pos  int
	}{
		{"SELECT 1 FRO x", errs.Syntax, 13}, // FRO is an alias: the error is at x
		{"SELECT nosuch FROM (SELECT 1 AS a) t", errs.Analysis, 7},
		{"SELECT * FROM missing_table", errs.TableNotFound, 14},
		{"SELECT 1; SELECT 2", errs.Analysis, 10},
		{"SET SESSION use_statistics = false", errs.InvalidSetting, errs.NoPosition},
		{"SET SESSION bogus = 1; SELECT 1", errs.InvalidSetting, -2},
		{"ANALYZE t", errs.TableNotFound, 0},
		{"SHOW STATS FOR t", errs.TableNotFound, 0},
	}
	for _, c := range cases {
		_, err := e.Query(context.Background(), c.sql, nil)
		if err == nil {
			t.Errorf("%s: no error", c.sql)
			continue
		}
		if got := errs.CodeOf(err); got != c.code {
			t.Errorf("%s: code %s, want %s (%v)", c.sql, got, c.code, err)
		}
		if c.pos != -2 {
			if got := errs.PositionOf(err); got != c.pos {
				t.Errorf("%s: position %d, want %d (%v)", c.sql, got, c.pos, err)
			}
		}
	}
	// Failed statements are logged with their code.
	recent, err := e.Catalog().RecentQueries(context.Background(), 1)
	if err != nil || len(recent) != 1 || recent[0].State != "failed" || recent[0].ErrorCode != string(errs.TableNotFound) {
		t.Fatalf("last logged statement: %+v, %v", recent, err)
	}
	// The caret points at the user's own text.
	_, err = e.Query(context.Background(), "SELECT 1\n\tFROM FROM x", nil)
	if d := errs.Describe(err, "SELECT 1\n\tFROM FROM x"); !strings.Contains(d, "line 2, column 7") || !strings.Contains(d, "\n        \t     ^") {
		t.Fatalf("description:\n%s", d)
	}
}

func TestSettings(t *testing.T) {
	e := open(t, lore.Options{})
	res, err := e.Query(context.Background(), "SET SESSION use_statistics = false; SET SESSION late_materialisation = 'never'; SELECT 42", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.Settings["use_statistics"] != "false" || res.Record.Settings["late_materialisation"] != "never" {
		t.Fatalf("settings: %v", res.Record.Settings)
	}
	if _, err := e.Query(context.Background(), "SELECT 1", map[string]string{"approximate": "maybe"}); errs.CodeOf(err) != errs.InvalidSetting {
		t.Fatalf("bad value: %v", err)
	}
	if _, err := e.Query(context.Background(), "SELECT 1", map[string]string{"result_cache": "false"}); err != nil {
		t.Fatal(err)
	}
}

func TestCancellation(t *testing.T) {
	dir := events(t, 50_000, 2, 5_000, false)
	e := open(t, lore.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.Query(ctx, fmt.Sprintf("SELECT count(*) FROM '%s'", dir), nil)
	if errs.CodeOf(err) != errs.Canceled {
		t.Fatalf("want CANCELED, got %v", err)
	}
}

func TestMemoryBudget(t *testing.T) {
	dir := events(t, 200_000, 2, 50_000, false)
	e := open(t, lore.Options{MemoryLimit: 2 << 20})
	_, err := e.Query(context.Background(), fmt.Sprintf("SELECT user_id, ts, count(*) FROM '%s' GROUP BY user_id, ts", dir), nil)
	if !errors.Is(err, errs.ErrResourceExhausted) {
		t.Fatalf("want RESOURCE_EXHAUSTED, got %v", err)
	}
	// The engine keeps working and its budget was given back.
	res := query(t, e, fmt.Sprintf("SELECT count(*) FROM '%s'", dir))
	if cell(res, 0, 0) != "200000" {
		t.Fatalf("count after failure: %s", cell(res, 0, 0))
	}
}

func TestConcurrentQueries(t *testing.T) {
	dir := events(t, 30_000, 3, 5_000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	want := cell(query(t, e, "SELECT count(*), sum(status) FROM ev WHERE category = 'cat_01'"), 0, 1)
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.Query(context.Background(), "SELECT count(*), sum(status) FROM ev WHERE category = 'cat_01'", nil)
			if err != nil {
				errc <- err
				return
			}
			if got := cell(res, 0, 1); got != want {
				errc <- fmt.Errorf("sum %s, want %s", got, want)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

// The hash join builds on the input with fewer rows (from the footers), whichever
// side of the join it is written on.
func TestJoinBuildsOnTheSmallerInput(t *testing.T) {
	big := events(t, 20_000, 2, 5_000, false)
	small := events(t, 50, 1, 50, false)
	e := open(t, lore.Options{})
	plans := map[string]bool{
		fmt.Sprintf("EXPLAIN SELECT count(*) FROM '%s' s JOIN '%s' b ON s.user_id = b.user_id", small, big): true,
		fmt.Sprintf("EXPLAIN SELECT count(*) FROM '%s' b JOIN '%s' s ON s.user_id = b.user_id", big, small): false,
	}
	for sql, buildLeft := range plans {
		res := query(t, e, sql)
		var text strings.Builder
		for i := 0; i < int(res.NumRows()); i++ {
			text.WriteString(cell(res, i, 0) + "\n")
		}
		if got := strings.Contains(text.String(), "build=left"); got != buildLeft {
			t.Errorf("%s: build=left is %v, want %v\n%s", sql, got, buildLeft, text.String())
		}
	}
}

// ORDER BY … LIMIT keeps only candidate rows as it reads (a top-N with a dynamic
// filter); it must return exactly the first rows of the full sort.
func TestTopNMatchesFullSort(t *testing.T) {
	dir := events(t, 60_000, 3, 7_000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	orders := []string{
		"amount DESC, ts, user_id",
		"amount ASC NULLS FIRST, ts, user_id",
		"latency_ms DESC NULLS FIRST, ts, user_id",
		"status, category DESC, ts, user_id",
		"flag, ts DESC, user_id",
	}
	for _, o := range orders {
		for _, limit := range []int{1, 10, 1000} {
			full := query(t, e, "SELECT ts, user_id, amount, status FROM ev ORDER BY "+o)
			top := query(t, e, fmt.Sprintf("SELECT ts, user_id, amount, status FROM ev ORDER BY %s LIMIT %d", o, limit))
			if top.NumRows() != int64(limit) {
				t.Fatalf("%s LIMIT %d: %d rows", o, limit, top.NumRows())
			}
			for r := 0; r < limit; r++ {
				for c := 0; c < 4; c++ {
					if a, b := cell(top, r, c), cell(full, r, c); a != b {
						t.Fatalf("ORDER BY %s LIMIT %d: row %d column %d is %s, the full sort has %s", o, limit, r, c, a, b)
					}
				}
			}
		}
	}
}

// A condition every branch of an OR repeats is taken out of the OR and becomes a
// hash-join key, and single-table conditions move below the join.
func TestOrFactoringMakesAHashJoin(t *testing.T) {
	e := open(t, lore.Options{})
	res := query(t, e, "EXPLAIN SELECT p.id FROM 'tests/testdata/people.parquet' p, 'tests/testdata/orders.parquet' o "+
		"WHERE (p.id = o.person_id AND o.amount > 100) OR (p.id = o.person_id AND p.city = 'Paris')")
	var plan strings.Builder
	for i := 0; i < int(res.NumRows()); i++ {
		plan.WriteString(cell(res, i, 0) + "\n")
	}
	if !strings.Contains(plan.String(), "Join inner keys=[id = person_id]") {
		t.Fatalf("want a hash join on id = person_id:\n%s", plan.String())
	}
}

// APPROX_* aggregates computed over the rows carry the same labels a statistics
// answer would; approximate = true computes a plain COUNT(DISTINCT) with the sketch
// and names COUNT in the label.
func TestApproximateAggregatesAreLabelled(t *testing.T) {
	dir := events(t, 100_000, 2, 20_000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	exact := query(t, e, "SELECT count(DISTINCT user_id) FROM ev")
	if exact.Record.Execution.Approximate != nil {
		t.Fatalf("an exact count is labelled: %+v", exact.Record.Execution.Approximate)
	}
	want := parseFloat(t, cell(exact, 0, 0))
	res := query(t, e, "SELECT approx_count_distinct(user_id), approx_percentile(latency_ms, 0.5), approx_percentile(latency_ms, ARRAY[0.1, 0.9]) FROM ev")
	if got := parseFloat(t, cell(res, 0, 0)); got < want*(1-4*0.01625) || got > want*(1+4*0.01625) {
		t.Fatalf("approx_count_distinct %v, exact %v", got, want)
	}
	labels := res.Record.Execution.Approximate
	if len(labels) != 3 || labels[0].Function != "APPROX_COUNT_DISTINCT" || labels[0].Argument != "user_id" ||
		labels[0].Sketch != "hyperloglog p=12" || labels[0].ErrorKind != "relative_standard_error" ||
		labels[1].Function != "APPROX_PERCENTILE" || labels[1].Sketch != "kll k=200" || labels[1].Error != 0.0165 {
		t.Fatalf("labels: %+v", labels)
	}
	// An estimate inside a WITH plan read twice, or inside a recursive query's anchor,
	// is labelled too.
	for _, sql := range []string{
		"WITH s AS (SELECT category, approx_count_distinct(user_id) AS u FROM ev GROUP BY category) SELECT x.category, x.u, y.u FROM s x JOIN s y ON x.category = y.category",
		"WITH RECURSIVE r(n, u) AS (SELECT 1, approx_count_distinct(user_id) FROM ev UNION ALL SELECT n + 1, u FROM r WHERE n < 3) SELECT * FROM r",
	} {
		res := query(t, e, sql)
		if l := res.Record.Execution.Approximate; len(l) != 1 || l[0].Function != "APPROX_COUNT_DISTINCT" {
			t.Fatalf("%s: labels %+v", sql, l)
		}
	}
	set, err := e.Query(context.Background(), "SET SESSION approximate = true; SELECT count(DISTINCT user_id) AS users FROM ev", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := parseFloat(t, cell(set, 0, 0)); set.Schema.Field(0).Name != "users" || got < want*(1-4*0.01625) || got > want*(1+4*0.01625) {
		t.Fatalf("approximate count %v (%s), exact %v", got, set.Schema.Field(0).Name, want)
	}
	if l := set.Record.Execution.Approximate; len(l) != 1 || l[0].Function != "COUNT" {
		t.Fatalf("approximate = true label: %+v", l)
	}
}

func parseFloat(t *testing.T, s string) float64 {
	t.Helper()
	var f float64
	if _, err := fmt.Sscan(s, &f); err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return f
}

// A statement canceled while it runs inside a blocking operator (a large nested-loop
// join) stops with CANCELED.
func TestCancelInsideAJoin(t *testing.T) {
	dir := events(t, 20_000, 1, 20_000, false)
	e := open(t, lore.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.Query(ctx, fmt.Sprintf("SELECT count(*) FROM '%s' a, '%s' b WHERE a.amount < b.amount", dir, dir), nil)
	if errs.CodeOf(err) != errs.Canceled {
		t.Fatalf("want CANCELED, got %v", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("cancellation took %v", waited)
	}
}

// A comma join written so that its first two tables share no condition is
// reordered: no cross product is formed while a condition connects another table.
func TestCommaJoinsAvoidCrossProducts(t *testing.T) {
	e := open(t, lore.Options{})
	sql := "SELECT p.name, i.product FROM 'tests/testdata/people.parquet' p, 'tests/testdata/items.parquet' i, 'tests/testdata/orders.parquet' o " +
		"WHERE p.id = o.person_id AND o.order_id = i.order_id AND p.age > 20"
	res := query(t, e, "EXPLAIN "+sql)
	var plan strings.Builder
	for i := 0; i < int(res.NumRows()); i++ {
		plan.WriteString(cell(res, i, 0) + "\n")
	}
	if strings.Contains(plan.String(), "Join cross") || strings.Count(plan.String(), "Join inner keys=[") != 2 {
		t.Fatalf("want two hash joins and no cross product:\n%s", plan.String())
	}
	// The answer is the one the written order gives.
	got := query(t, e, sql+" ORDER BY 1, 2")
	want := query(t, e, "SELECT p.name, i.product FROM 'tests/testdata/people.parquet' p JOIN 'tests/testdata/orders.parquet' o ON p.id = o.person_id "+
		"JOIN 'tests/testdata/items.parquet' i ON o.order_id = i.order_id WHERE p.age > 20 ORDER BY 1, 2")
	if got.NumRows() == 0 || got.NumRows() != want.NumRows() {
		t.Fatalf("%d rows, want %d", got.NumRows(), want.NumRows())
	}
	for r := 0; r < int(got.NumRows()); r++ {
		if cell(got, r, 0) != cell(want, r, 0) || cell(got, r, 1) != cell(want, r, 1) {
			t.Fatalf("row %d differs", r)
		}
	}
}

// A filtered input that hangs off a smaller input joins it first, and the bigger
// tree the result (Q11: partsupp meets Germany's suppliers, not all suppliers); an
// input bigger than the tree (Q21's lineitem after Saudi Arabia's suppliers) is
// joined to the tree before its own satellites; equalities imply others (Q5).
func TestFilteredSatellitesJoinTheirInputFirst(t *testing.T) {
	dir := t.TempDir()
	if err := gen.TPCH(context.Background(), gen.TPCHOptions{SF: 0.01, Out: dir}); err != nil {
		t.Fatal(err)
	}
	e := open(t, lore.Options{})
	for _, tbl := range []string{"partsupp", "supplier", "nation", "lineitem", "orders", "customer", "region"} {
		query(t, e, fmt.Sprintf("CREATE TABLE %s WITH (location = '%s', format = 'parquet')", tbl, filepath.Join(dir, tbl)))
	}
	depth := func(plan, line string) int {
		for _, l := range strings.Split(plan, "\n") {
			if strings.Contains(l, line) {
				return len(l) - len(strings.TrimLeft(l, " "))
			}
		}
		t.Fatalf("no %q in\n%s", line, plan)
		return 0
	}
	q11 := "SELECT ps_partkey, sum(ps_supplycost * ps_availqty) FROM partsupp, supplier, nation " +
		"WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = 'GERMANY' GROUP BY ps_partkey"
	p := explain(t, e, q11, nil)
	// supplier ⋈ nation sits beside the partsupp scan, under the join with it.
	if top, inner, scan := depth(p, "keys=[ps_suppkey = s_suppkey]"), depth(p, "keys=[s_nationkey = n_nationkey]"), depth(p, "Scan partsupp"); inner != scan || inner <= top {
		t.Errorf("Q11: supplier and nation are not joined beside partsupp:\n%s", p)
	}
	q21 := "SELECT count(*) FROM supplier, lineitem, orders, nation WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey " +
		"AND o_orderstatus = 'F' AND s_nationkey = n_nationkey AND n_name = 'SAUDI ARABIA'"
	p = explain(t, e, q21, nil)
	if lo, sl := depth(p, "keys=[l_orderkey = o_orderkey]"), depth(p, "keys=[s_suppkey = l_suppkey]"); lo >= sl {
		t.Errorf("Q21: lineitem joins orders before the suppliers:\n%s", p)
	}
	// Q5: c_nationkey = s_nationkey and s_nationkey = n_nationkey imply
	// c_nationkey = n_nationkey, so Asia's nations reach customer before orders do.
	q5 := "SELECT n_name, sum(l_extendedprice * (1 - l_discount)) FROM customer, orders, lineitem, supplier, nation, region " +
		"WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey AND c_nationkey = s_nationkey " +
		"AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'ASIA' GROUP BY n_name"
	p = explain(t, e, q5, nil)
	if cn, co := depth(p, "keys=[c_nationkey = n_nationkey]"), depth(p, "keys=[c_custkey = o_custkey]"); cn <= co {
		t.Errorf("Q5: customer does not meet Asia's nations first:\n%s", p)
	}
	// Q7: the second nation, tied to the first by an OR, still goes along with
	// customer: France's and Germany's customers meet the orders, not all of them.
	q7 := "SELECT n1.n_name, n2.n_name, sum(l_extendedprice) FROM supplier, lineitem, orders, customer, nation n1, nation n2 " +
		"WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND c_custkey = o_custkey AND s_nationkey = n1.n_nationkey " +
		"AND c_nationkey = n2.n_nationkey AND ((n1.n_name = 'FRANCE' AND n2.n_name = 'GERMANY') OR (n1.n_name = 'GERMANY' AND n2.n_name = 'FRANCE')) " +
		"GROUP BY 1, 2"
	p7 := explain(t, e, q7, nil)
	if cn, co := depth(p7, "keys=[c_nationkey = n_nationkey]"), depth(p7, "keys=[o_custkey = c_custkey]"); cn <= co {
		t.Errorf("Q7: customer does not meet the second nation first:\n%s", p7)
	}
	// s_nationkey = n_nationkey holds once c_nationkey equals both: no join tests it.
	if strings.Contains(p, "n_nationkey = s_nationkey") || strings.Contains(p, "s_nationkey = n_nationkey") {
		t.Errorf("Q5: a join tests an equality that already holds:\n%s", p)
	}
	// The answers are those of the order written with JOIN … ON in a derived table
	// the planner keeps apart.
	for _, c := range []struct{ got, want string }{
		{q5 + " ORDER BY 1", "SELECT n_name, sum(l_extendedprice * (1 - l_discount)) FROM (SELECT * FROM customer LIMIT 100000000) c " +
			"JOIN (SELECT * FROM orders LIMIT 100000000) o ON c_custkey = o_custkey JOIN (SELECT * FROM lineitem LIMIT 100000000) l ON l_orderkey = o_orderkey " +
			"JOIN (SELECT * FROM supplier LIMIT 100000000) s ON l_suppkey = s_suppkey AND c_nationkey = s_nationkey " +
			"JOIN (SELECT * FROM nation LIMIT 100) n ON s_nationkey = n_nationkey JOIN region ON n_regionkey = r_regionkey WHERE r_name = 'ASIA' GROUP BY n_name ORDER BY 1"},
		{q11 + " ORDER BY 1", "SELECT ps_partkey, sum(ps_supplycost * ps_availqty) FROM (SELECT * FROM partsupp LIMIT 100000000) ps " +
			"JOIN (SELECT * FROM supplier LIMIT 100000000) s ON ps_suppkey = s_suppkey JOIN nation ON s_nationkey = n_nationkey " +
			"WHERE n_name = 'GERMANY' GROUP BY ps_partkey ORDER BY 1"},
		{q7 + " ORDER BY 1, 2", "SELECT n1.n_name, n2.n_name, sum(l_extendedprice) FROM (SELECT * FROM supplier LIMIT 100000000) s " +
			"JOIN (SELECT * FROM lineitem LIMIT 100000000) l ON s_suppkey = l_suppkey JOIN (SELECT * FROM orders LIMIT 100000000) o ON o_orderkey = l_orderkey " +
			"JOIN (SELECT * FROM customer LIMIT 100000000) c ON c_custkey = o_custkey JOIN (SELECT * FROM nation LIMIT 100) n1 ON s_nationkey = n1.n_nationkey " +
			"JOIN nation n2 ON c_nationkey = n2.n_nationkey WHERE (n1.n_name = 'FRANCE' AND n2.n_name = 'GERMANY') OR (n1.n_name = 'GERMANY' AND n2.n_name = 'FRANCE') " +
			"GROUP BY 1, 2 ORDER BY 1, 2"},
		{q21, "SELECT count(*) FROM (SELECT * FROM supplier LIMIT 100000000) s JOIN (SELECT * FROM lineitem LIMIT 100000000) l ON s_suppkey = l_suppkey " +
			"JOIN orders ON o_orderkey = l_orderkey JOIN nation ON s_nationkey = n_nationkey WHERE o_orderstatus = 'F' AND n_name = 'SAUDI ARABIA'"},
	} {
		got, want := run(t, e, c.got, nil), run(t, e, c.want, nil)
		if g, w := resultText(got), resultText(want); g != w || got.NumRows() == 0 {
			t.Errorf("%s:\n%s\nwant\n%s", c.got, g, w)
		}
	}
}
