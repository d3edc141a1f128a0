package lore_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/loredb/lore"
)

// Every scan reads through recycled batch buffers: a batch's buffers come back once
// its filters and projections have run, except those under the columns handed on,
// and an aggregate that keeps nothing of its input gives back those too. Results that
// keep batches (a plain SELECT, a sort, a join's build side) must then hold the values
// the files hold. Each case sums, in Go, the rows a query materialised and checks the
// sums against an aggregate of the same rows; a buffer reused under a kept batch
// would change the kept rows and not the aggregate. Filters that keep every row (the
// batch's own buffers handed on), some rows (a selection over them) and few (compacted
// copies), with projections that pass columns through, over many batches, row groups
// and workers.
func TestRecycledScansKeepWhatTheyHandOn(t *testing.T) {
	dir := events(t, 120_000, 3, 20_000, false)
	conds := []string{"status >= 0", "status >= 300", "status = 404 AND user_id % 7 = 1", "amount > 10 OR latency_ms IS NULL"}
	for _, threads := range []int{1, 2} {
		e := open(t, lore.Options{Threads: threads})
		query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
		for _, cond := range conds {
			want := resultText(run(t, e, "SELECT count(*), sum(user_id), sum(status), sum(user_id * 3 + status), count(amount) FROM ev WHERE "+cond, scanned))
			for _, shape := range []string{
				"SELECT user_id, status, user_id * 3 + status AS k, amount FROM ev WHERE %s",
				"SELECT user_id, status, user_id * 3 + status AS k, amount FROM ev WHERE %s ORDER BY ts",
				"SELECT a.user_id, a.status, a.user_id * 3 + a.status AS k, a.amount FROM ev a JOIN (SELECT DISTINCT status FROM ev) s ON a.status = s.status WHERE %s",
			} {
				sql := fmt.Sprintf(shape, strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(cond, "status", "a.status"), "user_id", "a.user_id"), "a.a.", "a."))
				if !strings.Contains(shape, " a ") {
					sql = fmt.Sprintf(shape, cond)
				}
				res := run(t, e, sql, scanned)
				var users, statuses, ks, amounts int64
				for r := 0; r < int(res.NumRows()); r++ {
					users += atoi(t, cell(res, r, 0))
					statuses += atoi(t, cell(res, r, 1))
					ks += atoi(t, cell(res, r, 2))
					if cell(res, r, 3) != "NULL" {
						amounts++
					}
				}
				got := fmt.Sprintf("%d|%d|%d|%d|%d|\n", res.NumRows(), users, statuses, ks, amounts)
				if got != want {
					t.Errorf("threads %d: %s:\nmaterialised rows sum to %s the aggregate says %s", threads, sql, got, want)
				}
			}
		}
	}
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q is not an integer", s)
	}
	return n
}
