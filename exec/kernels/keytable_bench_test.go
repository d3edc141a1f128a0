package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

const ktBenchBatch = 8192

func BenchmarkHashColumns(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]int64, ktBenchBatch)
	strs := make([]string, ktBenchBatch)
	for i := range vals {
		vals[i] = int64(rng.Uint64())
		strs[i] = fmt.Sprintf("customer-%d", vals[i]%100000)
	}
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	ib.AppendValues(vals, nil)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.AppendValues(strs, nil)
	out := make([]uint64, ktBenchBatch)
	for _, c := range []struct {
		name string
		col  arrow.Array
	}{{"int64", ib.NewArray()}, {"string", sb.NewArray()}} {
		b.Run(fmt.Sprintf("rows=8K,type=%s", c.name), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(ktBenchBatch * 8)
			for b.Loop() {
				HashColumns([]arrow.Array{c.col}, nil, out)
			}
		})
	}
}

// ktBenchData is 1M rows in 8K batches with the given number of distinct keys, as
// Arrow arrays and as plain slices for the map baseline.
type ktBenchData struct {
	ints    []int64
	strs    []string
	intCols []arrow.Array
	strCols []arrow.Array
}

func ktMakeBenchData(rows, distinct int) *ktBenchData {
	rng := rand.New(rand.NewPCG(3, uint64(distinct)))
	d := &ktBenchData{ints: make([]int64, rows), strs: make([]string, rows)}
	keys := make([]int64, distinct)
	for i := range keys {
		keys[i] = int64(rng.Uint64())
	}
	for i := range d.ints {
		d.ints[i] = keys[rng.IntN(distinct)]
		d.strs[i] = fmt.Sprintf("key-%016x", d.ints[i])
	}
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	for s := 0; s < rows; s += ktBenchBatch {
		e := min(s+ktBenchBatch, rows)
		ib.AppendValues(d.ints[s:e], nil)
		sb.AppendValues(d.strs[s:e], nil)
		d.intCols = append(d.intCols, ib.NewArray())
		d.strCols = append(d.strCols, sb.NewArray())
	}
	return d
}

// BenchmarkKeyTableInsert groups 1M rows with a KeyTable and, for comparison, with a
// Go map doing the same work (id per row, first-seen ids).
func BenchmarkKeyTableInsert(b *testing.B) {
	const rows = 1 << 20
	for _, distinct := range []int{1 << 10, 1 << 20} {
		d := ktMakeBenchData(rows, distinct)
		ids := make([]uint32, ktBenchBatch)
		for _, typ := range []string{"int64", "string"} {
			cols, dt := d.intCols, arrow.DataType(arrow.PrimitiveTypes.Int64)
			if typ == "string" {
				cols, dt = d.strCols, arrow.BinaryTypes.String
			}
			name := fmt.Sprintf("rows=1M,keys=%dK,type=%s", distinct>>10, typ)
			b.Run("table/"+name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					t := NewKeyTable([]arrow.DataType{dt})
					for _, c := range cols {
						t.Insert([]arrow.Array{c}, nil, ids[:c.Len()])
					}
				}
			})
			// A join's build side reserves room for its rows when it knows them.
			b.Run("reserved/"+name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					t := NewKeyTable([]arrow.DataType{dt})
					t.Reserve(rows)
					for _, c := range cols {
						t.Insert([]arrow.Array{c}, nil, ids[:c.Len()])
					}
				}
			})
			b.Run("gomap/"+name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if typ == "int64" {
						m := map[int64]uint32{}
						for _, c := range cols {
							vals := c.(*array.Int64).Int64Values()
							for k, v := range vals {
								id, ok := m[v]
								if !ok {
									id = uint32(len(m))
									m[v] = id
								}
								ids[k] = id
							}
						}
					} else {
						m := map[string]uint32{}
						for _, c := range cols {
							a := c.(*array.String)
							for k := 0; k < a.Len(); k++ {
								v := a.Value(k)
								id, ok := m[v]
								if !ok {
									id = uint32(len(m))
									m[string([]byte(v))] = id // the map must own its keys
								}
								ids[k] = id
							}
						}
					}
				}
			})
		}
	}
}

// BenchmarkKeyTableFind looks 1M rows up in a table of their keys (a join's probe
// of a build side of 1M distinct int64 keys), from one reader as a join's worker
// does.
func BenchmarkKeyTableFind(b *testing.B) {
	const rows = 1 << 20
	d := ktMakeBenchData(rows, rows)
	ids := make([]uint32, ktBenchBatch)
	t := NewKeyTable([]arrow.DataType{arrow.PrimitiveTypes.Int64})
	t.Reserve(rows)
	for _, c := range d.intCols {
		t.Insert([]arrow.Array{c}, nil, ids[:c.Len()])
	}
	r := t.Reader()
	b.ResetTimer()
	for b.Loop() {
		for _, c := range d.intCols {
			r.Find([]arrow.Array{c}, nil, ids[:c.Len()])
		}
	}
}

// BenchmarkKeyTableInsertClustered groups 1M int64 rows whose keys come in runs (as in
// a file clustered on the key): 1K distinct keys, each in runs of about 1K rows.
func BenchmarkKeyTableInsertClustered(b *testing.B) {
	const rows = 1 << 20
	vals := make([]int64, rows)
	for i := range vals {
		vals[i] = int64(i>>10) * 7919
	}
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	var cols []arrow.Array
	for s := 0; s < rows; s += ktBenchBatch {
		ib.AppendValues(vals[s:s+ktBenchBatch], nil)
		cols = append(cols, ib.NewArray())
	}
	ids := make([]uint32, ktBenchBatch)
	b.Run("table/rows=1M,keys=1K,type=int64,order=clustered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			t := NewKeyTable([]arrow.DataType{arrow.PrimitiveTypes.Int64})
			for _, c := range cols {
				t.Insert([]arrow.Array{c}, nil, ids)
			}
		}
	})
	b.Run("gomap/rows=1M,keys=1K,type=int64,order=clustered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := map[int64]uint32{}
			for _, c := range cols {
				for k, v := range c.(*array.Int64).Int64Values() {
					id, ok := m[v]
					if !ok {
						id = uint32(len(m))
						m[v] = id
					}
					ids[k] = id
				}
			}
		}
	})
}

// BenchmarkKeyTableInsertDictionaries groups 1M rows by two dictionary-encoded string
// columns of 3 and 2 entries (TPC-H Q1's returnflag, linestatus), against a Go map
// keyed by the pair of strings.
func BenchmarkKeyTableInsertDictionaries(b *testing.B) {
	const rows = 1 << 20
	rng := rand.New(rand.NewPCG(5, 5))
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.AppendValues([]string{"A", "N", "R"}, nil)
	flags := sb.NewArray()
	sb.AppendValues([]string{"F", "O"}, nil)
	status := sb.NewArray()
	var cols [][]arrow.Array
	for s := 0; s < rows; s += ktBenchBatch {
		fi, si := make([]int32, ktBenchBatch), make([]int32, ktBenchBatch)
		for k := range fi {
			fi[k], si[k] = int32(rng.IntN(3)), int32(rng.IntN(2))
		}
		mk := func(idx []int32, dict arrow.Array) arrow.Array {
			ib := array.NewInt32Builder(memory.DefaultAllocator)
			ib.AppendValues(idx, nil)
			return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, ib.NewArray(), dict)
		}
		cols = append(cols, []arrow.Array{mk(fi, flags), mk(si, status)})
	}
	ids := make([]uint32, ktBenchBatch)
	b.Run("table/rows=1M,keys=6,type=dict-string-pair", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			t := NewKeyTable([]arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.String})
			for _, c := range cols {
				t.Insert(c, nil, ids)
			}
		}
	})
	b.Run("gomap/rows=1M,keys=6,type=dict-string-pair", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := map[[2]string]uint32{}
			for _, c := range cols {
				d0, d1 := c[0].(*array.Dictionary), c[1].(*array.Dictionary)
				v0, v1 := d0.Dictionary().(*array.String), d1.Dictionary().(*array.String)
				for k := range ids {
					key := [2]string{v0.Value(d0.GetValueIndex(k)), v1.Value(d1.GetValueIndex(k))}
					id, ok := m[key]
					if !ok {
						id = uint32(len(m))
						m[key] = id
					}
					ids[k] = id
				}
			}
		}
	})
}

// ktIntTripleCols is 1M rows in 8K batches of three integer key columns drawn from
// 512K distinct triples (ds q78's GROUP BY year, item, customer): an int32 of 5
// values, an int64 of 18K values and an int64 of 100K values with 2 % NULLs.
func ktIntTripleCols(rows int) [][]arrow.Array {
	const distinct = 1 << 19
	rng := rand.New(rand.NewPCG(7, 7))
	type triple struct {
		year       int32
		item, cust int64
		null       bool
	}
	keys := make([]triple, distinct)
	for i := range keys {
		keys[i] = triple{int32(1998 + rng.IntN(5)), int64(rng.IntN(18000)), int64(rng.IntN(100000)), rng.IntN(50) == 0}
	}
	var batches [][]arrow.Array
	yb := array.NewInt32Builder(memory.DefaultAllocator)
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	cb := array.NewInt64Builder(memory.DefaultAllocator)
	for s := 0; s < rows; s += ktBenchBatch {
		for k := s; k < min(s+ktBenchBatch, rows); k++ {
			t := keys[rng.IntN(distinct)]
			yb.Append(t.year)
			ib.Append(t.item)
			if t.null {
				cb.AppendNull()
			} else {
				cb.Append(t.cust)
			}
		}
		batches = append(batches, []arrow.Array{yb.NewArray(), ib.NewArray(), cb.NewArray()})
	}
	return batches
}

// BenchmarkKeyTableIntTriple groups 1M rows by three integer columns with about 450K
// distinct keys (Insert), and looks them up in the full table (Find, a join's probe).
func BenchmarkKeyTableIntTriple(b *testing.B) {
	const rows = 1 << 20
	batches := ktIntTripleCols(rows)
	types := []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64}
	ids := make([]uint32, ktBenchBatch)
	b.Run("insert/rows=1M,keys=450K,type=int32-int64-int64", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			t := NewKeyTable(types)
			for _, c := range batches {
				t.Insert(c, nil, ids)
			}
		}
	})
	full := NewKeyTable(types)
	for _, c := range batches {
		full.Insert(c, nil, ids)
	}
	b.Run("find/rows=1M,keys=450K,type=int32-int64-int64", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, c := range batches {
				full.Find(c, nil, ids)
			}
		}
	})
}

// BenchmarkKeyTableDictionaryGroup groups 1M rows by seven string columns of a joined
// dimension, handed on as dictionaries over its 45K rows indexed by the build row,
// and a year of 5 values (ds q04's GROUP BY customer's columns, d_year): about 200K
// keys. The plain variant groups the same rows with the strings decoded.
func BenchmarkKeyTableDictionaryGroup(b *testing.B) {
	const rows, entries, p = 1 << 20, 45000, 7
	rng := rand.New(rand.NewPCG(9, 9))
	dicts := make([]arrow.Array, p)
	for j := range dicts {
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for e := 0; e < entries; e++ {
			sb.Append(fmt.Sprintf("column%d-value-%d", j, rng.IntN(entries)))
		}
		dicts[j] = sb.NewArray()
	}
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	var batches, plain [][]arrow.Array
	for s := 0; s < rows; s += ktBenchBatch {
		idx := make([]int32, ktBenchBatch)
		years := make([]int32, ktBenchBatch)
		for k := range idx {
			idx[k], years[k] = int32(rng.IntN(entries)), int32(1998+rng.IntN(5))
		}
		cols, dec := make([]arrow.Array, p+1), make([]arrow.Array, p+1)
		for j := 0; j < p; j++ {
			ib := array.NewInt32Builder(memory.DefaultAllocator)
			ib.AppendValues(idx, nil)
			cols[j] = array.NewDictionaryArray(dictType, ib.NewArray(), dicts[j])
			dec[j] = Decode(cols[j])
		}
		yb := array.NewInt32Builder(memory.DefaultAllocator)
		yb.AppendValues(years, nil)
		cols[p] = yb.NewArray()
		dec[p] = cols[p]
		batches, plain = append(batches, cols), append(plain, dec)
	}
	types := make([]arrow.DataType, p+1)
	for j := range types {
		types[j] = arrow.BinaryTypes.String
	}
	types[p] = arrow.PrimitiveTypes.Int32
	ids := make([]uint32, ktBenchBatch)
	for _, c := range []struct {
		name    string
		batches [][]arrow.Array
	}{{"dictionaries", batches}, {"plain", plain}} {
		b.Run("insert/rows=1M,keys=200K,type=7-strings-int32,"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				t := NewKeyTable(types)
				for _, cols := range c.batches {
					t.Insert(cols, nil, ids)
				}
			}
		})
	}
}

// BenchmarkKeyTableSurrogateKeys groups and then finds 1M rows of 1M distinct int64
// keys that fill a range (a dimension's surrogate keys, shuffled), which the table
// holds directly; "spread" is the same keys multiplied apart, which it hashes.
func BenchmarkKeyTableSurrogateKeys(b *testing.B) {
	const rows = 1 << 20
	rng := rand.New(rand.NewPCG(5, 6))
	for _, spread := range []int64{1, 1_000_003} {
		name := "dense"
		if spread > 1 {
			name = "spread"
		}
		var cols []arrow.Array
		perm := rng.Perm(rows)
		for lo := 0; lo < rows; lo += ktBenchBatch {
			ib := array.NewInt64Builder(memory.DefaultAllocator)
			for _, v := range perm[lo : lo+ktBenchBatch] {
				ib.Append(int64(v+1) * spread)
			}
			cols = append(cols, ib.NewArray())
		}
		ids := make([]uint32, ktBenchBatch)
		var t *KeyTable
		b.Run("insert/"+name, func(b *testing.B) {
			for b.Loop() {
				t = NewKeyTable([]arrow.DataType{arrow.PrimitiveTypes.Int64})
				for _, c := range cols {
					t.Insert([]arrow.Array{c}, nil, ids)
				}
			}
			b.ReportMetric(float64(t.MemoryUsage())/rows, "B/key")
		})
		b.Run("find/"+name, func(b *testing.B) {
			r := t.Reader()
			for b.Loop() {
				for _, c := range cols {
					r.Find([]arrow.Array{c}, nil, ids)
				}
			}
		})
	}
}
