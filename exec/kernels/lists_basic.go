package kernels

import (
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// List functions that take lists apart and put them together: length, search,
// concatenation, reversal, flattening, resizing, set tests, selection, text, ranges
// and vector distances, with DuckDB's semantics.

// bindListLen binds len(list): the number of elements, NULLs included.
func bindListLen(c *call) (*Function, error) {
	if len(c.args) != 1 || !listish(c.args[0]) {
		return nil, c.mismatch()
	}
	return newFunction(c, c.args, types.Int64, func(in []arrow.Array, n int) (arrow.Array, error) {
		x := listsOf(in[0])
		out := make([]int64, n)
		var m nullMask
		for i := 0; i < n; i++ {
			if x.null(i) {
				m.set(n, i)
				continue
			}
			s, e := x.bounds(i)
			out[i] = int64(e - s)
		}
		return fixedArray(types.Int64, out, m.valid, m.nulls), nil
	}, false), nil
}

// bindListSearch binds list_contains(list, x) (find false) and list_position(list,
// x) (find true). contains is NULL for a NULL x and ignores NULL elements; position
// finds a NULL x among NULL elements and is NULL when x is absent.
func bindListSearch(find bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 2 || !listish(c.args[0]) {
			return nil, c.mismatch()
		}
		et, ok := commonElem(elemOf(c.args[0]), c.args[1])
		if !ok {
			return nil, c.mismatch()
		}
		if !isNullType(et) && !ValidKeyType(et) {
			return nil, notKeyable(c, et)
		}
		result := arrow.DataType(types.Boolean)
		if find {
			result = types.Int32
		}
		return newFunction(c, []arrow.DataType{c.args[0], et}, result, func(in []arrow.Array, n int) (arrow.Array, error) {
			x := listsOf(in[0])
			vals, err := elemsAs(x, et)
			if err != nil {
				return nil, err
			}
			needle := Decode(in[1])
			if vals.DataType().ID() == arrow.NULL && needle.DataType().ID() != arrow.NULL {
				vals = ConstArray(types.NullOf(needle.DataType()), vals.Len())
			}
			ids, ok := elemIDs(vals, needle)
			if !ok {
				return nil, notKeyable(c, et)
			}
			var m nullMask
			pos := make([]int32, n)
			hit := make([]byte, bitmapLen(n))
			for i := 0; i < n; i++ {
				if x.null(i) || (!find && needle.IsNull(i)) {
					m.set(n, i)
					continue
				}
				s, e := x.bounds(i)
				for j := s; j < e; j++ {
					if vals.IsNull(j) != needle.IsNull(i) || !vals.IsNull(j) && ids[0][j] != ids[1][i] {
						continue
					}
					pos[i] = int32(j - s + 1)
					hit[i/8] |= 1 << (i % 8)
					break
				}
				if find && pos[i] == 0 {
					m.set(n, i)
				}
			}
			if find {
				return fixedArray(types.Int32, pos, m.valid, m.nulls), nil
			}
			return boolArray(hit, n, m.valid, m.nulls), nil
		}, false), nil
	}
}

// bindListConcat binds list_concat(l1, l2, …) and l1 || l2: the elements of each
// list in turn. list_concat counts a NULL list as empty and is never NULL; || is
// NULL when either list is.
func bindListConcat(c *call) (*Function, error) {
	if len(c.args) < 1 {
		return nil, c.mismatch()
	}
	et := arrow.DataType(types.Null)
	for _, a := range c.args {
		if !listish(a) {
			return nil, c.mismatch()
		}
		var ok bool
		if et, ok = commonElem(et, elemOf(a)); !ok {
			return nil, c.mismatch()
		}
	}
	operator := c.name == "||"
	if operator && len(c.args) != 2 {
		return nil, c.mismatch()
	}
	if !operator && !slices.ContainsFunc(c.args, func(a arrow.DataType) bool { return !isNullType(a) }) {
		// Only untyped NULLs: the concatenation is NULL, as in DuckDB.
		return newFunction(c, c.args, types.Null, func(_ []arrow.Array, n int) (arrow.Array, error) {
			return array.NewNull(n), nil
		}, true), nil
	}
	return newFunction(c, c.args, arrow.ListOf(et), func(in []arrow.Array, n int) (arrow.Array, error) {
		xs := make([]lists, len(in))
		srcs := make([]arrow.Array, len(in))
		base := make([]int32, len(in))
		at := int32(0)
		for k, a := range in {
			xs[k] = listsOf(a)
			v, err := elemsAs(xs[k], et)
			if err != nil {
				return nil, err
			}
			srcs[k], base[k] = v, at
			at += int32(v.Len())
		}
		src, err := concatArrays(srcs...)
		if err != nil {
			return nil, err
		}
		b := newGatherList(n)
		for i := 0; i < n; i++ {
			if operator && (xs[0].null(i) || xs[1].null(i)) {
				b.null()
				continue
			}
			for k, x := range xs {
				if x.null(i) {
					continue
				}
				s, e := x.bounds(i)
				for j := s; j < e; j++ {
					b.add(base[k] + int32(j))
				}
			}
			b.end()
		}
		return b.finish(et, src), nil
	}, false), nil
}

// bindListAdd binds list_append(list, x) (front false) and list_prepend(x, list)
// (front true, or array_push_front(list, x) with listFirst); a NULL list counts as
// empty.
func bindListAdd(front, listFirst bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 2 {
			return nil, c.mismatch()
		}
		li, xi := 0, 1
		if front && !listFirst {
			li, xi = 1, 0
		}
		if !listish(c.args[li]) {
			return nil, c.mismatch()
		}
		et, ok := commonElem(elemOf(c.args[li]), c.args[xi])
		if !ok {
			return nil, c.mismatch()
		}
		args := make([]arrow.DataType, 2)
		args[li], args[xi] = c.args[li], et
		return newFunction(c, args, arrow.ListOf(et), func(in []arrow.Array, n int) (arrow.Array, error) {
			x := listsOf(in[li])
			vals, err := elemsAs(x, et)
			if err != nil {
				return nil, err
			}
			v, err := valuesAs(in[xi], et)
			if err != nil {
				return nil, err
			}
			src, err := concatArrays(vals, v)
			if err != nil {
				return nil, err
			}
			off := int32(vals.Len())
			b := newGatherList(n)
			for i := 0; i < n; i++ {
				if front {
					b.add(off + int32(i))
				}
				if !x.null(i) {
					s, e := x.bounds(i)
					for j := s; j < e; j++ {
						b.add(int32(j))
					}
				}
				if !front {
					b.add(off + int32(i))
				}
				b.end()
			}
			return b.finish(et, src), nil
		}, false), nil
	}
}

// listMap binds a function of one list whose rows are rebuilt from the list's own
// elements: pick appends the chosen positions of row i's range [s, e).
func listMap(pick func(b *gatherList, s, e int)) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 1 || !listish(c.args[0]) {
			return nil, c.mismatch()
		}
		et := elemOf(c.args[0])
		return newFunction(c, c.args, arrow.ListOf(et), func(in []arrow.Array, n int) (arrow.Array, error) {
			x := listsOf(in[0])
			b := newGatherList(n)
			for i := 0; i < n; i++ {
				if x.null(i) {
					b.null()
					continue
				}
				s, e := x.bounds(i)
				pick(b, s, e)
				b.end()
			}
			return b.finish(et, x.vals), nil
		}, false), nil
	}
}

func reverseElems(b *gatherList, s, e int) {
	for j := e - 1; j >= s; j-- {
		b.add(int32(j))
	}
}

// bindFlatten binds flatten(list of lists): the inner lists' elements in order,
// NULL inner lists skipped.
func bindFlatten(c *call) (*Function, error) {
	if len(c.args) != 1 || !listish(c.args[0]) {
		return nil, c.mismatch()
	}
	outer := elemOf(c.args[0])
	if isNullType(outer) {
		// Lists of NULLs only (flatten([NULL])): empty lists.
		return listMap(func(*gatherList, int, int) {})(c)
	}
	et, ok := listElem(outer)
	if !ok {
		return nil, c.mismatch()
	}
	return newFunction(c, c.args, arrow.ListOf(et), func(in []arrow.Array, n int) (arrow.Array, error) {
		x := listsOf(in[0])
		inner := listsOf(x.vals)
		b := newGatherList(n)
		for i := 0; i < n; i++ {
			if x.null(i) {
				b.null()
				continue
			}
			s, e := x.bounds(i)
			for j := s; j < e; j++ {
				if inner.null(j) {
					continue
				}
				is, ie := inner.bounds(j)
				for k := is; k < ie; k++ {
					b.add(int32(k))
				}
			}
			b.end()
		}
		return b.finish(et, inner.vals), nil
	}, false), nil
}

// bindListResize binds list_resize(list, size [, value]): the first size elements,
// padded with value (NULL by default); a NULL size gives an empty list.
func bindListResize(c *call) (*Function, error) {
	if len(c.args) < 2 || len(c.args) > 3 || !listish(c.args[0]) || !intish(c.args[1]) {
		return nil, c.mismatch()
	}
	et := elemOf(c.args[0])
	args := []arrow.DataType{c.args[0], types.Int64}
	if len(c.args) == 3 {
		var ok bool
		if et, ok = commonElem(et, c.args[2]); !ok {
			return nil, c.mismatch()
		}
		args = append(args, et)
	}
	return newFunction(c, args, arrow.ListOf(et), func(in []arrow.Array, n int) (arrow.Array, error) {
		x := listsOf(in[0])
		vals, err := elemsAs(x, et)
		if err != nil {
			return nil, err
		}
		size := in[1].(*array.Int64)
		var pad arrow.Array
		src := vals
		if len(in) == 3 {
			if pad, err = valuesAs(in[2], et); err != nil {
				return nil, err
			}
			if src, err = concatArrays(vals, pad); err != nil {
				return nil, err
			}
		}
		off := int32(vals.Len())
		var total int64
		b := newGatherList(n)
		for i := 0; i < n; i++ {
			if x.null(i) {
				b.null()
				continue
			}
			if size.IsNull(i) {
				b.end()
				continue
			}
			want := size.Value(i)
			if want < 0 {
				return nil, errs.New(errs.Analysis, "list_resize: the size must not be negative, got %d", want)
			}
			if total += want; total > maxListElements {
				return nil, tooManyElements(c.name)
			}
			s, e := x.bounds(i)
			for k := int64(0); k < want; k++ {
				switch {
				case int64(s)+k < int64(e):
					b.add(int32(int64(s) + k))
				case pad != nil && !pad.IsNull(i):
					b.add(off + int32(i))
				default:
					b.add(-1)
				}
			}
			b.end()
		}
		return b.finish(et, src), nil
	}, false), nil
}

// maxListElements bounds the elements one call may make in a batch (a GiB of
// 8-byte values), so that range(0, 1e12) fails instead of exhausting memory.
const maxListElements = 1 << 27

func tooManyElements(name string) error {
	return errs.New(errs.ResourceExhausted, "%s would make more than %d list elements in one batch", name, maxListElements)
}

// bindListSets binds the tests and intersection of two lists: list_has_any (&&),
// list_has_all (@>, and <@ with the lists swapped) and list_intersect. NULL
// elements match nothing; a NULL list gives NULL.
func bindListSets(kind string) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 2 || !listish(c.args[0]) || !listish(c.args[1]) {
			return nil, c.mismatch()
		}
		et, ok := commonElem(elemOf(c.args[0]), elemOf(c.args[1]))
		if !ok {
			return nil, c.mismatch()
		}
		if !isNullType(et) && !ValidKeyType(et) {
			return nil, notKeyable(c, et)
		}
		result := arrow.DataType(types.Boolean)
		if kind == "intersect" {
			result = arrow.ListOf(et)
		}
		return newFunction(c, c.args, result, func(in []arrow.Array, n int) (arrow.Array, error) {
			a, b := listsOf(in[0]), listsOf(in[1])
			if kind == "contained" {
				a, b = b, a
			}
			av, err := elemsAs(a, et)
			if err != nil {
				return nil, err
			}
			bv, err := elemsAs(b, et)
			if err != nil {
				return nil, err
			}
			ids, ok := elemIDs(av, bv)
			if !ok {
				return nil, notKeyable(c, et)
			}
			seen := newStamps()
			var m nullMask
			bits := make([]byte, bitmapLen(n))
			out := newGatherList(n)
			for i := 0; i < n; i++ {
				if kind == "intersect" && !a.null(i) && b.null(i) {
					out.end() // DuckDB intersects with a NULL second list as with []
					continue
				}
				if a.null(i) || b.null(i) {
					m.set(n, i)
					out.null()
					continue
				}
				seen.next()
				as, ae := a.bounds(i)
				bs, be := b.bounds(i)
				var res bool
				switch kind {
				case "any":
					for j := as; j < ae; j++ {
						if !av.IsNull(j) {
							seen.mark(ids[0][j])
						}
					}
					for j := bs; j < be && !res; j++ {
						res = !bv.IsNull(j) && seen.has(ids[1][j])
					}
				case "all", "contained":
					for j := as; j < ae; j++ {
						if !av.IsNull(j) {
							seen.mark(ids[0][j])
						}
					}
					res = true
					for j := bs; j < be && res; j++ {
						res = bv.IsNull(j) || seen.has(ids[1][j])
					}
				case "intersect":
					for j := bs; j < be; j++ {
						if !bv.IsNull(j) {
							seen.mark(ids[1][j])
						}
					}
					seen.next2()
					for j := as; j < ae; j++ {
						if !av.IsNull(j) && seen.has(ids[0][j]) && !seen.has2(ids[0][j]) {
							seen.mark2(ids[0][j])
							out.add(int32(j))
						}
					}
				}
				if res {
					bits[i/8] |= 1 << (i % 8)
				}
				out.end()
			}
			if kind == "intersect" {
				return out.finish(et, av), nil
			}
			return boolArray(bits, n, m.valid, m.nulls), nil
		}, false), nil
	}
}

// stamps is a set of ids that is emptied in O(1) per row: an id is in the set when
// its stamp is the current row's. Two independent sets share the table.
type stamps struct {
	s, s2     []uint32
	cur, cur2 uint32
}

func newStamps() *stamps { return &stamps{} }

func (t *stamps) next()  { t.cur++ }
func (t *stamps) next2() { t.cur2++ }

func (t *stamps) mark(id uint32) {
	for int(id) >= len(t.s) {
		t.s = append(t.s, make([]uint32, len(t.s)+64)...)
	}
	t.s[id] = t.cur
}

func (t *stamps) has(id uint32) bool { return int(id) < len(t.s) && t.s[id] == t.cur }

func (t *stamps) mark2(id uint32) {
	for int(id) >= len(t.s2) {
		t.s2 = append(t.s2, make([]uint32, len(t.s2)+64)...)
	}
	t.s2[id] = t.cur2
}

func (t *stamps) has2(id uint32) bool { return int(id) < len(t.s2) && t.s2[id] == t.cur2 }

// bindListWhere binds list_where(list, mask): the elements whose mask element is
// true. A NULL in the mask is an error, as in DuckDB.
func bindListWhere(c *call) (*Function, error) {
	if len(c.args) != 2 || !listish(c.args[0]) || !listish(c.args[1]) {
		return nil, c.mismatch()
	}
	if mt := elemOf(c.args[1]); !isNullType(mt) && mt.ID() != arrow.BOOL {
		return nil, c.mismatch()
	}
	et := elemOf(c.args[0])
	return newFunction(c, c.args, arrow.ListOf(et), func(in []arrow.Array, n int) (arrow.Array, error) {
		x, mk := listsOf(in[0]), listsOf(in[1])
		b := newGatherList(n)
		for i := 0; i < n; i++ {
			if x.null(i) || mk.null(i) {
				b.null()
				continue
			}
			s, e := x.bounds(i)
			ms, me := mk.bounds(i)
			for k := ms; k < me; k++ {
				if mk.vals.IsNull(k) {
					return nil, errs.New(errs.Analysis, "list_where: the mask must not hold NULLs")
				}
				if k-ms < e-s && mk.vals.(*array.Boolean).Value(k) {
					b.add(int32(s + k - ms))
				}
			}
			b.end()
		}
		return b.finish(et, x.vals), nil
	}, false), nil
}

// bindListSelect binds list_select(list, positions): the elements at the 1-based
// positions, NULL for one out of range. A NULL position is an error, as in DuckDB.
func bindListSelect(c *call) (*Function, error) {
	if len(c.args) != 2 || !listish(c.args[0]) || !listish(c.args[1]) {
		return nil, c.mismatch()
	}
	pt := elemOf(c.args[1])
	if !intish(pt) {
		return nil, c.mismatch()
	}
	et := elemOf(c.args[0])
	return newFunction(c, c.args, arrow.ListOf(et), func(in []arrow.Array, n int) (arrow.Array, error) {
		x, px := listsOf(in[0]), listsOf(in[1])
		var pos *array.Int64
		if px.vals != nil && px.vals.DataType().ID() != arrow.NULL {
			p, err := Cast(px.vals, types.Int64)
			if err != nil {
				return nil, err
			}
			pos = p.(*array.Int64)
		}
		b := newGatherList(n)
		for i := 0; i < n; i++ {
			if x.null(i) || px.null(i) {
				b.null()
				continue
			}
			s, e := x.bounds(i)
			ps, pe := px.bounds(i)
			for k := ps; k < pe; k++ {
				if pos == nil || pos.IsNull(k) {
					return nil, errs.New(errs.Analysis, "list_select: the positions must not hold NULLs")
				}
				p := pos.Value(k)
				if p >= 1 && p <= int64(e-s) {
					b.add(int32(int64(s) + p - 1))
				} else {
					b.add(-1)
				}
			}
			b.end()
		}
		return b.finish(et, x.vals), nil
	}, false), nil
}

// bindListToString binds array_to_string(list, sep) over lists of any element
// type: the elements are cast to VARCHAR and joined, NULLs skipped.
func bindListToString(c *call) (*Function, error) {
	if len(c.args) != 2 || !listish(c.args[0]) || !stringish(c.args[1]) {
		return nil, c.mismatch()
	}
	et := elemOf(c.args[0])
	if types.IsString(et) {
		return bindArrayToString(c)
	}
	if !isNullType(et) && !CanCast(et, types.String) {
		return nil, c.mismatch()
	}
	strs, err := bindArrayToString(&call{name: c.name, args: []arrow.DataType{StringList, types.String}, consts: c.consts})
	if err != nil {
		return nil, err
	}
	return newFunction(c, []arrow.DataType{c.args[0], types.String}, types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
		x := listsOf(in[0])
		var vals arrow.Array
		switch {
		case x.vals == nil:
			return ConstArray(types.NullOf(types.String), n), nil
		case x.vals.DataType().ID() == arrow.NULL:
			vals = ConstArray(types.NullOf(types.String), x.vals.Len())
		default:
			v, err := Cast(x.vals, types.String)
			if err != nil {
				return nil, err
			}
			vals = v
		}
		d := in[0].Data()
		sd := array.NewData(StringList, d.Len(), []*memory.Buffer{d.Buffers()[0], d.Buffers()[1]},
			[]arrow.ArrayData{vals.Data()}, d.NullN(), d.Offset())
		return strs.Eval([]arrow.Array{array.MakeFromData(sd), in[1]}, n)
	}, false), nil
}

// bindRangeList binds range(…) and generate_series(…) as scalar functions: the
// BIGINT list from start (0 by default) to stop, by step (1 by default), stop
// excluded by range and included by generate_series. A zero step gives an empty
// list.
func bindRangeList(inclusive bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) < 1 || len(c.args) > 3 {
			return nil, c.mismatch()
		}
		if len(c.args) == 3 && temporalish(c.args[0]) && temporalish(c.args[1]) && (isInterval(c.args[2]) || isNullType(c.args[2])) &&
			!(isNullType(c.args[0]) && isNullType(c.args[1])) {
			return bindTimeRange(c, inclusive)
		}
		for _, a := range c.args {
			if !intish(a) {
				return nil, c.mismatch()
			}
		}
		return newFunction(c, repeatType(types.Int64, len(c.args)), arrow.ListOf(types.Int64), func(in []arrow.Array, n int) (arrow.Array, error) {
			var m nullMask
			offs := make([]int32, 1, n+1)
			var vals []int64
			for i := 0; i < n; i++ {
				null := false
				for _, a := range in {
					null = null || a.IsNull(i)
				}
				if null {
					m.set(n, i)
					offs = append(offs, int32(len(vals)))
					continue
				}
				start, stop, step := int64(0), int64(0), int64(1)
				switch len(in) {
				case 1:
					stop = in[0].(*array.Int64).Value(i)
				default:
					start, stop = in[0].(*array.Int64).Value(i), in[1].(*array.Int64).Value(i)
					if len(in) == 3 {
						step = in[2].(*array.Int64).Value(i)
					}
				}
				cnt := seriesLen(start, stop, step, inclusive)
				if cnt > uint64(maxListElements-len(vals)) {
					return nil, tooManyElements(c.name)
				}
				for k, v := uint64(0), start; k < cnt; k, v = k+1, v+step {
					vals = append(vals, v)
				}
				offs = append(offs, int32(len(vals)))
			}
			return makeList(types.Int64, offs, fixedArray(types.Int64, vals, nil, 0), m.valid, m.nulls), nil
		}, false), nil
	}
}

// seriesLen is the number of values from start towards stop by step, stop
// included or not; 0 for a zero step or a stop behind start.
func seriesLen(start, stop, step int64, inclusive bool) uint64 {
	var diff, by uint64
	switch {
	case step > 0 && stop >= start:
		diff, by = uint64(stop)-uint64(start), uint64(step)
	case step < 0 && stop <= start:
		diff, by = uint64(start)-uint64(stop), uint64(-(step+1))+1
	default:
		return 0
	}
	n := diff / by
	if diff%by != 0 || inclusive {
		n++
	}
	return n
}

// bindTimeRange binds range and generate_series of timestamps (dates are cast to
// TIMESTAMP) by an INTERVAL, as scalar functions: TIMESTAMP[]. The interval's parts
// must not be of mixed signs, and the bounds must be finite.
func bindTimeRange(c *call, inclusive bool) (*Function, error) {
	args := []arrow.DataType{types.Timestamp, types.Timestamp, types.Interval}
	return newFunction(c, args, arrow.ListOf(types.Timestamp), func(in []arrow.Array, n int) (arrow.Array, error) {
		var m nullMask
		offs := make([]int32, 1, n+1)
		var vals []int64
		for i := 0; i < n; i++ {
			if in[0].IsNull(i) || in[1].IsNull(i) || in[2].IsNull(i) {
				m.set(n, i)
				offs = append(offs, int32(len(vals)))
				continue
			}
			start := int64(in[0].(*array.Timestamp).Value(i))
			stop := int64(in[1].(*array.Timestamp).Value(i))
			iv := in[2].(*array.MonthDayNanoInterval).Value(i)
			pos := iv.Months >= 0 && iv.Days >= 0 && iv.Nanoseconds >= 0
			neg := iv.Months <= 0 && iv.Days <= 0 && iv.Nanoseconds <= 0
			if !pos && !neg {
				return nil, errs.New(errs.Analysis, "%s: an interval of mixed signs is not supported", c.name)
			}
			if isInfiniteTs(start) || isInfiniteTs(stop) {
				return nil, errs.New(errs.Analysis, "%s: the bounds must be finite", c.name)
			}
			zero := pos && neg
			for v := start; !zero; {
				if pos && (v > stop || v == stop && !inclusive) || !pos && (v < stop || v == stop && !inclusive) {
					break
				}
				if len(vals) >= maxListElements {
					return nil, tooManyElements(c.name)
				}
				vals = append(vals, v)
				next, ok := AddIntervalMicros(v, iv)
				if !ok {
					break
				}
				v = next
			}
			offs = append(offs, int32(len(vals)))
		}
		return makeList(types.Timestamp, offs, fixedArray(types.Timestamp, vals, nil, 0), m.valid, m.nulls), nil
	}, false), nil
}

func isInfiniteTs(v int64) bool { return v >= types.TimestampInfinity || v <= -types.TimestampInfinity }

// bindListRepeat binds repeat(list, count): the list's elements count times over.
func bindListRepeat(c *call) (*Function, error) {
	if len(c.args) != 2 || !listish(c.args[0]) || !intish(c.args[1]) {
		return nil, c.mismatch()
	}
	et := elemOf(c.args[0])
	return newFunction(c, []arrow.DataType{c.args[0], types.Int64}, arrow.ListOf(et), func(in []arrow.Array, n int) (arrow.Array, error) {
		x := listsOf(in[0])
		cnt := in[1].(*array.Int64)
		b := newGatherList(n)
		total := int64(0)
		for i := 0; i < n; i++ {
			if x.null(i) || cnt.IsNull(i) {
				b.null()
				continue
			}
			s, e := x.bounds(i)
			k := cnt.Value(i)
			if k > 0 {
				if total += k * int64(e-s); total > maxListElements || k > maxListElements {
					return nil, tooManyElements(c.name)
				}
			}
			for r := int64(0); r < k; r++ {
				for j := s; j < e; j++ {
					b.add(int32(j))
				}
			}
			b.end()
		}
		return b.finish(et, x.vals), nil
	}, false), nil
}

// bindListVector binds the distances of two numeric lists of equal length:
// list_inner_product, list_distance (Euclidean) and list_cosine_similarity, as
// DOUBLE. NULL elements and lists of different lengths are errors, as in DuckDB.
func bindListVector(kind string) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 2 {
			return nil, c.mismatch()
		}
		for _, a := range c.args {
			if !listish(a) || !numericish(elemOf(a)) {
				return nil, c.mismatch()
			}
		}
		return newFunction(c, c.args, types.Float64, func(in []arrow.Array, n int) (arrow.Array, error) {
			a, b := listsOf(in[0]), listsOf(in[1])
			av, err := elemsAs(a, types.Float64)
			if err != nil {
				return nil, err
			}
			bv, err := elemsAs(b, types.Float64)
			if err != nil {
				return nil, err
			}
			var m nullMask
			out := make([]float64, n)
			for i := 0; i < n; i++ {
				if a.null(i) || b.null(i) {
					m.set(n, i)
					continue
				}
				as, ae := a.bounds(i)
				bs, be := b.bounds(i)
				if ae-as != be-bs {
					return nil, errs.New(errs.Analysis, "%s: the lists must have equal lengths, got %d and %d", c.name, ae-as, be-bs)
				}
				if av.NullN() > 0 || bv.NullN() > 0 {
					for j := 0; j < ae-as; j++ {
						if av.IsNull(as+j) || bv.IsNull(bs+j) {
							return nil, errs.New(errs.Analysis, "%s: the lists must not hold NULLs", c.name)
						}
					}
				}
				x := av.(*array.Float64).Float64Values()[as:ae]
				y := bv.(*array.Float64).Float64Values()[bs:be]
				var dot, xx, yy, dd float64
				for j := range x {
					dot += x[j] * y[j]
					xx += x[j] * x[j]
					yy += y[j] * y[j]
					d := x[j] - y[j]
					dd += d * d
				}
				switch kind {
				case "inner":
					out[i] = dot
				case "distance":
					out[i] = math.Sqrt(dd)
				case "cosine":
					out[i] = dot / (math.Sqrt(xx) * math.Sqrt(yy))
				}
			}
			return fixedArray(types.Float64, out, m.valid, m.nulls), nil
		}, false), nil
	}
}

// bindArrayLength binds array_length(list [, dimension]): the list's length. Only
// dimension 1 is measured, as in DuckDB, which refuses the others.
func bindArrayLength(c *call) (*Function, error) {
	if len(c.args) == 1 {
		return bindListLen(c)
	}
	if len(c.args) != 2 || !listish(c.args[0]) || !intish(c.args[1]) {
		return nil, c.mismatch()
	}
	return newFunction(c, []arrow.DataType{c.args[0], types.Int64}, types.Int64, func(in []arrow.Array, n int) (arrow.Array, error) {
		x := listsOf(in[0])
		dim := in[1].(*array.Int64)
		out := make([]int64, n)
		var m nullMask
		for i := 0; i < n; i++ {
			if x.null(i) || dim.IsNull(i) {
				m.set(n, i)
				continue
			}
			if d := dim.Value(i); d != 1 {
				return nil, errs.New(errs.Analysis, "array_length: only dimension 1 is supported, got %d", d)
			}
			s, e := x.bounds(i)
			out[i] = int64(e - s)
		}
		return fixedArray(types.Int64, out, m.valid, m.nulls), nil
	}, false), nil
}
