package lore_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/loredb/lore"
)

// plusChain returns SELECT 1+1+…+1 with n terms.
func plusChain(n int) string {
	return "SELECT " + strings.TrimSuffix(strings.Repeat("1+", n), "+") + " AS s"
}

// andChain returns n conjuncts col <> i.
func andChain(col string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(" AND ")
		}
		fmt.Fprintf(&b, "%s <> %d", col, i)
	}
	return b.String()
}

func TestLongStatementsPlanInLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("plans statements of tens of thousands of terms")
	}
	dir := events(t, 1000, 1, 1000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	t.Run("plus", func(t *testing.T) {
		if got := cell(query(t, e, plusChain(2900)), 0, 0); got != "2900" {
			t.Errorf("sum of 2900 ones = %s", got)
		}
	})
	t.Run("join", func(t *testing.T) {
		base := "SELECT count(*) FROM ev a JOIN ev b ON a.user_id = b.user_id AND a.ts = b.ts WHERE "
		want := cell(query(t, e, base+"a.user_id IS NOT NULL AND (a.user_id < 1 OR a.user_id > 20000)"), 0, 0)
		got := cell(query(t, e, base+andChain("a.user_id", 20000)), 0, 0)
		if got != want {
			t.Errorf("count with 20,000 conjuncts over a join = %s, want %s", got, want)
		}
	})
	t.Run("and", func(t *testing.T) {
		want := cell(query(t, e, "SELECT count(*) FROM ev WHERE user_id IS NOT NULL AND (user_id < 1 OR user_id > 50000)"), 0, 0)
		if got := cell(query(t, e, "SELECT count(*) FROM ev WHERE "+andChain("user_id", 50000)), 0, 0); got != want {
			t.Errorf("count with 50,000 conjuncts = %s, want %s", got, want)
		}
	})
}

// TestLongStatementsCostLinearMemory checks that a statement twice as long costs
// about twice the memory to parse, bind, plan and run — not four times, as when a
// step copied a chain once per level. Bytes allocated, unlike time, do not depend
// on the load of the machine.
func TestLongStatementsCostLinearMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("plans statements of tens of thousands of terms")
	}
	dir := events(t, 100, 1, 100, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	allocated := func(sql string) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		query(t, e, sql)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	for _, c := range []struct {
		name string
		sql  func(n int) string
		n    int
	}{
		{"plus", plusChain, 1400},
		{"and", func(n int) string { return "SELECT count(*) FROM ev WHERE " + andChain("user_id", n) }, 8000},
		{"or", func(n int) string {
			return "SELECT count(*) FROM ev WHERE " + strings.ReplaceAll(andChain("user_id", n), "AND", "OR")
		}, 8000},
		{"join", func(n int) string {
			return "SELECT count(*) FROM ev a JOIN ev b ON a.user_id = b.user_id WHERE " + andChain("a.user_id", n)
		}, 8000},
		{"explain", func(n int) string { return "EXPLAIN " + plusChain(n) }, 1400},
	} {
		t.Run(c.name, func(t *testing.T) {
			allocated(c.sql(c.n / 2)) // warm the caches
			small, large := allocated(c.sql(c.n)), allocated(c.sql(2*c.n))
			ratio := float64(large) / float64(small)
			t.Logf("%d terms: %d bytes; %d terms: %d bytes (%.2f×)", c.n, small, 2*c.n, large, ratio)
			// A one-row statement of a few thousand terms needs a few kilobytes a
			// term, not a batch-sized array for each constant.
			if perTerm := large / uint64(2*c.n); perTerm > 16<<10 {
				t.Errorf("%d terms allocated %d bytes a term", 2*c.n, perTerm)
			}
			if ratio > 3 {
				t.Errorf("%d terms allocated %d bytes, %d terms %d bytes: %.1f times as much", c.n, small, 2*c.n, large, ratio)
			}
		})
	}
}

// unionChain returns a flat UNION ALL of n one-row queries, numbered from 0.
func unionChain(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("SELECT %d AS x", i)
	}
	return strings.Join(parts, " UNION ALL ")
}

// A flat UNION ALL of thousands of branches is a long list, not a deep statement:
// it parses, binds and runs.
func TestWideUnionAllRuns(t *testing.T) {
	e := open(t, lore.Options{})
	for _, n := range []int{5000, 8000} {
		res := query(t, e, "SELECT count(*), sum(x) FROM ("+unionChain(n)+") t")
		if got, want := cell(res, 0, 0)+" "+cell(res, 0, 1), fmt.Sprintf("%d %d", n, n*(n-1)/2); got != want {
			t.Errorf("%d branches: count and sum %s, want %s", n, got, want)
		}
	}
	if res := query(t, e, unionChain(5000)); res.NumRows() != 5000 {
		t.Errorf("%d rows from 5000 branches", res.NumRows())
	}
}
