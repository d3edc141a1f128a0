package aftergc

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestEachRunsAfterCollectionsUntilFalse: f runs after collection after collection,
// and not again once it has returned false.
func TestEachRunsAfterCollectionsUntilFalse(t *testing.T) {
	var calls atomic.Int32
	Each(func() bool { return calls.Add(1) < 3 })
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("f ran %d times after collections, want 3", calls.Load())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	for range 5 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("f ran %d times, want 3: it returned false at the third", n)
	}
}
