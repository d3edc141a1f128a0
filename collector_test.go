package lore

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestCollectorPacingTarget(t *testing.T) {
	p := &collectorPacing{percent: 400, floor: pacingFloor, headroom: 64 << 20}
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 400},
		{1 << 20, 400},
		{16 << 20, 400}, // 64 MiB of growth: the headroom exactly
		{32 << 20, 200}, // the headroom is half the live heap
		{100 << 20, 64},
		{200 << 20, 35}, // 32 % would mark 200 MiB for every 64 MiB allocated: the floor
		{1 << 30, 35},
	} {
		if got := p.target(c.live); got != c.want {
			t.Errorf("live %d MiB: target %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// TestCollectorPacingFollowsCollections checks that the policy runs after
// collections: with a live heap far beyond the headroom, the target drops.
func TestCollectorPacingFollowsCollections(t *testing.T) {
	p := newPacing(400, 1<<20)
	previous := debug.SetGCPercent(400)
	defer func() {
		p.stopped.Store(true)
		debug.SetGCPercent(previous)
	}()
	p.arm()
	hold := make([]*[1 << 16]byte, 64) // 4 MiB live: beyond 1 MiB of headroom at 400
	for i := range hold {
		hold[i] = new([1 << 16]byte)
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.last.Load() == 400 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond) // the finalizer runs on its own goroutine
	}
	runtime.KeepAlive(hold)
	if got := p.last.Load(); got == 400 {
		t.Fatalf("the target stayed %d after collections with a live heap of 4 MiB", got)
	}
}
