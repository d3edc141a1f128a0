package vector

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/types"
)

// WideArray widens a 64-bit decimal slice (offset, NULLs, negative values) and the
// decimals inside a list, and leaves other arrays alone.
func TestWideArray(t *testing.T) {
	dt := types.Decimal(10, 3)
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	for i, v := range []int64{7, -9_999_999_999, 0, 123, -1} {
		if i == 2 {
			b.AppendNull()
			continue
		}
		AppendValue(b, types.Value{Type: dt, D: decimal128.FromI64(v)})
	}
	arr := array.NewSlice(b.NewArray(), 1, 5)
	w := WideArray(arr)
	if w.DataType().ID() != arrow.DECIMAL128 || w.Len() != 4 || w.NullN() != 1 {
		t.Fatalf("widened to %v", w)
	}
	for i := range arr.Len() {
		if got, want := types.ValueAt(w, i), types.ValueAt(arr, i); got.Null != want.Null || got.D != want.D {
			t.Errorf("row %d: %v, want %v", i, got, want)
		}
	}
	// A list of 64-bit decimals (not a type Lore makes, but one a caller may hand in).
	lb := array.NewListBuilder(memory.DefaultAllocator, dt)
	lb.Append(true)
	AppendValue(lb.ValueBuilder(), types.Value{Type: dt, D: decimal128.FromI64(-42)})
	lw := WideArray(lb.NewArray())
	if e := lw.DataType().(*arrow.ListType).Elem(); e.ID() != arrow.DECIMAL128 {
		t.Fatalf("list widened to %v", lw.DataType())
	}
	if got := types.ValueAt(lw.(*array.List).ListValues(), 0).D; got != decimal128.FromI64(-42) {
		t.Errorf("list element %v", got)
	}
	ints := array.NewInt64Builder(memory.DefaultAllocator).NewArray()
	if WideArray(ints) != ints {
		t.Error("an INT64 array was rebuilt")
	}
}
