package exec

import (
	"context"
	"errors"
	goslices "slices"
	"testing"
)

// An interrupted computation returns its context's error, and a panic of its own
// keeps unwinding with its own value.
func TestInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	it := &interrupt{ctx: ctx}
	steps := 0
	err := it.run(func() {
		for {
			steps++
			if steps == 3*checkEvery {
				cancel()
			}
			it.tick()
		}
	})
	if !errors.Is(err, context.Canceled) || steps != 3*checkEvery {
		t.Fatalf("stopped after %d steps with %v", steps, err)
	}

	it = &interrupt{ctx: context.Background()}
	v := []int{3, 1, 2}
	if err := it.run(func() { goslices.SortFunc(v, func(a, b int) int { it.tick(); return a - b }) }); err != nil || !goslices.IsSorted(v) {
		t.Fatalf("an uncanceled sort: %v %v", v, err)
	}
	defer func() {
		if p := recover(); p != "own" {
			t.Fatalf("recovered %v, want the computation's own panic", p)
		}
	}()
	it.run(func() { panic("own") })
}
