package lore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loredb/lore"
)

// An aggregate over a scan that keeps nothing of its input reads through recycled
// batch buffers. Its results equal those of the same aggregates computed beside one
// that does keep its input (an extreme of strings), which turns recycling off:
// grouped and not, by one and by several workers, over many row groups and batches.
func TestRecycledScansAggregateAsFreshOnes(t *testing.T) {
	dir := events(t, 120_000, 3, 20_000, false)
	queries := []string{
		"SELECT status, count(*), sum(user_id), min(amount), max(latency_ms), round(avg(amount), 6), count(amount)%s FROM ev GROUP BY status",
		"SELECT user_id %% 1000 AS g, round(sum(latency_ms), 6), max(amount), min(ts)%s FROM ev WHERE status >= 300 GROUP BY g",
		"SELECT count(*), sum(user_id), min(latency_ms), max(ts)%s FROM ev WHERE amount > 10",
	}
	for _, threads := range []int{1, 2} {
		e := open(t, lore.Options{Threads: threads})
		query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
		for _, q := range queries {
			recycled := resultText(run(t, e, fmt.Sprintf(q, ""), nil))
			fresh := resultText(run(t, e, fmt.Sprintf(q, ", max(country) AS c"), nil))
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
