package kernels

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// Casts into and between lists, structs and maps, as DuckDB makes them: a list casts
// element by element, a struct field by field, a map key and value by key and value;
// text parses from the form DuckDB writes ([1, 2, NULL], {'a': 1, 'b': x}, {k=1}).

// canCastNested reports the nested casts Cast supports.
func canCastNested(from, to arrow.DataType) bool {
	switch {
	case types.IsString(from):
		return NestedCastable(to)
	case types.IsString(to):
		return true
	}
	switch f := from.(type) {
	case *arrow.ListType:
		if t, ok := to.(*arrow.ListType); ok {
			return CanCast(f.Elem(), t.Elem())
		}
	case *arrow.StructType:
		if t, ok := to.(*arrow.StructType); ok {
			src := structSources(f, t)
			matched := false
			for i, j := range src {
				if j >= 0 {
					matched = true
					if !CanCast(f.Field(j).Type, t.Field(i).Type) {
						return false
					}
				}
			}
			return matched
		}
	case *arrow.MapType:
		if t, ok := to.(*arrow.MapType); ok {
			return CanCast(f.KeyType(), t.KeyType()) && CanCast(f.ItemType(), t.ItemType())
		}
	}
	return false
}

// NestedCastable reports a list, struct or map type that text can be cast to: its
// leaves are types a string casts to.
func NestedCastable(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.ListType:
		return nestedLeafCastable(t.Elem())
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if !nestedLeafCastable(f.Type) {
				return false
			}
		}
		return t.NumFields() > 0
	case *arrow.MapType:
		return nestedLeafCastable(t.KeyType()) && nestedLeafCastable(t.ItemType())
	}
	return false
}

func nestedLeafCastable(dt arrow.DataType) bool {
	if types.IsNested(dt) {
		return NestedCastable(dt)
	}
	return types.IsString(dt) || isScalarTarget(dt)
}

// castNestedText casts text to a nested type or a nested value to text; with try,
// as TRY_CAST does (see parseNested).
func castNestedText(arr arrow.Array, to arrow.DataType, try bool) (arrow.Array, error) {
	if types.IsString(to) {
		out := nestedToString(arr)
		if to.ID() != arrow.STRING {
			return Cast(out, to)
		}
		return out, nil
	}
	s := plainStrings(arr)
	texts := make([]string, s.Len())
	nulls := make([]bool, s.Len())
	for i := range texts {
		if s.IsNull(i) {
			nulls[i] = true
			continue
		}
		texts[i] = s.Value(i)
	}
	return parseNested(texts, nulls, to, try)
}

// nestedToString renders each row in DuckDB's text form.
func nestedToString(arr arrow.Array) arrow.Array {
	n := arr.Len()
	b := newStrBuilder(n, 16*n)
	for i := range n {
		if arr.IsNull(i) {
			b.addNull()
			continue
		}
		b.add(types.ValueAt(arr, i).S)
	}
	return b.finish()
}

// nestedCastErr is DuckDB's error for text that does not read as the nested type.
func nestedCastErr(text string, to arrow.DataType) error {
	return errs.New(errs.Analysis, "could not convert string '%s' to %s", text, types.Name(to))
}

// parseNested reads texts (NULL where nulls says) as values of the nested type to.
// The structure is read a level at a time for all rows, and the leaves are cast from
// text by the scalar casts, a column at a time. With try (TRY_CAST), a row whose text
// is not of the type's form is NULL and an element that does not convert is a NULL
// element, as in DuckDB; without, either is an error.
func parseNested(texts []string, nulls []bool, to arrow.DataType, try bool) (arrow.Array, error) {
	n := len(texts)
	if !types.IsNested(to) {
		b := newStrBuilder(n, 8*n)
		for i, s := range texts {
			if nulls[i] {
				b.addNull()
				continue
			}
			b.add(s)
		}
		if try {
			return TryCast(b.finish(), to)
		}
		return Cast(b.finish(), to)
	}
	nulls = append([]bool(nil), nulls...) // rows that fail under try become NULL
	// fail handles a row that does not read: NULL under try, else the error.
	fail := func(i int) error {
		if try {
			nulls[i] = true
			return nil
		}
		return nestedCastErr(texts[i], to)
	}
	var children []arrow.ArrayData
	var offs []int32
	switch t := to.(type) {
	case *arrow.ListType, *arrow.MapType:
		mt, isMap := t.(*arrow.MapType)
		open, close := byte('['), byte(']')
		if isMap {
			open, close = '{', '}'
		}
		offs = make([]int32, 1, n+1)
		var keys, vals []string
		var keyNulls, valNulls []bool
		for i, s := range texts {
			if !nulls[i] {
				if rk, rv, rn, ok := splitEntries(s, open, close, isMap); ok {
					keys, vals = append(keys, rk...), append(vals, rv...)
					keyNulls, valNulls = append(keyNulls, make([]bool, len(rk))...), append(valNulls, rn...)
				} else if err := fail(i); err != nil {
					return nil, err
				}
			}
			offs = append(offs, int32(len(vals)))
		}
		if !isMap {
			child, err := parseNested(vals, valNulls, t.(*arrow.ListType).Elem(), try)
			if err != nil {
				return nil, err
			}
			children = []arrow.ArrayData{child.Data()}
			break
		}
		// Arrow's maps hold no NULL key: a key that does not convert is an error.
		k, err := parseNested(keys, keyNulls, mt.KeyType(), false)
		if err != nil {
			return nil, err
		}
		v, err := parseNested(vals, valNulls, mt.ItemType(), try)
		if err != nil {
			return nil, err
		}
		entries := array.NewData(mt.Elem(), len(vals), []*memory.Buffer{nil}, []arrow.ArrayData{k.Data(), v.Data()}, 0, 0)
		children = []arrow.ArrayData{entries}
	case *arrow.StructType:
		nf := t.NumFields()
		fieldTexts := make([][]string, nf)
		fieldNulls := make([][]bool, nf)
		for f := range nf {
			fieldTexts[f] = make([]string, n)
			fieldNulls[f] = make([]bool, n)
		}
		for i, s := range texts {
			for f := range nf {
				fieldNulls[f][i] = true
			}
			if nulls[i] {
				continue
			}
			if !splitFields(s, t, i, fieldTexts, fieldNulls) {
				for f := range nf {
					fieldNulls[f][i] = true
				}
				if err := fail(i); err != nil {
					return nil, err
				}
			}
		}
		children = make([]arrow.ArrayData, nf)
		for f := range nf {
			c, err := parseNested(fieldTexts[f], fieldNulls[f], t.Field(f).Type, try)
			if err != nil {
				return nil, err
			}
			children[f] = c.Data()
		}
	default:
		return nil, errs.New(errs.Analysis, "cannot cast VARCHAR to %s", types.Name(to))
	}
	valid := make([]byte, bitmapLen(n))
	nullCount := 0
	for i := range n {
		if nulls[i] {
			nullCount++
		} else {
			valid[i>>3] |= 1 << (i & 7)
		}
	}
	bufs := []*memory.Buffer{memory.NewBufferBytes(valid)}
	if offs != nil {
		bufs = append(bufs, memory.NewBufferBytes(ktBytesOf(offs)))
	}
	d := array.NewData(to, n, bufs, children, nullCount, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// splitEntries reads one list ([…]) or map ({k=v, …}) text into its elements (a
// map's keys in keys), with the NULL flag of each element. ok is false when the
// text is not of that form or a map key is NULL.
func splitEntries(s string, open, close byte, isMap bool) (keys, vals []string, valNulls []bool, ok bool) {
	elems, ok := splitNested(s, open, close)
	if !ok {
		return nil, nil, nil, false
	}
	for _, e := range elems {
		if isMap {
			k, v, found := cutNested(e, '=')
			if !found {
				return nil, nil, nil, false
			}
			kt, kn := unquoteNested(k)
			if kn {
				return nil, nil, nil, false
			}
			keys, e = append(keys, kt), v
		}
		vt, vn := unquoteNested(e)
		vals, valNulls = append(vals, vt), append(valNulls, vn)
	}
	return keys, vals, valNulls, true
}

// splitFields reads struct text ({name: value, …}) into row i of the fields' texts;
// a field not named stays NULL. It reports false when the text is not of that form
// or names a field t does not have.
func splitFields(s string, t *arrow.StructType, i int, texts [][]string, nulls [][]bool) bool {
	elems, ok := splitNested(s, '{', '}')
	if !ok {
		return false
	}
	for _, e := range elems {
		k, v, found := cutNested(e, ':')
		if !found {
			return false
		}
		name, _ := unquoteNested(k)
		f, known := t.FieldIdx(name)
		if !known {
			return false
		}
		texts[f][i], nulls[f][i] = unquoteNested(v)
	}
	return true
}

// splitNested reads s as open, items separated by commas, close (surrounding space
// allowed) and returns the items untrimmed; commas inside brackets, braces,
// parentheses or quotes do not separate. ok is false when s is not of that form.
func splitNested(s string, open, close byte) (items []string, ok bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != open || s[len(s)-1] != close {
		return nil, false
	}
	body := s[1 : len(s)-1]
	if strings.TrimSpace(body) == "" {
		return nil, true
	}
	cuts, ok := nestedSeps(body, ',')
	if !ok {
		return nil, false
	}
	start := 0
	for _, i := range cuts {
		items = append(items, body[start:i])
		start = i + 1
	}
	return append(items, body[start:]), true
}

// cutNested splits an item at the first sep outside brackets and quotes.
func cutNested(s string, sep byte) (before, after string, ok bool) {
	cuts, _ := nestedSeps(s, sep)
	if len(cuts) == 0 {
		return "", "", false
	}
	return s[:cuts[0]], s[cuts[0]+1:], true
}

// nestedSeps returns the positions of sep in s outside brackets, braces,
// parentheses and quotes (a backslash in quotes escapes the next byte). ok is false
// when the brackets or quotes do not balance.
func nestedSeps(s string, sep byte) (cuts []int, ok bool) {
	depth, ok := 0, true
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '[' || c == '{' || c == '(':
			depth++
		case c == ']' || c == '}' || c == ')':
			if depth--; depth < 0 {
				ok = false
			}
		case c == sep && depth == 0:
			cuts = append(cuts, i)
		}
	}
	return cuts, ok && depth == 0 && quote == 0
}

// unquoteNested trims an item and reads it as DuckDB does: NULL unquoted is NULL;
// quotes anywhere in it (single or double) enclose text taken as it is and are
// dropped, a doubled quote inside them standing for one, and a backslash inside them
// takes the next character as it is.
func unquoteNested(s string) (text string, isNull bool) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "null") {
		return "", true
	}
	if !strings.ContainsAny(s, `'"\`) || s[0] == '[' || s[0] == '{' {
		// A bracketed item is a nested value's text, read at its own level; as a
		// string it is kept as written, quotes and all, as DuckDB keeps it.
		return s, false
	}
	var sb strings.Builder
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0 && c == '\\' && i+1 < len(s):
			i++
			sb.WriteByte(s[i])
		case q == 0 && (c == '\'' || c == '"'):
			q = c
		case q != 0 && c == q:
			if i+1 < len(s) && s[i+1] == q {
				i++
				sb.WriteByte(c)
			} else {
				q = 0
			}
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String(), false
}

// tryCastNested is TRY_CAST to the nested type to: text reads with parseNested's
// try; other values are cast a row at a time, NULL where a row does not convert.
func tryCastNested(arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	if types.IsString(arr.DataType()) {
		return castNestedText(arr, to, true)
	}
	if _, isStruct := to.(*arrow.StructType); !isStruct && types.IsNested(arr.DataType()) {
		// A list or map casts element by element, NULL where an element does not
		// convert (DuckDB's TRY_CAST): through its text form, read with try.
		return castNestedText(nestedToString(arr), to, true)
	}
	rows := make([]arrow.Array, arr.Len())
	for i := range rows {
		one := array.NewSlice(arr, int64(i), int64(i+1))
		c, err := Cast(one, to)
		if err != nil {
			c = nullArray(to, 1)
		}
		rows[i] = c
	}
	if len(rows) == 0 {
		return nullArray(to, 0), nil
	}
	return array.Concatenate(rows, memory.DefaultAllocator)
}

// structSources maps each field of the struct type to to the field of from of the
// same name (case-insensitive), -1 when from has none.
func structSources(from, to *arrow.StructType) []int {
	src := make([]int, to.NumFields())
	for i, f := range to.Fields() {
		src[i] = -1
		for j, g := range from.Fields() {
			if strings.EqualFold(f.Name, g.Name) {
				src[i] = j
				break
			}
		}
	}
	return src
}

// castStruct casts a struct to the struct type to by field name, as DuckDB does: a
// field of to takes the cast of from's field of its name, NULL when there is none;
// from's other fields are dropped. At least one name must match (ok is false
// otherwise).
func castStruct(arr arrow.Array, to *arrow.StructType) (arrow.Array, bool, error) {
	s, isStruct := arr.(*array.Struct)
	if !isStruct {
		return nil, false, nil
	}
	src := structSources(s.DataType().(*arrow.StructType), to)
	n := s.Len()
	children := make([]arrow.ArrayData, to.NumFields())
	matched := false
	for i, j := range src {
		var c arrow.Array
		if j < 0 {
			c = nullArray(to.Field(i).Type, n)
		} else {
			matched = true
			var err error
			// A struct's field arrays are sliced to its rows already.
			if c, err = Cast(s.Field(j), to.Field(i).Type); err != nil {
				return nil, true, err
			}
		}
		children[i] = c.Data()
	}
	if !matched {
		return nil, false, nil
	}
	var validity *memory.Buffer
	if s.NullN() > 0 {
		bm := make([]byte, bitmapLen(n))
		for i := range n {
			if s.IsValid(i) {
				bm[i>>3] |= 1 << (i & 7)
			}
		}
		validity = memory.NewBufferBytes(bm)
	}
	d := array.NewData(to, n, []*memory.Buffer{validity}, children, s.NullN(), 0)
	defer d.Release()
	return array.MakeFromData(d), true, nil
}
