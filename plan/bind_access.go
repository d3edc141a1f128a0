//go:build cgo

package plan

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/types"
)

// Element access: l[i], l[a:b], s.f, s['f'] and (expr).f. PostgreSQL's grammar reads
// a subscript or a field after an expression as an A_Indirection; a dotted name
// whose first part is a column, not a table, is a ColumnRef whose later parts are
// fields. Each step becomes a call of array_extract, array_slice or struct_extract,
// as in DuckDB.

// indirection binds ind's argument, then each subscript or field after it in turn.
func (b *binder) indirection(ind *pg.A_Indirection, ec *exprCtx) (Expr, error) {
	e, err := b.expr(ind.Arg, ec)
	if err != nil {
		return nil, err
	}
	pos := location(ind.Arg)
	for _, step := range ind.Indirection {
		switch {
		case step.GetString_() != nil:
			if e, err = b.fieldAccess(e, step.GetString_().Sval, pos); err != nil {
				return nil, err
			}
		case step.GetAIndices() != nil:
			if e, err = b.subscript(e, step.GetAIndices(), ec, pos); err != nil {
				return nil, err
			}
		default:
			return nil, errs.At(errs.Analysis, pos, "* is not allowed here")
		}
	}
	return e, nil
}

// subscript binds e[i] or e[a:b]: an omitted lower bound is 1, an omitted upper
// bound the end of the list.
func (b *binder) subscript(e Expr, ix *pg.A_Indices, ec *exprCtx, pos int) (Expr, error) {
	bound := func(n *pg.Node, omitted int64) (Expr, error) {
		if n == nil {
			return &Literal{V: types.IntValue(omitted)}, nil
		}
		x, err := b.expr(n, ec)
		if err != nil {
			return nil, err
		}
		return settle(x), nil
	}
	if ix.IsSlice {
		lo, err := bound(ix.Lidx, 1)
		if err != nil {
			return nil, err
		}
		hi, err := bound(ix.Uidx, kernels.SliceEnd)
		if err != nil {
			return nil, err
		}
		if e.Type().ID() == arrow.STRUCT || e.Type().ID() == arrow.MAP {
			return nil, errs.At(errs.Analysis, pos, "cannot slice a %s", types.Name(e.Type()))
		}
		return b.call("array_slice", []Expr{settle(e), lo, hi}, pos)
	}
	k, err := b.expr(ix.Uidx, ec)
	if err != nil {
		return nil, err
	}
	switch e.Type().ID() {
	case arrow.STRUCT:
		if u, ok := k.(*untypedString); ok {
			return b.fieldAccess(e, u.V.S, pos)
		}
		if l, ok := k.(*Literal); ok && types.IsString(l.V.Type) && !l.V.Null {
			return b.fieldAccess(e, l.V.S, pos)
		}
		return nil, errs.At(errs.Analysis, pos, "a struct's subscript must be a constant field name")
	case arrow.MAP:
		// The value of a key is the map functions' to find; the subscript is bound
		// to their lookup where there is one.
		switch {
		case kernels.Known("map_extract_value"):
			return b.call("map_extract_value", []Expr{e, settle(k)}, pos)
		case kernels.Known("map_extract"):
			// map_extract gives the key's values as a list: m[k] is its first.
			vals, err := b.call("map_extract", []Expr{e, settle(k)}, pos)
			if err != nil {
				return nil, err
			}
			return b.call("array_extract", []Expr{vals, &Literal{V: types.IntValue(1)}}, pos)
		}
		return nil, errs.At(errs.Analysis, pos, "subscripts of a MAP are not supported yet")
	}
	return b.call("array_extract", []Expr{settle(e), settle(k)}, pos)
}

// fieldAccess binds e.name for a struct e.
func (b *binder) fieldAccess(e Expr, name string, pos int) (Expr, error) {
	st, ok := types.Unwrap(e.Type()).(*arrow.StructType)
	if !ok {
		return nil, errs.At(errs.Analysis, pos, "cannot extract field %q from a %s: it is not a STRUCT", name, types.Name(e.Type()))
	}
	if kernels.FieldIndex(st, name) < 0 {
		return nil, errs.At(errs.Analysis, pos, "the struct %s has no field %q", types.Name(st), name)
	}
	return b.call("struct_extract", []Expr{e, &Literal{V: types.StringValue(name)}}, pos)
}

// structPath binds a dotted name that is not table.column: column.field…, or
// table.column.field…, the column a STRUCT of the query or of an enclosing one. ok
// is false when neither reading applies, and the caller reports the name as not
// found.
func (b *binder) structPath(parts []string, ec *exprCtx, pos int) (Expr, bool, error) {
	if len(parts) < 2 {
		return nil, false, nil
	}
	try := func(qual, name string, fields []string) (Expr, bool, error) {
		var e Expr
		for sc := ec.sc; sc != nil && e == nil; sc = sc.outer {
			idx, err := sc.resolve(qual, name, pos)
			if err != nil {
				if strings.Contains(err.Error(), "ambiguous") {
					return nil, true, err
				}
				continue
			}
			if sc == ec.sc {
				c := sc.cols[idx]
				e = &ColRef{Idx: idx, T: c.Type, Name: c.Name}
			} else {
				e = &OuterRef{Idx: idx, Col: sc.cols[idx], scope: sc}
			}
		}
		if e == nil || types.Unwrap(e.Type()).ID() != arrow.STRUCT {
			return nil, false, nil
		}
		for _, f := range fields {
			var err error
			if e, err = b.fieldAccess(e, f, pos); err != nil {
				return nil, true, err
			}
		}
		return e, true, nil
	}
	if len(parts) >= 3 {
		if e, ok, err := try(parts[0], parts[1], parts[2:]); ok || err != nil {
			return e, ok, err
		}
	}
	return try("", parts[0], parts[1:])
}

// expandStructStar expands s.* in a select list, s a STRUCT column and not a table,
// into one item per field, named after the fields. ok is false when the prefix
// names a table, or no struct column: then it is a table's star.
func (b *binder) expandStructStar(cr *pg.ColumnRef, st *selState) ([]target, bool, error) {
	if len(cr.Fields) != 2 || cr.Fields[0].GetString_() == nil {
		return nil, false, nil
	}
	name := cr.Fields[0].GetString_().Sval
	if st.sc.hasTable(name) {
		return nil, false, nil
	}
	idx, err := st.sc.resolve("", name, int(cr.Location))
	if err != nil {
		return nil, false, nil
	}
	c := st.sc.cols[idx]
	stt, isStruct := types.Unwrap(c.Type).(*arrow.StructType)
	if !isStruct {
		return nil, false, nil
	}
	e := &ColRef{Idx: idx, T: c.Type, Name: c.Name}
	out := make([]target, 0, stt.NumFields())
	for _, f := range stt.Fields() {
		fe, err := b.fieldAccess(e, f.Name, int(cr.Location))
		if err != nil {
			return nil, false, err
		}
		out = append(out, target{pre: fe, name: f.Name})
	}
	out, err = b.starModifiers(cr, out)
	return out, err == nil, err
}

// indirectionName names a select item that is a subscript or a field access as
// DuckDB does: l[1], l[2:3], s['f'], (s).f.
func indirectionName(ind *pg.A_Indirection) string {
	name := columnName(ind.Arg)
	for _, step := range ind.Indirection {
		switch {
		case step.GetString_() != nil:
			name = "(" + name + ")." + step.GetString_().Sval
		case step.GetAIndices() != nil:
			ix := step.GetAIndices()
			bound := func(n *pg.Node) string {
				if n == nil {
					return ""
				}
				return columnName(n)
			}
			if ix.IsSlice {
				name += "[" + bound(ix.Lidx) + ":" + bound(ix.Uidx) + "]"
			} else {
				name += "[" + bound(ix.Uidx) + "]"
			}
		}
	}
	return name
}
