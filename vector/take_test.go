package vector

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestTakeMatchesArrow checks the typed gathers against Arrow's take for every
// kind of column it handles, with NULLs, sliced inputs and -1 indices.
func TestTakeMatchesArrow(t *testing.T) {
	mem := memory.DefaultAllocator
	r := rand.New(rand.NewPCG(1, 2))
	const n = 300
	null := func() bool { return r.IntN(5) == 0 }
	var arrays []arrow.Array
	{
		b := array.NewInt64Builder(mem)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
			} else {
				b.Append(r.Int64())
			}
		}
		arrays = append(arrays, b.NewArray())
	}
	{
		b := array.NewInt32Builder(mem)
		for i := 0; i < n; i++ {
			b.Append(r.Int32())
		}
		arrays = append(arrays, b.NewArray())
	}
	{
		b := array.NewInt8Builder(mem)
		for i := 0; i < n; i++ {
			b.Append(int8(r.IntN(200) - 100))
		}
		arrays = append(arrays, b.NewArray())
	}
	{
		b := array.NewInt16Builder(mem)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
			} else {
				b.Append(int16(r.IntN(60000) - 30000))
			}
		}
		arrays = append(arrays, b.NewArray())
	}
	{
		b := array.NewFloat64Builder(mem)
		for i := 0; i < n; i++ {
			b.Append(r.Float64())
		}
		arrays = append(arrays, b.NewArray())
	}
	{
		b := array.NewDate32Builder(mem)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
			} else {
				b.Append(arrow.Date32(r.IntN(20000)))
			}
		}
		arrays = append(arrays, b.NewArray())
	}
	{
		b := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 15, Scale: 2})
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
			} else {
				b.Append(decimal128.New(r.Int64N(10)-5, r.Uint64()))
			}
		}
		arrays = append(arrays, b.NewArray())
	}
	{
		b := array.NewBooleanBuilder(mem)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
			} else {
				b.Append(r.IntN(2) == 0)
			}
		}
		arrays = append(arrays, b.NewArray())
	}
	words := []string{"", "a", "special", "requests", "a somewhat longer string value"}
	{
		b := array.NewStringBuilder(mem)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
			} else {
				b.Append(words[r.IntN(len(words))])
			}
		}
		arrays = append(arrays, b.NewArray())
	}
	{
		b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		for i := 0; i < n; i++ {
			b.Append([]byte(words[r.IntN(len(words))]))
		}
		arrays = append(arrays, b.NewArray())
	}
	{
		dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
		b := array.NewDictionaryBuilder(mem, dt).(*array.BinaryDictionaryBuilder)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
			} else if err := b.AppendString(words[r.IntN(len(words))]); err != nil {
				t.Fatal(err)
			}
		}
		arrays = append(arrays, b.NewArray())
	}
	{
		// Lists of lists of strings, with NULL lists, empty lists and NULL elements.
		b := array.NewListBuilder(mem, arrow.ListOf(arrow.BinaryTypes.String))
		inner := b.ValueBuilder().(*array.ListBuilder)
		vals := inner.ValueBuilder().(*array.StringBuilder)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
				continue
			}
			b.Append(true)
			for range r.IntN(3) {
				if null() {
					inner.AppendNull()
					continue
				}
				inner.Append(true)
				for range r.IntN(4) {
					if null() {
						vals.AppendNull()
					} else {
						vals.Append(words[r.IntN(len(words))])
					}
				}
			}
		}
		arrays = append(arrays, b.NewArray())
	}
	{
		// Structs holding an integer and a list, some NULL.
		st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true})
		b := array.NewStructBuilder(mem, st)
		ab := b.FieldBuilder(0).(*array.Int64Builder)
		lb := b.FieldBuilder(1).(*array.ListBuilder)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
				continue
			}
			b.Append(true)
			ab.Append(r.Int64N(100))
			lb.Append(true)
			for range r.IntN(3) {
				lb.ValueBuilder().(*array.Int64Builder).Append(r.Int64N(10))
			}
		}
		arrays = append(arrays, b.NewArray())
	}
	{
		b := array.NewMapBuilder(mem, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64, false)
		kb, ib := b.KeyBuilder().(*array.StringBuilder), b.ItemBuilder().(*array.Int64Builder)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
				continue
			}
			b.Append(true)
			for k := range r.IntN(3) {
				kb.Append(words[k])
				ib.Append(r.Int64N(10))
			}
		}
		arrays = append(arrays, b.NewArray())
	}
	for _, full := range arrays {
		// The whole array and a slice of it (a non-zero offset).
		for _, a := range []arrow.Array{full, array.NewSlice(full, 7, n-3)} {
			for _, withNeg := range []bool{false, true} {
				idx := make([]int32, 2*a.Len())
				for k := range idx {
					idx[k] = int32(r.IntN(a.Len()))
					if withNeg && r.IntN(4) == 0 {
						idx[k] = -1
					}
				}
				got := Take(a, idx)
				want := arrowTake(a, idx)
				if !array.Equal(got, want) {
					t.Fatalf("%s (offset %d, -1 indices %v): gather differs from take\n got %v\nwant %v",
						a.DataType(), a.Data().Offset(), withNeg, got, want)
				}
				if got.Len() != len(idx) || got.NullN() != want.NullN() {
					t.Fatalf("%s: %d rows %d NULLs, want %d rows %d NULLs", a.DataType(), got.Len(), got.NullN(), want.Len(), want.NullN())
				}
			}
		}
	}
	// No rows at all, and only NULL indices into an empty array.
	empty := array.NewInt64Builder(mem).NewArray()
	if got := Take(empty, []int32{-1, -1}); got.Len() != 2 || got.NullN() != 2 {
		t.Fatalf("gather of -1 from an empty array: %v", got)
	}
	emptyStr := array.NewStringBuilder(mem).NewArray()
	if got := Take(emptyStr, []int32{-1}); got.Len() != 1 || got.NullN() != 1 {
		t.Fatalf("gather of -1 from an empty string array: %v", got)
	}
	if got := Take(arrays[0], nil); got.Len() != 0 {
		t.Fatalf("gather of no rows: %v", got)
	}
}

// TestTakeRef checks that gathering strings by reference gives a dictionary over the
// source with the values Take copies, NULL for -1 and for NULL values, and that other
// types are gathered as by Take.
func TestTakeRef(t *testing.T) {
	mem := memory.DefaultAllocator
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"a", "", "ccc", "dd", "e"}, []bool{true, true, false, true, true})
	strs := sb.NewArray()
	idx := []int32{4, -1, 2, 0, 0, 1, 3, -1}
	got := TakeRef(strs, idx)
	d, ok := got.(*array.Dictionary)
	if !ok {
		t.Fatalf("TakeRef of strings gave %T, want a dictionary", got)
	}
	if d.Dictionary() != strs && d.Dictionary().Data() != strs.Data() {
		t.Fatalf("the dictionary is not the source array")
	}
	want := Take(strs, idx)
	if d.Len() != want.Len() {
		t.Fatalf("%d rows, want %d", d.Len(), want.Len())
	}
	for k := range idx {
		if d.IsNull(k) != want.IsNull(k) {
			t.Fatalf("row %d: null %v, want %v", k, d.IsNull(k), want.IsNull(k))
		}
		if want.IsValid(k) && strs.(*array.String).Value(d.GetValueIndex(k)) != want.(*array.String).Value(k) {
			t.Fatalf("row %d: %q, want %q", k, strs.(*array.String).Value(d.GetValueIndex(k)), want.(*array.String).Value(k))
		}
	}
	ib := array.NewInt64Builder(mem)
	ib.AppendValues([]int64{7, 8, 9}, nil)
	ints := ib.NewArray()
	if got := TakeRef(ints, []int32{2, -1, 0}); !array.Equal(got, Take(ints, []int32{2, -1, 0})) {
		t.Fatalf("TakeRef of integers = %v", got)
	}
}
