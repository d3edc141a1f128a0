package lore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loredb/lore"
)

// A correlated EXISTS that is a conjunct of WHERE stays a semi join; one inside OR
// is decorrelated: the subquery runs once over the distinct outer values it reads
// and is joined back on them, NULL matching NULL. Both agree with the same question
// asked without correlation.
func TestCorrelatedSubqueryPlans(t *testing.T) {
	dir := events(t, 5000, 1, 1000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))

	semi := "SELECT count(*) FROM ev a WHERE EXISTS (SELECT 1 FROM ev b WHERE b.user_id = a.user_id AND b.amount > 100)"
	plan := explain(t, e, semi, nil)
	if !strings.Contains(plan, "Join semi") || strings.Contains(plan, "IS NOT DISTINCT FROM") {
		t.Errorf("a correlated EXISTS conjunct is not a semi join:\n%s", plan)
	}

	or := "SELECT count(*) FROM ev a WHERE a.amount < 10 OR EXISTS (SELECT 1 FROM ev b WHERE b.user_id = a.user_id AND b.amount > 100)"
	plan = explain(t, e, or, nil)
	for _, want := range []string{"IS NOT DISTINCT FROM", "Distinct", "Shared computed once"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the decorrelated EXISTS inside OR has no %q:\n%s", want, plan)
		}
	}
	plain := "SELECT count(*) FROM ev a WHERE a.amount < 10 OR a.user_id IN (SELECT user_id FROM ev WHERE amount > 100)"
	if got, want := cell(query(t, e, or), 0, 0), cell(query(t, e, plain), 0, 0); got != want || got == "0" {
		t.Errorf("EXISTS inside OR counts %s, the uncorrelated form %s", got, want)
	}

	// A plain conjunct filters the rows before they are shared with the subquery.
	filtered := "SELECT count(*) FROM ev a WHERE (a.amount < 10 OR EXISTS (SELECT 1 FROM ev b WHERE b.user_id = a.user_id AND b.amount > 100)) AND a.category = 'books'"
	plan = explain(t, e, filtered, nil)
	if _, after, ok := strings.Cut(plan, "Shared computed once"); !ok || !strings.Contains(strings.SplitN(after, "\n", 3)[1], "Filter") {
		t.Errorf("the rows shared with the decorrelated subquery are not filtered first:\n%s", plan)
	}

	// A scalar subquery with a non-equality correlation, per outer row.
	scalar := "SELECT sum(c) FROM (SELECT (SELECT count(*) FROM ev b WHERE b.user_id < a.user_id AND b.amount > 100) AS c FROM (SELECT DISTINCT user_id FROM ev WHERE user_id < 50) a) x"
	join := "SELECT count(*) FROM (SELECT DISTINCT user_id FROM ev WHERE user_id < 50) a, ev b WHERE b.user_id < a.user_id AND b.amount > 100"
	if got, want := cell(query(t, e, scalar), 0, 0), cell(query(t, e, join), 0, 0); got != want || got == "0" {
		t.Errorf("the correlated scalar subquery sums to %s, the join counts %s", got, want)
	}
}
