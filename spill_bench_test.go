package lore_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore"
)

// discardSink drops a streamed result.
type discardSink struct{ rows int64 }

func (d *discardSink) Schema(*arrow.Schema) error { return nil }
func (d *discardSink) Batch(r arrow.Record) error {
	d.rows += r.NumRows()
	return nil
}

// benchSpill times stmt over 2M events rows in memory and under a 16 MiB budget
// (which spills), reporting the bytes spilled.
func benchSpill(b *testing.B, stmt string) {
	e, _ := spillEngine(b, 2_000_000, lore.Options{})
	for _, c := range []struct{ name, limit string }{{"memory", ""}, {"spill16MiB", "16MiB"}} {
		b.Run(c.name, func(b *testing.B) {
			settings := map[string]string{"result_cache": "false"}
			if c.limit != "" {
				settings["memory_limit"] = c.limit
			}
			var spilled int64
			for b.Loop() {
				rec, err := e.QueryStream(context.Background(), stmt, settings, &discardSink{})
				if err != nil {
					b.Fatal(err)
				}
				spilled = rec.Execution.SpilledBytes
			}
			b.ReportMetric(float64(spilled), "spilled-bytes")
		})
	}
}

// BenchmarkSortSpill: ORDER BY of 2M rows of six columns.
func BenchmarkSortSpill(b *testing.B) {
	benchSpill(b, "SELECT ts, user_id, category, amount, country, status FROM events ORDER BY category, amount NULLS FIRST, ts")
}

// BenchmarkGroupBySpill: GROUP BY of 2M rows into about 2M groups.
func BenchmarkGroupBySpill(b *testing.B) {
	benchSpill(b, "SELECT ts, user_id, count(*), sum(amount), min(country) FROM events GROUP BY ts, user_id")
}

// BenchmarkJoinSpill: a join of 2M rows with a build side of 2M rows.
func BenchmarkJoinSpill(b *testing.B) {
	benchSpill(b, "SELECT a.user_id, a.amount, b.category FROM events a JOIN events b ON a.ts = b.ts AND a.user_id = b.user_id AND a.status = b.status")
}
