//go:build cgo

package plan

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/sql"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/types"
)

// lambdaKinds are the lambda functions, by name.
var lambdaKinds = map[string]LambdaKind{
	"list_transform": LambdaTransform, "array_transform": LambdaTransform, "list_apply": LambdaTransform,
	"array_apply": LambdaTransform, "apply": LambdaTransform,
	"list_filter": LambdaFilter, "array_filter": LambdaFilter, "filter": LambdaFilter,
	"list_reduce": LambdaReduce, "array_reduce": LambdaReduce, "reduce": LambdaReduce,
	sql.Comprehension: LambdaTransform,
}

// lambdaFrame is the parameters of a lambda whose body is being bound.
type lambdaFrame struct {
	names []string
	types []arrow.DataType
}

// lambdaRef binds cr when it names a parameter of a lambda being bound (x), or a
// field of a STRUCT parameter (x.f.g); ok is false otherwise.
func (b *binder) lambdaRef(cr *pg.ColumnRef, ec *exprCtx) (e Expr, ok bool, err error) {
	if len(ec.lambdas) == 0 || len(cr.Fields) == 0 || cr.Fields[0].GetString_() == nil {
		return nil, false, nil
	}
	e, ok = ec.lambdaParam(&pg.ColumnRef{Fields: cr.Fields[:1]})
	if !ok || len(cr.Fields) == 1 {
		return e, ok, nil
	}
	if _, isStruct := e.Type().(*arrow.StructType); !isStruct {
		// t.x, where x is a parameter but not a struct, names a column.
		return nil, false, nil
	}
	pos := int(cr.Location)
	for _, f := range cr.Fields[1:] {
		name := f.GetString_()
		if name == nil {
			return nil, true, errs.At(errs.Analysis, pos, "* is not allowed here")
		}
		if _, isStruct := e.Type().(*arrow.StructType); !isStruct {
			return nil, true, errs.At(errs.Analysis, pos, "cannot extract field %q from a %s: it is not a STRUCT", name.GetSval(), types.Name(e.Type()))
		}
		if e, err = b.call("struct_extract", []Expr{e, &Literal{V: types.StringValue(name.GetSval())}}, pos); err != nil {
			return nil, true, err
		}
	}
	return e, true, nil
}

// lambdaParam resolves cr, an unqualified name, to a parameter of the innermost
// lambda being bound that has one of that name: parameters shadow columns.
func (ec *exprCtx) lambdaParam(cr *pg.ColumnRef) (Expr, bool) {
	if len(ec.lambdas) == 0 || len(cr.Fields) != 1 || cr.Fields[0].GetString_() == nil {
		return nil, false
	}
	name := cr.Fields[0].GetString_().GetSval()
	total := 0
	for _, f := range ec.lambdas {
		total += len(f.names)
	}
	slot := total
	for d := len(ec.lambdas) - 1; d >= 0; d-- {
		f := ec.lambdas[d]
		slot -= len(f.names)
		for k, n := range f.names {
			if n == name {
				return &LambdaParam{Name: name, T: f.types[k], FromEnd: total - slot - k}, true
			}
		}
	}
	return nil, false
}

// usesLambdaParam reports whether n reads a parameter of a lambda being bound. Such
// an expression is not an expression of the groups when bound over an aggregate,
// even where a column of the parameter's name is one.
func (ec *exprCtx) usesLambdaParam(n *pg.Node) bool {
	if len(ec.lambdas) == 0 {
		return false
	}
	found := false
	walkPG(n, func(x *pg.Node) bool {
		if cr := x.GetColumnRef(); cr != nil {
			if _, ok := ec.lambdaParam(cr); ok {
				found = true
			}
		}
		return !found
	})
	return found
}

// lambdaError is the error for a lambda written where none is allowed: anywhere
// but as the argument of a lambda function.
func lambdaError(a *pg.A_Expr) error {
	return errs.At(errs.Analysis, int(a.Location),
		"a lambda function is only allowed as an argument of list_transform, list_filter or list_reduce")
}

// lambdaCall binds a call of a lambda function (list_transform, list_filter,
// list_reduce and their other names); ok is false for any other function.
func (b *binder) lambdaCall(name string, fc *pg.FuncCall, ec *exprCtx) (e Expr, ok bool, err error) {
	kind, ok := lambdaKinds[name]
	if !ok || len(fc.Funcname) != 1 {
		return nil, false, nil
	}
	pos := int(fc.Location)
	maxArgs := 2
	if kind == LambdaReduce || name == sql.Comprehension {
		maxArgs = 3
	}
	if len(fc.Args) < 2 || len(fc.Args) > maxArgs {
		return nil, true, errs.At(errs.Analysis, pos, "%s takes a list and a lambda function%s, not %d arguments",
			name, map[bool]string{true: " (and an initial value)"}[kind == LambdaReduce], len(fc.Args))
	}
	names, at, body, isLambda := sql.LambdaParams(fc.Args[1])
	if !isLambda {
		return nil, true, errs.At(errs.Analysis, location(fc.Args[1]), "the second argument of %s must be a lambda function (x -> …)", name)
	}
	list, err := b.expr(fc.Args[0], ec)
	if err != nil {
		return nil, true, err
	}
	if u, ok := list.(*untypedString); ok {
		list = &u.Literal
	}
	var elem arrow.DataType
	switch t := list.Type().(type) {
	case *arrow.ListType:
		elem = t.Elem()
	case *arrow.NullType:
		elem = types.Null
	default:
		return nil, true, errs.At(errs.Analysis, location(fc.Args[0]), "the first argument of %s must be a list, not %s", name, types.Name(list.Type()))
	}
	for i, n := range names {
		for _, m := range names[:i] {
			if m == n {
				return nil, true, errs.At(errs.Analysis, at[i], "lambda parameter %q is named twice", n)
			}
		}
	}
	var params []arrow.DataType
	var init Expr
	acc := elem
	switch kind {
	case LambdaReduce:
		if len(names) < 2 || len(names) > 3 {
			return nil, true, errs.At(errs.Analysis, at[0], "%s expects a lambda function of 2 or 3 parameters (the accumulated value, the element, its position), not %d", name, len(names))
		}
		if len(fc.Args) == 3 {
			if init, err = b.expr(fc.Args[2], ec); err != nil {
				return nil, true, err
			}
			if u, ok := init.(*untypedString); ok {
				init = &u.Literal
			}
			t, ok := reduceType(elem, init.Type())
			if !ok {
				return nil, true, errs.At(errs.Analysis, location(fc.Args[2]),
					"the initial value of %s (%s) and the list's elements (%s) have no common type", name, types.Name(init.Type()), types.Name(elem))
			}
			acc = t
			init = b.fold(castTo(init, acc))
		}
		params = []arrow.DataType{acc, elem, types.Int64}
	default:
		if len(names) > 2 {
			return nil, true, errs.At(errs.Analysis, at[0], "%s expects a lambda function of 1 or 2 parameters (the element, its position), not %d", name, len(names))
		}
		params = []arrow.DataType{elem, types.Int64}
	}
	params = params[:len(names)]
	bodyCtx := *ec
	bodyCtx.lambdas = append(append([]lambdaFrame(nil), ec.lambdas...), lambdaFrame{names: names, types: params})
	bodyCtx.noSubquery, bodyCtx.noAgg, bodyCtx.wins = true, true, nil
	bodyCtx.clause = "lambda functions"
	out, err := b.expr(body, &bodyCtx)
	if err != nil {
		return nil, true, err
	}
	if u, ok := out.(*untypedString); ok {
		out = &u.Literal
	}
	var cond Expr
	if name == sql.Comprehension && len(fc.Args) == 3 {
		_, _, ifBody, ok := sql.LambdaParams(fc.Args[2])
		if !ok {
			return nil, true, errs.At(errs.Internal, pos, "a list comprehension's condition is not a lambda")
		}
		if cond, err = b.expr(ifBody, &bodyCtx); err != nil {
			return nil, true, err
		}
		if u, ok := cond.(*untypedString); ok {
			cond = &u.Literal
		}
		if cond.Type().ID() != arrow.BOOL {
			cond = castTo(cond, types.Boolean)
		}
	}
	outer := 0
	for _, f := range ec.lambdas {
		outer += len(f.names)
	}
	ll := &ListLambda{Kind: kind, Name: name, List: list, Init: init, Cond: cond, Params: len(names), Outer: outer}
	switch kind {
	case LambdaTransform:
		ll.Body, ll.T = out, arrow.ListOf(out.Type())
	case LambdaFilter:
		if out.Type().ID() == arrow.BOOL {
			ll.Body = out
		} else {
			ll.Body = castTo(out, types.Boolean)
		}
		ll.T = list.Type()
	case LambdaReduce:
		ll.Body, ll.T = castTo(out, acc), acc
	}
	if list.Type().ID() == arrow.NULL {
		// A NULL list gives NULL, untyped as in DuckDB.
		return &Literal{V: types.NullOf(types.Null)}, true, nil
	}
	return ll, true, nil
}

// reduceType is the type list_reduce accumulates in when given an initial value of
// type init: the common type of the elements and init. A string and a number have
// none here, as in DuckDB.
func reduceType(elem, init arrow.DataType) (arrow.DataType, bool) {
	if init.ID() == arrow.NULL {
		return elem, true
	}
	if elem.ID() == arrow.NULL {
		return init, true
	}
	if types.IsString(elem) != types.IsString(init) {
		return nil, false
	}
	return commonType(elem, init)
}

// isLambdaFunction reports whether name is a lambda function, which the binder
// binds itself.
func isLambdaFunction(name string) bool {
	_, ok := lambdaKinds[name]
	return ok
}
