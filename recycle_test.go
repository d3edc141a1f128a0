package lore_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"

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
				"SELECT a.user_id, a.status, a.user_id * 3 + a.status AS k, a.amount FROM ev a LEFT JOIN (SELECT DISTINCT status FROM ev WHERE status > 0) s ON a.status = s.status WHERE %s",
				"SELECT a.user_id, a.status, a.user_id * 3 + a.status AS k, a.amount FROM ev a WHERE a.status IN (SELECT status FROM ev) AND %s",
				"SELECT a.user_id, a.status, a.user_id * 3 + a.status AS k, a.amount FROM ev a WHERE a.status IN (SELECT DISTINCT status FROM ev WHERE status > 0) AND %s",
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

// An aggregate over joins its workers probe gives back all of the scan's buffers
// once a batch is folded in, its filters' selections among them: the joins hand on
// what they make of it at once. Its
// results equal those of the same aggregates beside one that keeps its input (an
// extreme of strings), which keeps the buffers with their batches: inner and semi
// joins, with a residual, by one and by several workers.
func TestRecycledScansUnderJoinsAggregateAsFreshOnes(t *testing.T) {
	dir := events(t, 120_000, 3, 20_000, false)
	queries := []string{
		"SELECT a.status, count(*), sum(a.user_id), min(a.latency_ms), max(a.ts)%s FROM ev a JOIN (SELECT DISTINCT status FROM ev WHERE status > 200) s ON a.status = s.status GROUP BY a.status",
		"SELECT a.user_id %% 50 AS g, count(*), count(a.amount), sum(a.status), max(a.amount)%s FROM ev a WHERE a.status IN (SELECT status FROM ev WHERE user_id %% 5 = 1 AND status < 500) GROUP BY g",
		"SELECT count(*), sum(a.user_id), max(a.amount)%s FROM ev a JOIN (SELECT DISTINCT status FROM ev) s ON a.status = s.status AND a.user_id %% 3 <> s.status %% 3",
		// Filters alone: selections of a comparison with a constant, of a mask, and
		// the two one after the other.
		"SELECT a.status, count(*), sum(a.user_id), min(a.ts)%s FROM ev a WHERE a.amount > 10 AND a.user_id %% 3 = 1 AND a.status < 500 GROUP BY a.status",
		// Computed keys and arguments, whose values the workers' scratch lends, with a
		// subquery among them (its plan keeps what it computes). Sums of integers:
		// float sums differ in their last digits with the order of the rows.
		"SELECT a.user_id %% 7 * 2 AS g, sum(a.user_id * 2 + a.status * 3), min(a.latency_ms * 2 - 1), avg(a.user_id * 3 - a.status), max(a.amount / 3), sum(a.user_id * (SELECT max(status) FROM ev) - a.status // 7)%s FROM ev a WHERE a.status * 2 > 300 GROUP BY g",
	}
	for _, threads := range []int{1, 2} {
		e := open(t, lore.Options{Threads: threads})
		query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
		for _, q := range queries {
			recycled := resultText(run(t, e, fmt.Sprintf(q, ""), scanned))
			fresh := resultText(run(t, e, fmt.Sprintf(q, ", max(a.country) AS c"), scanned))
			if strings.Count(recycled, "\n") < 1 {
				t.Fatalf("%s: no rows", q)
			}
			if got, want := withoutLastColumn(fresh)+"\n", recycled; sortedLines(got) != sortedLines(want) {
				t.Errorf("threads %d: %s:\nrecycled\n%s\nfresh\n%s", threads, q, want, got)
			}
		}
	}
}

// withoutLastColumn drops the last cell of every line of resultText's text.
func withoutLastColumn(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		l = strings.TrimSuffix(l, "|")
		if k := strings.LastIndexByte(l, '|'); k >= 0 {
			lines[i] = l[:k+1]
		}
	}
	return strings.Join(lines, "\n")
}

// Strings stored as plain values (no dictionary) are read into recycled buffers too:
// a column a filter drops comes back for the next batch while the string columns
// handed on keep their bytes. Every string's text follows from its row's id, so each
// row a query returns can be checked on its own: rows a filter kept, sorted rows,
// string groups and their extremes, a join's build side, by one and by two workers.
func TestRecycledStringScansKeepTheirBytes(t *testing.T) {
	const rows = 60_000
	text := func(id int64) string { return fmt.Sprintf("s%d-%s", id, strings.Repeat("x", int(id%41))) }
	tag := func(id int64) string { return fmt.Sprintf("t%d", id*7919%1000) }
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "t", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := range int64(rows) {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append(text(i))
		if i%13 == 0 {
			b.Field(2).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(tag(i))
		}
	}
	path := filepath.Join(t.TempDir(), "strings.parquet")
	writeRecord(t, path, b, pq.NewWriterProperties(pq.WithMaxRowGroupLength(7_000), pq.WithDataPageSize(4096),
		pq.WithDictionaryDefault(false)))
	check := func(t *testing.T, sql string, res *lore.Result, idCol, sCol int) {
		t.Helper()
		if res.NumRows() == 0 {
			t.Fatalf("%s: no rows", sql)
		}
		for r := 0; r < int(res.NumRows()); r++ {
			id := atoi(t, cell(res, r, idCol))
			if got, want := cell(res, r, sCol), text(id); got != want {
				t.Fatalf("%s: row %d (id %d) holds %q, want %q", sql, r, id, got, want)
			}
		}
	}
	for _, threads := range []int{1, 2} {
		e := open(t, lore.Options{Threads: threads})
		query(t, e, fmt.Sprintf("CREATE TABLE st WITH (location = '%s', format = 'parquet')", path))
		for _, sql := range []string{
			"SELECT id, s FROM st WHERE t LIKE '%7%'",
			"SELECT id, s FROM st WHERE t LIKE '%3_' AND id % 3 = 0 ORDER BY s DESC",
			"SELECT min(id), s FROM st WHERE t IS NULL OR t > 't5' GROUP BY s",
			"SELECT b.id, b.s FROM st a JOIN st b ON a.s = b.s WHERE a.t LIKE '%99%'",
		} {
			check(t, sql, run(t, e, sql, scanned), 0, 1)
		}
		// Extremes of strings per group, against the same computed here.
		res := run(t, e, "SELECT id % 10 AS g, min(s), max(s), count(t) FROM st WHERE t NOT LIKE '%0%' GROUP BY g ORDER BY g", scanned)
		var want strings.Builder
		for g := range int64(10) {
			var lo, hi string
			n := 0
			for id := g; id < rows; id += 10 {
				if id%13 == 0 || strings.Contains(tag(id), "0") {
					continue
				}
				if s := text(id); n == 0 || s < lo {
					lo = s
				}
				if s := text(id); s > hi {
					hi = s
				}
				n++
			}
			if n > 0 {
				fmt.Fprintf(&want, "%d|%s|%s|%d|\n", g, lo, hi, n)
			}
		}
		if got := resultText(res); got != want.String() {
			t.Errorf("threads %d: extremes per group:\n%s\nwant\n%s", threads, got, want.String())
		}
	}
}
