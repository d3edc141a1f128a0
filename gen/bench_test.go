package gen

import (
	"context"
	"testing"
)

func BenchmarkEvents(b *testing.B) {
	b.ReportAllocs()
	dir := b.TempDir()
	for b.Loop() {
		if err := Events(context.Background(), EventsOptions{Rows: 1_000_000, Files: 1, Out: dir, Seed: 1, ClusteredBy: "ts"}); err != nil {
			b.Fatal(err)
		}
	}
}
