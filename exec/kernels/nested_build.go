package kernels

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// The constructors of nested values: list_value (and the literal [a, b]), the
// struct literal {k: v} and struct_pack, and the map literal MAP {k: v}. Each works on
// whole columns: the elements of all rows are gathered into one child array, in row
// order, and the offsets say where each row's begin.

// interleave gathers the columns cols (all of one type, n rows each) into one array
// of n*len(cols) values: row 0's values in column order, then row 1's, and so on.
func interleave(dt arrow.DataType, cols []arrow.Array, n int) arrow.Array {
	if len(cols) == 0 {
		return array.MakeArrayOfNull(memory.DefaultAllocator, dt, 0)
	}
	plain := make([]arrow.Array, len(cols))
	for i, c := range cols {
		plain[i] = Decode(c)
	}
	all := plain[0]
	if len(plain) > 1 {
		var err error
		if all, err = array.Concatenate(plain, memory.DefaultAllocator); err != nil {
			panic("BUG: concatenating the values of a nested constructor: " + err.Error())
		}
	}
	idx := make([]int32, 0, n*len(cols))
	for r := 0; r < n; r++ {
		for k := range cols {
			idx = append(idx, int32(k*n+r))
		}
	}
	return vector.Take(all, idx)
}

// stepOffsets are the offsets of n rows of k elements each.
func stepOffsets(n, k int) []int32 {
	offs := make([]int32, n+1)
	for i := range offs {
		offs[i] = int32(i * k)
	}
	return offs
}

// ListValue is the function that makes a list of its arguments, all of type elem,
// on every row: list_value(a, b) and the literal [a, b]. NULL arguments are NULL
// elements; the list itself is never NULL.
func ListValue(elem arrow.DataType, args int) *Function {
	lt := arrow.ListOf(elem)
	return &Function{Name: "list_value", Args: repeatType(elem, args), Result: lt,
		Eval: func(in []arrow.Array, n int) (arrow.Array, error) {
			in, err := conform(in, repeatType(elem, args))
			if err != nil {
				return nil, err
			}
			child := interleave(elem, in, n)
			data := array.NewData(lt, n, []*memory.Buffer{nil, memory.NewBufferBytes(bytesOf(stepOffsets(n, len(in))))},
				[]arrow.ArrayData{child.Data()}, 0, 0)
			return array.MakeFromData(data), nil
		}}
}

// StructPack is the function that makes a struct of its arguments, one per field:
// the literal {k: v, …} and struct_pack(k := v, …). The struct is never NULL; its
// fields may be.
func StructPack(fields []arrow.Field) *Function {
	st := arrow.StructOf(fields...)
	args := make([]arrow.DataType, len(fields))
	for i, f := range fields {
		args[i] = f.Type
	}
	return &Function{Name: "struct_pack", Args: args, Result: st,
		Eval: func(in []arrow.Array, n int) (arrow.Array, error) {
			in, err := conform(in, args)
			if err != nil {
				return nil, err
			}
			children := make([]arrow.ArrayData, len(in))
			for i, a := range in {
				children[i] = Decode(a).Data()
			}
			return array.MakeFromData(array.NewData(st, n, []*memory.Buffer{nil}, children, 0, 0)), nil
		}}
}

// MapPack is the function that makes a map of its arguments, keys and values in
// turn: the literal MAP {k: v, …}. Keys may not be NULL nor repeat on a row.
func MapPack(key, value arrow.DataType, pairs int) *Function {
	mt := arrow.MapOf(key, value)
	args := make([]arrow.DataType, 0, 2*pairs)
	for range pairs {
		args = append(args, key, value)
	}
	return &Function{Name: "map", Args: args, Result: mt,
		Eval: func(in []arrow.Array, n int) (arrow.Array, error) {
			in, err := conform(in, args)
			if err != nil {
				return nil, err
			}
			keys := make([]arrow.Array, pairs)
			vals := make([]arrow.Array, pairs)
			for i := range pairs {
				keys[i], vals[i] = in[2*i], in[2*i+1]
			}
			for r := 0; r < n; r++ {
				seen := make(map[string]bool, pairs)
				for _, k := range keys {
					if k.IsNull(r) {
						return nil, errs.New(errs.Analysis, "map keys can not be NULL")
					}
					s := types.ValueAt(k, r).String()
					if seen[s] {
						return nil, errs.New(errs.Analysis, "map keys must be unique: %s is repeated", s)
					}
					seen[s] = true
				}
			}
			entries := mt.Elem().(*arrow.StructType)
			kc, vc := interleave(key, keys, n), interleave(value, vals, n)
			child := array.NewData(entries, n*pairs, []*memory.Buffer{nil}, []arrow.ArrayData{kc.Data(), vc.Data()}, 0, 0)
			data := array.NewData(mt, n, []*memory.Buffer{nil, memory.NewBufferBytes(bytesOf(stepOffsets(n, pairs)))},
				[]arrow.ArrayData{child}, 0, 0)
			return array.MakeFromData(data), nil
		}}
}

// commonNested is the common type of two nested types of one kind: lists of their
// elements' common type, structs with the same field names (in order) of their
// fields' common types, maps of their keys' and values' common types.
func commonNested(a, b arrow.DataType) (arrow.DataType, bool) {
	switch at := a.(type) {
	case *arrow.ListType:
		bt, ok := b.(*arrow.ListType)
		if !ok {
			return nil, false
		}
		e, ok := commonType(at.Elem(), bt.Elem())
		if !ok {
			return nil, false
		}
		return arrow.ListOf(e), true
	case *arrow.StructType:
		bt, ok := b.(*arrow.StructType)
		if !ok || at.NumFields() != bt.NumFields() {
			return nil, false
		}
		fields := make([]arrow.Field, at.NumFields())
		for i := range fields {
			fa, fb := at.Field(i), bt.Field(i)
			if !strings.EqualFold(fa.Name, fb.Name) {
				return nil, false
			}
			t, ok := commonType(fa.Type, fb.Type)
			if !ok {
				return nil, false
			}
			fields[i] = arrow.Field{Name: fa.Name, Type: t, Nullable: true}
		}
		return arrow.StructOf(fields...), true
	case *arrow.MapType:
		bt, ok := b.(*arrow.MapType)
		if !ok {
			return nil, false
		}
		k, ok := commonType(at.KeyType(), bt.KeyType())
		if !ok {
			return nil, false
		}
		v, ok := commonType(at.ItemType(), bt.ItemType())
		if !ok {
			return nil, false
		}
		return arrow.MapOf(k, v), true
	}
	return nil, false
}

// castNested casts a list to a list by its elements, a struct to a struct with the
// same number of fields field by field (taking the target's names), and a map to a
// map by its keys and values. ok is false for other pairs of nested types.
func castNested(arr arrow.Array, to arrow.DataType) (arrow.Array, bool, error) {
	if st, ok := to.(*arrow.StructType); ok {
		return castStruct(arr, st)
	}
	data := arr.Data()
	switch tt := to.(type) {
	case *arrow.ListType:
		l, ok := arr.(*array.List)
		if !ok {
			return nil, false, nil
		}
		// The child is cast whole; offsets and validity stay.
		child, err := Cast(array.MakeFromData(data.Children()[0]), tt.Elem())
		if err != nil {
			return nil, true, err
		}
		out := array.NewData(tt, l.Len(), data.Buffers(), []arrow.ArrayData{child.Data()}, data.NullN(), data.Offset())
		return array.MakeFromData(out), true, nil
	case *arrow.StructType:
		s, ok := arr.(*array.Struct)
		if !ok || s.NumField() != tt.NumFields() {
			return nil, false, nil
		}
		children := make([]arrow.ArrayData, tt.NumFields())
		for i := range children {
			c, err := Cast(array.MakeFromData(data.Children()[i]), tt.Field(i).Type)
			if err != nil {
				return nil, true, err
			}
			children[i] = c.Data()
		}
		out := array.NewData(tt, s.Len(), data.Buffers(), children, data.NullN(), data.Offset())
		return array.MakeFromData(out), true, nil
	case *arrow.MapType:
		m, ok := arr.(*array.Map)
		if !ok {
			return nil, false, nil
		}
		entries := data.Children()[0]
		k, err := Cast(array.MakeFromData(entries.Children()[0]), tt.KeyType())
		if err != nil {
			return nil, true, err
		}
		v, err := Cast(array.MakeFromData(entries.Children()[1]), tt.ItemType())
		if err != nil {
			return nil, true, err
		}
		child := array.NewData(tt.Elem(), entries.Len(), entries.Buffers(), []arrow.ArrayData{k.Data(), v.Data()}, entries.NullN(), entries.Offset())
		out := array.NewData(tt, m.Len(), data.Buffers(), []arrow.ArrayData{child}, data.NullN(), data.Offset())
		return array.MakeFromData(out), true, nil
	}
	return nil, false, nil
}
