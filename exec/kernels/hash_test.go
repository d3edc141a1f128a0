package kernels

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
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

// TestHashColumnsLargeDictionary hashes a batch whose dictionary is far larger than the
// batch (rows are hashed one by one, not entries) against the same values plain.
func TestHashColumnsLargeDictionary(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, dt := range []arrow.DataType{arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64} {
		entries := ktRandValues(rng, dt, 2000, 0.01)
		dict := ktBuild(dt, entries)
		idx := make([]int32, 50)
		vals := make([]any, len(idx))
		for i := range idx {
			idx[i] = int32(rng.IntN(len(entries)))
			vals[i] = entries[idx[i]]
		}
		ib := array.NewInt32Builder(memory.DefaultAllocator)
		ib.AppendValues(idx, nil)
		dictArr := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: dt}, ib.NewArray(), dict)
		plain := ktBuild(dt, vals)
		sel := []int32{1, 4, 9, 16, 25, 36, 49}
		got, want := make([]uint64, len(sel)), make([]uint64, len(sel))
		HashColumns([]arrow.Array{dictArr}, sel, got)
		HashColumns([]arrow.Array{plain}, sel, want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: dictionary hashes %x, plain %x", dt, got, want)
		}
	}
}
