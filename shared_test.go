package lore_test

import (
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
