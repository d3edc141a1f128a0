package lore

import (
	"context"
	"testing"
	"time"
)

// BenchmarkAdmission is what admission adds to a statement that reads data: one
// acquire and release of a slot, uncontended and with every goroutine competing for
// fewer slots than there are of them.
func BenchmarkAdmission(b *testing.B) {
	ctx := context.Background()
	b.Run("uncontended", func(b *testing.B) {
		a := newAdmission(1, 64)
		b.ReportAllocs()
		for b.Loop() {
			_, release, err := a.acquire(ctx, func(time.Duration) {})
			if err != nil {
				b.Fatal(err)
			}
			release()
		}
	})
	b.Run("contended,slots=2", func(b *testing.B) {
		a := newAdmission(2, 1<<20)
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_, release, err := a.acquire(ctx, func(time.Duration) {})
				if err != nil {
					b.Error(err)
					return
				}
				release()
			}
		})
	})
}
