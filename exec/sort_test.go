package exec

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	gosort "slices"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/vector"
)

// sortKeyColumns makes columns of every encoded kind for n rows, with NULLs, few
// and many distinct values, -0 and NaN, and decimals that do or do not fit 64 bits.
func sortKeyColumns(rng *rand.Rand, n int) map[string]arrow.Array {
	mem := memory.DefaultAllocator
	null := func() bool { return rng.Intn(7) == 0 }
	out := map[string]arrow.Array{}

	ib := array.NewInt64Builder(mem)
	wide := array.NewInt64Builder(mem)
	i8 := array.NewInt8Builder(mem)
	fb := array.NewFloat64Builder(mem)
	sb := array.NewStringBuilder(mem)
	sb2 := array.NewStringBuilder(mem)
	binb := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	bb := array.NewBooleanBuilder(mem)
	db := array.NewDate32Builder(mem)
	u64 := array.NewUint64Builder(mem)
	dt := &arrow.Decimal128Type{Precision: 38, Scale: 2}
	small := array.NewDecimal128Builder(mem, dt)
	big := array.NewDecimal128Builder(mem, dt)
	words := []string{"", "a", "ab", "b", "Books", "Music", "zz\x00", "é"}
	floats := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), -1.5, 2.25, math.MaxFloat64}
	for range n {
		if null() {
			ib.AppendNull()
		} else {
			ib.Append(int64(rng.Intn(9) - 4))
		}
		// The full int64 range with NULLs leaves no code for NULL: ranks are used.
		switch rng.Intn(8) {
		case 0:
			wide.AppendNull()
		case 1:
			wide.Append(math.MinInt64)
		case 2:
			wide.Append(math.MaxInt64)
		default:
			wide.Append(rng.Int63() - rng.Int63())
		}
		i8.Append(int8(rng.Intn(256) - 128))
		if null() {
			fb.AppendNull()
		} else {
			fb.Append(floats[rng.Intn(len(floats))])
		}
		if null() {
			sb.AppendNull()
		} else {
			sb.Append(words[rng.Intn(len(words))])
		}
		if null() {
			sb2.AppendNull()
		} else {
			sb2.Append(fmt.Sprintf("brand %03d", rng.Intn(300)))
		}
		if null() {
			binb.AppendNull()
		} else {
			binb.Append([]byte(words[rng.Intn(3)]))
		}
		if null() {
			bb.AppendNull()
		} else {
			bb.Append(rng.Intn(2) == 0)
		}
		db.Append(arrow.Date32(rng.Intn(40) - 20))
		u64.Append(rng.Uint64())
		if null() {
			small.AppendNull()
			big.AppendNull()
		} else {
			v := int64(rng.Intn(2000) - 1000)
			small.Append(decimal128.FromI64(v))
			big.Append(decimal128.FromI64(v).Mul(decimal128.FromU64(math.MaxUint64)))
		}
	}
	out["int64"] = ib.NewArray()
	out["wide"] = wide.NewArray()
	out["int8"] = i8.NewArray()
	out["float64"] = fb.NewArray()
	out["string"] = sb.NewArray()
	out["string2"] = sb2.NewArray()
	out["binary"] = binb.NewArray()
	out["bool"] = bb.NewArray()
	out["date"] = db.NewArray()
	out["uint64"] = u64.NewArray()
	out["decimal"] = small.NewArray()
	out["bigdecimal"] = big.NewArray()
	return out
}

// Rows sorted by normalized keys come out as a stable sort by the columns'
// comparators orders them, for every kind of column, direction and NULL placement,
// several columns to a word or one column filling a word, runs of ranked string and
// binary columns, sliced columns, and the partition/peer boundaries agree with the
// comparators.
func TestSortKeys(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	const n = 3000
	cols := sortKeyColumns(rng, n+50)
	names := []string{"int64", "wide", "int8", "float64", "string", "string2", "binary", "bool", "date", "uint64", "decimal", "bigdecimal"}
	ranked := []string{"string", "string2", "binary"}
	it := &interrupt{ctx: context.Background()}
	for trial := range 200 {
		k := 1 + rng.Intn(4)
		var arrs []arrow.Array
		var keys []plan.SortKey
		var desc []string
		off := rng.Intn(50)
		for range k {
			name := names[rng.Intn(len(names))]
			if trial%2 == 0 {
				name = ranked[rng.Intn(len(ranked))]
			}
			a := array.NewSlice(cols[name], int64(off), int64(off+n))
			arrs = append(arrs, a)
			key := plan.SortKey{Desc: rng.Intn(2) == 0, NullsFirst: rng.Intn(2) == 0}
			keys = append(keys, key)
			desc = append(desc, name)
		}
		split := rng.Intn(k + 1)
		sk := normalizeKeys(arrs, keys, split, n)
		if sk == nil {
			t.Fatalf("trial %d %v: no encoding", trial, desc)
		}
		var got []int32
		if err := it.run(func() { got = sk.sort(it, n) }); err != nil {
			t.Fatal(err)
		}
		cmps := make([]func(i, j int) int, k)
		for i, a := range arrs {
			cmps[i] = comparator(a, keys[i])
		}
		compare := func(cs []func(i, j int) int, a, b int32) int {
			for _, c := range cs {
				if r := c(int(a), int(b)); r != 0 {
					return r
				}
			}
			return 0
		}
		want := vector.Identity(n)
		sort.SliceStable(want, func(a, b int) bool { return compare(cmps, want[a], want[b]) < 0 })
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("trial %d %v %v: position %d holds row %d, a stable sort puts %d", trial, desc, keys, i, got[i], want[i])
			}
		}
		for i := 1; i < n; i++ {
			a, b := got[i-1], got[i]
			if sk.equal(a, b, 0, sk.split) != (compare(cmps[:split], a, b) == 0) {
				t.Fatalf("trial %d %v: rows %d and %d: partition equality differs", trial, desc, a, b)
			}
			if sk.equal(a, b, 0, len(sk.words)) != (compare(cmps, a, b) == 0) {
				t.Fatalf("trial %d %v: rows %d and %d: key equality differs", trial, desc, a, b)
			}
		}
	}
}

// Columns of one value, of only NULLs, and no rows at all need no bits, and a type
// without an encoding is left to comparators.
func TestSortKeysEdges(t *testing.T) {
	mem := memory.DefaultAllocator
	it := &interrupt{ctx: context.Background()}
	nulls := array.MakeArrayOfNull(mem, arrow.PrimitiveTypes.Int64, 5)
	b := array.NewStringBuilder(mem)
	for range 5 {
		b.Append("x")
	}
	same := b.NewArray()
	sk := normalizeKeys([]arrow.Array{nulls, same}, []plan.SortKey{{}, {Desc: true}}, 1, 5)
	if sk == nil || len(sk.words) != 0 {
		t.Fatalf("constant columns: %+v", sk)
	}
	if got := sk.sort(it, 5); len(got) != 5 || got[0] != 0 || got[4] != 4 {
		t.Errorf("constant columns sort to %v", got)
	}
	empty := array.MakeArrayOfNull(mem, arrow.PrimitiveTypes.Int64, 0)
	if sk := normalizeKeys([]arrow.Array{empty}, []plan.SortKey{{}}, 0, 0); sk == nil || len(sk.sort(it, 0)) != 0 {
		t.Errorf("no rows: %+v", sk)
	}
	iv := array.NewMonthDayNanoIntervalBuilder(mem)
	iv.Append(arrow.MonthDayNanoInterval{Months: 1})
	if sk := normalizeKeys([]arrow.Array{iv.NewArray()}, []plan.SortKey{{}}, 0, 1); sk != nil {
		t.Errorf("an interval column has an encoding")
	}
	// A canceled statement stops the radix sort.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ib := array.NewInt64Builder(mem)
	ib.AppendValues([]int64{3, 1, 2}, nil)
	sk = normalizeKeys([]arrow.Array{ib.NewArray()}, []plan.SortKey{{}}, 0, 3)
	stopped := &interrupt{ctx: ctx}
	if err := stopped.run(func() { sk.sort(stopped, 3) }); err == nil {
		t.Errorf("a canceled sort was not stopped")
	}
}

// BenchmarkSortKeys sorts 1M rows by a string of 1000 values then an int64, by
// normalized keys and by comparators.
func BenchmarkSortKeys(b *testing.B) {
	const n = 1 << 20
	rng := rand.New(rand.NewSource(1))
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	for range n {
		sb.Append("brand #" + string(rune('a'+rng.Intn(26))) + string(rune('a'+rng.Intn(40))))
		ib.Append(rng.Int63n(1 << 40))
	}
	cols := []arrow.Array{sb.NewArray(), ib.NewArray()}
	keys := []plan.SortKey{{}, {Desc: true}}
	it := &interrupt{ctx: context.Background()}
	b.Run("normalized", func(b *testing.B) {
		for range b.N {
			normalizeKeys(cols, keys, len(cols), n).sort(it, n)
		}
	})
	b.Run("comparators", func(b *testing.B) {
		cmps := []func(i, j int) int{comparator(cols[0], keys[0]), comparator(cols[1], keys[1])}
		for range b.N {
			perm := vector.Identity(n)
			gosort.SortFunc(perm, func(x, y int32) int {
				for _, c := range cmps {
					if r := c(int(x), int(y)); r != 0 {
						return r
					}
				}
				return int(x - y)
			})
		}
	})
}
