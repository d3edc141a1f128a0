package stats

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// hllOfInts is the sketch of the n distinct BIGINTs base, base+1, …, hashed by the
// real hash, as ANALYZE would see a key column.
func hllOfInts(base int64, n int) *HLL {
	h := NewHLL()
	var buf [1024]uint64
	for i := 0; i < n; {
		m := min(len(buf), n-i)
		for j := range m {
			buf[j] = hash8(uint64(base + int64(i+j)))
		}
		h.AddHashes(buf[:m])
		i += m
	}
	return h
}

func TestHLLAccuracy(t *testing.T) {
	runs := 200
	if testing.Short() {
		runs = 40
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 10, 100, 1000, 10000, 100000, 1000000} {
		var sumSq, worst float64
		maxOff := 0.0
		for range runs {
			est := hllOfInts(r.Int64(), n).Estimate()
			rel := (est - float64(n)) / float64(n)
			sumSq += rel * rel
			worst = max(worst, math.Abs(rel))
			maxOff = max(maxOff, math.Abs(math.Round(est)-float64(n)))
		}
		rms := math.Sqrt(sumSq / float64(runs))
		t.Logf("n=%-8d runs=%d rms relative error %.5f (bound %.5f), worst %.5f, worst |round(est)-n| %.0f",
			n, runs, rms, HLLRelativeError, worst, maxOff)
		// The RMS of `runs` samples has a relative sampling error of about 1/√(2·runs):
		// 5 % at 200 runs, where 1.2 × the bound is 4 of those; fewer runs get as many.
		tol := max(1.2, 1+4/math.Sqrt(2*float64(runs)))
		if rms > HLLRelativeError*tol {
			t.Errorf("n=%d: rms relative error %.5f above %.2f × %.5f", n, rms, tol, HLLRelativeError)
		}
		// Below about 1,000 the error is discrete: a pair of values sharing a
		// register counts once, and n values are expected to have n(n−1)/8192 such
		// pairs (0.01 at n = 10, 1.2 at n = 100). There the bound is on the rounded
		// estimate: one value exact, at most 4 off up to 100.
		switch {
		case n == 1 && maxOff != 0:
			t.Errorf("n=1: a rounded estimate was off by %.0f", maxOff)
		case n <= 100 && maxOff > 4:
			t.Errorf("n=%d: a rounded estimate was off by %.0f, want at most 4", n, maxOff)
		case n >= 1000 && worst > 5*HLLRelativeError:
			t.Errorf("n=%d: a run was off by %.5f, beyond 5 standard errors", n, worst)
		}
	}
}

func TestHLLEmptyAndDuplicates(t *testing.T) {
	h := NewHLL()
	if h.Estimate() != 0 || !h.Empty() {
		t.Fatalf("empty sketch estimates %v", h.Estimate())
	}
	// Duplicates do not count: 1,000 values each added 50 times.
	for range 50 {
		for i := range 1000 {
			h.AddHash(HashValue(types.IntValue(int64(i))))
		}
	}
	if est := h.Estimate(); math.Abs(est-1000) > 5*HLLRelativeError*1000 {
		t.Fatalf("1,000 distinct values added 50 times each estimate as %.1f", est)
	}
	// Saturated registers: the estimator stays finite and very large.
	for i := range HLLRegisters {
		h.AddHash(uint64(i) << hllQ)
	}
	if est := h.Estimate(); est != 1<<64 {
		t.Fatalf("saturated sketch estimates %v", est)
	}
}

func TestHLLMergeIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{0, 1, 50, 5000, 300000} {
		vals := make([]uint64, n)
		for i := range vals {
			vals[i] = HashValue(types.IntValue(r.Int64N(int64(n)/2 + 1))) // duplicates across parts
		}
		whole := NewHLL()
		whole.AddHashes(vals)
		// Split into 7 uneven parts, merged in a shuffled order.
		parts := make([]*HLL, 7)
		for i := range parts {
			parts[i] = NewHLL()
		}
		for _, v := range vals {
			parts[r.IntN(len(parts))].AddHash(v)
		}
		r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		merged := NewHLL()
		for _, p := range parts {
			merged.Merge(p)
		}
		a, _ := whole.MarshalBinary()
		b, _ := merged.MarshalBinary()
		if !bytes.Equal(a, b) {
			t.Fatalf("n=%d: merge of parts differs from the sketch of the whole", n)
		}
		// Merging is idempotent: folding a part in again changes nothing.
		merged.Merge(parts[0])
		if c, _ := merged.MarshalBinary(); !bytes.Equal(a, c) {
			t.Fatalf("n=%d: merging a part twice changed the sketch", n)
		}
	}
}

func TestHLLMarshalRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{0, 3, 1000, 200000} {
		h := NewHLL()
		for range n {
			h.AddHash(r.Uint64())
		}
		// Reach every register value, including the maximum, to exercise the packing.
		for i := 0; i < HLLRegisters; i += 97 {
			h.AddHash(uint64(i)<<hllQ | 1<<(hllQ-1-i%hllQ))
		}
		h.AddHash(7 << hllQ)
		b, err := h.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != 3074 || b[0] != 1 || b[1] != 12 {
			t.Fatalf("encoding is %d bytes starting % x, want 3074 bytes starting 01 0c", len(b), b[:2])
		}
		got := NewHLL()
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if *got.reg != *h.reg {
			t.Fatalf("n=%d: registers differ after a round trip", n)
		}
		if got.Estimate() != h.Estimate() {
			t.Fatalf("n=%d: estimate changed after a round trip", n)
		}
		var zero HLL
		if err := zero.UnmarshalBinary(b); err != nil || *zero.reg != *h.reg {
			t.Fatalf("unmarshal into a zero HLL: %v", err)
		}
	}
}

func TestHLLUnmarshalRefusesBadBytes(t *testing.T) {
	h := hllOfInts(0, 10000)
	good, _ := h.MarshalBinary()
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := map[string][]byte{
		"empty":          nil,
		"one byte":       good[:1],
		"short":          good[:len(good)-1],
		"long":           append(bytes.Clone(good), 0),
		"newer version":  mut(func(b []byte) []byte { b[0] = 2; return b }),
		"version zero":   mut(func(b []byte) []byte { b[0] = 0; return b }),
		"other p":        mut(func(b []byte) []byte { b[1] = 14; return b }),
		"register of 63": mut(func(b []byte) []byte { b[2] |= 63; return b }),
		"register of 54": mut(func(b []byte) []byte { b[len(b)-1] = 54 << 2; return b }),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			got := hllOfInts(5, 5)
			before, _ := got.MarshalBinary()
			err := got.UnmarshalBinary(b)
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, errs.ErrCorruptSource) {
				t.Fatalf("error %v is not CORRUPT_SOURCE", err)
			}
			if after, _ := got.MarshalBinary(); !bytes.Equal(before, after) {
				t.Fatal("a refused decode changed the sketch")
			}
			t.Log(err)
		})
	}
}

func TestHLLAddColumnSkipsNulls(t *testing.T) {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	want := NewHLL()
	for i := range 3000 {
		if i%3 == 0 {
			b.AppendNull()
			continue
		}
		b.Append(int32(i))
		want.AddHash(HashValue(types.IntValue(int64(i))))
	}
	arr := b.NewArray()
	got := NewHLL()
	got.AddColumn(arr, nil, nil)
	if *got.reg != *want.reg {
		t.Fatal("AddColumn differs from adding the non-null values' hashes")
	}
	// With a selection: only the even rows.
	var sel []int32
	wantSel := NewHLL()
	for i := 0; i < arr.Len(); i += 2 {
		sel = append(sel, int32(i))
		if i%3 != 0 {
			wantSel.AddHash(HashValue(types.IntValue(int64(i))))
		}
	}
	gotSel := NewHLL()
	gotSel.AddColumn(arr, sel, make([]uint64, 10))
	if *gotSel.reg != *wantSel.reg {
		t.Fatal("AddColumn with a selection differs")
	}
	// A NULL dictionary entry is a NULL, not a value hashing as 0.
	for _, c := range randomColumns(rand.New(rand.NewPCG(1, 1)), 300) {
		if c.name != "dict_null_entry" {
			continue
		}
		h := NewHLL()
		h.AddColumn(c.arr, nil, nil)
		if est := math.Round(h.Estimate()); est != 2 {
			t.Fatalf("dictionary of a, NULL, c: estimate %v, want 2", est)
		}
	}
}

func BenchmarkHLL(b *testing.B) {
	const rows = 8192
	r := rand.New(rand.NewPCG(17, 18))
	hashes := make([]uint64, rows)
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range hashes {
		hashes[i] = r.Uint64()
		ib.Append(r.Int64())
	}
	arr := ib.NewArray()
	b.Run("op=AddHashes,rows=8K", func(b *testing.B) {
		b.ReportAllocs()
		h := NewHLL()
		for b.Loop() {
			h.AddHashes(hashes)
		}
		b.ReportMetric(float64(b.N)*rows/b.Elapsed().Seconds()/1e6, "Mvalues/s")
	})
	b.Run("op=hash+add,type=int64,rows=8K", func(b *testing.B) {
		b.ReportAllocs()
		h := NewHLL()
		scratch := make([]uint64, rows)
		for b.Loop() {
			scratch = h.AddColumn(arr, nil, scratch)
		}
		b.ReportMetric(float64(b.N)*rows/b.Elapsed().Seconds()/1e6, "Mvalues/s")
	})
	// A dictionary column of 100 strings and an int64 column with every tenth row
	// NULL: the shapes Parquet files mostly have.
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	db := array.NewDictionaryBuilder(memory.DefaultAllocator, dt).(*array.BinaryDictionaryBuilder)
	nb := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range rows {
		_ = db.AppendString(fmt.Sprintf("country-%d", r.IntN(100)))
		if i%10 == 0 {
			nb.AppendNull()
		} else {
			nb.Append(r.Int64())
		}
	}
	for _, c := range []columnCase{{"dict_string", db.NewArray()}, {"int64_nulls", nb.NewArray()}} {
		b.Run(fmt.Sprintf("op=hash+add,type=%s,rows=8K", c.name), func(b *testing.B) {
			b.ReportAllocs()
			h := NewHLL()
			scratch := make([]uint64, rows)
			for b.Loop() {
				scratch = h.AddColumn(c.arr, nil, scratch)
			}
			b.ReportMetric(float64(b.N)*rows/b.Elapsed().Seconds()/1e6, "Mvalues/s")
		})
	}
	b.Run("op=Estimate", func(b *testing.B) {
		b.ReportAllocs()
		h := NewHLL()
		h.AddHashes(hashes)
		for b.Loop() {
			_ = h.Estimate()
		}
	})
}

// FuzzHLLUnmarshal: arbitrary bytes never panic; whatever is accepted re-encodes to
// the same bytes.
func FuzzHLLUnmarshal(f *testing.F) {
	for _, n := range []int{0, 10, 100000} {
		b, _ := hllOfInts(int64(n), n).MarshalBinary()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h := NewHLL()
		if err := h.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, errs.ErrCorruptSource) {
				t.Fatalf("error %v is not CORRUPT_SOURCE", err)
			}
			return
		}
		if again, _ := h.MarshalBinary(); !bytes.Equal(again, b) {
			t.Fatal("an accepted encoding re-encodes differently")
		}
		if est := h.Estimate(); !(est >= 0) {
			t.Fatalf("estimate %v", est)
		}
	})
}

// TestHLLAddColumnEqualsAddHash: for every kind of column, whole and sliced (the
// validity bitmap then starts mid-byte), with and without a selection, AddColumn
// builds the registers that adding each non-null row's HashValue builds.
func TestHLLAddColumnEqualsAddHash(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	for _, c := range randomColumns(r, 700) {
		for _, arr := range []arrow.Array{c.arr, array.NewSlice(c.arr, 5, int64(c.arr.Len()-2))} {
			var sel []int32
			for i := 0; i < arr.Len(); i += 1 + r.IntN(4) {
				sel = append(sel, int32(i))
			}
			for _, s := range [][]int32{nil, sel} {
				want := NewHLL()
				rows := arr.Len()
				if s != nil {
					rows = len(s)
				}
				for j := range rows {
					i := j
					if s != nil {
						i = int(s[j])
					}
					if v := types.ValueAt(arr, i); !v.Null {
						want.AddHash(HashValue(v))
					}
				}
				got := NewHLL()
				got.AddColumn(arr, s, nil)
				if *got.reg != *want.reg {
					t.Fatalf("%s (offset %d, selection %v): AddColumn differs from AddHash", c.name, arr.Data().Offset(), s != nil)
				}
			}
		}
	}
}
