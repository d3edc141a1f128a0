package exec

import (
	"context"
	"fmt"
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

// TestSmallBatchesJoined: compacted batches of a few rows each, as a selective
// filter leaves them, are kept as batches of at least smallBatchRows (the last
// excepted), their rows in order, a pruned column still nil and a string column
// still a dictionary; a large batch with none gathered before it passes as it is.
func TestSmallBatchesJoined(t *testing.T) {
	ctx := context.Background()
	// Two column chunks' dictionaries of the same 200 values: a batch of a few
	// thousand rows over both has more entries, repeats counted, than a sixteenth of
	// its rows, but their union is small enough.
	names := make([]string, 200)
	for i := range names {
		names[i] = fmt.Sprintf("mode %03d", i)
	}
	dicts := []arrow.Array{stringArray(names, -1), stringArray(names, -1)}
	s := smallBatches{width: 3}
	var kept []*vector.Batch
	next, total := int64(0), 0
	for i := range 300 {
		rows := 43 + i%5
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		idx := make([]int32, rows)
		for r := range rows {
			ib.Append(next)
			idx[r] = int32(next % 200)
			next++
		}
		b := &vector.Batch{Cols: []arrow.Array{ib.NewArray(), nil, dictPart(t, dicts[i/40%2], idx)}, Rows: rows}
		total += rows
		out, err := s.add(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, out...)
	}
	out, err := s.flush(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 2 {
		t.Fatalf("the last %d batches were joined", len(out))
	}
	kept = append(kept, out...)
	if len(kept) > total/smallBatchRows+len(out) {
		t.Fatalf("%d rows kept as %d batches", total, len(kept))
	}
	want := int64(0)
	for i, b := range kept {
		if b.Rows < smallBatchRows && i < len(kept)-len(out) {
			t.Fatalf("batch %d of %d rows", i, b.Rows)
		}
		if b.Cols[1] != nil {
			t.Fatal("a pruned column came back")
		}
		if _, ok := b.Cols[2].(*array.Dictionary); !ok {
			t.Fatalf("batch %d of %d (%d rows): the string column became %s", i, len(kept), b.Rows, b.Cols[2].DataType())
		}
		strs := kernels.Decode(b.Cols[2]).(*array.String)
		for r, v := range b.Cols[0].(*array.Int64).Int64Values() {
			if v != want || strs.Value(r) != names[v%200] {
				t.Fatalf("batch %d row %d: %d %q, want %d", i, r, v, strs.Value(r), want)
			}
			want++
		}
	}
	if want != next {
		t.Fatalf("%d rows kept of %d", want, next)
	}
	// Kept whole, the joined batches are one dictionary over the 200 values.
	all, err := concatBatches(ctx, kept, 3)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := all.Cols[2].(*array.Dictionary); !ok || d.Dictionary().Len() != 200 {
		t.Fatalf("the string column of all rows is %s", all.Cols[2].DataType())
	}
	big := &vector.Batch{Cols: []arrow.Array{kept[0].Cols[0], nil, kept[0].Cols[2]}, Rows: kept[0].Rows}
	if out, err := s.add(ctx, big); err != nil || len(out) != 1 || out[0] != big {
		t.Fatalf("a large batch was not passed on as it is: %v", err)
	}
}

// TestConsumedOnly: a pipeline whose consumer said which columns it reads hands
// on only those, and all of them when it did not say.
func TestConsumedOnly(t *testing.T) {
	a, b, c := stringArray([]string{"x"}, -1), stringArray([]string{"y"}, -1), stringArray([]string{"z"}, -1)
	batch := &vector.Batch{Cols: []arrow.Array{a, b, c}, Rows: 1, Sel: []int32{0}}
	p := &pipeline{}
	if got := p.consumedOnly(batch); got != batch {
		t.Fatal("columns dropped with no consumer's word")
	}
	p.consumed = map[int]bool{0: true, 2: true}
	got := p.consumedOnly(batch)
	if got.Cols[0] != a || got.Cols[1] != nil || got.Cols[2] != c || got.Rows != 1 || len(got.Sel) != 1 {
		t.Fatalf("consumed 0 and 2: got %v", got.Cols)
	}
	if batch.Cols[1] != b {
		t.Fatal("the batch handed in was changed")
	}
}
