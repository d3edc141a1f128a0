package kernels

import (
	"math"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// Element access: list_extract (l[i]), array_slice (l[a:b], l[a:b:step]) and
// struct_extract (s.f). A list's element is found from its offsets and gathered from
// the one child array with vector.Take, so no row is boxed.

// IsList reports whether dt is a list type (variable or fixed size).
func IsList(dt arrow.DataType) bool {
	switch types.Unwrap(dt).ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST:
		return true
	}
	return false
}

// ListElem is the element type of a list type.
func ListElem(dt arrow.DataType) arrow.DataType {
	return types.Unwrap(dt).(arrow.ListLikeType).Elem()
}

// bindListExtract binds list_extract(l, i) on a list (the element, NULL out of
// range) or a string (the one character, empty out of range); array_extract also
// takes a struct and a constant field name or position.
func bindListExtract(structs bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 2 {
			return nil, c.mismatch()
		}
		t := c.args[0]
		switch {
		case structs && t.ID() == arrow.STRUCT:
			return bindStructExtract(c)
		case IsList(t) && intish(c.args[1]):
			return newFunction(c, []arrow.DataType{t, types.Int64}, ListElem(t), listExtract, false), nil
		case stringish(t) && !isNullType(t) && intish(c.args[1]):
			return newFunction(c, []arrow.DataType{types.String, types.Int64}, types.String, stringExtract, true), nil
		case isNullType(t) && intish(c.args[1]):
			return newFunction(c, []arrow.DataType{t, types.Int64}, types.Null, func(_ []arrow.Array, n int) (arrow.Array, error) {
				return array.NewNull(n), nil
			}, false), nil
		}
		return nil, c.mismatch()
	}
}

// elementPos is the 0-based position of 1-based index k (negative: from the end) in
// a list or string of n elements, or -1 when it is out of range (k = 0 included).
func elementPos(k int64, n int) int {
	switch {
	case k > 0 && k <= int64(n):
		return int(k - 1)
	case k < 0 && -k <= int64(n):
		return n + int(k)
	}
	return -1
}

// listExtract gathers element in[1] of each list in[0]: the index of each row into
// the child array, -1 (NULL) for a NULL list or index or one out of range.
func listExtract(in []arrow.Array, n int) (arrow.Array, error) {
	lst := in[0].(array.ListLike)
	ks := in[1].(*array.Int64)
	idx := make([]int32, n)
	for i := 0; i < n; i++ {
		idx[i] = -1
		if lst.IsNull(i) || ks.IsNull(i) {
			continue
		}
		start, end := lst.ValueOffsets(i)
		if p := elementPos(ks.Value(i), int(end-start)); p >= 0 {
			idx[i] = int32(start) + int32(p)
		}
	}
	return vector.Take(lst.ListValues(), idx), nil
}

// stringExtract is the character at index in[1] of each string (by code point), the
// empty string when the index is out of range, as DuckDB answers.
func stringExtract(in []arrow.Array, n int) (arrow.Array, error) {
	s, ks := str(in[0]), i64(in[1])
	return evalStrings(in, n, func(i int) (string, error) {
		v := s.Value(i)
		p := elementPos(ks.Value(i), utf8.RuneCountInString(v))
		if p < 0 {
			return "", nil
		}
		for j := range v {
			if p == 0 {
				_, w := utf8.DecodeRuneInString(v[j:])
				return v[j : j+w], nil
			}
			p--
		}
		return "", nil
	})
}

// SliceEnd stands for an omitted upper bound of l[a:]: it is past every list's end.
const SliceEnd = math.MaxInt64

// bindListSlice binds array_slice(l, begin, end[, step]) on a list or a string
// (without a step). A NULL bound or step makes the result NULL.
func bindListSlice(c *call) (*Function, error) {
	if len(c.args) != 3 && len(c.args) != 4 {
		return nil, c.mismatch()
	}
	for _, a := range c.args[1:] {
		if !intish(a) {
			return nil, c.mismatch()
		}
	}
	ints := repeatType(types.Int64, len(c.args)-1)
	t := c.args[0]
	switch {
	case IsList(t) && t.ID() != arrow.FIXED_SIZE_LIST:
		return newFunction(c, append([]arrow.DataType{t}, ints...), t, listSlice, false), nil
	case stringish(t) && !isNullType(t):
		if len(c.args) == 4 {
			return nil, errs.New(errs.Analysis, "slices with a step are not supported on strings")
		}
		return newFunction(c, append([]arrow.DataType{types.String}, ints...), types.String, stringSlice, true), nil
	case isNullType(t):
		return newFunction(c, append([]arrow.DataType{t}, ints...), types.Null, func(_ []arrow.Array, n int) (arrow.Array, error) {
			return array.NewNull(n), nil
		}, false), nil
	}
	return nil, c.mismatch()
}

// sliceBounds turns 1-based inclusive bounds (negative: from the end) over n elements
// into 0-based ones clamped to the list, as DuckDB does: with a positive step the
// slice runs from lo up to hi, with a negative one from lo down to hi; it is empty
// when they are the wrong way round.
func sliceBounds(begin, end, step int64, n int) (lo, hi int, empty bool) {
	norm := func(x int64) int64 {
		if x < 0 {
			if x < -int64(n) {
				return 0
			}
			return int64(n) + x + 1
		}
		return x
	}
	b, e := norm(begin), norm(end)
	if step > 0 {
		b, e = max(b, 1), min(e, int64(n))
		if b > e {
			return 0, 0, true
		}
	} else {
		b, e = min(b, int64(n)), max(e, 1)
		if b < e {
			return 0, 0, true
		}
	}
	return int(b - 1), int(e - 1), false
}

// sliceArgs reads row i's bounds and step; ok is false when one is NULL.
func sliceArgs(in []arrow.Array, i int) (begin, end, step int64, ok bool) {
	step = 1
	for _, a := range in[1:] {
		if a.IsNull(i) {
			return 0, 0, 0, false
		}
	}
	begin, end = in[1].(*array.Int64).Value(i), in[2].(*array.Int64).Value(i)
	if len(in) > 3 {
		step = in[3].(*array.Int64).Value(i)
	}
	return begin, end, step, true
}

// listSlice makes each row's slice a run of positions into the child array and
// gathers the child once for all rows.
func listSlice(in []arrow.Array, n int) (arrow.Array, error) {
	lst := in[0].(array.ListLike)
	offs := make([]int32, 1, n+1)
	var idx []int32
	valid := make([]byte, bitmapLen(n))
	nulls := 0
	for i := 0; i < n; i++ {
		begin, end, step, ok := sliceArgs(in, i)
		if !ok || lst.IsNull(i) {
			nulls++
			offs = append(offs, int32(len(idx)))
			continue
		}
		if step == 0 {
			return nil, errs.New(errs.Analysis, "the step of a slice cannot be 0")
		}
		bitutil.SetBit(valid, i)
		start, stop := lst.ValueOffsets(i)
		lo, hi, empty := sliceBounds(begin, end, step, int(stop-start))
		if !empty {
			if step > 0 {
				for p := int64(lo); p <= int64(hi); p += step {
					idx = append(idx, int32(start)+int32(p))
				}
			} else {
				for p := int64(lo); p >= int64(hi); p += step {
					idx = append(idx, int32(start)+int32(p))
				}
			}
		}
		offs = append(offs, int32(len(idx)))
	}
	child := vector.Take(lst.ListValues(), idx)
	var vb []byte
	if nulls > 0 {
		vb = valid
	}
	dt := types.Unwrap(in[0].DataType())
	if dt.ID() == arrow.LARGE_LIST {
		offs64 := make([]int64, len(offs))
		for i, o := range offs {
			offs64[i] = int64(o)
		}
		data := array.NewData(dt, n, []*memory.Buffer{validBuf(vb), memory.NewBufferBytes(bytesOf(offs64))},
			[]arrow.ArrayData{child.Data()}, nulls, 0)
		return array.MakeFromData(data), nil
	}
	data := array.NewData(dt, n, []*memory.Buffer{validBuf(vb), memory.NewBufferBytes(bytesOf(offs))},
		[]arrow.ArrayData{child.Data()}, nulls, 0)
	return array.MakeFromData(data), nil
}

// stringSlice is the characters begin..end (1-based, inclusive, by code point) of
// each string.
func stringSlice(in []arrow.Array, n int) (arrow.Array, error) {
	s := str(in[0])
	return evalStrings(in, n, func(i int) (string, error) {
		begin, end, _, _ := sliceArgs(in, i)
		v := s.Value(i)
		lo, hi, empty := sliceBounds(begin, end, 1, utf8.RuneCountInString(v))
		if empty {
			return "", nil
		}
		from, to, k := len(v), len(v), 0
		for j := range v {
			if k == lo {
				from = j
			}
			if k == hi+1 {
				to = j
				break
			}
			k++
		}
		return v[from:to], nil
	})
}

// bindStructExtract binds struct_extract(s, 'name') and struct_extract(s, k): the
// field is a constant, found when the call is bound (names match without regard to
// case, as DuckDB's do).
func bindStructExtract(c *call) (*Function, error) {
	if len(c.args) != 2 || c.args[0].ID() != arrow.STRUCT {
		return nil, c.mismatch()
	}
	st := c.args[0].(*arrow.StructType)
	if i := c.args[1]; i.ID() == arrow.NULL || (!stringish(i) && !intish(i)) {
		return nil, c.mismatch()
	}
	f := -1
	if c.consts[1] == nil {
		return nil, errs.New(errs.Analysis, "%s: the field must be a constant", c.name)
	}
	if name, ok := c.constString(1); ok {
		f = FieldIndex(st, name)
		if f < 0 {
			return nil, errs.New(errs.Analysis, "%s: the struct %s has no field %q", c.name, types.Name(st), name)
		}
	} else if types.IsInteger(c.consts[1].Type) && !c.consts[1].Null {
		k := c.consts[1].I
		if types.IsUnsigned(c.consts[1].Type) {
			k = int64(min(c.consts[1].U, math.MaxInt64))
		}
		// As in DuckDB, a position names a field of an unnamed struct (row(…)) only.
		for _, fl := range st.Fields() {
			if fl.Name != "" {
				return nil, errs.New(errs.Analysis, "%s: a position can only name a field of an unnamed struct; use the field's name", c.name)
			}
		}
		if k < 1 || k > int64(st.NumFields()) {
			return nil, errs.New(errs.Analysis, "%s: index %d is out of range for a struct of %d fields", c.name, k, st.NumFields())
		}
		f = int(k - 1)
	} else {
		return nil, errs.New(errs.Analysis, "%s: the field must not be NULL", c.name)
	}
	return newFunction(c, []arrow.DataType{st, c.args[1]}, st.Field(f).Type, func(in []arrow.Array, n int) (arrow.Array, error) {
		return StructField(in[0], f), nil
	}, false), nil
}

// FieldIndex is the position of the field called name (any case) in st, or -1.
func FieldIndex(st *arrow.StructType, name string) int {
	if i, ok := st.FieldIdx(name); ok {
		return i
	}
	for i, f := range st.Fields() {
		if equalFoldASCII(f.Name, name) {
			return i
		}
	}
	return -1
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// StructField is field f of each row of a struct array, NULL where the struct is
// NULL (Arrow lets a child hold a value under a NULL parent).
func StructField(arr arrow.Array, f int) arrow.Array {
	s := arr.(*array.Struct)
	child := s.Field(f) // already sliced to the struct's rows
	if s.NullN() == 0 {
		return child
	}
	idx := make([]int32, s.Len())
	for i := range idx {
		idx[i] = int32(i)
		if s.IsNull(i) {
			idx[i] = -1
		}
	}
	return vector.Take(child, idx)
}
