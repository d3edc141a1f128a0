package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/exec/kernels"
)

// keyColumns makes the columns of n random keys of the given kind (the last row
// NULL in every column): int64, int32, dates, strings, strings as a dictionary, or
// an (int32, string) pair. present marks the keys made.
func keyColumns(t *testing.T, r *rand.Rand, kind string, n int, present map[string]bool) []arrow.Array {
	t.Helper()
	mem := memory.DefaultAllocator
	i64, i32 := array.NewInt64Builder(mem), array.NewInt32Builder(mem)
	d32, str := array.NewDate32Builder(mem), array.NewStringBuilder(mem)
	dict := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	for i := 0; i <= n; i++ {
		v := r.Int64N(1 << 40)
		s := fmt.Sprintf("key-%d", v)
		if i == n {
			i64.AppendNull()
			i32.AppendNull()
			d32.AppendNull()
			str.AppendNull()
			dict.AppendNull()
			continue
		}
		i64.Append(v)
		i32.Append(int32(v))
		d32.Append(arrow.Date32(int32(v)))
		str.Append(s)
		if err := dict.AppendString(s); err != nil {
			t.Fatal(err)
		}
		switch kind {
		case "int64":
			present[fmt.Sprint(v)] = true
		case "int32", "date":
			present[fmt.Sprint(int32(v))] = true
		case "string", "dictionary":
			present[s] = true
		case "pair":
			present[fmt.Sprint(int32(v), s)] = true
		}
	}
	switch kind {
	case "int64":
		return []arrow.Array{i64.NewArray()}
	case "int32":
		return []arrow.Array{i32.NewArray()}
	case "date":
		return []arrow.Array{d32.NewArray()}
	case "string":
		return []arrow.Array{str.NewArray()}
	case "dictionary":
		return []arrow.Array{dict.NewArray()}
	}
	return []arrow.Array{i32.NewArray(), str.NewArray()}
}

// TestKeyFilterHasNoFalseNegatives fills a filter with random keys of each type the
// filter takes, composite keys too: every one of them passes, NULL never does, and
// few other keys pass.
func TestKeyFilterHasNoFalseNegatives(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, kind := range []string{"int64", "int32", "date", "string", "dictionary", "pair"} {
		for _, n := range []int{0, 1, 100, 50_000} {
			present := map[string]bool{}
			keys := keyColumns(t, r, kind, n, present)
			valid := make([]int32, n)
			for i := range valid {
				valid[i] = int32(i)
			}
			hashes := make([]uint64, n)
			kernels.HashColumns(keys, valid, hashes)
			f := newFilterOf(hashes)
			m := passing(t, f, keys, nil, n+1)
			for i := 0; i < n; i++ {
				if !m[int32(i)] {
					t.Fatalf("%s n=%d: build key %d ruled out", kind, n, i)
				}
			}
			if m[int32(n)] {
				t.Errorf("%s n=%d: a NULL key passes", kind, n)
			}
			// Under a selection only the selected rows are tested and kept.
			var odd []int32
			for i := 1; i <= n; i += 2 {
				odd = append(odd, int32(i))
			}
			for row := range passing(t, newFilterOf(hashes), keys, odd, n+1) {
				if row%2 == 0 || row == int32(n) {
					t.Fatalf("%s n=%d: row %d passes a selection of the odd non-NULL rows", kind, n, row)
				}
			}
			// Other keys: a fresh filter, so that the first one's count of rows kept
			// does not switch it off.
			f = newFilterOf(hashes)
			others := keyColumns(t, r, kind, 20_000, map[string]bool{})
			passed := len(passing(t, f, others, nil, 20_000))
			if rate := float64(passed) / 20_000; rate > 0.05 {
				t.Errorf("%s n=%d: %.1f%% of absent keys pass", kind, n, 100*rate)
			}
		}
	}
}

// A filter that keeps nearly every row of its first rows stops testing; one that
// drops most goes on.
func TestKeyFilterStopsWhenItKeepsEverything(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	keys := keyColumns(t, r, "int64", 10_000, map[string]bool{})
	valid := make([]int32, 10_000)
	for i := range valid {
		valid[i] = int32(i)
	}
	hashes := make([]uint64, len(valid))
	kernels.HashColumns(keys, valid, hashes)
	useful, useless := newFilterOf(hashes), newFilterOf(hashes)
	for range 2 * filterTrial / 10_000 {
		if _, ok := useless.selectRows(keys, nil, 10_000, nil); !ok {
			break
		}
		if _, ok := useful.selectRows(keyColumns(t, r, "int64", 10_000, map[string]bool{}), nil, 10_000, nil); !ok {
			t.Fatal("a filter that drops most rows stopped testing")
		}
	}
	if _, ok := useless.selectRows(keys, nil, 10_000, nil); ok {
		t.Error("a filter that keeps every row still tests")
	}
}

// The range of keys is the least and the greatest of the rows selected, of each
// ordered type, a dictionary's from its entries.
func TestKeyRange(t *testing.T) {
	mem := memory.DefaultAllocator
	ib := array.NewInt32Builder(mem)
	ib.AppendValues([]int32{5, -3, 9, 100, 7}, nil)
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"m", "b", "z", "a", "q"}, nil)
	db := array.NewDate32Builder(mem)
	db.AppendValues([]arrow.Date32{10957, 10000, 11000, 9000, 10500}, nil)
	sel := []int32{0, 1, 2, 4} // not row 3
	for _, c := range []struct {
		arr    arrow.Array
		lo, hi string
	}{
		{ib.NewArray(), "-3", "9"},
		{sb.NewArray(), "b", "z"},
		{db.NewArray(), "1997-05-19", "2000-02-13"},
	} {
		lo, hi, ok := keyRange(c.arr, sel)
		if !ok || lo.String() != c.lo || hi.String() != c.hi {
			t.Errorf("%s: range %v..%v (%v), want %s..%s", c.arr.DataType(), lo, hi, ok, c.lo, c.hi)
		}
	}
	fb := array.NewFloat64Builder(mem)
	fb.AppendValues([]float64{1, 2}, nil)
	if _, _, ok := keyRange(fb.NewArray(), []int32{0, 1}); ok {
		t.Error("a range of floats (NaN has no place in it)")
	}
}

// passing is the set of rows of keys (rows in all, or the rows sel) that filter f
// passes; it fails the test when f does not test them.
func passing(t *testing.T, f *keyFilter, keys []arrow.Array, sel []int32, rows int) map[int32]bool {
	t.Helper()
	out, ok := f.selectRows(keys, sel, rows, nil)
	if !ok {
		t.Fatal("keys not tested")
	}
	m := map[int32]bool{}
	for i, r := range out {
		if i > 0 && out[i-1] >= r {
			t.Fatalf("rows out of order: %v", out)
		}
		m[r] = true
	}
	return m
}

// A key of one integer column whose values span a narrow range gets a range filter,
// which passes exactly the keys it holds, for signed values below zero and unsigned
// ones above the signed range too; NULL rows and rows outside the selection never
// pass, and keys too spread out for one get a Bloom filter.
func TestRangeFilterIsExact(t *testing.T) {
	mem := memory.DefaultAllocator
	r := rand.New(rand.NewPCG(5, 6))
	build := func(base int64, width int64, n int) (arrow.Array, arrow.Array, arrow.Array, map[int64]bool) {
		in := map[int64]bool{}
		i64, u64, d32 := array.NewInt64Builder(mem), array.NewUint64Builder(mem), array.NewDate32Builder(mem)
		for range n {
			v := base + r.Int64N(width)
			in[v] = true
			i64.Append(v)
			u64.Append(uint64(v) + 1<<63)
			d32.Append(arrow.Date32(v))
		}
		return i64.NewArray(), u64.NewArray(), d32.NewArray(), in
	}
	for _, base := range []int64{-5000, 0, 1 << 20} {
		bi, bu, bd, in := build(base, 20_000, 3_000)
		valid := make([]int32, bi.Len())
		for i := range valid {
			valid[i] = int32(i)
		}
		// Probe rows: every value from below the range to above it, and a NULL.
		pi, pu, pd := array.NewInt64Builder(mem), array.NewUint64Builder(mem), array.NewDate32Builder(mem)
		for v := base - 100; v < base+20_100; v++ {
			pi.Append(v)
			pu.Append(uint64(v) + 1<<63)
			pd.Append(arrow.Date32(v))
		}
		pi.AppendNull()
		pu.AppendNull()
		pd.AppendNull()
		probes := []arrow.Array{pi.NewArray(), pu.NewArray(), pd.NewArray()}
		for k, keys := range []arrow.Array{bi, bu, bd} {
			f := newRangeFilter([]arrow.Array{keys}, valid)
			if f == nil || f.span == 0 {
				t.Fatalf("base %d, column %d: no range filter for keys spanning 20,000 values", base, k)
			}
			if len(f.words) > rangeFilterGrowth*filterWords(len(valid)) {
				t.Errorf("base %d, column %d: a range filter of %d words, past %d times a Bloom filter's %d", base, k, len(f.words), rangeFilterGrowth, filterWords(len(valid)))
			}
			n := probes[k].Len()
			passed := passing(t, f, []arrow.Array{probes[k]}, nil, n)
			for row := 0; row < n-1; row++ {
				if v := base - 100 + int64(row); passed[int32(row)] != in[v] {
					t.Fatalf("base %d, column %d: value %d passes %v, is a key %v", base, k, v, passed[int32(row)], in[v])
				}
			}
			if passed[int32(n-1)] {
				t.Errorf("base %d, column %d: a NULL key passes", base, k)
			}
			var even []int32
			for i := 0; i < n; i += 2 {
				even = append(even, int32(i))
			}
			for row := range passing(t, f, []arrow.Array{probes[k]}, even, n) {
				if row%2 != 0 {
					t.Fatalf("base %d, column %d: row %d passes a selection of the even rows", base, k, row)
				}
			}
		}
	}
	// Keys spread over a range far wider than 64 bits per key's filter word.
	wide, _, _, _ := build(0, 1<<40, 3_000)
	valid := make([]int32, wide.Len())
	for i := range valid {
		valid[i] = int32(i)
	}
	if f := newRangeFilter([]arrow.Array{wide}, valid); f != nil {
		t.Errorf("a range filter of %d words for keys spanning 2^40 values", len(f.words))
	}
}
