package exec

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestKeyFilterHasNoFalseNegatives fills a filter with random keys: every one of them
// passes, NULL never does, and few other keys pass.
func TestKeyFilterHasNoFalseNegatives(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 100, 50_000} {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		in := map[int64]bool{}
		for i := 0; i < n; i++ {
			v := r.Int64N(1 << 40)
			in[v] = true
			b.Append(v)
		}
		keys := b.NewInt64Array()
		words, _ := keyWords(keys, nil)
		f := newFilterOf(words, keys)
		m, ok := f.mask(keys)
		if !ok {
			t.Fatal("int64 keys not read")
		}
		for i := 0; i < n; i++ {
			if !m.Value(i) {
				t.Fatalf("n=%d: build key %d ruled out", n, keys.Value(i))
			}
		}
		pb := array.NewInt64Builder(memory.DefaultAllocator)
		others := 0
		for i := 0; i < 20_000; i++ {
			v := r.Int64N(1 << 40)
			if in[v] {
				continue
			}
			pb.Append(v)
			others++
		}
		pb.AppendNull()
		probe := pb.NewInt64Array()
		pm, _ := f.mask(probe)
		passed := 0
		for i := 0; i < others; i++ {
			if pm.Value(i) {
				passed++
			}
		}
		if pm.Value(others) {
			t.Errorf("n=%d: a NULL key passes", n)
		}
		if rate := float64(passed) / float64(others); rate > 0.05 {
			t.Errorf("n=%d: %.1f%% of absent keys pass", n, 100*rate)
		}
	}
}
