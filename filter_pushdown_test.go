package lore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loredb/lore"
)

// TestFiltersGoBelowProjectionsAggregatesAndSharedPlans checks that a condition
// written over a derived table reaches the scan — through the projection that makes
// its columns, the aggregate whose group keys it reads, both inputs of a UNION ALL,
// and, as the OR of its readers' conditions, a WITH query computed once for several
// readers — and that the answers are those of the conditions written at the scan.
func TestFiltersGoBelowProjectionsAggregatesAndSharedPlans(t *testing.T) {
	dir := events(t, 20_000, 2, 2_000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	body := "SELECT status, category, count(*) AS n, sum(user_id) AS s FROM ev GROUP BY status, category"
	cases := []struct {
		name, sql, want string
		// EXPLAIN must show below (the condition) under above (the derived table).
		above, below string
	}{
		{"group key", "SELECT * FROM (" + body + ") t WHERE status = 404 AND n > 0 ORDER BY 1, 2",
			"SELECT status, category, count(*), sum(user_id) FROM ev WHERE status = 404 GROUP BY status, category HAVING count(*) > 0 ORDER BY 1, 2",
			"Aggregate groups=", "status = 404"},
		{"implied by an OR", "SELECT * FROM (" + body + ") t WHERE (status = 404 AND n > 10) OR (status = 200 AND s > 0) ORDER BY 1, 2",
			"SELECT status, category, count(*), sum(user_id) FROM ev WHERE status IN (404, 200) GROUP BY status, category HAVING (status = 404 AND count(*) > 10) OR (status = 200 AND sum(user_id) > 0) ORDER BY 1, 2",
			"Aggregate groups=", "status IN (404"},
		{"computed column", "SELECT * FROM (SELECT user_id % 7 AS r, category FROM ev) t WHERE r = 3 ORDER BY 1, 2 LIMIT 5",
			"SELECT user_id % 7, category FROM ev WHERE user_id % 7 = 3 ORDER BY 1, 2 LIMIT 5",
			"Project (user_id % 7", "= 3::BIGINT"},
		{"union", "SELECT count(*) FROM (SELECT status FROM ev UNION ALL SELECT status + 1 FROM ev) t WHERE status = 301",
			"SELECT (SELECT count(*) FROM ev WHERE status = 301) + (SELECT count(*) FROM ev WHERE status + 1 = 301)",
			"SetOp union", "= 301::INTEGER)"},
		{"shared", "WITH c AS (" + body + ") SELECT a.category, a.n, b.n FROM c a JOIN c b ON a.category = b.category WHERE a.status = 200 AND b.status = 404 ORDER BY 1",
			"SELECT a.category, a.n, b.n FROM (" + body + ") a JOIN (" + body + ") b ON a.category = b.category WHERE a.status = 200 AND b.status = 404 ORDER BY 1",
			"Shared", "or((status = 200"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, want := run(t, e, c.sql, nil), run(t, e, c.want, nil)
			if g, w := resultText(got), resultText(want); g != w || got.NumRows() == 0 {
				t.Fatalf("got\n%s\nwant\n%s", g, w)
			}
			plan := resultText(run(t, e, "EXPLAIN "+c.sql, nil))
			top := strings.Index(plan, c.above)
			if at := strings.LastIndex(plan, c.below); top < 0 || at < top {
				t.Errorf("the condition (%q) does not go below the derived table:\n%s", c.below, plan)
			}
		})
	}
}

// TestNullRejectingFiltersSimplifyOuterJoins: a comparison above a LEFT JOIN on its
// right input's column makes it an inner join (whose filter then goes down to that
// input); IS NULL and COALESCE, which hold on the rows it adds, leave it a LEFT JOIN.
func TestNullRejectingFiltersSimplifyOuterJoins(t *testing.T) {
	dir := events(t, 5_000, 1, 1_000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	from := "SELECT count(*) FROM ev a LEFT JOIN (SELECT DISTINCT status FROM ev WHERE status < 400) b ON a.status = b.status WHERE "
	for cond, kind := range map[string]string{
		"b.status > 200":                  "Join inner",
		"CAST(b.status AS BIGINT) = 404":  "Join inner",
		"b.status IS NOT NULL":            "Join inner",
		"b.status IS NULL":                "Join left",
		"coalesce(b.status, 0) = 0":       "Join left",
		"b.status = 200 OR a.user_id > 5": "Join left",
	} {
		plan := resultText(run(t, e, "EXPLAIN "+from+cond, nil))
		if !strings.Contains(plan, kind) {
			t.Errorf("WHERE %s: no %q in\n%s", cond, kind, plan)
		}
	}
}
