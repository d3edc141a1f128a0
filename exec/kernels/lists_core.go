package kernels

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// The shared machinery of the list functions. A list argument is read through its
// offsets and its one child array (every row's elements, flattened); a list result
// is built as offsets plus a gather of element positions from a source array, so
// that one vector.Take makes the elements of every row at once, whatever their type.

// lists is a list argument of n rows: a list (or map) array, or an untyped NULL.
type lists struct {
	l    array.ListLike // nil when the argument is the NULL type
	vals arrow.Array    // the child array; nil with l
}

func listsOf(a arrow.Array) lists {
	if l, ok := a.(array.ListLike); ok {
		return lists{l: l, vals: l.ListValues()}
	}
	return lists{}
}

// null reports whether row i is a NULL list.
func (x lists) null(i int) bool { return x.l == nil || x.l.IsNull(i) }

// bounds is the range of row i's elements in the child array.
func (x lists) bounds(i int) (int, int) {
	s, e := x.l.ValueOffsets(i)
	return int(s), int(e)
}

// listElem is the element type of a list type; ok is false for anything else (a
// map is not a list here).
func listElem(t arrow.DataType) (arrow.DataType, bool) {
	if lt, ok := t.(*arrow.ListType); ok && t.ID() == arrow.LIST {
		return lt.Elem(), true
	}
	return nil, false
}

// listish reports whether t is a list type or the untyped NULL.
func listish(t arrow.DataType) bool {
	_, ok := listElem(t)
	return ok || isNullType(t)
}

// elemOf is the element type of a list argument, NULL for an untyped NULL.
func elemOf(t arrow.DataType) arrow.DataType {
	if e, ok := listElem(t); ok {
		return e
	}
	return types.Null
}

// commonElem is the element type two lists (or a list and an element) are unified
// as: equal types, or the common type of primitive ones.
func commonElem(a, b arrow.DataType) (arrow.DataType, bool) {
	if arrow.TypeEqual(a, b) || isNullType(b) {
		return a, true
	}
	if isNullType(a) {
		return b, true
	}
	return commonType(a, b)
}

// elemsAs returns the child array of x as type t, cast when it differs.
func elemsAs(x lists, t arrow.DataType) (arrow.Array, error) {
	if x.vals == nil {
		return array.NewNull(0), nil
	}
	if arrow.TypeEqual(x.vals.DataType(), t) || isNullType(t) {
		return x.vals, nil
	}
	if x.vals.DataType().ID() == arrow.NULL {
		return ConstArray(types.NullOf(t), x.vals.Len()), nil
	}
	return Cast(x.vals, t)
}

// valuesAs returns a (non-list) argument as type t.
func valuesAs(a arrow.Array, t arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(a.DataType(), t) || isNullType(t) {
		return a, nil
	}
	if a.DataType().ID() == arrow.NULL {
		return ConstArray(types.NullOf(t), a.Len()), nil
	}
	return Cast(Decode(a), t)
}

// concatArrays joins arrays of one type end to end.
func concatArrays(arrs ...arrow.Array) (arrow.Array, error) {
	var keep []arrow.Array
	for _, a := range arrs {
		if a != nil && a.Len() > 0 {
			keep = append(keep, a)
		}
	}
	switch len(keep) {
	case 0:
		for _, a := range arrs {
			if a != nil {
				return a, nil
			}
		}
		return array.NewNull(0), nil
	case 1:
		return keep[0], nil
	}
	out, err := array.Concatenate(keep, memory.DefaultAllocator)
	if err != nil {
		return nil, errs.New(errs.Internal, "cannot join list elements: %v", err)
	}
	return out, nil
}

// gatherList builds a list result: each row is opened, given positions into a
// source array (-1 for a NULL element) and closed, or is NULL.
type gatherList struct {
	offs  []int32
	idx   []int32
	valid []byte
	nulls int
}

func newGatherList(n int) *gatherList {
	return &gatherList{offs: make([]int32, 1, n+1)}
}

// add appends the element at position j of the source (-1: a NULL element).
func (b *gatherList) add(j int32) { b.idx = append(b.idx, j) }

// end closes the open row.
func (b *gatherList) end() { b.offs = append(b.offs, int32(len(b.idx))) }

// null appends a NULL row.
func (b *gatherList) null() {
	b.valid = nullAt(b.valid, len(b.offs)-1)
	b.nulls++
	b.end()
}

// finish makes the list array of element type elem, gathering from src.
func (b *gatherList) finish(elem arrow.DataType, src arrow.Array) arrow.Array {
	var child arrow.Array
	if src == nil || src.DataType().ID() == arrow.NULL && !isNullType(elem) {
		child = ConstArray(types.NullOf(elem), len(b.idx))
	} else {
		child = vector.Take(src, b.idx)
	}
	return makeList(elem, b.offs, child, b.valid, b.nulls)
}

// makeList wraps offsets (one more than the rows), a child array and a validity
// bitmap (nil when no row is NULL) as a list array of element type elem.
func makeList(elem arrow.DataType, offs []int32, child arrow.Array, valid []byte, nulls int) arrow.Array {
	n := len(offs) - 1
	if nulls == 0 {
		valid = nil
	} else {
		valid = validRows(valid, n)
	}
	lt := arrow.ListOf(elem)
	data := array.NewData(lt, n, []*memory.Buffer{validBuf(valid), memory.NewBufferBytes(bytesOf(offs))},
		[]arrow.ArrayData{child.Data()}, nulls, 0)
	return array.MakeFromData(data)
}

// nullMask records the NULL rows of a fixed-width result.
type nullMask struct {
	valid []byte
	nulls int
}

func (m *nullMask) set(n, i int) {
	if m.valid == nil {
		m.valid = make([]byte, bitmapLen(n))
		bitutil.SetBitsTo(m.valid, 0, int64(n), true)
	}
	bitutil.ClearBit(m.valid, i)
	m.nulls++
}

// elemIDs gives the elements of the arrays (of one type) dense ids, equal ids for
// equal values, in one table: ids[k][j] is the id of arrs[k]'s element j. NULL has
// an id of its own, equal to itself. ok is false for a type that cannot be keyed.
func elemIDs(arrs ...arrow.Array) ([][]uint32, bool) {
	t := arrs[0].DataType()
	if t.ID() != arrow.NULL && !ValidKeyType(t) {
		return nil, false
	}
	out := make([][]uint32, len(arrs))
	if t.ID() == arrow.NULL {
		for k, a := range arrs {
			out[k] = make([]uint32, a.Len())
		}
		return out, true
	}
	kt := NewKeyTable([]arrow.DataType{t})
	for k, a := range arrs {
		out[k] = make([]uint32, a.Len())
		if a.Len() > 0 {
			kt.Insert([]arrow.Array{a}, nil, out[k])
		}
	}
	return out, true
}

// notKeyable is the error of a list function that compares elements of a type that
// cannot be compared yet.
func notKeyable(c *call, t arrow.DataType) error {
	return errs.New(errs.Analysis, "%s does not support elements of type %s yet", c.name, types.Name(t))
}

// orList binds a call whose first argument is a list with onList and any other
// call with other (the function of the same name on strings, say).
func orList(onList, other binder) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) > 0 {
			if _, ok := listElem(c.args[0]); ok {
				return onList(c)
			}
		}
		if other == nil {
			return onList(c)
		}
		return other(c)
	}
}

// eitherList is orList for operators whose list may be either operand.
func eitherList(onList, other binder) binder {
	return func(c *call) (*Function, error) {
		for _, a := range c.args {
			if _, ok := listElem(a); ok {
				return onList(c)
			}
		}
		return other(c)
	}
}
