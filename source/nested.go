package source

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/types"
)

// nestedPlan says how a file's nested column (or a field inside one) is read as the
// table's type: which of the file's struct fields each of the table's comes from, and
// what a field the file lacks reads as. A lake table's fields are matched as its
// ColumnSource says (field ids, else names), so a field renamed since a file was
// written still finds its data, and a field dropped and added again under the same
// name does not read the old one's.
type nestedPlan struct {
	to arrow.DataType
	// fields, for a struct (or a map's entries), is for each field of to the index of
	// the file's field it comes from, or -1 when the file lacks it.
	fields []int
	// missing, for a struct, says for each field the file lacks what it reads as
	// (its default); nil entries read as NULL.
	missing []*ColumnSource
	// kids are the plans of the children: one per field of a struct (nil for a field
	// the file lacks), the element of a list, the entries of a map.
	kids []*nestedPlan
	// identity is set when the file's type is the table's and every field comes from
	// the field at its position: the data is read as it is.
	identity bool
}

// planNested plans reading a file's column of type from as the table's type to, whose
// nested fields src describes (nil: by position or name, as matchField says).
// ok is false when some field cannot be read as the table's.
func planNested(from, to arrow.DataType, src *ColumnSource) (*nestedPlan, bool) {
	p := &nestedPlan{to: to}
	if from.ID() != to.ID() || !isNestedID(to.ID()) {
		p.identity = arrow.TypeEqual(from, to)
		if types.IsNested(from) || types.IsNested(to) {
			return p, p.identity // nested types of different kinds
		}
		return p, p.identity || castable(from, to) || lakeCastable(from, to)
	}
	identity := arrow.TypeEqual(from, to)
	switch t := to.(type) {
	case *arrow.StructType:
		f := from.(*arrow.StructType)
		var children []ColumnSource
		if src != nil && len(src.Children) == t.NumFields() {
			children = src.Children
		}
		ids := structHasIDs(f)
		p.fields = make([]int, t.NumFields())
		p.missing = make([]*ColumnSource, t.NumFields())
		p.kids = make([]*nestedPlan, t.NumFields())
		matched := false
		for i := range t.NumFields() {
			var cs *ColumnSource
			if children != nil {
				cs = &children[i]
			}
			j := matchField(f, t, i, cs, ids)
			p.fields[i] = j
			if j < 0 {
				p.missing[i] = cs
				identity = false
				continue
			}
			kid, ok := planNested(f.Field(j).Type, t.Field(i).Type, cs)
			if !ok {
				return nil, false
			}
			p.kids[i] = kid
			identity = identity && j == i && kid.identity
			matched = true
		}
		// Without what the table states of its fields, a struct with none in common
		// is another struct, not this one with every field added since.
		if !matched && children == nil {
			return nil, false
		}
	case *arrow.ListType:
		var cs *ColumnSource
		if src != nil && len(src.Children) == 1 {
			cs = &src.Children[0]
		}
		kid, ok := planNested(from.(*arrow.ListType).Elem(), t.Elem(), cs)
		if !ok {
			return nil, false
		}
		p.kids = []*nestedPlan{kid}
		identity = identity && kid.identity
	case *arrow.MapType:
		f := from.(*arrow.MapType)
		var key, item *ColumnSource
		if src != nil && len(src.Children) == 2 {
			key, item = &src.Children[0], &src.Children[1]
		}
		kp, ok := planNested(f.KeyType(), t.KeyType(), key)
		if !ok {
			return nil, false
		}
		vp, ok := planNested(f.ItemType(), t.ItemType(), item)
		if !ok {
			return nil, false
		}
		// A map's entries are a struct of the key and the value, whatever a file
		// names them.
		entries := &nestedPlan{to: t.Elem(), fields: []int{0, 1}, missing: make([]*ColumnSource, 2), kids: []*nestedPlan{kp, vp}}
		entries.identity = kp.identity && vp.identity && arrow.TypeEqual(f.Elem(), t.Elem())
		p.kids = []*nestedPlan{entries}
		identity = identity && entries.identity
	default:
		return nil, false
	}
	p.identity = identity
	return p, true
}

// isNestedID reports the nested types a plan descends into.
func isNestedID(id arrow.Type) bool {
	return id == arrow.STRUCT || id == arrow.LIST || id == arrow.MAP
}

// structHasIDs reports whether a file's struct type carries Parquet field ids on its
// fields: its fields are then matched by them alone.
func structHasIDs(s *arrow.StructType) bool {
	for _, f := range s.Fields() {
		if _, ok := parquet.NestedFieldID(f); ok {
			return true
		}
	}
	return false
}

// matchField is the index of the file's struct field that the table's field i comes
// from, or -1 when the file lacks it. With a source cs, the field is found by its
// field id in a file whose struct carries ids, else by the names cs gives (else its
// own name): the names a field has in files, which a field added since under a name
// another had does not share. Without one, a file's struct with as many fields as
// the table's gives the field at the same position (its fields may be named otherwise:
// column mapping), another the field of the same name, without regard to case.
func matchField(from, to *arrow.StructType, i int, cs *ColumnSource, ids bool) int {
	if cs != nil {
		if cs.FieldID > 0 && ids {
			for j, f := range from.Fields() {
				if id, ok := parquet.NestedFieldID(f); ok && id == cs.FieldID {
					return j
				}
			}
			return -1
		}
		names := cs.Names
		if len(names) == 0 {
			names = []string{to.Field(i).Name}
		}
		for _, n := range names {
			for j, f := range from.Fields() {
				if f.Name == n {
					return j
				}
			}
		}
		return -1
	}
	if from.NumFields() == to.NumFields() {
		return i
	}
	for j, f := range from.Fields() {
		if strings.EqualFold(f.Name, to.Field(i).Name) {
			return j
		}
	}
	return -1
}

// reshape reads array data d, a file's column or a field inside one, as plan p says.
func reshape(ctx context.Context, d arrow.ArrayData, p *nestedPlan) (arrow.Array, error) {
	if p.identity && arrow.TypeEqual(d.DataType(), p.to) {
		return array.MakeFromData(d), nil
	}
	children := d.Children()
	var out []arrow.ArrayData
	switch t := p.to.(type) {
	case *arrow.StructType:
		if len(p.fields) != t.NumFields() {
			return nil, errs.New(errs.Internal, "BUG: a plan of %d fields for %s", len(p.fields), t)
		}
		out = make([]arrow.ArrayData, t.NumFields())
		for i, j := range p.fields {
			var k arrow.Array
			if j < 0 {
				// Children span the parent's offset too.
				k = missingArray(t.Field(i).Type, p.missing[i], d.Offset()+d.Len())
			} else {
				if j >= len(children) {
					return nil, errs.New(errs.Internal, "BUG: field %d of %d children", j, len(children))
				}
				var err error
				if k, err = reshape(ctx, children[j], p.kids[i]); err != nil {
					return nil, err
				}
			}
			out[i] = k.Data()
			defer k.Release()
		}
	case *arrow.ListType, *arrow.MapType:
		if len(children) != 1 || len(p.kids) != 1 {
			return nil, errs.New(errs.Internal, "BUG: %d children for %s", len(children), p.to)
		}
		k, err := reshape(ctx, children[0], p.kids[0])
		if err != nil {
			return nil, err
		}
		defer k.Release()
		out = []arrow.ArrayData{k.Data()}
	default:
		a := array.MakeFromData(d)
		defer a.Release()
		if arrow.TypeEqual(a.DataType(), p.to) {
			a.Retain()
			return a, nil
		}
		return castArray(ctx, a, p.to)
	}
	nd := array.NewData(p.to, d.Len(), d.Buffers(), out, d.NullN(), d.Offset())
	defer nd.Release()
	return array.MakeFromData(nd), nil
}

// missingArray is n rows of a column, or a field inside one, that a file lacks: its
// default as src states it (a struct's default being its fields' defaults), else NULL.
func missingArray(dt arrow.DataType, src *ColumnSource, n int) arrow.Array {
	if src == nil || !src.HasDefault || src.Default.Null {
		return array.MakeArrayOfNull(memory.DefaultAllocator, dt, n)
	}
	st, ok := dt.(*arrow.StructType)
	if !ok {
		return constant(src.Default, n)
	}
	kids := make([]arrow.ArrayData, st.NumFields())
	for i := range st.NumFields() {
		var cs *ColumnSource
		if len(src.Children) == st.NumFields() {
			cs = &src.Children[i]
		}
		k := missingArray(st.Field(i).Type, cs, n)
		defer k.Release()
		kids[i] = k.Data()
	}
	d := array.NewData(dt, n, []*memory.Buffer{nil}, kids, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// nestedDefaults reports whether a column reads, in a file that lacks it, as
// something other than one constant value: a struct of its fields' defaults.
func (c ColumnSource) nestedDefaults() bool {
	return c.HasDefault && !c.Default.Null && c.Default.Type != nil && c.Default.Type.ID() == arrow.STRUCT
}
