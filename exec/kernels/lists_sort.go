package kernels

import (
	"bytes"
	"cmp"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// Sorting and de-duplicating the elements of each list.

// elemOrder compares two non-NULL elements of arr, typed once for the array; floats
// order NaN greatest, nested values as DuckDB orders them. ok is false for elements
// that cannot be ordered.
func elemOrder(arr arrow.Array) (func(i, j int) int, bool) {
	switch a := arr.(type) {
	case *array.Int8:
		return orderOf(a.Int8Values()), true
	case *array.Int16:
		return orderOf(a.Int16Values()), true
	case *array.Int32:
		return orderOf(a.Int32Values()), true
	case *array.Int64:
		return orderOf(a.Int64Values()), true
	case *array.Uint8:
		return orderOf(a.Uint8Values()), true
	case *array.Uint16:
		return orderOf(a.Uint16Values()), true
	case *array.Uint32:
		return orderOf(a.Uint32Values()), true
	case *array.Uint64:
		return orderOf(a.Uint64Values()), true
	case *array.Float32:
		v := a.Float32Values()
		return func(i, j int) int { return types.CompareFloat(float64(v[i]), float64(v[j])) }, true
	case *array.Float64:
		v := a.Float64Values()
		return func(i, j int) int { return types.CompareFloat(v[i], v[j]) }, true
	case *array.Date32:
		return orderOf(a.Date32Values()), true
	case *array.Timestamp:
		return orderOf(a.TimestampValues()), true
	case *array.String:
		return func(i, j int) int { return strings.Compare(a.Value(i), a.Value(j)) }, true
	case *array.Binary:
		return func(i, j int) int { return bytes.Compare(a.Value(i), a.Value(j)) }, true
	case *array.Boolean:
		return func(i, j int) int { return cmp.Compare(boolInt(a.Value(i)), boolInt(a.Value(j))) }, true
	case *array.Decimal128:
		return func(i, j int) int { return a.Value(i).Cmp(a.Value(j)) }, true
	case *array.Decimal64:
		return orderOf(int64sOf(a)), true
	case *array.Null:
		return func(i, j int) int { return 0 }, true
	}
	if NestedOrderable(arr.DataType()) {
		// Nested elements order as their order-preserving encodings.
		keys := NestedKeys(arr)
		return func(i, j int) int { return bytes.Compare(keys.Value(i), keys.Value(j)) }, true
	}
	if types.IsOrderable(arr.DataType()) && !types.IsNested(arr.DataType()) {
		return func(i, j int) int { return types.Compare(types.ValueAt(arr, i), types.ValueAt(arr, j)) }, true
	}
	return nil, false
}

func orderOf[T cmp.Ordered](v []T) func(i, j int) int {
	return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sortOrder reads list_sort's order and NULL order arguments: 'ASC' or 'DESC' and
// 'NULLS FIRST' or 'NULLS LAST', any case. DuckDB's defaults are ascending with
// NULLs last.
func sortOrder(c *call, desc bool) (bool, bool, error) {
	nullsFirst := false
	args := c.args[1:]
	if c.name == "list_reverse_sort" || c.name == "array_reverse_sort" {
		if len(args) > 1 {
			return false, false, c.mismatch()
		}
		if len(args) == 1 {
			s, ok := c.constString(1)
			if !ok {
				return false, false, errs.New(errs.Analysis, "%s: the NULL order must be a constant string", c.name)
			}
			nf, err := nullOrder(c, s)
			return desc, nf, err
		}
		return desc, nullsFirst, nil
	}
	if len(args) > 2 {
		return false, false, c.mismatch()
	}
	for k := range args {
		s, ok := c.constString(1 + k)
		if !ok {
			return false, false, errs.New(errs.Analysis, "%s: the sort order must be a constant string", c.name)
		}
		if k == 0 {
			switch strings.ToUpper(strings.TrimSpace(s)) {
			case "ASC":
				desc = false
			case "DESC":
				desc = true
			default:
				return false, false, errs.New(errs.Analysis, "%s: unknown sort order %s (ASC or DESC)", c.name, types.QuoteString(s))
			}
			continue
		}
		nf, err := nullOrder(c, s)
		if err != nil {
			return false, false, err
		}
		nullsFirst = nf
	}
	return desc, nullsFirst, nil
}

func nullOrder(c *call, s string) (bool, error) {
	switch strings.Join(strings.Fields(strings.ToUpper(s)), " ") {
	case "NULLS FIRST":
		return true, nil
	case "NULLS LAST":
		return false, nil
	}
	return false, errs.New(errs.Analysis, "%s: unknown NULL order %s (NULLS FIRST or NULLS LAST)", c.name, types.QuoteString(s))
}

// bindListSort binds list_sort(list [, order [, nulls]]) and list_reverse_sort(list
// [, nulls]).
func bindListSort(reverse bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) < 1 || !listish(c.args[0]) {
			return nil, c.mismatch()
		}
		for _, a := range c.args[1:] {
			if !stringish(a) {
				return nil, c.mismatch()
			}
		}
		et := elemOf(c.args[0])
		for k := 1; k < len(c.args); k++ {
			if isNullType(c.args[k]) || k < len(c.consts) && c.consts[k] != nil && c.consts[k].Null {
				// A NULL order gives NULL, as in DuckDB.
				return newFunction(c, c.args, arrow.ListOf(et), func(in []arrow.Array, n int) (arrow.Array, error) {
					return ConstArray(types.NullOf(arrow.ListOf(et)), n), nil
				}, false), nil
			}
		}
		desc, nullsFirst, err := sortOrder(c, reverse)
		if err != nil {
			return nil, err
		}
		if types.IsNested(et) && !NestedOrderable(et) {
			return nil, notKeyable(c, et)
		}
		args := append([]arrow.DataType{c.args[0]}, repeatType(types.String, len(c.args)-1)...)
		return newFunction(c, args, arrow.ListOf(et), func(in []arrow.Array, n int) (arrow.Array, error) {
			x := listsOf(in[0])
			b := newGatherList(n)
			if x.vals == nil {
				for i := 0; i < n; i++ {
					b.null()
				}
				return b.finish(et, nil), nil
			}
			order, ok := elemOrder(x.vals)
			if !ok {
				return nil, notKeyable(c, et)
			}
			vals := x.vals
			var idx []int32
			for i := 0; i < n; i++ {
				if x.null(i) {
					b.null()
					continue
				}
				s, e := x.bounds(i)
				idx = idx[:0]
				for j := s; j < e; j++ {
					idx = append(idx, int32(j))
				}
				slices.SortStableFunc(idx, func(p, q int32) int {
					np, nq := vals.IsNull(int(p)), vals.IsNull(int(q))
					switch {
					case np && nq:
						return 0
					case np:
						if nullsFirst {
							return -1
						}
						return 1
					case nq:
						if nullsFirst {
							return 1
						}
						return -1
					}
					r := order(int(p), int(q))
					if desc {
						r = -r
					}
					return r
				})
				for _, j := range idx {
					b.add(j)
				}
				b.end()
			}
			return b.finish(et, vals), nil
		}, false), nil
	}
}

// bindListDistinct binds list_distinct(list) (count false), the distinct non-NULL
// elements in the order they first appear, and list_unique(list) (count true),
// their number.
func bindListDistinct(count bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 1 || !listish(c.args[0]) {
			return nil, c.mismatch()
		}
		et := elemOf(c.args[0])
		if !isNullType(et) && !ValidKeyType(et) {
			return nil, notKeyable(c, et)
		}
		result := arrow.DataType(arrow.ListOf(et))
		if count {
			result = types.Uint64
		}
		return newFunction(c, c.args, result, func(in []arrow.Array, n int) (arrow.Array, error) {
			x := listsOf(in[0])
			b := newGatherList(n)
			cnt := make([]uint64, n)
			var m nullMask
			var ids [][]uint32
			if x.vals != nil {
				var ok bool
				if ids, ok = elemIDs(x.vals); !ok {
					return nil, notKeyable(c, et)
				}
			}
			seen := newStamps()
			for i := 0; i < n; i++ {
				if x.null(i) {
					b.null()
					m.set(n, i)
					continue
				}
				seen.next()
				s, e := x.bounds(i)
				for j := s; j < e; j++ {
					if x.vals.IsNull(j) || seen.has(ids[0][j]) {
						continue
					}
					seen.mark(ids[0][j])
					b.add(int32(j))
					cnt[i]++
				}
				b.end()
			}
			if count {
				return fixedArray(types.Uint64, cnt, m.valid, m.nulls), nil
			}
			return b.finish(et, x.vals), nil
		}, false), nil
	}
}
