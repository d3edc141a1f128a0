package profile_test

import (
	"context"
	"testing"
	"time"

	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/stats/profile"
	"github.com/loredb/lore/storage"
)

// BenchmarkFull profiles the generated events table (2M rows, 8 columns of every
// kind, two files of row groups of 256K rows) with two workers, and reports values
// (rows × columns) profiled per second of wall time and per second of CPU time (on a
// shared machine the second is the steadier; on idle cores wall ≈ CPU / workers).
func BenchmarkFull(b *testing.B) {
	const rows = 2_000_000
	dir := b.TempDir()
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: rows, Files: 2, Out: dir, Seed: 1, RowGroupRows: 256 << 10}); err != nil {
		b.Fatal(err)
	}
	l, _ := metadataRecord(b, dir)
	values := float64(rows * len(l.Schema.Fields()))
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	for range b.N {
		b.StopTimer()
		l, rec := metadataRecord(b, dir)
		b.StartTimer()
		start := cpuTime()
		if err := profile.Full(context.Background(), storage.Local{}, l, rec, profile.Options{Threads: 2}); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - start
	}
	b.ReportMetric(values*float64(b.N)/b.Elapsed().Seconds(), "values/s")
	if cpu > 0 {
		b.ReportMetric(values*float64(b.N)/cpu.Seconds(), "values/cpu-s")
	}
}
