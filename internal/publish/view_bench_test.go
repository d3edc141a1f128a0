package publish

import (
	"context"
	"testing"
)

// What View adds to a listing read from disk: a location no rewrite touched (two
// failed stats), and one an OPTIMIZE rewrote (open, flock, read the staging root).
func BenchmarkView(b *testing.B) {
	nothing := func() error { return nil }
	b.Run("never-rewritten", func(b *testing.B) {
		loc := b.TempDir()
		for b.Loop() {
			if err := View(context.Background(), loc, nothing, nothing); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rewritten", func(b *testing.B) {
		loc := b.TempDir()
		l, err := Acquire(loc)
		if err != nil {
			b.Fatal(err)
		}
		l.Release()
		for b.Loop() {
			if err := View(context.Background(), loc, nothing, nothing); err != nil {
				b.Fatal(err)
			}
		}
	})
}
