package kernels

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// MAP functions with DuckDB's semantics. A map array is a list of (key, value)
// structs: its keys and values are two child arrays read through the offsets, and a
// map result is built, as a list result is, from offsets and gathered positions.

// mapParts is a map argument: the map array (nil for an untyped NULL), its keys and
// values.
type mapParts struct {
	lists
	keys, items arrow.Array
}

func mapsOf(a arrow.Array) mapParts {
	if m, ok := a.(*array.Map); ok {
		return mapParts{lists: listsOf(m), keys: m.Keys(), items: m.Items()}
	}
	return mapParts{}
}

// mapTypes is the key and value types of a map argument; ok is false for anything
// but a map or an untyped NULL.
func mapTypes(t arrow.DataType) (k, v arrow.DataType, ok bool) {
	if m, isMap := t.(*arrow.MapType); isMap {
		return m.KeyType(), m.ItemType(), true
	}
	if isNullType(t) {
		return types.Null, types.Null, true
	}
	return nil, nil, false
}

// MapOf is the type MAP(k, v).
func MapOf(k, v arrow.DataType) *arrow.MapType { return arrow.MapOf(k, v) }

// makeMap wraps offsets, keys and values (each one element per entry) and a
// validity bitmap as a map array of type MAP(k, v).
func makeMap(k, v arrow.DataType, offs []int32, keys, items arrow.Array, valid []byte, nulls int) arrow.Array {
	n := len(offs) - 1
	if nulls == 0 {
		valid = nil
	} else {
		valid = validRows(valid, n)
	}
	mt := MapOf(k, v)
	entries := array.NewData(mt.Elem(), keys.Len(), []*memory.Buffer{nil}, []arrow.ArrayData{keys.Data(), items.Data()}, 0, 0)
	data := array.NewData(mt, n, []*memory.Buffer{validBuf(valid), memory.NewBufferBytes(bytesOf(offs))},
		[]arrow.ArrayData{entries}, nulls, 0)
	return array.MakeFromData(data)
}

// finishMap makes a map result from a gatherList of entry positions into keys and
// items.
func finishMap(b *gatherList, k, v arrow.DataType, keys, items arrow.Array) arrow.Array {
	gather := func(t arrow.DataType, src arrow.Array) arrow.Array {
		if src == nil || src.DataType().ID() == arrow.NULL {
			return ConstArray(types.NullOf(t), len(b.idx))
		}
		return vector.Take(src, b.idx)
	}
	return makeMap(k, v, b.offs, gather(k, keys), gather(v, items), b.valid, b.nulls)
}

// bindMap binds map() (an empty map) and map(keys, values): the lists paired up. The
// lists must be as long as each other, and the keys distinct and not NULL.
func bindMap(c *call) (*Function, error) {
	if len(c.args) == 0 {
		return newFunction(c, nil, MapOf(types.Null, types.Null), func(in []arrow.Array, n int) (arrow.Array, error) {
			b := newGatherList(n)
			for i := 0; i < n; i++ {
				b.end()
			}
			return finishMap(b, types.Null, types.Null, nil, nil), nil
		}, false), nil
	}
	if len(c.args) != 2 || !listish(c.args[0]) || !listish(c.args[1]) {
		return nil, c.mismatch()
	}
	kt, vt := elemOf(c.args[0]), elemOf(c.args[1])
	if !isNullType(kt) && !ValidKeyType(kt) {
		return nil, notKeyable(c, kt)
	}
	return newFunction(c, c.args, MapOf(kt, vt), func(in []arrow.Array, n int) (arrow.Array, error) {
		ks, vs := listsOf(in[0]), listsOf(in[1])
		b := newGatherList(n)
		var ids [][]uint32
		if ks.vals != nil {
			var ok bool
			if ids, ok = elemIDs(ks.vals); !ok {
				return nil, notKeyable(c, kt)
			}
		}
		seen := newStamps()
		for i := 0; i < n; i++ {
			if ks.null(i) || vs.null(i) {
				b.null()
				continue
			}
			s, e := ks.bounds(i)
			vsS, vsE := vs.bounds(i)
			if e-s != vsE-vsS {
				return nil, errs.New(errs.Analysis, "map: the key list has %d elements and the value list %d; they must be as long", e-s, vsE-vsS)
			}
			seen.next()
			for j := s; j < e; j++ {
				if ks.vals.IsNull(j) {
					return nil, errs.New(errs.Analysis, "map: a key must not be NULL")
				}
				if seen.has(ids[0][j]) {
					return nil, errs.New(errs.Analysis, "map: the keys must be unique")
				}
				seen.mark(ids[0][j])
			}
			for j := s; j < e; j++ {
				b.add(int32(j))
			}
			b.end()
		}
		// The keys are gathered by the same positions shifted onto the value list.
		keys := ks.vals
		items := vs.vals
		if items != nil && keys != nil {
			vi := make([]int32, len(b.idx))
			k := 0
			for i := 0; i < n; i++ {
				if ks.null(i) || vs.null(i) {
					continue
				}
				s, _ := ks.bounds(i)
				v0, _ := vs.bounds(i)
				for r := b.offs[i]; r < b.offs[i+1]; r++ {
					vi[k] = int32(v0) + b.idx[r] - int32(s)
					k++
				}
			}
			var kcol arrow.Array = ConstArray(types.NullOf(kt), len(b.idx))
			if keys.DataType().ID() != arrow.NULL {
				kcol = vector.Take(keys, b.idx)
			}
			var vcol arrow.Array = ConstArray(types.NullOf(vt), len(vi))
			if items.DataType().ID() != arrow.NULL {
				vcol = vector.Take(items, vi)
			}
			return makeMap(kt, vt, b.offs, kcol, vcol, b.valid, b.nulls), nil
		}
		return finishMap(b, kt, vt, nil, nil), nil
	}, false), nil
}

// bindMapFromEntries binds map_from_entries(list of (key, value) structs).
func bindMapFromEntries(c *call) (*Function, error) {
	if len(c.args) != 1 || !listish(c.args[0]) {
		return nil, c.mismatch()
	}
	if isNullType(elemOf(c.args[0])) {
		// map_from_entries([]) or of NULL: an empty map, or NULL.
		return newFunction(c, c.args, MapOf(types.Null, types.Null), func(in []arrow.Array, n int) (arrow.Array, error) {
			x := listsOf(in[0])
			b := newGatherList(n)
			for i := 0; i < n; i++ {
				if x.null(i) {
					b.null()
				} else {
					b.end()
				}
			}
			return finishMap(b, types.Null, types.Null, nil, nil), nil
		}, false), nil
	}
	st, ok := elemOf(c.args[0]).(*arrow.StructType)
	if !ok || st.NumFields() != 2 {
		return nil, c.mismatch()
	}
	kt, vt := st.Field(0).Type, st.Field(1).Type
	if !ValidKeyType(kt) {
		return nil, notKeyable(c, kt)
	}
	return newFunction(c, c.args, MapOf(kt, vt), func(in []arrow.Array, n int) (arrow.Array, error) {
		x := listsOf(in[0])
		entries := x.vals.(*array.Struct)
		keys, items := entries.Field(0), entries.Field(1)
		ids, ok := elemIDs(keys)
		if !ok {
			return nil, notKeyable(c, kt)
		}
		seen := newStamps()
		b := newGatherList(n)
		for i := 0; i < n; i++ {
			if x.null(i) {
				b.null()
				continue
			}
			seen.next()
			s, e := x.bounds(i)
			for j := s; j < e; j++ {
				if entries.IsNull(j) || keys.IsNull(j) {
					return nil, errs.New(errs.Analysis, "map_from_entries: a key must not be NULL")
				}
				if seen.has(ids[0][j]) {
					return nil, errs.New(errs.Analysis, "map_from_entries: the keys must be unique")
				}
				seen.mark(ids[0][j])
				b.add(int32(j))
			}
			b.end()
		}
		return finishMap(b, kt, vt, keys, items), nil
	}, false), nil
}

// bindMapPart binds map_keys (part "keys"), map_values ("values") and map_entries
// ("entries"): a map's keys, values or (key, value) structs as a list.
func bindMapPart(part string) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 1 {
			return nil, c.mismatch()
		}
		kt, vt, ok := mapTypes(c.args[0])
		if !ok {
			return nil, c.mismatch()
		}
		et := kt
		switch part {
		case "values":
			et = vt
		case "entries":
			et = arrow.StructOf(arrow.Field{Name: "key", Type: kt, Nullable: true}, arrow.Field{Name: "value", Type: vt, Nullable: true})
		}
		return newFunction(c, c.args, arrow.ListOf(et), func(in []arrow.Array, n int) (arrow.Array, error) {
			m := mapsOf(in[0])
			b := newGatherList(n)
			for i := 0; i < n; i++ {
				if m.null(i) {
					b.null()
					continue
				}
				s, e := m.bounds(i)
				for j := s; j < e; j++ {
					b.add(int32(j))
				}
				b.end()
			}
			var src arrow.Array
			switch part {
			case "keys":
				src = m.keys
			case "values":
				src = m.items
			default:
				if m.keys != nil {
					src = array.NewStructData(array.NewData(et, m.keys.Len(), []*memory.Buffer{nil},
						[]arrow.ArrayData{m.keys.Data(), m.items.Data()}, 0, 0))
				}
			}
			return b.finish(et, src), nil
		}, false), nil
	}
}

// bindMapLookup binds map_extract(map, key) and element_at (the value under key as
// a one-element list, [] when absent) and map_contains(map, key).
func bindMapLookup(contains bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 2 {
			return nil, c.mismatch()
		}
		kt, vt, ok := mapTypes(c.args[0])
		if !ok {
			return nil, c.mismatch()
		}
		ct, ok := commonElem(kt, c.args[1])
		if !ok {
			return nil, c.mismatch()
		}
		if !isNullType(ct) && !ValidKeyType(ct) {
			return nil, notKeyable(c, ct)
		}
		result := arrow.DataType(arrow.ListOf(vt))
		if contains {
			result = types.Boolean
		}
		return newFunction(c, []arrow.DataType{c.args[0], ct}, result, func(in []arrow.Array, n int) (arrow.Array, error) {
			m := mapsOf(in[0])
			key := Decode(in[1])
			keys := m.keys
			if keys == nil {
				keys = array.NewNull(0)
			}
			keys, err := valuesAs(keys, ct)
			if err != nil {
				return nil, err
			}
			if keys.DataType().ID() == arrow.NULL && key.DataType().ID() != arrow.NULL {
				keys = ConstArray(types.NullOf(key.DataType()), keys.Len())
			}
			ids, ok := elemIDs(keys, key)
			if !ok {
				return nil, notKeyable(c, ct)
			}
			b := newGatherList(n)
			var mk nullMask
			bits := make([]byte, bitmapLen(n))
			for i := 0; i < n; i++ {
				if m.null(i) || contains && key.IsNull(i) {
					b.null()
					mk.set(n, i)
					continue
				}
				s, e := m.bounds(i)
				for j := s; j < e && !key.IsNull(i); j++ {
					if !keys.IsNull(j) && ids[0][j] == ids[1][i] {
						b.add(int32(j))
						bits[i/8] |= 1 << (i % 8)
						break
					}
				}
				b.end()
			}
			if contains {
				return boolArray(bits, n, mk.valid, mk.nulls), nil
			}
			return b.finish(vt, m.items), nil
		}, false), nil
	}
}

// bindCardinality binds cardinality(map): its number of entries, UBIGINT.
func bindCardinality(c *call) (*Function, error) {
	if len(c.args) != 1 {
		return nil, c.mismatch()
	}
	if _, _, ok := mapTypes(c.args[0]); !ok {
		return nil, c.mismatch()
	}
	return newFunction(c, c.args, types.Uint64, func(in []arrow.Array, n int) (arrow.Array, error) {
		m := mapsOf(in[0])
		out := make([]uint64, n)
		var mk nullMask
		for i := 0; i < n; i++ {
			if m.null(i) {
				mk.set(n, i)
				continue
			}
			s, e := m.bounds(i)
			out[i] = uint64(e - s)
		}
		return fixedArray(types.Uint64, out, mk.valid, mk.nulls), nil
	}, false), nil
}

// bindMapConcat binds map_concat(m1, m2, …): the entries of every map, a key's
// value taken from the last map that has it, at the place of its first entry. NULL
// maps count as empty; when every map is NULL, so is the result (DuckDB).
func bindMapConcat(c *call) (*Function, error) {
	if len(c.args) < 1 {
		return nil, c.mismatch()
	}
	kt, vt := arrow.DataType(types.Null), arrow.DataType(types.Null)
	for _, a := range c.args {
		k, v, ok := mapTypes(a)
		if !ok {
			return nil, c.mismatch()
		}
		if kt, ok = commonElem(kt, k); !ok {
			return nil, c.mismatch()
		}
		if vt, ok = commonElem(vt, v); !ok {
			return nil, c.mismatch()
		}
	}
	if !isNullType(kt) && !ValidKeyType(kt) {
		return nil, notKeyable(c, kt)
	}
	return newFunction(c, c.args, MapOf(kt, vt), func(in []arrow.Array, n int) (arrow.Array, error) {
		ms := make([]mapParts, len(in))
		keys := make([]arrow.Array, len(in))
		items := make([]arrow.Array, len(in))
		base := make([]int32, len(in))
		at := int32(0)
		for k, a := range in {
			ms[k] = mapsOf(a)
			kk, vv := ms[k].keys, ms[k].items
			if kk == nil {
				kk, vv = array.NewNull(0), array.NewNull(0)
			}
			var err error
			if keys[k], err = valuesAs(kk, kt); err != nil {
				return nil, err
			}
			if items[k], err = valuesAs(vv, vt); err != nil {
				return nil, err
			}
			base[k] = at
			at += int32(kk.Len())
		}
		allKeys, err := concatArrays(keys...)
		if err != nil {
			return nil, err
		}
		allItems, err := concatArrays(items...)
		if err != nil {
			return nil, err
		}
		ids, ok := elemIDs(allKeys)
		if !ok {
			return nil, notKeyable(c, kt)
		}
		b := newGatherList(n)
		slot := map[uint32]int{}
		for i := 0; i < n; i++ {
			clear(slot)
			start := len(b.idx)
			allNull := true
			for _, m := range ms {
				allNull = allNull && m.null(i)
			}
			if allNull {
				b.null()
				continue
			}
			for k, m := range ms {
				if m.null(i) {
					continue
				}
				s, e := m.bounds(i)
				for j := s; j < e; j++ {
					p := base[k] + int32(j)
					// A key already seen keeps its place and takes this entry
					// (an equal key, a later value).
					if at, dup := slot[ids[0][p]]; dup {
						b.idx[start+at] = p
						continue
					}
					slot[ids[0][p]] = len(b.idx) - start
					b.add(p)
				}
			}
			b.end()
		}
		return makeMap(kt, vt, b.offs, takeOrNull(allKeys, b.idx, kt), takeOrNull(allItems, b.idx, vt), b.valid, b.nulls), nil
	}, false), nil
}

func takeOrNull(src arrow.Array, idx []int32, t arrow.DataType) arrow.Array {
	if src == nil || src.DataType().ID() == arrow.NULL {
		return ConstArray(types.NullOf(t), len(idx))
	}
	return vector.Take(src, idx)
}

// addMapFunctions enters the map functions into the registry.
func addMapFunctions() {
	registry["map"] = bindMap
	registry["map_from_entries"] = bindMapFromEntries
	registry["map_keys"] = bindMapPart("keys")
	registry["map_values"] = bindMapPart("values")
	registry["map_entries"] = bindMapPart("entries")
	registry["map_extract"] = bindMapLookup(false)
	registry["element_at"] = bindMapLookup(false)
	registry["map_contains"] = bindMapLookup(true)
	registry["cardinality"] = bindCardinality
	registry["map_concat"] = bindMapConcat
}

// MapArray wraps offsets (one more than the rows), keys and values (one per entry)
// and a validity bitmap (nil when no row is NULL) as a map array of type MAP(k, v).
func MapArray(k, v arrow.DataType, offs []int32, keys, items arrow.Array, valid []byte, nulls int) arrow.Array {
	return makeMap(k, v, offs, keys, items, valid, nulls)
}
