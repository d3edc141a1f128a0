package source

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestStructsGainFields reads a file's struct that lacks fields the table's struct
// has gained since (a NULL in every row), names another in another order, and was
// sliced: each field comes from the file's field of its name.
func TestStructsGainFields(t *testing.T) {
	file := arrow.StructOf(
		arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "a", Type: arrow.BinaryTypes.String, Nullable: true},
	)
	b := array.NewStructBuilder(memory.DefaultAllocator, file)
	for i := 0; i < 5; i++ {
		if i == 2 {
			b.AppendNull()
			continue
		}
		b.Append(true)
		b.FieldBuilder(0).(*array.Int32Builder).Append(int32(i))
		b.FieldBuilder(1).(*array.StringBuilder).Append(string(rune('p' + i)))
	}
	whole := b.NewArray()
	sliced := array.NewSlice(whole, 1, 5)
	table := arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	)
	if !sameShape(file, table) {
		t.Fatal("a struct that gained a field is not readable as the table's")
	}
	got, err := castArray(context.Background(), sliced, table)
	if err != nil {
		t.Fatal(err)
	}
	want := `{["q" (null) "s" "t"] [1 (null) 3 4] [(null) (null) (null) (null)]}`
	if s := got.String(); s != want {
		t.Errorf("got %s, want %s", s, want)
	}
	if sameShape(file, arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32})) {
		t.Error("a struct with no field in common is readable")
	}
}
