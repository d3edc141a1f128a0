package agg

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/exec/kernels"
)

const benchBatch = 8192

// benchInput is 1M rows in 8K batches: an int64 key with the given number of distinct
// values, an int64 value, and the dense group id of each row's key.
type benchInput struct {
	keys, vals []arrow.Array
	groups     [][]uint32
	nGroups    int
}

func makeBenchInput(rows, distinct int) *benchInput {
	rng := rand.New(rand.NewPCG(1, uint64(distinct)))
	in := &benchInput{nGroups: distinct}
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	vb := array.NewInt64Builder(memory.DefaultAllocator)
	for s := 0; s < rows; s += benchBatch {
		n := min(benchBatch, rows-s)
		g := make([]uint32, n)
		for k := range g {
			g[k] = uint32(rng.IntN(distinct))
			kb.Append(int64(g[k])*7919 + 13)
			vb.Append(rng.Int64N(1000))
		}
		in.groups = append(in.groups, g)
		in.keys = append(in.keys, kb.NewArray())
		in.vals = append(in.vals, vb.NewArray())
	}
	return in
}

// BenchmarkSum folds 1M int64 values: grouped (group ids given), and ungrouped.
func BenchmarkSum(b *testing.B) {
	for _, distinct := range []int{1 << 10, 1 << 20} {
		in := makeBenchInput(1<<20, distinct)
		b.Run(fmt.Sprintf("rows=1M,groups=%dK", distinct>>10), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				acc, _ := New(Spec{Name: "sum", ArgType: arrow.PrimitiveTypes.Int64})
				acc.Resize(in.nGroups)
				for i, v := range in.vals {
					if err := acc.Update(v, nil, in.groups[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	in := makeBenchInput(1<<20, 1)
	b.Run("rows=1M,ungrouped", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			acc, _ := New(Spec{Name: "sum", ArgType: arrow.PrimitiveTypes.Int64})
			for _, v := range in.vals {
				if err := acc.Update(v, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkGroupBySum is SELECT key, sum(val) GROUP BY key over 1M rows: KeyTable plus
// the sum accumulator, against a Go map from key to running sum doing the same work.
func BenchmarkGroupBySum(b *testing.B) {
	for _, distinct := range []int{1 << 10, 1 << 20} {
		in := makeBenchInput(1<<20, distinct)
		name := fmt.Sprintf("rows=1M,groups=%dK", distinct>>10)
		b.Run("table/"+name, func(b *testing.B) {
			b.ReportAllocs()
			ids := make([]uint32, benchBatch)
			for b.Loop() {
				t := kernels.NewKeyTable([]arrow.DataType{arrow.PrimitiveTypes.Int64})
				acc, _ := New(Spec{Name: "sum", ArgType: arrow.PrimitiveTypes.Int64})
				for i, k := range in.keys {
					t.Insert([]arrow.Array{k}, nil, ids[:k.Len()])
					acc.Resize(t.Len())
					if err := acc.Update(in.vals[i], nil, ids[:k.Len()]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run("gomap/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sums := map[int64]int64{}
				for i, k := range in.keys {
					keys := k.(*array.Int64).Int64Values()
					vals := in.vals[i].(*array.Int64).Int64Values()
					for r, key := range keys {
						sums[key] += vals[r]
					}
				}
			}
		})
	}
}

// BenchmarkMaxString is MAX of a string column over 1M rows into 1K groups.
func BenchmarkMaxString(b *testing.B) {
	in := makeBenchInput(1<<20, 1<<10)
	var strs []arrow.Array
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	for _, k := range in.keys {
		for _, v := range k.(*array.Int64).Int64Values() {
			sb.Append(fmt.Sprintf("value-%08d", v))
		}
		strs = append(strs, sb.NewArray())
	}
	b.ReportAllocs()
	for b.Loop() {
		acc, _ := New(Spec{Name: "max", ArgType: arrow.BinaryTypes.String})
		acc.Resize(in.nGroups)
		for i, s := range strs {
			if err := acc.Update(s, nil, in.groups[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCountDistinct is count(DISTINCT key) over 1M rows in 1K groups.
func BenchmarkCountDistinct(b *testing.B) {
	in := makeBenchInput(1<<20, 1<<10)
	b.ReportAllocs()
	for b.Loop() {
		acc, _ := New(Spec{Name: "count_distinct", ArgType: arrow.PrimitiveTypes.Int64})
		acc.Resize(in.nGroups)
		for i, v := range in.vals {
			if err := acc.Update(v, nil, in.groups[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSumDecimal folds 1M DECIMAL(15,2) values into 4 groups (as TPC-H Q1 does)
// and into one.
func BenchmarkSumDecimal(b *testing.B) {
	dt := &arrow.Decimal128Type{Precision: 15, Scale: 2}
	rng := rand.New(rand.NewPCG(3, 4))
	var vals []arrow.Array
	var groups [][]uint32
	// Two batches, folded in turn: the values an aggregate folds come from the
	// operator before it, in cache.
	for lo := 0; lo < 2*benchBatch; lo += benchBatch {
		vb := array.NewDecimal128Builder(memory.DefaultAllocator, dt)
		g := make([]uint32, benchBatch)
		for i := 0; i < benchBatch; i++ {
			vb.Append(decimal128.FromI64(int64((lo+i)*7919%10_000_000 - 3_000_000)))
			// Q1's four groups, two of them holding nearly every row, in no order.
			switch r := rng.IntN(100); {
			case r < 48:
				g[i] = 0
			case r < 96:
				g[i] = 1
			default:
				g[i] = uint32(2 + r%2)
			}
		}
		vals = append(vals, vb.NewArray())
		groups = append(groups, g)
	}
	for _, grouped := range []bool{true, false} {
		b.Run(fmt.Sprintf("grouped=%v", grouped), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				acc, _ := New(Spec{Name: "sum", ArgType: dt})
				acc.Resize(4)
				for k := 0; k < 1<<20/benchBatch; k++ {
					var g []uint32
					if grouped {
						g = groups[k%2]
					}
					if err := acc.Update(vals[k%2], nil, g); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
