package lore_test

import (
	"fmt"
	"testing"

	"github.com/loredb/lore"
)

// TestAggregatesInParallel checks FILTER, DISTINCT and ORDER BY inside aggregates
// and the aggregates of several inputs over a table of several files and row
// groups, read by one worker and by four: each must give what the same result
// computed without them gives (CASE inside the argument for FILTER, arg_min for
// first under ORDER BY, SELECT DISTINCT below for DISTINCT), whatever the workers' partials and
// the order of their merge.
func TestAggregatesInParallel(t *testing.T) {
	dir := events(t, 40_000, 4, 3_000, false)
	cases := []struct{ got, want string }{
		{"SELECT count(*) FILTER (WHERE status = 200), sum(user_id) FILTER (WHERE flag), count(amount) FILTER (WHERE country <> 'US') FROM ev",
			"SELECT sum(CASE WHEN status = 200 THEN 1 ELSE 0 END), sum(CASE WHEN flag THEN user_id END), count(CASE WHEN country <> 'US' THEN amount END) FROM ev"},
		{"SELECT category, count(*) FILTER (WHERE status >= 400), max(amount) FILTER (WHERE status = 200) FROM ev GROUP BY category ORDER BY category",
			"SELECT category, sum(CASE WHEN status >= 400 THEN 1 ELSE 0 END), max(CASE WHEN status = 200 THEN amount END) FROM ev GROUP BY category ORDER BY category"},
		{"SELECT category, first(user_id ORDER BY ts, user_id), last(user_id ORDER BY ts DESC, user_id DESC) FROM ev GROUP BY category ORDER BY category",
			"SELECT category, arg_min(user_id, ts::VARCHAR || lpad(user_id::VARCHAR, 20, '0')), arg_min(user_id, ts::VARCHAR || lpad(user_id::VARCHAR, 20, '0')) FROM ev GROUP BY category ORDER BY category"},
		{"SELECT country, count(DISTINCT status ORDER BY status), string_agg(DISTINCT category, ',' ORDER BY category) FROM ev GROUP BY country ORDER BY country",
			"SELECT t.country, s.n, t.cats FROM (SELECT country, string_agg(category, ',' ORDER BY category) AS cats FROM (SELECT DISTINCT country, category FROM ev) x GROUP BY country) t " +
				"JOIN (SELECT country, count(*) AS n FROM (SELECT DISTINCT country, status FROM ev) y GROUP BY country) s ON t.country = s.country ORDER BY t.country"},
		{"SELECT count_if(flag), bool_or(status = 503), bit_xor(user_id), regr_count(amount, latency_ms), mode(status) FROM ev",
			"SELECT sum(CASE WHEN flag THEN 1 ELSE 0 END), max(CASE WHEN status = 503 THEN 1 ELSE 0 END) = 1, bit_xor(user_id + 0), count(amount + latency_ms), (SELECT status FROM ev GROUP BY status ORDER BY count(*) DESC LIMIT 1) FROM ev"},
		{"SELECT quantile_disc(user_id, 0.5), median(status), arg_max(user_id, ts), max(user_id) FILTER (WHERE ts = (SELECT max(ts) FROM ev)) FROM ev",
			"SELECT quantile_disc(user_id + 0, 0.5), median(status + 0), max(user_id) FILTER (WHERE ts = (SELECT max(ts) FROM ev)), max(user_id) FILTER (WHERE ts = (SELECT max(ts) FROM ev)) FROM ev"},
	}
	results := map[string]string{}
	for _, threads := range []int{1, 4} {
		e := open(t, lore.Options{Threads: threads})
		query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
		for _, c := range cases {
			got, want := resultText(run(t, e, c.got, nil)), resultText(run(t, e, c.want, nil))
			if got != want {
				t.Errorf("threads %d: %s:\n%s\nwant (%s)\n%s", threads, c.got, got, c.want, want)
			}
			if prev, ok := results[c.got]; ok && prev != got {
				t.Errorf("%s: threads %d gives\n%s\none thread gave\n%s", c.got, threads, got, prev)
			}
			results[c.got] = got
		}
	}
}
