package lore_test

import (
	"fmt"
	"testing"

	"github.com/loredb/lore"
)

// TestJoinChainsAndUnionsOnEveryWorker runs statements whose joins and aggregates
// take their rows from a chain of joins, a UNION ALL of scans, or both, on four
// workers (each join probing the batches the workers below it make) and on one, and
// requires the same answers.
func TestJoinChainsAndUnionsOnEveryWorker(t *testing.T) {
	dir := events(t, 40_000, 4, 2_000, false)
	create := fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir)
	dims := "WITH s AS (SELECT DISTINCT status, status % 7 AS k FROM ev), c AS (SELECT DISTINCT category, length(category) AS n FROM ev) "
	stmts := []string{
		dims + "SELECT s.k, c.n, count(*), sum(e.user_id) FROM ev e JOIN s ON e.status = s.status JOIN c ON e.category = c.category GROUP BY 1, 2 ORDER BY 1, 2",
		dims + "SELECT count(*), max(c.category) FROM ev e JOIN s ON e.status = s.status JOIN c ON e.category = c.category WHERE s.k > 2 AND c.n > 5",
		dims + "SELECT s.k, count(*) FROM (SELECT status, user_id FROM ev WHERE user_id % 2 = 0 UNION ALL SELECT status, user_id FROM ev WHERE user_id % 3 = 0) u JOIN s ON u.status = s.status GROUP BY 1 ORDER BY 1",
		dims + "SELECT count(*) FROM (SELECT status, category FROM ev UNION ALL SELECT status, category FROM ev UNION ALL SELECT status, 'x' FROM ev) u JOIN s ON u.status = s.status LEFT JOIN c ON u.category = c.category WHERE c.n IS NULL",
		"SELECT status, count(*), sum(user_id) FROM (SELECT status, user_id FROM ev UNION ALL SELECT status + 1, user_id FROM ev WHERE user_id % 5 = 0) u GROUP BY 1 ORDER BY 1",
		dims + "SELECT e.category, s.k FROM ev e JOIN s ON e.status = s.status JOIN c ON e.category = c.category ORDER BY e.user_id, e.ts, 1, 2 LIMIT 20",
	}
	one := open(t, lore.Options{Threads: 1})
	four := open(t, lore.Options{Threads: 4})
	query(t, one, create)
	query(t, four, create)
	for _, q := range stmts {
		want, got := resultText(run(t, one, q, nil)), resultText(run(t, four, q, nil))
		if got != want || want == "" {
			t.Errorf("%s\nfour workers:\n%s\none:\n%s", q, got, want)
		}
	}
}
