package parquet

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A buffer under an array handed on — whole, sliced, or as a dictionary's indexes —
// is never lent again; every other buffer is.
func TestRecyclerKeepsWhatIsHandedOn(t *testing.T) {
	over := func(v []int64) arrow.Array {
		d := array.NewData(arrow.PrimitiveTypes.Int64, len(v), []*memory.Buffer{nil, memory.NewBufferBytes(bytesOf(v))}, nil, 0, 0)
		defer d.Release()
		return array.MakeFromData(d)
	}
	for name, keepOf := range map[string]func(kept []int64, idx []uint32) arrow.Array{
		"whole": func(kept []int64, _ []uint32) arrow.Array { return over(kept) },
		"slice": func(kept []int64, _ []uint32) arrow.Array { return array.NewSlice(over(kept), 3, 9) },
		"dictionary": func(_ []int64, idx []uint32) arrow.Array {
			d := array.NewData(arrow.PrimitiveTypes.Int32, len(idx), []*memory.Buffer{nil, memory.NewBufferBytes(bytesOf(idx))}, nil, 0, 0)
			defer d.Release()
			indices := array.MakeFromData(d)
			dict := array.NewSlice(over([]int64{1, 2}), 0, 2)
			return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Int64}, indices, dict)
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := &Recycler{}
			kept, dropped := values[int64](r, 16), values[int64](r, 16)
			idx := values[uint32](r, 32)
			keep := keepOf(kept, idx)
			r.Recycle([]arrow.Array{nil, keep})
			held := map[*byte]bool{}
			switch name {
			case "dictionary":
				held[&bytesOf(idx)[0]] = true
			default:
				held[&bytesOf(kept)[0]] = true
			}
			lent := map[*byte]bool{}
			for range 3 {
				b := r.Bytes(8)
				lent[&b[0]] = true
			}
			if !lent[&bytesOf(dropped)[0]] {
				t.Errorf("a buffer nothing holds was not lent again")
			}
			for p := range held {
				if lent[p] {
					t.Errorf("a buffer under the array handed on was lent again")
				}
			}
		})
	}
}

// A selection vector handed on with a batch is never lent again; one that is not
// comes back.
func TestRecyclerKeepsTheSelectionHandedOn(t *testing.T) {
	r := &Recycler{}
	handed, dropped := r.Selection(16), r.Selection(16)
	r.RecycleBatch(nil, handed)
	lent := map[*byte]bool{}
	for range 2 {
		b := r.Bytes(64)
		lent[&b[0]] = true
	}
	if !lent[&bytesOf(dropped)[0]] {
		t.Errorf("a selection nothing holds was not lent again")
	}
	if lent[&bytesOf(handed)[0]] {
		t.Errorf("the selection handed on was lent again")
	}
}
