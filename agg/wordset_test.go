package agg

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// A wordSet holds each word added once, in ascending order, however the adds fall
// around its settling.
func TestWordSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, tc := range []struct {
		name string
		word func() uint64
		n    int
	}{
		{"few", func() uint64 { return uint64(rng.IntN(5)) }, 100},
		{"packed pairs", func() uint64 { return uint64(rng.IntN(3000))<<32 | uint64(rng.IntN(50_000)) }, 200_000},
		{"high bytes only", func() uint64 { return uint64(rng.IntN(300)) << 52 }, 50_000},
		{"any", func() uint64 { return rng.Uint64() }, 3 * wordSetSlack},
		{"repeats", func() uint64 { return uint64(rng.IntN(40_000)) }, 300_000},
	} {
		var s wordSet
		want := map[uint64]bool{}
		for added := 0; added < tc.n; {
			batch := make([]uint64, 1+rng.IntN(3000))
			added += len(batch)
			for i := range batch {
				batch[i] = tc.word()
				want[batch[i]] = true
			}
			s.add(batch)
			if len(s.words) > 2*len(want)+2*wordSetSlack+len(batch) {
				t.Fatalf("%s: %d words held for %d distinct", tc.name, len(s.words), len(want))
			}
		}
		got := s.distinct()
		if !slices.IsSorted(got) || len(got) != len(want) {
			t.Fatalf("%s: %d words, sorted %v, want %d", tc.name, len(got), slices.IsSorted(got), len(want))
		}
		for i, w := range got {
			if !want[w] || (i > 0 && got[i-1] == w) {
				t.Fatalf("%s: word %d (%x) is not one added once", tc.name, i, w)
			}
		}
	}
}
