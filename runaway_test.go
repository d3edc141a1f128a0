package lore_test

import (
	"fmt"
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
