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

// The constructors of nested values: [a, b], ARRAY[a, b] and list_value(a, b) make a
// list; {k: v} and struct_pack(k := v) a struct; MAP {k: v} a map. Their values take
// their common type, as the branches of a CASE do.

// commonOfArgs is the common type of args (NULL when there are none or all are NULL),
// and args cast to it; what has no common type is an error naming what.
func (b *binder) commonOfArgs(what string, args []Expr, pos int) (arrow.DataType, []Expr, error) {
	t, err := argsCommonType(what, args, pos)
	if err != nil {
		return nil, nil, err
	}
	out := make([]Expr, len(args))
	for i, a := range args {
		out[i] = b.fold(castTo(a, t))
	}
	return t, out, nil
}

// argsCommonType is the common type of args, NULL when there are none or all are
// NULL; an untyped string takes the others' type. what names the values in the
// error when they have none.
func argsCommonType(what string, args []Expr, pos int) (arrow.DataType, error) {
	var t arrow.DataType = types.Null
	for _, a := range args {
		if _, u := a.(*untypedString); u && t.ID() != arrow.NULL {
			continue
		}
		nt, ok := commonType(t, a.Type())
		if !ok {
			return nil, errs.At(errs.Analysis, pos, "%s: arguments of types %s and %s have no common type",
				what, types.Name(t), types.Name(a.Type()))
		}
		t = nt
	}
	return t, nil
}

// listValue binds a list constructor over its bound elements.
func (b *binder) listValue(args []Expr, pos int) (Expr, error) {
	t, cast, err := b.commonOfArgs("list", args, pos)
	if err != nil {
		return nil, err
	}
	return b.foldCall(&Call{Fn: kernels.ListValue(t, len(cast)), Args: cast}), nil
}

// arrayExpr binds ARRAY[…] and DuckDB's [ … ].
func (b *binder) arrayExpr(a *pg.A_ArrayExpr, ec *exprCtx) (Expr, error) {
	args, err := b.exprs(a.Elements, ec)
	if err != nil {
		return nil, err
	}
	return b.listValue(args, int(a.Location))
}

// structLiteral binds DuckDB's {k: v, …}, read as a row of keys and values in turn.
// A key is a name or a string constant; keys are distinct, ignoring case.
func (b *binder) structLiteral(items []*pg.Node, pos int, ec *exprCtx) (Expr, error) {
	names := make([]string, 0, len(items)/2)
	vals := make([]*pg.Node, 0, len(items)/2)
	for i := 0; i+1 < len(items); i += 2 {
		name, ok := literalKey(items[i])
		if !ok {
			return nil, errs.At(errs.Analysis, location(items[i]), "a struct literal's keys are names or string constants")
		}
		names = append(names, name)
		vals = append(vals, items[i+1])
	}
	if len(items)%2 != 0 {
		return nil, errs.At(errs.Syntax, pos, "syntax error: a struct literal is a list of key: value")
	}
	args, err := b.exprs(vals, ec)
	if err != nil {
		return nil, err
	}
	return b.structPack(names, args, pos)
}

// literalKey is the name a struct literal's key node gives: a string constant, or a
// bare (possibly quoted) name.
func literalKey(n *pg.Node) (string, bool) {
	if c := n.GetAConst(); c != nil {
		if s, ok := c.Val.(*pg.A_Const_Sval); ok {
			return s.Sval.Sval, true
		}
		return "", false
	}
	if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && cr.Fields[0].GetString_() != nil {
		return cr.Fields[0].GetString_().Sval, true
	}
	return "", false
}

// structPack makes a struct of args named names.
func (b *binder) structPack(names []string, args []Expr, pos int) (Expr, error) {
	if len(args) == 0 {
		return nil, errs.At(errs.Analysis, pos, "a struct needs at least one field")
	}
	seen := map[string]bool{}
	fields := make([]arrow.Field, len(args))
	for i, a := range args {
		key := strings.ToLower(names[i])
		if seen[key] {
			return nil, errs.At(errs.Analysis, pos, "duplicate struct entry name %q", names[i])
		}
		seen[key] = true
		if u, ok := a.(*untypedString); ok {
			args[i] = &u.Literal
			a = args[i]
		}
		fields[i] = arrow.Field{Name: names[i], Type: a.Type(), Nullable: true}
	}
	return b.foldCall(&Call{Fn: kernels.StructPack(fields), Args: args}), nil
}

// structPackCall binds struct_pack(k := v, …).
func (b *binder) structPackCall(fc *pg.FuncCall, ec *exprCtx) (Expr, error) {
	names := make([]string, len(fc.Args))
	vals := make([]*pg.Node, len(fc.Args))
	for i, a := range fc.Args {
		na := a.GetNamedArgExpr()
		if na == nil {
			if cr := a.GetColumnRef(); cr != nil && len(cr.Fields) > 0 {
				// struct_pack(x) names the field after the column.
				if s := cr.Fields[len(cr.Fields)-1].GetString_(); s != nil {
					names[i], vals[i] = s.Sval, a
					continue
				}
			}
			return nil, errs.At(errs.Analysis, location(a), "struct_pack takes named values: struct_pack(name := value, …)")
		}
		names[i], vals[i] = na.Name, na.Arg
	}
	args, err := b.exprs(vals, ec)
	if err != nil {
		return nil, err
	}
	return b.structPack(names, args, int(fc.Location))
}

// mapLiteral binds DuckDB's MAP {k: v, …}, read as a call of map over keys and
// values in turn.
func (b *binder) mapLiteral(fc *pg.FuncCall, ec *exprCtx) (Expr, error) {
	pos := int(fc.Location)
	if len(fc.Args)%2 != 0 {
		return nil, errs.At(errs.Syntax, pos, "syntax error: a map literal is a list of key: value")
	}
	args, err := b.exprs(fc.Args, ec)
	if err != nil {
		return nil, err
	}
	keys := make([]Expr, 0, len(args)/2)
	vals := make([]Expr, 0, len(args)/2)
	for i := 0; i < len(args); i += 2 {
		keys, vals = append(keys, args[i]), append(vals, args[i+1])
	}
	kt, keys, err := b.commonOfArgs("map keys", keys, pos)
	if err != nil {
		return nil, err
	}
	vt, vals, err := b.commonOfArgs("map values", vals, pos)
	if err != nil {
		return nil, err
	}
	cast := make([]Expr, 0, len(args))
	for i := range keys {
		cast = append(cast, b.fold(castTo(keys[i], kt)), b.fold(castTo(vals[i], vt)))
	}
	return b.foldCall(&Call{Fn: kernels.MapPack(kt, vt, len(keys)), Args: cast}), nil
}
