package lore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/loredb/lore"
)

// TestWithQueryNamedTwiceIsComputedOnce checks that a WITH query read in two places —
// a join and a scalar subquery, as in TPC-H Q15 — is computed once (one scan in the
// record), gives what writing it out twice gives, and that one read once is put in
// place.
func TestWithQueryNamedTwiceIsComputedOnce(t *testing.T) {
	dir := events(t, 30_000, 2, 5_000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	body := "SELECT status, count(*) AS n, sum(amount) AS total FROM ev WHERE user_id % 3 = 0 GROUP BY status"
	shared := fmt.Sprintf("WITH c AS (%s) SELECT a.status, a.n, b.total FROM c a JOIN c b ON a.status = b.status WHERE a.n >= (SELECT avg(n) FROM c) ORDER BY 1", body)
	written := fmt.Sprintf("SELECT a.status, a.n, b.total FROM (%s) a JOIN (%s) b ON a.status = b.status WHERE a.n >= (SELECT avg(n) FROM (%s) x) ORDER BY 1", body, body, body)
	got, want := run(t, e, shared, nil), run(t, e, written, nil)
	// Float sums add in another order from run to run.
	if g, w := resultText(got), resultText(want); !closeResults(w, g, 1e-9) || got.NumRows() == 0 {
		t.Fatalf("shared:\n%s\nwritten out:\n%s", g, w)
	}
	if n := len(got.Record.Scans); n != 1 {
		t.Errorf("the WITH query named three times was scanned %d times", n)
	}
	if n := len(want.Record.Scans); n != 3 {
		t.Errorf("three subqueries were scanned %d times", n)
	}
	plan := resultText(run(t, e, "EXPLAIN "+shared, nil))
	// EXPLAIN shows the two readers in the join (the subquery's plan is not drawn).
	if strings.Count(plan, "Shared computed once, read 3 times") != 2 {
		t.Errorf("EXPLAIN does not show the shared plan at its readers:\n%s", plan)
	}
	// A WITH query read once, and one read twice from within another, which itself
	// is read once.
	once := "WITH c AS (" + body + ") SELECT max(n) FROM c"
	if plan := resultText(run(t, e, "EXPLAIN "+once, nil)); strings.Contains(plan, "Shared") {
		t.Errorf("a WITH query read once is shared:\n%s", plan)
	}
	nested := "WITH c AS (" + body + "), d AS (SELECT x.status, x.n + y.n AS n2 FROM c x JOIN c y ON x.status = y.status) SELECT sum(n2) FROM d"
	flat := "SELECT sum(x.n + y.n) FROM (" + body + ") x JOIN (" + body + ") y ON x.status = y.status"
	g, w := run(t, e, nested, nil), run(t, e, flat, nil)
	if resultText(g) != resultText(w) || len(g.Record.Scans) != 1 {
		t.Errorf("nested: %s (%d scans), want %s", resultText(g), len(g.Record.Scans), resultText(w))
	}
}

// TestJoinRepeatedBySubqueryIsComputedOnce checks that a join an uncorrelated
// subquery repeats from the rest of the statement, as TPC-H Q11's HAVING does, is
// computed once and read by both, with the answer it has when computed twice; and
// that a join the subquery filters otherwise, or a scan alone, is not shared.
func TestJoinRepeatedBySubqueryIsComputedOnce(t *testing.T) {
	dir := events(t, 30_000, 2, 5_000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	from := " FROM ev a JOIN ev b ON a.ts = b.ts AND a.user_id = b.user_id WHERE b.status = 404"
	threshold := "SELECT sum(b.amount) / 40" + from
	outer := "SELECT a.country, sum(b.amount) AS v, count(*) AS n" + from + " GROUP BY a.country HAVING sum(b.amount) > (%s) ORDER BY v DESC, a.country"
	got := run(t, e, fmt.Sprintf(outer, threshold), nil)
	limit := resultText(run(t, e, threshold, nil))
	limit = strings.Trim(strings.TrimSpace(limit[strings.LastIndexByte(strings.TrimSpace(limit), '\n')+1:]), "|")
	want := run(t, e, fmt.Sprintf(outer, limit), nil)
	if g, w := resultText(got), resultText(want); !closeResults(w, g, 1e-9) || got.NumRows() < 2 || got.NumRows() >= 30 {
		t.Fatalf("shared:\n%s\nwith the threshold written in (%s):\n%s", g, limit, w)
	}
	if n := len(got.Record.Scans); n != 2 {
		t.Errorf("the join repeated by the subquery scanned %d tables, want 2", n)
	}
	plan := resultText(run(t, e, "EXPLAIN "+fmt.Sprintf(outer, threshold), nil))
	if !strings.Contains(plan, "Shared computed once, read 2 times") {
		t.Errorf("EXPLAIN does not show the shared join:\n%s", plan)
	}

	other := fmt.Sprintf(outer, strings.Replace(threshold, "= 404", "= 500", 1))
	if n := len(run(t, e, other, nil).Record.Scans); n != 4 {
		t.Errorf("a subquery joining other rows scanned %d tables, want 4", n)
	}
	alone := "SELECT count(*) FROM ev WHERE amount > (SELECT avg(amount) FROM ev)"
	if n := len(run(t, e, alone, nil).Record.Scans); n != 2 {
		t.Errorf("a scan repeated alone was read %d times, want 2", n)
	}
}

// TestRepeatedJoinTooLargeToHold checks that a join shared because a subquery repeats
// it is computed by each reader, as it would be without the sharing, when its rows
// do not fit the statement's memory limit.
func TestRepeatedJoinTooLargeToHold(t *testing.T) {
	dir := events(t, 60_000, 2, 10_000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	from := " FROM ev a JOIN ev b ON a.ts = b.ts AND a.user_id = b.user_id WHERE b.status <> 404"
	q := "SELECT a.country, count(*) AS n, max(a.category) AS c" + from +
		" GROUP BY a.country HAVING count(*) > (SELECT count(*) / 100" + from + ") ORDER BY n DESC, a.country"
	roomy := run(t, e, q, map[string]string{"result_cache": "false"})
	if n := len(roomy.Record.Scans); n != 2 {
		t.Fatalf("the repeated join scanned %d tables, want 2", n)
	}
	for _, limit := range []string{"4MiB", "3MiB", "2MiB", "1MiB"} {
		tight, err := e.Query(context.Background(), q, map[string]string{"memory_limit": limit, "result_cache": "false"})
		if err != nil {
			t.Logf("memory_limit %s: %v", limit, err)
			continue
		}
		if resultText(tight) != resultText(roomy) {
			t.Fatalf("memory_limit %s:\n%s\nwant\n%s", limit, resultText(tight), resultText(roomy))
		}
		if n := len(tight.Record.Scans); n == 2 {
			t.Logf("memory_limit %s: the join's rows were held", limit)
			continue
		}
		return // computed apart, with the answer it has held
	}
	t.Fatal("no limit made the readers compute the join apart")
}
