package lore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loredb/lore"
)

// An aggregate whose groups a join above asks for only some of (a correlated
// subquery decorrelated into a join with an aggregate, TPC-H Q2, Q17 and Q20) narrows
// the scan under it by the join's build keys, through the joins on the way: the
// scan's row filter drops the rows of the other groups before their other columns
// are decoded. Each query's answer equals that of the same query with a LIMIT that
// hides the aggregate from the join (and so reads every group), and the scan under
// the aggregate admits fewer rows than it examines.
func TestAggregateUnderJoinNarrowsItsScan(t *testing.T) {
	dir := events(t, 120_000, 3, 20_000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	// The outer keys are constants, so that the only scans examining rows are under
	// the aggregate: users, and latencies (NULL among them).
	var users, latencies []string
	res := run(t, e, "SELECT DISTINCT user_id FROM ev WHERE user_id % 97 = 3 ORDER BY 1 LIMIT 40", scanned)
	for r := 0; r < int(res.NumRows()); r++ {
		users = append(users, "("+cell(res, r, 0)+")")
	}
	res = run(t, e, "SELECT latency_ms FROM ev WHERE user_id % 89 = 5 ORDER BY ts LIMIT 30", scanned)
	for r := 0; r < int(res.NumRows()); r++ {
		latencies = append(latencies, "("+cell(res, r, 0)+")")
	}
	latencies = append(latencies, "(NULL)")
	wanted := "(VALUES " + strings.Join(users, ", ") + ")"
	queries := []string{
		// The aggregate joined directly.
		"SELECT w.u, g.n, g.total FROM " + wanted + " w(u) JOIN (SELECT user_id, count(*) AS n, sum(status) AS total FROM ev GROUP BY user_id %s) g ON g.user_id = w.u",
		// A correlated subquery.
		"SELECT w.u FROM " + wanted + " w(u) WHERE (SELECT sum(e.status) FROM (SELECT * FROM ev %[1]s) e WHERE e.user_id = w.u) > 1000",
		// Through an inner join under the aggregate.
		"SELECT w.u, g.n, g.s FROM " + wanted + " w(u) JOIN (SELECT a.user_id, count(*) AS n, max(a.ts) AS s FROM ev a JOIN (SELECT DISTINCT status FROM ev) s ON a.status = s.status GROUP BY a.user_id %s) g ON g.user_id = w.u",
		// The key from the missing side of an outer join: rows dropped there would
		// come back NULL. (The scan is the join's build side, which is not narrowed.)
		"SELECT w.u, g.n FROM " + wanted + " w(u) JOIN (SELECT b.user_id, count(*) AS n FROM (VALUES (200), (404), (999)) s(st) LEFT JOIN ev b ON b.status = s.st GROUP BY b.user_id %s) g ON g.user_id = w.u",
		// Two keys, one of them a group.
		"SELECT w.u, g.n FROM " + wanted + " w(u) JOIN (SELECT user_id, min(status) AS m, count(*) AS n FROM ev GROUP BY user_id %s) g ON g.user_id = w.u AND g.m = 200",
		// NULL among the outer keys of correlated subqueries, and keys equal when NULL.
		"SELECT w.u, (SELECT count(*) FROM (SELECT * FROM ev %[1]s) e WHERE e.latency_ms = w.u) FROM (VALUES " + strings.Join(latencies, ", ") + ") w(u)",
		"SELECT w.u, g.n FROM (VALUES " + strings.Join(latencies, ", ") + ") w(u) JOIN (SELECT latency_ms, count(*) AS n FROM ev GROUP BY latency_ms %s) g ON g.latency_ms IS NOT DISTINCT FROM w.u",
	}
	for _, threads := range []int{1, 2} {
		e := open(t, lore.Options{Threads: threads})
		query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
		settings := map[string]string{"use_statistics": "false", "result_cache": "false", "late_materialisation": "always"}
		for i, q := range queries {
			sql, ref := fmt.Sprintf(q, ""), fmt.Sprintf(q, "LIMIT 1000000000")
			got := run(t, e, sql, settings)
			want := run(t, e, ref, settings)
			if g, w := sortedLines(resultText(got)), sortedLines(resultText(want)); g != w {
				t.Errorf("threads %d: %s:\n%s\nwithout narrowing:\n%s", threads, sql, g, w)
			}
			if strings.Count(resultText(want), "\n") == 0 {
				t.Errorf("%s: no rows", ref)
			}
			narrowed := false
			for _, s := range got.Record.Scans {
				narrowed = narrowed || s.RowFilterRowsAdmitted*10 < s.RowFilterRowsExamined && s.RowFilterRowsExamined >= 100_000
			}
			if i != 3 && i < 5 && !narrowed {
				t.Errorf("threads %d: query %d: no scan under the aggregate was narrowed: %+v", threads, i, got.Record.Scans)
			}
		}
	}
}
