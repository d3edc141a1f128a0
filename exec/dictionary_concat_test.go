package exec

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/vector"
)

// dictPart builds a dictionary array over dict with the given indices (-1: NULL).
func dictPart(t *testing.T, dict arrow.Array, idx []int32) arrow.Array {
	t.Helper()
	b := array.NewInt32Builder(memory.DefaultAllocator)
	for _, i := range idx {
		if i < 0 {
			b.AppendNull()
		} else {
			b.Append(i)
		}
	}
	ind := b.NewArray()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	return array.NewDictionaryArray(dt, ind, dict)
}

func stringArray(vals []string, null int) arrow.Array {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	for i, v := range vals {
		if i == null {
			b.AppendNull()
		} else {
			b.Append(v)
		}
	}
	return b.NewArray()
}

// Batches whose string columns carry different small dictionaries (a column chunk's
// each) concatenate to one dictionary over their union, row for row the strings
// and NULLs of the parts.
func TestConcatUnifiesSmallDictionaries(t *testing.T) {
	d1 := stringArray([]string{"a", "b", "c"}, -1)
	d2 := stringArray([]string{"c", "x", "", "a"}, 2) // a NULL entry
	var parts []*vector.Batch
	var want []string
	add := func(dict arrow.Array, idx []int32) {
		parts = append(parts, &vector.Batch{Cols: []arrow.Array{dictPart(t, dict, idx)}, Rows: len(idx)})
		for _, i := range idx {
			switch {
			case i < 0 || dict.IsNull(int(i)):
				want = append(want, "NULL")
			default:
				want = append(want, dict.(*array.String).Value(int(i)))
			}
		}
	}
	for range 20 {
		add(d1, []int32{0, 1, 2, 2, 1, 0, 0, 1})
		add(d2, []int32{3, 0, -1, 1, 2, 1, 0, 3})
	}
	all, err := concatBatches(context.Background(), parts, 1)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := all.Cols[0].(*array.Dictionary)
	if !ok {
		t.Fatalf("got %T, want a dictionary", all.Cols[0])
	}
	if d.Dictionary().Len() != 4 {
		t.Fatalf("dictionary %v, want the 4 distinct strings", d.Dictionary())
	}
	got := kernels.Decode(all.Cols[0]).(*array.String)
	if got.Len() != len(want) {
		t.Fatalf("%d rows, want %d", got.Len(), len(want))
	}
	for i, w := range want {
		g := "NULL"
		if got.IsValid(i) {
			g = got.Value(i)
		}
		if g != w {
			t.Fatalf("row %d = %q, want %q", i, g, w)
		}
	}
	// Few rows beside the dictionaries: expanded instead.
	small, err := concatBatches(context.Background(), parts[:2], 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := small.Cols[0].(*array.Dictionary); ok {
		t.Fatal("16 rows over 7 dictionary entries were kept as a dictionary")
	}
}
