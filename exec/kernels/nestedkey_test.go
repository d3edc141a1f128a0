package kernels

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/loredb/lore/types"
)

// nkTestTypes are the nested types the encoding is checked on.
var nkTestTypes = []arrow.DataType{
	arrow.ListOf(types.Int32),
	arrow.ListOf(types.String),
	arrow.ListOf(arrow.ListOf(types.Int64)),
	arrow.StructOf(arrow.Field{Name: "a", Type: types.Int32, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.ListOf(types.Float64), Nullable: true}),
	arrow.MapOf(types.String, types.Int16),
}

// nkRandom appends a random value (NULL sometimes) of bld's type, from few distinct
// leaves so that equal values and shared prefixes are common.
func nkRandom(r *rand.Rand, bld array.Builder, nullable bool) {
	if nullable && r.IntN(6) == 0 {
		bld.AppendNull()
		return
	}
	switch b := bld.(type) {
	case *array.Int16Builder:
		b.Append(int16(r.IntN(5) - 2))
	case *array.Int32Builder:
		b.Append(int32(r.IntN(7) - 3))
	case *array.Int64Builder:
		b.Append([]int64{-1 << 62, -1, 0, 1, 1 << 40}[r.IntN(5)])
	case *array.Float64Builder:
		b.Append([]float64{-2.5, -0.0, 0, 1e-300, 3}[r.IntN(5)])
	case *array.StringBuilder:
		b.Append([]string{"", "a", "a\x00", "a\x00b", "ab", "b", "\xff"}[r.IntN(7)])
	case *array.MapBuilder:
		b.Append(true)
		for range r.IntN(3) {
			nkRandom(r, b.KeyBuilder(), false)
			nkRandom(r, b.ItemBuilder(), true)
		}
	case *array.ListBuilder:
		b.Append(true)
		for range r.IntN(4) {
			nkRandom(r, b.ValueBuilder(), true)
		}
	case *array.StructBuilder:
		b.Append(true)
		for f := range b.NumField() {
			nkRandom(r, b.FieldBuilder(f), true)
		}
	default:
		panic("no random values for the builder")
	}
}

// nkReference compares row i of x with row j of y as DuckDB orders nested values:
// element by element, NULL after any value, then by length.
func nkReference(x arrow.Array, i int, y arrow.Array, j int) int {
	xn, yn := x.IsNull(i), y.IsNull(j)
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	switch a := x.(type) {
	case *array.Int16:
		return cmp.Compare(a.Value(i), y.(*array.Int16).Value(j))
	case *array.Int32:
		return cmp.Compare(a.Value(i), y.(*array.Int32).Value(j))
	case *array.Int64:
		return cmp.Compare(a.Value(i), y.(*array.Int64).Value(j))
	case *array.Float64:
		return cmp.Compare(a.Value(i), y.(*array.Float64).Value(j))
	case *array.String:
		return cmp.Compare(a.Value(i), y.(*array.String).Value(j))
	case *array.Map:
		b := y.(*array.Map)
		s1, e1 := a.ValueOffsets(i)
		s2, e2 := b.ValueOffsets(j)
		for k := int64(0); s1+k < e1 && s2+k < e2; k++ {
			if c := nkReference(a.Keys(), int(s1+k), b.Keys(), int(s2+k)); c != 0 {
				return c
			}
			if c := nkReference(a.Items(), int(s1+k), b.Items(), int(s2+k)); c != 0 {
				return c
			}
		}
		return cmp.Compare(e1-s1, e2-s2)
	case *array.List:
		b := y.(*array.List)
		s1, e1 := a.ValueOffsets(i)
		s2, e2 := b.ValueOffsets(j)
		for k := int64(0); s1+k < e1 && s2+k < e2; k++ {
			if c := nkReference(a.ListValues(), int(s1+k), b.ListValues(), int(s2+k)); c != 0 {
				return c
			}
		}
		return cmp.Compare(e1-s1, e2-s2)
	case *array.Struct:
		b := y.(*array.Struct)
		for f := range a.NumField() {
			if c := nkReference(a.Field(f), i, b.Field(f), j); c != 0 {
				return c
			}
		}
		return 0
	}
	panic("no reference comparison for " + x.DataType().String())
}

// TestNestedKeyOrder checks that the byte order of the encoding is the reference
// order of nested values, for every pair of many random values of each type, and that
// the encoding decodes back to an equal value.
func TestNestedKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range nkTestTypes {
		t.Run(types.Name(dt), func(t *testing.T) {
			bld := array.NewBuilder(memory.DefaultAllocator, dt)
			for range 300 {
				nkRandom(r, bld, false)
			}
			arr := bld.NewArray()
			// A slice checks that offsets into the children are honoured.
			arr = array.NewSlice(arr, 7, 300)
			keys := NestedKeys(arr)
			n := arr.Len()
			for i := range n {
				for j := range n {
					want := nkReference(arr, i, arr, j)
					if got := bytes.Compare(keys.Value(i), keys.Value(j)); got != want {
						t.Fatalf("rows %s and %s: encoding compares %d, want %d",
							types.ValueAt(arr, i), types.ValueAt(arr, j), got, want)
					}
				}
			}
			back := nestedKeyArray(dt, n, func(i int) []byte { return keys.Value(i) }, nil)
			for i := range n {
				if nkReference(arr, i, back, i) != 0 {
					t.Fatalf("row %d: %s decodes to %s", i, types.ValueAt(arr, i), types.ValueAt(back, i))
				}
			}
		})
	}
}

// TestNestedKeyUUID orders and decodes nested values holding UUIDs: the bytes order
// as the text forms do, and the decoded values keep the UUID type at every level
// (the library's builders would make them BLOBs).
func TestNestedKeyUUID(t *testing.T) {
	lo, hi := "\x07\x9c>\x09g|K\xbd\xa4y?4\x9c\xb7\x85\xe7", "\xf7\x9c>\x09g|K\xbd\xa4y?4\x9c\xb7\x85\xe7"
	for _, dt := range []arrow.DataType{
		arrow.StructOf(arrow.Field{Name: "u", Type: types.UUID, Nullable: true}),
		arrow.ListOf(types.UUID),
		arrow.MapOf(types.String, types.UUID),
	} {
		if !NestedOrderable(dt) {
			t.Fatalf("%s is not orderable", dt)
		}
		bld := array.NewBuilder(memory.DefaultAllocator, dt)
		for _, u := range []string{hi, lo} {
			switch b := bld.(type) {
			case *array.StructBuilder:
				b.Append(true)
				b.FieldBuilder(0).(*array.BinaryBuilder).Append([]byte(u))
			case *array.MapBuilder:
				b.Append(true)
				b.KeyBuilder().(*array.StringBuilder).Append("k")
				b.ItemBuilder().(*array.BinaryBuilder).Append([]byte(u))
			case *array.ListBuilder:
				b.Append(true)
				b.ValueBuilder().(*array.BinaryBuilder).Append([]byte(u))
			}
		}
		arr := bld.NewArray()
		keys := NestedKeys(arr)
		if bytes.Compare(keys.Value(1), keys.Value(0)) >= 0 {
			t.Errorf("%s: %x does not sort before %x", dt, lo, hi)
		}
		back := DecodeNestedKeys(dt, keys)
		var leaf arrow.Array
		switch b := back.(type) {
		case *array.Struct:
			leaf = b.Field(0)
		case *array.Map:
			leaf = b.Items()
		case *array.List:
			leaf = b.ListValues()
		}
		if !arrow.TypeEqual(back.DataType(), dt) || !types.IsUUID(leaf.DataType()) {
			t.Errorf("%s decoded as %s with leaves %s", dt, back.DataType(), leaf.DataType())
		}
		if got := string(leaf.(*array.Binary).Value(1)); got != lo {
			t.Errorf("%s: decoded %x, want %x", dt, got, lo)
		}
	}
}
