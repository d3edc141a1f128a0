package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestHashColumnsEncodings checks that equal keys hash equal whatever their encoding
// (plain or dictionary), batch and selection, and that distinct keys rarely collide.
func TestHashColumnsEncodings(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, dt := range ktTestTypes {
		t.Run(dt.String(), func(t *testing.T) {
			types := []arrow.DataType{dt, ktTestTypes[rng.IntN(len(ktTestTypes))]}
			seen := map[string]uint64{}
			hashOf := map[uint64]string{}
			collisions := 0
			for b := 0; b < 6; b++ {
				const n = 200
				vals := [][]any{ktRandValues(rng, types[0], n, 0.1), ktRandValues(rng, types[1], n, 0.1)}
				for _, oneCol := range []bool{true, false} {
					cols := make([]arrow.Array, len(types))
					for j := range types {
						if b%2 == 0 {
							cols[j] = ktBuildDict(rng, types[j], vals[j])
						} else {
							cols[j] = ktBuild(types[j], vals[j])
						}
					}
					keyVals := vals
					if oneCol {
						cols, keyVals = cols[:1], vals[:1]
					}
					sel := ktRandSel(rng, n)
					m := n
					if sel != nil {
						m = len(sel)
					}
					out := make([]uint64, m)
					HashColumns(cols, sel, out)
					for k, h := range out {
						row := k
						if sel != nil {
							row = int(sel[k])
						}
						key := ktRowKey(keyVals, row)
						if prev, ok := seen[key]; ok && prev != h {
							t.Fatalf("key %s hashed %x and %x", key, prev, h)
						}
						seen[key] = h
						if other, ok := hashOf[h]; ok && other != key {
							collisions++
						}
						hashOf[h] = key
					}
				}
			}
			if collisions > 0 {
				t.Fatalf("%d hash collisions among %d keys", collisions, len(seen))
			}
		})
	}
}

// TestHashStringLengths hashes strings of every length up to 40 that differ in one
// byte: each must hash differently (the tail handling reads every byte).
func TestHashStringLengths(t *testing.T) {
	seen := map[uint64]string{}
	for n := 0; n <= 40; n++ {
		base := make([]byte, n)
		for i := range base {
			base[i] = 'x'
		}
		variants := []string{string(base)}
		for i := 0; i < n; i++ {
			v := append([]byte(nil), base...)
			v[i] = 'y'
			variants = append(variants, string(v))
		}
		for _, s := range variants {
			h := hashString(s)
			if prev, ok := seen[h]; ok && prev != s {
				t.Fatalf("%q and %q hash alike", prev, s)
			}
			seen[h] = s
		}
	}
}
