package kernels

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/loredb/lore/types"
)

// The tests compare the table with a reference built on a Go map keyed by a canonical
// text form of each key, written independently of the table's normalisation.

var ktTestTypes = []arrow.DataType{
	arrow.FixedWidthTypes.Boolean,
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
	arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
	&arrow.Decimal128Type{Precision: 20, Scale: 2},
	arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeString,
	arrow.FixedWidthTypes.Date32,
	&arrow.TimestampType{Unit: arrow.Microsecond}, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"},
	arrow.Null,
}

// ktRandValues draws n logical values of dt (nil = NULL) from a small domain so that
// keys repeat, including the awkward ones: NaN, -0, empty strings, extremes.
func ktRandValues(rng *rand.Rand, dt arrow.DataType, n int, nullFrac float64) []any {
	out := make([]any, n)
	for i := range out {
		if dt.ID() == arrow.NULL || rng.Float64() < nullFrac {
			continue
		}
		r := rng.IntN(40) - 20
		switch dt.ID() {
		case arrow.BOOL:
			out[i] = r%2 == 0
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32, arrow.TIMESTAMP:
			v := int64(r)
			if dt.ID() == arrow.INT64 && r == 19 {
				v = math.MinInt64
			}
			out[i] = v
		case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
			v := uint64(r + 20)
			if dt.ID() == arrow.UINT64 && r == 19 {
				v = math.MaxUint64
			}
			out[i] = v
		case arrow.FLOAT32, arrow.FLOAT64:
			specials := []float64{0, math.Copysign(0, -1), math.NaN(), -math.NaN(), math.Inf(1), math.Inf(-1), 1.5}
			if r < -13 {
				out[i] = specials[r+20]
			} else {
				out[i] = float64(r) / 4
			}
		case arrow.DECIMAL128:
			out[i] = decimal128.New(int64(r%3), uint64(r*1000003))
		case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING:
			switch {
			case r == 0:
				out[i] = ""
			case r > 10:
				out[i] = strings.Repeat(string(rune('a'+r)), r) // longer than 16 bytes
			default:
				out[i] = fmt.Sprintf("k%d", r)
			}
		}
	}
	return out
}

// ktCanon is the canonical text of one logical value, the reference's notion of key
// equality: NULL equals NULL, -0 equals 0, NaN equals NaN.
func ktCanon(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case float64:
		switch {
		case x != x:
			return "f:NaN"
		case x == 0:
			return "f:0"
		}
		return fmt.Sprintf("f:%v", x)
	}
	return fmt.Sprintf("%T:%v", v, v)
}

func ktRowKey(cols [][]any, i int) string {
	var b strings.Builder
	for _, c := range cols {
		b.WriteString(ktCanon(c[i]))
		b.WriteByte('|')
	}
	return b.String()
}

// ktBuild makes a plain array of type dt holding vals.
func ktBuild(dt arrow.DataType, vals []any) arrow.Array {
	if dt.ID() == arrow.NULL {
		return array.NewNull(len(vals))
	}
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.BooleanBuilder:
			bb.Append(v.(bool))
		case *array.Int8Builder:
			bb.Append(int8(v.(int64)))
		case *array.Int16Builder:
			bb.Append(int16(v.(int64)))
		case *array.Int32Builder:
			bb.Append(int32(v.(int64)))
		case *array.Int64Builder:
			bb.Append(v.(int64))
		case *array.Uint8Builder:
			bb.Append(uint8(v.(uint64)))
		case *array.Uint16Builder:
			bb.Append(uint16(v.(uint64)))
		case *array.Uint32Builder:
			bb.Append(uint32(v.(uint64)))
		case *array.Uint64Builder:
			bb.Append(v.(uint64))
		case *array.Float32Builder:
			bb.Append(float32(v.(float64)))
		case *array.Float64Builder:
			bb.Append(v.(float64))
		case *array.Decimal128Builder:
			bb.Append(v.(decimal128.Num))
		case *array.StringBuilder:
			bb.Append(v.(string))
		case *array.LargeStringBuilder:
			bb.Append(v.(string))
		case *array.BinaryBuilder:
			bb.Append([]byte(v.(string)))
		case *array.Date32Builder:
			bb.Append(arrow.Date32(v.(int64)))
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(v.(int64)))
		default:
			panic(fmt.Sprintf("test builder for %s", dt))
		}
	}
	return b.NewArray()
}

// ktBuildDict makes a dictionary array holding vals: the dictionary has the distinct
// values in random order plus unused entries and a NULL entry; a NULL row is either a
// NULL index or an index to the NULL entry.
func ktBuildDict(rng *rand.Rand, dt arrow.DataType, vals []any) arrow.Array {
	var dictVals []any
	where := map[string]int{}
	for _, v := range vals {
		if v == nil {
			continue
		}
		if _, ok := where[ktCanon(v)]; !ok {
			where[ktCanon(v)] = len(dictVals)
			dictVals = append(dictVals, v)
		}
	}
	dictVals = append(dictVals, ktRandValues(rng, dt, 3, 0)...) // entries no row uses (maybe duplicates)
	perm := rng.Perm(len(dictVals))
	shuffled := make([]any, len(dictVals))
	for i, p := range perm {
		shuffled[p] = dictVals[i]
	}
	nullEntry := len(shuffled)
	shuffled = append(shuffled, nil)
	ib := array.NewInt16Builder(memory.DefaultAllocator)
	defer ib.Release()
	for _, v := range vals {
		switch {
		case v == nil && rng.IntN(2) == 0:
			ib.AppendNull()
		case v == nil:
			ib.Append(int16(nullEntry))
		default:
			ib.Append(int16(perm[where[ktCanon(v)]]))
		}
	}
	idx := ib.NewArray()
	dict := ktBuild(dt, shuffled)
	return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: dt}, idx, dict)
}

// ktValueAt reads row i of a plain array back as a logical value.
func ktValueAt(arr arrow.Array, i int) any {
	if arr.IsNull(i) || arr.DataType().ID() == arrow.NULL {
		return nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Uint8:
		return uint64(a.Value(i))
	case *array.Uint16:
		return uint64(a.Value(i))
	case *array.Uint32:
		return uint64(a.Value(i))
	case *array.Uint64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return string(a.Value(i))
	case *array.Date32:
		return int64(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	}
	panic(fmt.Sprintf("test reader for %s", arr.DataType()))
}

// ktReference assigns ids in first-seen order, as the table must.
type ktReference struct {
	ids  map[string]uint32
	keys []string
}

func (r *ktReference) insert(key string) uint32 {
	if id, ok := r.ids[key]; ok {
		return id
	}
	id := uint32(len(r.keys))
	r.ids[key] = id
	r.keys = append(r.keys, key)
	return id
}

// ktRandSel returns nil (all rows) or a random ascending selection.
func ktRandSel(rng *rand.Rand, n int) []int32 {
	if rng.IntN(3) == 0 {
		return nil
	}
	var sel []int32
	for i := 0; i < n; i++ {
		if rng.IntN(3) != 0 {
			sel = append(sel, int32(i))
		}
	}
	return sel
}

// ktCheckKeys verifies that Keys() row i is the reference's key i, with the key types.
func ktCheckKeys(t *testing.T, tab *KeyTable, types []arrow.DataType, ref *ktReference) {
	t.Helper()
	if tab.Len() != len(ref.keys) {
		t.Fatalf("Len = %d, reference has %d keys", tab.Len(), len(ref.keys))
	}
	keys := tab.Keys()
	cols := make([][]any, len(keys))
	for j, k := range keys {
		if !arrow.TypeEqual(k.DataType(), types[j]) {
			t.Fatalf("key column %d has type %s, want %s", j, k.DataType(), types[j])
		}
		if k.Len() != tab.Len() {
			t.Fatalf("key column %d has %d rows, want %d", j, k.Len(), tab.Len())
		}
		cols[j] = make([]any, k.Len())
		for i := range cols[j] {
			cols[j][i] = ktValueAt(k, i)
		}
	}
	for i, want := range ref.keys {
		if got := ktRowKey(cols, i); got != want {
			t.Fatalf("key %d = %s, want %s", i, got, want)
		}
	}
}

func ktRunRandom(t *testing.T, rng *rand.Rand, types []arrow.DataType, batches, rows int) {
	tab := NewKeyTable(types)
	ref := &ktReference{ids: map[string]uint32{}}
	for b := 0; b < batches; b++ {
		n := rows - rng.IntN(rows/2+1)
		vals := make([][]any, len(types))
		cols := make([]arrow.Array, len(types))
		for j, dt := range types {
			// Built with extra rows on both sides and sliced, so offsets are exercised.
			nullFrac := 0.1
			if b%3 == 0 {
				nullFrac = 0 // columns without NULLs take the direct paths
			}
			padded := ktRandValues(rng, dt, n+5, nullFrac)
			vals[j] = padded[3 : n+3]
			var whole arrow.Array
			if rng.IntN(2) == 0 {
				whole = ktBuildDict(rng, dt, padded)
			} else {
				whole = ktBuild(dt, padded)
			}
			cols[j] = array.NewSlice(whole, 3, int64(n+3))
		}
		sel := ktRandSel(rng, n)
		m := n
		if sel != nil {
			m = len(sel)
		}
		if b%4 == 3 {
			// Find: no inserts, NotFound for unseen keys.
			ids := make([]uint32, m)
			tab.Find(cols, sel, ids)
			for k := range ids {
				row := k
				if sel != nil {
					row = int(sel[k])
				}
				want, ok := ref.ids[ktRowKey(vals, row)]
				if !ok {
					want = NotFound
				}
				if ids[k] != want {
					t.Fatalf("batch %d: Find row %d (%s) = %d, want %d", b, row, ktRowKey(vals, row), ids[k], want)
				}
			}
			continue
		}
		ids := make([]uint32, m)
		tab.Insert(cols, sel, ids)
		for k := range ids {
			row := k
			if sel != nil {
				row = int(sel[k])
			}
			if want := ref.insert(ktRowKey(vals, row)); ids[k] != want {
				t.Fatalf("batch %d: Insert row %d (%s) = %d, want %d", b, row, ktRowKey(vals, row), ids[k], want)
			}
		}
	}
	ktCheckKeys(t, tab, types, ref)
}

func TestKeyTableSingleColumn(t *testing.T) {
	for _, dt := range ktTestTypes {
		t.Run(dt.String(), func(t *testing.T) {
			ktRunRandom(t, rand.New(rand.NewPCG(1, uint64(dt.ID()))), []arrow.DataType{dt}, 12, 300)
		})
	}
}

func TestKeyTableMultiColumn(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for trial := 0; trial < 40; trial++ {
		types := make([]arrow.DataType, 1+rng.IntN(3))
		names := make([]string, len(types))
		for j := range types {
			types[j] = ktTestTypes[rng.IntN(len(ktTestTypes))]
			names[j] = types[j].String()
		}
		t.Run(strings.Join(names, ","), func(t *testing.T) {
			ktRunRandom(t, rng, types, 8, 200)
		})
	}
}

func TestKeyTableNoColumns(t *testing.T) {
	tab := NewKeyTable(nil)
	ids := []uint32{7, 7, 7}
	tab.Find(nil, nil, ids)
	if ids[0] != NotFound {
		t.Fatalf("Find in an empty table = %d", ids[0])
	}
	tab.Insert(nil, nil, ids)
	if tab.Len() != 1 || ids[0] != 0 || ids[2] != 0 {
		t.Fatalf("Len = %d, ids = %v", tab.Len(), ids)
	}
}

// TestKeyTableGrowth inserts many distinct keys across many resizes, then checks every
// id with Find.
func TestKeyTableGrowth(t *testing.T) {
	const n = 300_000
	rng := rand.New(rand.NewPCG(5, 6))
	vals := make([]int64, n)
	strs := make([]string, n)
	for i := range vals {
		vals[i] = int64(rng.Uint64())
		strs[i] = fmt.Sprintf("s%x", vals[i])
	}
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String}
	intTab := NewKeyTable(types[:1])
	strTab := NewKeyTable(types[1:])
	pairTab := NewKeyTable(types)
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	var intCols, strCols []arrow.Array
	for start := 0; start < n; start += 8192 {
		end := min(start+8192, n)
		ib.AppendValues(vals[start:end], nil)
		sb.AppendValues(strs[start:end], nil)
		ic, sc := ib.NewArray(), sb.NewArray()
		intCols, strCols = append(intCols, ic), append(strCols, sc)
		ids := make([]uint32, end-start)
		for _, tab := range []*KeyTable{intTab, strTab, pairTab} {
			cols := []arrow.Array{ic}
			switch tab {
			case strTab:
				cols = []arrow.Array{sc}
			case pairTab:
				cols = []arrow.Array{ic, sc}
			}
			tab.Insert(cols, nil, ids)
			for k, id := range ids {
				if id != uint32(start+k) { // random 64-bit keys are distinct
					t.Fatalf("row %d got id %d", start+k, id)
				}
			}
		}
	}
	for b := range intCols {
		ids := make([]uint32, intCols[b].Len())
		intTab.Find(intCols[b:b+1], nil, ids)
		for k, id := range ids {
			if id != uint32(b*8192+k) {
				t.Fatalf("Find row %d = %d", b*8192+k, id)
			}
		}
		strTab.Find(strCols[b:b+1], nil, ids)
		for k, id := range ids {
			if id != uint32(b*8192+k) {
				t.Fatalf("Find string row %d = %d", b*8192+k, id)
			}
		}
	}
	if intTab.MemoryUsage() < n*16 {
		t.Fatalf("MemoryUsage %d is below the keys' size", intTab.MemoryUsage())
	}
}

// TestKeyTableLoad: a large table fills four fifths of its slots before it grows,
// so 1.5M keys take 2M slots, not 4M, whether keys sit in the slots (one word) or
// beside them.
func TestKeyTableLoad(t *testing.T) {
	for _, kt := range [][]arrow.DataType{
		{arrow.PrimitiveTypes.Int64},
		{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String},
	} {
		tab := NewKeyTable(kt)
		tab.Reserve(1_500_000)
		if got := tab.slotCount(); got != 1<<21 {
			t.Fatalf("%v: 1.5M keys reserve %d slots, want %d", kt, got, 1<<21)
		}
	}
}

func TestKeyTableMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 20; trial++ {
		types := []arrow.DataType{ktTestTypes[rng.IntN(len(ktTestTypes))], ktTestTypes[rng.IntN(len(ktTestTypes))]}
		var tabs [2]*KeyTable
		var refs [2]*ktReference
		for w := range tabs {
			tabs[w] = NewKeyTable(types)
			refs[w] = &ktReference{ids: map[string]uint32{}}
			for b := 0; b < 3; b++ {
				vals := [][]any{ktRandValues(rng, types[0], 100, 0.1), ktRandValues(rng, types[1], 100, 0.1)}
				cols := []arrow.Array{ktBuild(types[0], vals[0]), ktBuildDict(rng, types[1], vals[1])}
				ids := make([]uint32, 100)
				tabs[w].Insert(cols, nil, ids)
				for k := range ids {
					refs[w].insert(ktRowKey(vals, k))
				}
			}
		}
		mapping := tabs[0].Merge(tabs[1])
		if len(mapping) != len(refs[1].keys) {
			t.Fatalf("mapping has %d entries, want %d", len(mapping), len(refs[1].keys))
		}
		for j, key := range refs[1].keys {
			if want := refs[0].insert(key); mapping[j] != want {
				t.Fatalf("%v: mapping[%d] (%s) = %d, want %d", types, j, key, mapping[j], want)
			}
		}
		ktCheckKeys(t, tabs[0], types, refs[0])
		if again := tabs[0].Merge(tabs[1]); !slices.Equal(again, mapping) {
			t.Fatalf("merging twice gave %v, then %v", mapping, again)
		}
	}
}

// TestKeyTableDictionaryLargerThanBatch uses a dictionary with far more entries than
// the batch has rows, shared by several batches, as a Parquet reader produces.
func TestKeyTableDictionaryLargerThanBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	dictVals := make([]string, 5000)
	for i := range dictVals {
		dictVals[i] = fmt.Sprintf("value-%d", i)
	}
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.AppendValues(dictVals, nil)
	dict := sb.NewArray()
	tab := NewKeyTable([]arrow.DataType{arrow.BinaryTypes.String})
	ref := &ktReference{ids: map[string]uint32{}}
	for b := 0; b < 20; b++ {
		ib := array.NewInt32Builder(memory.DefaultAllocator)
		idx := make([]int32, 64)
		for i := range idx {
			idx[i] = int32(rng.IntN(len(dictVals)))
		}
		ib.AppendValues(idx, nil)
		arr := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, ib.NewArray(), dict)
		ids := make([]uint32, len(idx))
		tab.Insert([]arrow.Array{arr}, nil, ids)
		for k, i := range idx {
			if want := ref.insert(ktCanon(dictVals[i]) + "|"); ids[k] != want {
				t.Fatalf("row %d: %d, want %d", k, ids[k], want)
			}
		}
	}
	ktCheckKeys(t, tab, []arrow.DataType{arrow.BinaryTypes.String}, ref)
}

// A single dictionary key column with a small dictionary: rows name every entry and
// NULL indices, through selections, slices and every index width, and each row gets
// the id of its value whether its entry was first seen early in the batch or late.
func TestKeyTableSmallDictionary(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	dictVals := []string{"a", "b", "c", "d", "e"}
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.AppendValues(dictVals, []bool{true, true, true, false, true}) // entry 3 is a NULL value
	dict := sb.NewArray()
	indexTypes := []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Int16,
		arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint32,
		arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint64}
	for _, it := range indexTypes {
		tab := NewKeyTable([]arrow.DataType{arrow.BinaryTypes.String})
		ref := &ktReference{ids: map[string]uint32{}}
		for b := 0; b < 30; b++ {
			n := 1 + rng.IntN(300)
			nulls := b%3 == 1
			late := rng.IntN(len(dictVals)) // an entry that appears only in the last row
			idx := make([]int64, n)
			valid := make([]bool, n)
			for i := range idx {
				idx[i] = int64(rng.IntN(len(dictVals)))
				for idx[i] == int64(late) && i < n-1 {
					idx[i] = int64(rng.IntN(len(dictVals)))
				}
				valid[i] = !nulls || rng.IntN(4) != 0
			}
			ib := array.NewInt64Builder(memory.DefaultAllocator)
			ib.AppendValues(idx, valid)
			wide := ib.NewArray()
			narrow, err := compute.CastArray(context.Background(), wide, compute.SafeCastOptions(it))
			if err != nil {
				t.Fatal(err)
			}
			lo := 0
			if n > 2 && rng.IntN(2) == 0 {
				lo = rng.IntN(n / 2)
			}
			indices := array.NewSlice(narrow, int64(lo), int64(n))
			arr := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: it, ValueType: arrow.BinaryTypes.String}, indices, dict)
			sel := ktRandSel(rng, n-lo)
			m := n - lo
			if sel != nil {
				m = len(sel)
			}
			ids := make([]uint32, m)
			tab.Insert([]arrow.Array{arr}, sel, ids)
			for k := range ids {
				i := k
				if sel != nil {
					i = int(sel[k])
				}
				key := ktCanon(nil)
				if e := idx[lo+i]; valid[lo+i] && e != 3 {
					key = ktCanon(dictVals[e])
				}
				if want := ref.insert(key + "|"); ids[k] != want {
					t.Fatalf("%s batch %d row %d: id %d, want %d", it, b, k, ids[k], want)
				}
			}
		}
		ktCheckKeys(t, tab, []arrow.DataType{arrow.BinaryTypes.String}, ref)
	}
}

func TestValidKeyType(t *testing.T) {
	for _, dt := range ktTestTypes {
		if !ValidKeyType(dt) {
			t.Errorf("ValidKeyType(%s) = false", dt)
		}
	}
	if !ValidKeyType(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}) {
		t.Errorf("dictionary of strings is not a valid key type")
	}
	// Lists, structs and maps are keys through their encoding (nestedkey.go), UUIDs
	// inside them too.
	for _, dt := range []arrow.DataType{arrow.ListOf(arrow.PrimitiveTypes.Int64), arrow.ListOf(types.UUID)} {
		if !ValidKeyType(dt) {
			t.Errorf("ValidKeyType(%s) = false", dt)
		}
	}
	for _, dt := range []arrow.DataType{arrow.StructOf(), arrow.FixedWidthTypes.MonthDayNanoInterval} {
		if ValidKeyType(dt) {
			t.Errorf("ValidKeyType(%s) = true", dt)
		}
	}
}

// Readers of a table find the same ids as the table, from many goroutines at once.
func TestKeyTableReaders(t *testing.T) {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := 0; i < 50_000; i++ {
		b.Append(int64(i * 7))
	}
	keys := b.NewArray()
	tbl := NewKeyTable([]arrow.DataType{arrow.PrimitiveTypes.Int64})
	ids := make([]uint32, keys.Len())
	tbl.Insert([]arrow.Array{keys}, nil, ids)
	done := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func(r *KeyTable) {
			got := make([]uint32, keys.Len())
			for round := 0; round < 5; round++ {
				r.Find([]arrow.Array{keys}, nil, got)
				for i := range got {
					if got[i] != ids[i] {
						done <- fmt.Errorf("row %d: reader found %d, table %d", i, got[i], ids[i])
						return
					}
				}
			}
			done <- nil
		}(tbl.Reader())
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestKeyTableSharedLargeDictionary keys two columns, one a dictionary of strings far
// larger than a batch and shared by many batches (a join's build column), whose entry
// hashes are kept from batch to batch, and switches to another dictionary and back,
// and to plain strings: every row must land in the group of its values.
func TestKeyTableSharedLargeDictionary(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	makeDict := func(prefix string, n int) ([]string, arrow.Array) {
		vals := make([]string, n)
		valid := make([]bool, n)
		for i := range vals {
			vals[i] = fmt.Sprintf("%s-%d", prefix, i%(n/2)) // every value twice
			valid[i] = i%97 != 0                            // some NULL entries
		}
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		sb.AppendValues(vals, valid)
		for i := range vals {
			if !valid[i] {
				vals[i] = "\x00null"
			}
		}
		return vals, sb.NewArray()
	}
	aVals, aDict := makeDict("a", 4000)
	bVals, bDict := makeDict("a", 3000) // the same values under other positions
	types := []arrow.DataType{arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64}
	tab := NewKeyTable(types)
	ref := &ktReference{ids: map[string]uint32{}}
	canon := func(s string) string {
		if s == "\x00null" {
			return ktCanon(nil)
		}
		return ktCanon(s)
	}
	for b := 0; b < 30; b++ {
		vals, dict := aVals, aDict
		if b%10 == 7 {
			vals, dict = bVals, bDict
		}
		n := 50 + rng.IntN(100)
		idx := make([]int32, n)
		nums := make([]int64, n)
		valid := make([]bool, n)
		for i := range idx {
			idx[i] = int32(rng.IntN(len(vals)))
			nums[i] = int64(rng.IntN(3))
			valid[i] = rng.IntN(20) != 0
		}
		ib := array.NewInt32Builder(memory.DefaultAllocator)
		ib.AppendValues(idx, valid)
		var col arrow.Array = array.NewDictionaryArray(dictType, ib.NewArray(), dict)
		if b%10 == 9 {
			col = Decode(col)
		}
		nb := array.NewInt64Builder(memory.DefaultAllocator)
		nb.AppendValues(nums, nil)
		ids := make([]uint32, n)
		tab.Insert([]arrow.Array{col, nb.NewArray()}, nil, ids)
		for k := range idx {
			s := ktCanon(nil)
			if valid[k] {
				s = canon(vals[idx[k]])
			}
			if want := ref.insert(s + "|" + ktCanon(nums[k]) + "|"); ids[k] != want {
				t.Fatalf("batch %d row %d: id %d, want %d", b, k, ids[k], want)
			}
		}
	}
	ktCheckKeys(t, tab, types, ref)
}

// TestKeyTableFixedWidthRows keys several fixed-width columns, stored row-major, with
// NULLs in any of them (a NULL must not equal a zero), decimals of two words, enough
// distinct keys to grow the table many times, Find, and Merge of two such tables.
func TestKeyTableFixedWidthRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	types := []arrow.DataType{
		arrow.PrimitiveTypes.Int32, &arrow.Decimal128Type{Precision: 20, Scale: 2},
		arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Int64,
	}
	if NewKeyTable(types).stride != 6 {
		t.Fatalf("stride %d, want 6 (five words and the NULL mask)", NewKeyTable(types).stride)
	}
	var tabs [2]*KeyTable
	var refs [2]*ktReference
	for w := range tabs {
		tabs[w] = NewKeyTable(types)
		refs[w] = &ktReference{ids: map[string]uint32{}}
		for b := 0; b < 12; b++ {
			n := 3000
			vals := make([][]any, len(types))
			cols := make([]arrow.Array, len(types))
			for j, dt := range types {
				padded := ktRandValues(rng, dt, n+4, 0.05)
				if dt.ID() == arrow.INT64 {
					// A wide domain, so the table grows past its sparse size.
					for i := range padded {
						if padded[i] != nil {
							padded[i] = int64(rng.IntN(5000)) - 5
						}
					}
				}
				vals[j] = padded[2 : n+2]
				cols[j] = array.NewSlice(ktBuild(dt, padded), 2, int64(n+2))
			}
			sel := ktRandSel(rng, n)
			m := n
			if sel != nil {
				m = len(sel)
			}
			ids := make([]uint32, m)
			find := b%4 == 3
			if find {
				tabs[w].Find(cols, sel, ids)
			} else {
				tabs[w].Insert(cols, sel, ids)
			}
			for k := range ids {
				row := k
				if sel != nil {
					row = int(sel[k])
				}
				key := ktRowKey(vals, row)
				want, ok := refs[w].ids[key]
				switch {
				case !find:
					want = refs[w].insert(key)
				case !ok:
					want = NotFound
				}
				if ids[k] != want {
					t.Fatalf("table %d batch %d row %d (%s): id %d, want %d", w, b, row, key, ids[k], want)
				}
			}
		}
		ktCheckKeys(t, tabs[w], types, refs[w])
	}
	if len(tabs[0].slots) <= ktSparseSlots {
		t.Fatalf("the table has %d slots: it did not grow past its sparse size", len(tabs[0].slots))
	}
	mapping := tabs[0].Merge(tabs[1])
	for j, key := range refs[1].keys {
		if want := refs[0].insert(key); mapping[j] != want {
			t.Fatalf("mapping[%d] (%s) = %d, want %d", j, key, mapping[j], want)
		}
	}
	ktCheckKeys(t, tabs[0], types, refs[0])
}

// TestKeyTableDictionaryGroup keys three dictionary columns indexed alike by a join's
// build row (each a dictionary of strings far larger than a batch, with NULL entries
// and repeated values, so that different entries hold equal keys) and an integer:
// batches alternate between two sets of dictionaries, switch to plain strings, carry
// rows of only NULLs (an outer join's), NULL indices over NULL entries and over valid
// ones, rows whose indices differ between the columns, selections and slices. Every row must land in
// the group of its values, and Merge must agree.
func TestKeyTableDictionaryGroup(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	const p = 3
	// makeSet returns p dictionaries of size entries; vals[j][e] is the canonical key
	// text of entry e of column j.
	makeSet := func(size, distinct int) (vals [p][]string, dicts [p]arrow.Array) {
		for j := range dicts {
			vals[j] = make([]string, size)
			valid := make([]bool, size)
			strs := make([]string, size)
			for e := range strs {
				strs[e] = fmt.Sprintf("c%d-%d", j, rng.IntN(distinct))
				valid[e] = rng.IntN(30) != 0
				vals[j][e] = ktCanon(nil)
				if valid[e] {
					vals[j][e] = ktCanon(strs[e])
				}
			}
			sb := array.NewStringBuilder(memory.DefaultAllocator)
			sb.AppendValues(strs, valid)
			dicts[j] = sb.NewArray()
		}
		return vals, dicts
	}
	type set struct {
		vals  [p][]string
		dicts [p]arrow.Array
	}
	var sets [2]set
	sets[0].vals, sets[0].dicts = makeSet(3000, 40)
	sets[1].vals, sets[1].dicts = makeSet(2000, 40)
	types := []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.String, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64}
	var tabs [2]*KeyTable
	var refs [2]*ktReference
	for w := range tabs {
		tabs[w] = NewKeyTable(types)
		refs[w] = &ktReference{ids: map[string]uint32{}}
		for b := 0; b < 40; b++ {
			st := &sets[0]
			if b%7 == 5 {
				st = &sets[1]
			}
			n := 100 + rng.IntN(200)
			keys := make([]string, n+2) // per row of the unsliced batch
			idx := make([][]int32, p)
			valid := make([][]bool, p)
			for j := range idx {
				idx[j], valid[j] = make([]int32, n+2), make([]bool, n+2)
			}
			nums := make([]int64, n+2)
			for i := range keys {
				e := int32(rng.IntN(st.dicts[0].Len()))
				outer := rng.IntN(15) == 0
				nums[i] = int64(rng.IntN(2))
				var key strings.Builder
				for j := 0; j < p; j++ {
					ej := e
					if b%9 == 8 && rng.IntN(50) == 0 {
						ej = int32(rng.IntN(st.dicts[j].Len())) // indices differ between columns
					}
					switch {
					case outer:
						idx[j][i], valid[j][i] = 0, false
						key.WriteString(ktCanon(nil))
					case b%9 == 7 && rng.IntN(50) == 0:
						idx[j][i], valid[j][i] = ej, false // a NULL index over a valid entry
						key.WriteString(ktCanon(nil))
					case st.dicts[j].IsNull(int(ej)):
						idx[j][i], valid[j][i] = ej, rng.IntN(2) == 0 // a NULL entry, by index or not
						key.WriteString(ktCanon(nil))
					default:
						idx[j][i], valid[j][i] = ej, true
						key.WriteString(st.vals[j][ej])
					}
					key.WriteByte('|')
				}
				key.WriteString(ktCanon(nums[i]) + "|")
				keys[i] = key.String()
			}
			cols := make([]arrow.Array, len(types))
			for j := 0; j < p; j++ {
				ib := array.NewInt32Builder(memory.DefaultAllocator)
				ib.AppendValues(idx[j], valid[j])
				var col arrow.Array = array.NewDictionaryArray(dictType, ib.NewArray(), st.dicts[j])
				if b%11 == 10 {
					col = Decode(col)
				}
				cols[j] = array.NewSlice(col, 1, int64(n+1))
			}
			nb := array.NewInt64Builder(memory.DefaultAllocator)
			nb.AppendValues(nums, nil)
			cols[p] = array.NewSlice(nb.NewArray(), 1, int64(n+1))
			sel := ktRandSel(rng, n)
			m := n
			if sel != nil {
				m = len(sel)
			}
			ids := make([]uint32, m)
			find := b%6 == 4
			if find {
				tabs[w].Find(cols, sel, ids)
			} else {
				tabs[w].Insert(cols, sel, ids)
			}
			for k := range ids {
				row := k
				if sel != nil {
					row = int(sel[k])
				}
				key := keys[row+1]
				want, ok := refs[w].ids[key]
				switch {
				case !find:
					want = refs[w].insert(key)
				case !ok:
					want = NotFound
				}
				if ids[k] != want {
					t.Fatalf("table %d batch %d row %d (%s): id %d, want %d", w, b, row, key, ids[k], want)
				}
			}
		}
		ktCheckKeys(t, tabs[w], types, refs[w])
	}
	grouped := 0
	for _, src := range tabs[0].srcs {
		if src != 0 {
			grouped++
		}
	}
	if tabs[0].grp == nil || tabs[0].grp.epoch < 2 || grouped < tabs[0].Len()/4 {
		t.Fatalf("the batches did not take the dictionary group's way: %d of %d keys", grouped, tabs[0].Len())
	}
	mapping := tabs[0].Merge(tabs[1])
	for j, key := range refs[1].keys {
		if want := refs[0].insert(key); mapping[j] != want {
			t.Fatalf("mapping[%d] (%s) = %d, want %d", j, key, mapping[j], want)
		}
	}
	ktCheckKeys(t, tabs[0], types, refs[0])
}

// TestKeyTableReserve reserves room for n distinct keys, then checks that adding
// them never grows the slots and that every key keeps the id it would have had.
func TestKeyTableReserve(t *testing.T) {
	const n = 50_000
	rng := rand.New(rand.NewPCG(7, 8))
	vals := make([]int64, n)
	strs := make([]string, n)
	for i := range vals {
		vals[i] = int64(rng.Uint64())
		strs[i] = fmt.Sprintf("k%x", vals[i])
	}
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	ib.AppendValues(vals, nil)
	ic := ib.NewArray()
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.AppendValues(strs, nil)
	sc := sb.NewArray()
	cases := map[string][]arrow.Array{"int": {ic}, "string": {sc}, "int,int": {ic, ic}, "int,string": {ic, sc}}
	for name, cols := range cases {
		t.Run(name, func(t *testing.T) {
			ts := make([]arrow.DataType, len(cols))
			for i, c := range cols {
				ts[i] = c.DataType()
			}
			tab := NewKeyTable(ts)
			tab.Reserve(n)
			slots := func() int { return len(tab.slots) + len(tab.wordSlots) }
			before := slots()
			ids := make([]uint32, n)
			for lo := 0; lo < n; lo += 8192 {
				hi := min(lo+8192, n)
				sel := make([]int32, hi-lo)
				for i := range sel {
					sel[i] = int32(lo + i)
				}
				tab.Insert(cols, sel, ids[lo:hi])
			}
			if slots() != before {
				t.Fatalf("the slots grew from %d to %d after Reserve(%d)", before, slots(), n)
			}
			found := make([]uint32, n)
			tab.Find(cols, nil, found)
			for i := range ids {
				if ids[i] != uint32(i) || found[i] != uint32(i) {
					t.Fatalf("key %d: inserted as %d, found as %d", i, ids[i], found[i])
				}
			}
			tab.Reserve(10) // smaller than held: nothing changes
			if slots() != before || tab.Len() != n {
				t.Fatalf("a smaller Reserve changed the table: %d slots, %d keys", slots(), tab.Len())
			}
		})
	}
}

// TestKeyTableDense: a dense table gives every key the id a sparse one does, and
// fills its slots to the large tables' share at small sizes too.
func TestKeyTableDense(t *testing.T) {
	const n = 5000
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = int64(i) * 7919
	}
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	ib.AppendValues(vals, nil)
	col := ib.NewArray()
	sparse, dense := NewKeyTable([]arrow.DataType{col.DataType()}), NewKeyTable([]arrow.DataType{col.DataType()})
	dense.Dense()
	a, b := make([]uint32, n), make([]uint32, n)
	sparse.Insert([]arrow.Array{col}, nil, a)
	dense.Insert([]arrow.Array{col}, nil, b)
	if !slices.Equal(a, b) {
		t.Fatal("a dense table gave other ids")
	}
	if len(dense.wordSlots) >= len(sparse.wordSlots) || float64(n)/float64(len(dense.wordSlots)) < 0.3 {
		t.Fatalf("%d keys: %d slots dense, %d sparse", n, len(dense.wordSlots), len(sparse.wordSlots))
	}
}

// TestKeyTableDirect: keys of a dense integer range are held in a direct array, which
// widens as keys arrive on either side and turns back to hashing when the keys stop
// being dense; every way gives each key the id a map gives it.
func TestKeyTableDirect(t *testing.T) {
	const n = 60_000
	seq := func(f func(i int) int64) []int64 {
		v := make([]int64, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	rng := rand.New(rand.NewPCG(11, 12))
	perm := rng.Perm(n)
	cases := []struct {
		name   string
		typ    arrow.DataType
		vals   []int64
		direct bool // the table ends direct
	}{
		{"ascending", arrow.PrimitiveTypes.Int64, seq(func(i int) int64 { return int64(i/2) + 1 }), true},
		{"descending", arrow.PrimitiveTypes.Int64, seq(func(i int) int64 { return int64(n - i) }), true},
		{"shuffled", arrow.PrimitiveTypes.Int32, seq(func(i int) int64 { return int64(perm[i]) - 30_000 }), true},
		{"sampled", arrow.PrimitiveTypes.Int64, seq(func(i int) int64 { return rng.Int64N(n) }), true},
		{"dense then sparse", arrow.PrimitiveTypes.Int64, seq(func(i int) int64 {
			if i < n/2 {
				return int64(i)
			}
			return rng.Int64()
		}), false},
		{"sparse then dense", arrow.PrimitiveTypes.Int64, seq(func(i int) int64 {
			if i < 100 {
				return int64(i) * 600 // 100 keys over the range: too sparse at first
			}
			return int64(i)
		}), true},
		{"extremes", arrow.PrimitiveTypes.Int64, seq(func(i int) int64 {
			switch i % 1000 {
			case 0:
				return math.MaxInt64
			case 1:
				return math.MinInt64
			case 2:
				return 1<<62 + 1
			}
			return int64(i % 500)
		}), false},
		{"near the bound", arrow.PrimitiveTypes.Int64, seq(func(i int) int64 { return 1<<62 - int64(i%3000) }), true},
		{"int8", arrow.PrimitiveTypes.Int8, seq(func(i int) int64 { return int64(int8(i)) }), true},
		{"uint64 around 2^64", arrow.PrimitiveTypes.Uint64, seq(func(i int) int64 { return int64(i%200) - 100 }), true},
		{"dates", arrow.FixedWidthTypes.Date32, seq(func(i int) int64 { return 8000 + int64(i%2500) }), true},
		{"doubles", arrow.PrimitiveTypes.Float64, seq(func(i int) int64 { return int64(i % 100) }), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			vals := make([]any, n)
			for i, v := range c.vals {
				switch {
				case i%97 == 5:
					vals[i] = nil
				case c.typ.ID() == arrow.UINT64:
					vals[i] = uint64(v)
				case c.typ.ID() == arrow.FLOAT64:
					vals[i] = float64(v)
				default:
					vals[i] = v
				}
			}
			tab := NewKeyTable([]arrow.DataType{c.typ})
			ref := &ktReference{ids: map[string]uint32{}}
			other := NewKeyTable([]arrow.DataType{c.typ}) // the second half, merged below
			for lo := 0; lo < n; lo += 4096 {
				hi := min(lo+4096, n)
				dst := tab
				if lo >= n/2 {
					dst = other
				}
				col := ktBuild(c.typ, vals[lo:hi])
				if lo%3 == 0 { // without NULLs: the raw integer path
					col = ktBuild(c.typ, slices.DeleteFunc(slices.Clone(vals[lo:hi]), func(v any) bool { return v == nil }))
				}
				sel := ktRandSel(rng, col.Len())
				m := col.Len()
				if sel != nil {
					m = len(sel)
				}
				ids := make([]uint32, m)
				dst.Insert([]arrow.Array{col}, sel, ids)
				if dst != tab {
					continue
				}
				for k, id := range ids {
					row := k
					if sel != nil {
						row = int(sel[k])
					}
					if want := ref.insert(ktRowKey([][]any{{ktValueAt(col, row)}}, 0)); id != want {
						t.Fatalf("rows from %d: row %d (%v) got id %d, want %d", lo, row, ktValueAt(col, row), id, want)
					}
				}
			}
			// Merging the second half's table gives its keys in its id order.
			mapping := tab.Merge(other)
			okeys := other.Keys()[0]
			for j := range mapping {
				if want := ref.insert(ktRowKey([][]any{{ktValueAt(okeys, j)}}, 0)); mapping[j] != want {
					t.Fatalf("merged key %d (%v) mapped to %d, want %d", j, ktValueAt(okeys, j), mapping[j], want)
				}
			}
			ktCheckKeys(t, tab, []arrow.DataType{c.typ}, ref)
			if got := tab.direct != nil; got != c.direct {
				t.Fatalf("direct = %v, want %v (%d keys)", got, c.direct, tab.Len())
			}
			// Every key is found, from a reader too; keys around and beyond are not.
			var probe []any
			for _, v := range c.vals {
				probe = append(probe, nil, v, v+1, v-1, v+n, v-n)
			}
			for i, p := range probe {
				if p == nil {
					continue
				}
				switch c.typ.ID() {
				case arrow.UINT64:
					probe[i] = uint64(p.(int64))
				case arrow.FLOAT64:
					probe[i] = float64(p.(int64))
				case arrow.INT8:
					probe[i] = int64(int8(p.(int64)))
				case arrow.INT32, arrow.DATE32:
					probe[i] = int64(int32(p.(int64)))
				}
			}
			col := ktBuild(c.typ, probe)
			found := make([]uint32, col.Len())
			tab.Reader().Find([]arrow.Array{col}, nil, found)
			for i, id := range found {
				want, ok := ref.ids[ktRowKey([][]any{{ktValueAt(col, i)}}, 0)]
				if !ok {
					want = NotFound
				}
				if id != want {
					t.Fatalf("Find %v = %d, want %d", ktValueAt(col, i), id, want)
				}
			}
		})
	}
}
