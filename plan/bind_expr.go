//go:build cgo

package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/sql/pgtree"
	"github.com/loredb/lore/types"
)

// exprCtx is where an expression is being bound.
type exprCtx struct {
	sc *scope
	// sel, when set, lets correlated scalar subqueries join onto the SELECT's input.
	sel *selState
	// agg, when set, binds over an aggregate's output: aggregate calls become
	// aggregate columns and group expressions become group columns.
	agg *aggState
	// wins, when set, collects window function calls.
	wins       *[]WindowCall
	noAgg      bool
	noSubquery bool
	clause     string
	// lambdas are the parameters of the lambdas whose bodies are being bound,
	// innermost last.
	lambdas []lambdaFrame
	// unnests, when set, collects the select list's unnest calls.
	unnests *[]unnestCall
}

// untypedString marks string literals whose type follows their context
// (x = '2024-01-01' compares as a DATE when x is one).
type untypedString struct{ Literal }

func location(n *pg.Node) int {
	if n == nil {
		return errs.NoPosition
	}
	loc := int32(-1)
	pgtree.Locations(pgtree.Inner(n), func(own bool, p *int32) {
		if own {
			loc = *p
		}
	})
	if loc < 0 {
		return errs.NoPosition
	}
	return int(loc)
}

func (b *binder) expr(n *pg.Node, ec *exprCtx) (Expr, error) {
	if n == nil {
		return nil, errs.New(errs.Analysis, "missing expression")
	}
	if ec.agg != nil && !ec.usesLambdaParam(n) {
		if e, ok, err := b.postAggregate(n, ec); ok || err != nil {
			return e, err
		}
	}
	switch {
	case n.GetColumnRef() != nil:
		return b.columnRef(n.GetColumnRef(), ec)
	case n.GetAConst() != nil:
		return constant(n.GetAConst())
	case n.GetTypeCast() != nil:
		return b.typeCast(n.GetTypeCast(), ec)
	case n.GetAExpr() != nil:
		return b.aExpr(n.GetAExpr(), ec)
	case n.GetBoolExpr() != nil:
		be := n.GetBoolExpr()
		args, err := b.exprs(be.Args, ec)
		if err != nil {
			return nil, err
		}
		for i := range args {
			if args[i], err = b.boolean(args[i], strings.ToUpper(boolName(be.Boolop))); err != nil {
				return nil, err
			}
		}
		if be.Boolop == pg.BoolExprType_NOT_EXPR {
			return b.call("not", args, int(be.Location))
		}
		out := args[0]
		for _, a := range args[1:] {
			if out, err = b.call(boolName(be.Boolop), []Expr{out, a}, int(be.Location)); err != nil {
				return nil, err
			}
		}
		return out, nil
	case n.GetNullTest() != nil:
		nt := n.GetNullTest()
		arg, err := b.expr(nt.Arg, ec)
		if err != nil {
			return nil, err
		}
		name := "is_null"
		if nt.Nulltesttype == pg.NullTestType_IS_NOT_NULL {
			name = "is_not_null"
		}
		return b.call(name, []Expr{arg}, int(nt.Location))
	case n.GetBooleanTest() != nil:
		bt := n.GetBooleanTest()
		arg, err := b.expr(bt.Arg, ec)
		if err != nil {
			return nil, err
		}
		if arg, err = b.boolean(arg, "IS"); err != nil {
			return nil, err
		}
		switch bt.Booltesttype {
		case pg.BoolTestType_IS_TRUE:
			return b.call("is_not_distinct_from", []Expr{arg, &Literal{V: types.BoolValue(true)}}, int(bt.Location))
		case pg.BoolTestType_IS_NOT_TRUE:
			return b.call("is_distinct_from", []Expr{arg, &Literal{V: types.BoolValue(true)}}, int(bt.Location))
		case pg.BoolTestType_IS_FALSE:
			return b.call("is_not_distinct_from", []Expr{arg, &Literal{V: types.BoolValue(false)}}, int(bt.Location))
		case pg.BoolTestType_IS_NOT_FALSE:
			return b.call("is_distinct_from", []Expr{arg, &Literal{V: types.BoolValue(false)}}, int(bt.Location))
		case pg.BoolTestType_IS_UNKNOWN:
			return b.call("is_null", []Expr{arg}, int(bt.Location))
		default:
			return b.call("is_not_null", []Expr{arg}, int(bt.Location))
		}
	case n.GetCaseExpr() != nil:
		return b.caseExpr(n.GetCaseExpr(), ec)
	case n.GetCoalesceExpr() != nil:
		ce := n.GetCoalesceExpr()
		args, err := b.exprs(ce.Args, ec)
		if err != nil {
			return nil, err
		}
		return b.variadic("coalesce", args, int(ce.Location))
	case n.GetMinMaxExpr() != nil:
		mm := n.GetMinMaxExpr()
		args, err := b.exprs(mm.Args, ec)
		if err != nil {
			return nil, err
		}
		name := "greatest"
		if mm.Op == pg.MinMaxOp_IS_LEAST {
			name = "least"
		}
		return b.variadic(name, args, int(mm.Location))
	case n.GetFuncCall() != nil:
		return b.funcCall(n.GetFuncCall(), ec)
	case n.GetGroupingFunc() != nil:
		return b.groupingCall("grouping", n.GetGroupingFunc().Args, int(n.GetGroupingFunc().Location), ec)
	case n.GetSqlvalueFunction() != nil:
		return b.sqlValueFunction(n.GetSqlvalueFunction())
	case n.GetSubLink() != nil:
		return b.subLink(n.GetSubLink(), ec)
	case n.GetAIndirection() != nil:
		return b.indirection(n.GetAIndirection(), ec)
	case n.GetAArrayExpr() != nil:
		return b.arrayExpr(n.GetAArrayExpr(), ec)
	case n.GetRowExpr() != nil && b.dialect.IsStructLiteral(n.GetRowExpr().Location):
		return b.structLiteral(n.GetRowExpr().Args, int(n.GetRowExpr().Location), ec)
	case n.GetParamRef() != nil:
		return nil, errs.At(errs.Analysis, int(n.GetParamRef().Location), "parameters are not supported")
	}
	return nil, errs.At(errs.Analysis, location(n), "unsupported expression")
}

func boolName(op pg.BoolExprType) string {
	switch op {
	case pg.BoolExprType_AND_EXPR:
		return "and"
	case pg.BoolExprType_OR_EXPR:
		return "or"
	}
	return "not"
}

func (b *binder) exprs(ns []*pg.Node, ec *exprCtx) ([]Expr, error) {
	out := make([]Expr, len(ns))
	for i, n := range ns {
		e, err := b.expr(n, ec)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// boolean checks that e is a BOOLEAN (an untyped NULL or string literal is cast).
func (b *binder) boolean(e Expr, clause string) (Expr, error) {
	switch {
	case e.Type().ID() == arrow.BOOL:
		return e, nil
	case e.Type().ID() == arrow.NULL:
		return &Literal{V: types.NullOf(types.Boolean)}, nil
	}
	if u, ok := e.(*untypedString); ok {
		v, err := kernels.ParseLiteral(u.V.S, types.Boolean)
		if err == nil {
			return &Literal{V: v}, nil
		}
	}
	return nil, errs.New(errs.Analysis, "argument of %s must be type BOOLEAN, not type %s", clause, types.Name(e.Type()))
}

func (b *binder) columnRef(cr *pg.ColumnRef, ec *exprCtx) (Expr, error) {
	if e, ok, err := b.lambdaRef(cr, ec); ok {
		return e, err
	}
	var parts []string
	for _, f := range cr.Fields {
		if f.GetAStar() != nil {
			return nil, errs.At(errs.Analysis, int(cr.Location), "* is not allowed here")
		}
		parts = append(parts, f.GetString_().GetSval())
	}
	qual, name := "", parts[len(parts)-1]
	if len(parts) >= 2 {
		qual = parts[len(parts)-2]
	}
	idx, err := ec.sc.resolve(qual, name, int(cr.Location))
	if err == nil {
		c := ec.sc.cols[idx]
		return &ColRef{Idx: idx, T: c.Type, Name: c.Name}, nil
	}
	if strings.Contains(err.Error(), "ambiguous") {
		return nil, err
	}
	if e, ok, serr := b.structPath(parts, ec, int(cr.Location)); ok || serr != nil {
		return e, serr
	}
	if o := ec.sc.outer; o != nil {
		if oi, oerr := o.resolve(qual, name, int(cr.Location)); oerr == nil {
			return &OuterRef{Idx: oi, Col: o.cols[oi], scope: o}, nil
		}
		for up := o.outer; up != nil; up = up.outer {
			if ui, uerr := up.resolve(qual, name, int(cr.Location)); uerr == nil {
				return &OuterRef{Idx: ui, Col: up.cols[ui], scope: up}, nil
			}
		}
	}
	if ec.agg != nil {
		if _, perr := ec.agg.pre.resolve(qual, name, int(cr.Location)); perr == nil {
			return nil, errs.At(errs.Analysis, int(cr.Location),
				"column %q must appear in the GROUP BY clause or be used in an aggregate function", name)
		}
	}
	return nil, err
}

func constant(c *pg.A_Const) (Expr, error) {
	if c.Isnull {
		return &Literal{V: types.NullOf(types.Null)}, nil
	}
	switch v := c.Val.(type) {
	case *pg.A_Const_Ival:
		return &Literal{V: types.Value{Type: types.Int32, I: int64(v.Ival.Ival)}}, nil
	case *pg.A_Const_Fval:
		s := v.Fval.Fval
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return &Literal{V: types.IntValue(i)}, nil
			}
			if v, ok := wideIntegerLiteral(s); ok {
				return &Literal{V: v}, nil
			}
		}
		if d, ok := decimalLiteral(s); ok {
			return &Literal{V: d}, nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, errs.At(errs.Syntax, int(c.Location), "invalid number %q", s)
		}
		return &Literal{V: types.FloatValue(f)}, nil
	case *pg.A_Const_Sval:
		return &untypedString{Literal{V: types.StringValue(v.Sval.Sval)}}, nil
	case *pg.A_Const_Boolval:
		return &Literal{V: types.BoolValue(v.Boolval.Boolval)}, nil
	}
	return nil, errs.At(errs.Analysis, int(c.Location), "unsupported constant")
}

// typeName converts a parsed type name to an Arrow type.
func typeName(tn *pg.TypeName) (arrow.DataType, error) {
	var names []string
	for _, n := range tn.Names {
		names = append(names, n.GetString_().GetSval())
	}
	name := names[len(names)-1]
	switch name {
	case "int4":
		name = "integer"
	case "int8":
		name = "bigint"
	case "int2":
		name = "smallint"
	case "float8":
		name = "double"
	case "float4":
		name = "real"
	case "bool":
		name = "boolean"
	case "numeric":
		name = "decimal"
	}
	if len(tn.Typmods) > 0 && name == "decimal" {
		var mods []string
		for _, m := range tn.Typmods {
			if c := m.GetAConst(); c != nil {
				if iv, ok := c.Val.(*pg.A_Const_Ival); ok {
					mods = append(mods, strconv.Itoa(int(iv.Ival.Ival)))
				}
			}
		}
		name += "(" + strings.Join(mods, ",") + ")"
	}
	t, err := types.Parse(name)
	if err != nil {
		return nil, errs.At(errs.Analysis, int(tn.Location), "type %q does not exist", name)
	}
	// INT[][] is a list of lists. DuckDB's fixed-size arrays (INT[3]) check their
	// length in every cast and compare differently, so they are not read as lists.
	for _, b := range tn.ArrayBounds {
		if n := b.GetInteger(); n != nil && n.Ival >= 0 {
			return nil, errs.At(errs.Analysis, int(tn.Location), "fixed-size ARRAY types (%s[%d]) are not supported", types.Name(t), n.Ival)
		}
		t = arrow.ListOf(t)
	}
	return t, nil
}

// intervalFields maps PostgreSQL's INTERVAL field masks to a unit word.
var intervalFields = map[int32]string{1 << 2: "year", 1 << 1: "month", 1 << 3: "day", 1 << 10: "hour", 1 << 11: "minute", 1 << 12: "second"}

func (b *binder) typeCast(tc *pg.TypeCast, ec *exprCtx) (Expr, error) {
	to, err := typeName(tc.TypeName)
	if err != nil {
		return nil, err
	}
	arg, err := b.expr(tc.Arg, ec)
	if err != nil {
		return nil, err
	}
	if b.tryCasts[int(tc.Location)] {
		return b.tryCast(arg, to, int(tc.Location))
	}
	if u, ok := arg.(*untypedString); ok {
		s := u.V.S
		if to.ID() == arrow.INTERVAL_MONTH_DAY_NANO && len(tc.TypeName.Typmods) > 0 {
			if c := tc.TypeName.Typmods[0].GetAConst(); c != nil {
				if iv, ok := c.Val.(*pg.A_Const_Ival); ok {
					if unit, ok := intervalFields[iv.Ival.Ival]; ok && !strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyz") {
						s += " " + unit
					}
				}
			}
		}
		v, err := kernels.ParseLiteral(s, to)
		if err != nil {
			return nil, errs.At(errs.Analysis, int(tc.Location), "%s", err.Error())
		}
		return &Literal{V: v}, nil
	}
	if !kernels.CanCast(arg.Type(), to) {
		return nil, errs.At(errs.Analysis, int(tc.Location), "cannot cast type %s to %s", types.Name(arg.Type()), types.Name(to))
	}
	return b.fold(castTo(arg, to)), nil
}

// castTo wraps e in a cast to t unless it already has that type.
func castTo(e Expr, t arrow.DataType) Expr {
	if sameType(e.Type(), t) {
		if u, ok := e.(*untypedString); ok {
			return &u.Literal
		}
		return e
	}
	if u, ok := e.(*untypedString); ok {
		if v, err := kernels.ParseLiteral(u.V.S, t); err == nil {
			return &Literal{V: v}
		}
		e = &u.Literal
	}
	if l, ok := e.(*Literal); ok && l.V.Null {
		return &Literal{V: types.NullOf(t)}
	}
	return &Cast{E: e, To: t}
}

func sameType(a, b arrow.DataType) bool { return arrow.TypeEqual(a, b) }

func commonType(a, b arrow.DataType) (arrow.DataType, bool) {
	if sameType(a, b) {
		return a, true
	}
	return kernels.CommonType(a, b)
}

// fold evaluates a cast of a literal at bind time when it succeeds; otherwise the
// cast stays and fails (or not) when the row is computed.
func (b *binder) fold(e Expr) Expr {
	c, ok := e.(*Cast)
	if !ok {
		return e
	}
	l, ok := c.E.(*Literal)
	if !ok {
		if u, ok := c.E.(*untypedString); ok {
			l = &u.Literal
		} else {
			return e
		}
	}
	out, err := kernels.Cast(kernels.ConstArray(l.V, 1), c.To)
	if err != nil {
		return e
	}
	return &Literal{V: types.ValueAt(out, 0)}
}

// call resolves a scalar function or operator and casts its arguments. String
// literals next to a typed operand take that operand's type first.
func (b *binder) call(name string, args []Expr, pos int) (Expr, error) {
	if len(args) == 2 {
		args = typeLiteralPair(args)
		if integerOps[name] || comparisonOps[name] || bitwiseOps[name] {
			args = adaptIntLiteral(args)
		}
	}
	argTypes := make([]arrow.DataType, len(args))
	consts := make([]*types.Value, len(args))
	for i, a := range args {
		argTypes[i] = a.Type()
		if l, ok := a.(*Literal); ok {
			v := l.V
			consts[i] = &v
		} else if u, ok := a.(*untypedString); ok {
			v := u.V
			consts[i] = &v
		}
	}
	fn, err := kernels.ResolveConst(name, argTypes, consts)
	if err != nil {
		if e, ok := err.(*errs.Error); ok && e.Pos == errs.NoPosition {
			e.Pos = pos
		}
		return nil, err
	}
	out := make([]Expr, len(args))
	for i, a := range args {
		if u, ok := a.(*untypedString); ok && sameType(fn.Args[i], types.String) {
			out[i] = &u.Literal
			continue
		}
		out[i] = b.fold(castTo(a, fn.Args[i]))
	}
	if comparisonOps[name] && len(out) == 2 {
		if simpler, ok := b.dateComparison(name, out, pos); ok {
			return simpler, nil
		}
	}
	var e Expr = b.foldCall(&Call{Fn: fn, Args: out})
	if integerOps[name] && len(args) == 2 && types.IsInteger(argTypes[0]) && types.IsInteger(argTypes[1]) {
		// Integer arithmetic keeps the operands' common type, as in DuckDB, so that
		// INTEGER + INTEGER overflows where an INTEGER would.
		if want, ok := commonType(argTypes[0], argTypes[1]); ok && types.IsInteger(want) && !sameType(want, fn.Result) {
			e = &Cast{E: e, To: want}
		}
	}
	return e, nil
}

var (
	integerOps    = map[string]bool{"+": true, "-": true, "*": true, "%": true, "//": true}
	comparisonOps = map[string]bool{"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true}
	bitwiseOps    = map[string]bool{"&": true, "|": true, "<<": true, ">>": true, "xor": true}
)

// adaptIntLiteral gives an integer literal the integer type of the other operand
// when its value fits, as DuckDB types integer constants: tinyint + 1 is a TINYINT,
// and i16 > 5 compares SMALLINTs without casting the column.
func adaptIntLiteral(args []Expr) []Expr {
	for i := 0; i < 2; i++ {
		l, ok := args[i].(*Literal)
		other := args[1-i].Type()
		if !ok || l.V.Null || !types.IsInteger(l.V.Type) || !types.IsInteger(other) || sameType(l.V.Type, other) {
			continue
		}
		if _, isLit := args[1-i].(*Literal); isLit {
			continue
		}
		if v, ok := fitInteger(l.V, types.Unwrap(other)); ok {
			out := append([]Expr(nil), args...)
			out[i] = &Literal{V: v}
			return out
		}
	}
	return args
}

// fitInteger converts an integer value to integer type t when it is in range.
func fitInteger(v types.Value, t arrow.DataType) (types.Value, bool) {
	var big, neg bool
	var u uint64
	if types.IsUnsigned(v.Type) {
		u = v.U
	} else {
		neg = v.I < 0
		u = uint64(v.I)
		if neg {
			u = uint64(-v.I)
		}
	}
	_ = big
	var maxPos, maxNeg uint64
	switch t.ID() {
	case arrow.INT8:
		maxPos, maxNeg = math.MaxInt8, 128
	case arrow.INT16:
		maxPos, maxNeg = math.MaxInt16, 1<<15
	case arrow.INT32:
		maxPos, maxNeg = math.MaxInt32, 1<<31
	case arrow.INT64:
		maxPos, maxNeg = math.MaxInt64, 1<<63
	case arrow.UINT8:
		maxPos = math.MaxUint8
	case arrow.UINT16:
		maxPos = math.MaxUint16
	case arrow.UINT32:
		maxPos = math.MaxUint32
	case arrow.UINT64:
		maxPos = math.MaxUint64
	default:
		return v, false
	}
	if (neg && u > maxNeg) || (!neg && u > maxPos) {
		return v, false
	}
	out := types.Value{Type: t}
	if types.IsUnsigned(t) {
		out.U = u
	} else if neg {
		out.I = -int64(u)
	} else {
		out.I = int64(u)
	}
	return out, true
}

// typeLiteralPair gives an untyped string literal the type of the other operand.
func typeLiteralPair(args []Expr) []Expr {
	out := append([]Expr(nil), args...)
	for i := 0; i < 2; i++ {
		u, ok := out[i].(*untypedString)
		if !ok {
			continue
		}
		other := out[1-i].Type()
		if _, isU := out[1-i].(*untypedString); isU || types.IsString(other) || other.ID() == arrow.NULL {
			out[i] = &u.Literal
			continue
		}
		if v, err := kernels.ParseLiteral(u.V.S, types.Unwrap(other)); err == nil {
			out[i] = &Literal{V: v}
		}
	}
	return out
}

// variadic resolves COALESCE/GREATEST/LEAST over the common type of its arguments.
func (b *binder) variadic(name string, args []Expr, pos int) (Expr, error) {
	t, err := argsCommonType(strings.ToUpper(name), args, pos)
	if err != nil {
		return nil, err
	}
	if t.ID() == arrow.NULL {
		t = types.String
		for _, a := range args {
			if _, u := a.(*untypedString); !u {
				t = types.Int32
			}
		}
	}
	cast := make([]Expr, len(args))
	for i, a := range args {
		cast[i] = b.fold(castTo(a, t))
	}
	return b.call(name, cast, pos)
}

func (b *binder) aExpr(a *pg.A_Expr, ec *exprCtx) (Expr, error) {
	op := ""
	if len(a.Name) > 0 {
		op = a.Name[len(a.Name)-1].GetString_().GetSval()
	}
	pos := int(a.Location)
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if op == "->" {
			return nil, lambdaError(a)
		}
		if a.Lexpr == nil {
			r, err := b.expr(a.Rexpr, ec)
			if err != nil {
				return nil, err
			}
			switch op {
			case "-":
				if l, ok := r.(*Literal); ok && !l.V.Null && (types.IsSigned(l.V.Type) || types.IsFloat(l.V.Type)) {
					v := l.V
					v.I, v.F = -v.I, -v.F
					return &Literal{V: v}, nil
				}
				return b.call("neg", []Expr{r}, pos)
			case "+":
				return r, nil
			case "~":
				return b.call("~", []Expr{r}, pos)
			}
			return nil, errs.At(errs.Analysis, pos, "operator does not exist: %s%s", op, types.Name(r.Type()))
		}
		l, err := b.expr(a.Lexpr, ec)
		if err != nil {
			return nil, err
		}
		r, err := b.expr(a.Rexpr, ec)
		if err != nil {
			return nil, err
		}
		switch op {
		case "!=":
			op = "<>"
		case "~~":
			op = "like"
		case "!~~":
			op = "not_like"
		case "~~*":
			op = "ilike"
		case "!~~*":
			op = "not_ilike"
		}
		return b.call(op, []Expr{l, r}, pos)
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		l, err := b.expr(a.Lexpr, ec)
		if err != nil {
			return nil, err
		}
		var r Expr
		name := map[string]string{"~~": "like", "!~~": "not_like", "~~*": "ilike", "!~~*": "not_ilike"}[op]
		if name == "" {
			return nil, errs.At(errs.Analysis, pos, "unsupported LIKE form")
		}
		if fc := a.Rexpr.GetFuncCall(); fc != nil && funcName(fc) == "like_escape" {
			if !likeEscapeIsLiteral(fc) {
				return b.likeWithEscape(name, l, fc, ec, pos)
			}
			if r, err = likeEscape(fc); err != nil {
				return nil, err
			}
		} else if r, err = b.expr(a.Rexpr, ec); err != nil {
			return nil, err
		}
		return b.call(name, []Expr{l, r}, pos)
	case pg.A_Expr_Kind_AEXPR_IN:
		l, err := b.expr(a.Lexpr, ec)
		if err != nil {
			return nil, err
		}
		items, err := b.exprs(a.Rexpr.GetList().GetItems(), ec)
		if err != nil {
			return nil, err
		}
		t := l.Type()
		if _, u := l.(*untypedString); u {
			t = types.Null
		}
		for _, it := range items {
			if _, u := it.(*untypedString); u && t.ID() != arrow.NULL {
				continue
			}
			nt, ok := commonType(t, it.Type())
			if !ok {
				return nil, errs.At(errs.Analysis, pos, "IN list: types %s and %s have no common type", types.Name(t), types.Name(it.Type()))
			}
			t = nt
		}
		if t.ID() == arrow.NULL {
			t = types.String
		}
		in := &InList{E: b.fold(castTo(l, t)), Not: op == "<>"}
		for _, it := range items {
			in.List = append(in.List, b.fold(castTo(it, t)))
		}
		if !types.IsOrderable(t) && t.ID() != arrow.BOOL && !kernels.NestedOrderable(t) {
			return nil, errs.At(errs.Analysis, pos, "IN is not supported for type %s", types.Name(t))
		}
		return in, nil
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		x, err := b.expr(a.Lexpr, ec)
		if err != nil {
			return nil, err
		}
		bounds, err := b.exprs(a.Rexpr.GetList().GetItems(), ec)
		if err != nil {
			return nil, err
		}
		lo, err := b.call(">=", []Expr{x, bounds[0]}, pos)
		if err != nil {
			return nil, err
		}
		hi, err := b.call("<=", []Expr{x, bounds[1]}, pos)
		if err != nil {
			return nil, err
		}
		both, err := b.call("and", []Expr{lo, hi}, pos)
		if err != nil {
			return nil, err
		}
		if a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			return b.call("not", []Expr{both}, pos)
		}
		return both, nil
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		l, err := b.expr(a.Lexpr, ec)
		if err != nil {
			return nil, err
		}
		r, err := b.expr(a.Rexpr, ec)
		if err != nil {
			return nil, err
		}
		args := typeLiteralPair([]Expr{l, r})
		t, ok := commonType(args[0].Type(), args[1].Type())
		if !ok {
			return nil, errs.At(errs.Analysis, pos, "NULLIF: types %s and %s have no common type", types.Name(l.Type()), types.Name(r.Type()))
		}
		return b.call("nullif", []Expr{castTo(args[0], t), castTo(args[1], t)}, pos)
	case pg.A_Expr_Kind_AEXPR_SIMILAR:
		return b.similarTo(a, ec)
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		l, err := b.expr(a.Lexpr, ec)
		if err != nil {
			return nil, err
		}
		r, err := b.expr(a.Rexpr, ec)
		if err != nil {
			return nil, err
		}
		name := "is_distinct_from"
		if a.Kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT {
			name = "is_not_distinct_from"
		}
		return b.call(name, []Expr{l, r}, pos)
	}
	return nil, errs.At(errs.Analysis, pos, "unsupported operator form")
}

func (b *binder) caseExpr(c *pg.CaseExpr, ec *exprCtx) (Expr, error) {
	var subject Expr
	var err error
	if c.Arg != nil {
		if subject, err = b.expr(c.Arg, ec); err != nil {
			return nil, err
		}
	}
	out := &Case{}
	var thens []Expr
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		cond, err := b.expr(cw.Expr, ec)
		if err != nil {
			return nil, err
		}
		if subject != nil {
			if cond, err = b.call("=", []Expr{subject, cond}, int(cw.Location)); err != nil {
				return nil, err
			}
		}
		if cond, err = b.boolean(cond, "CASE WHEN"); err != nil {
			return nil, err
		}
		then, err := b.expr(cw.Result, ec)
		if err != nil {
			return nil, err
		}
		out.Whens = append(out.Whens, When{Cond: cond})
		thens = append(thens, then)
	}
	var els Expr = &Literal{V: types.NullOf(types.Null)}
	if c.Defresult != nil {
		if els, err = b.expr(c.Defresult, ec); err != nil {
			return nil, err
		}
	}
	var t arrow.DataType = types.Null
	for _, e := range append(thens, els) {
		if _, u := e.(*untypedString); u && t.ID() != arrow.NULL {
			continue
		}
		nt, ok := commonType(t, e.Type())
		if !ok {
			return nil, errs.At(errs.Analysis, int(c.Location), "CASE types %s and %s cannot be matched", types.Name(t), types.Name(e.Type()))
		}
		t = nt
	}
	if t.ID() == arrow.NULL {
		t = types.Int32
		for _, e := range append(thens, els) {
			if _, u := e.(*untypedString); u {
				t = types.String
			}
		}
	}
	for i := range out.Whens {
		out.Whens[i].Then = b.fold(castTo(thens[i], t))
	}
	out.Else = b.fold(castTo(els, t))
	out.T = t
	return out, nil
}

func (b *binder) sqlValueFunction(f *pg.SQLValueFunction) (Expr, error) {
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		days := b.clock().Unix() / 86400
		return &Literal{V: types.DateValue(int32(days))}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N,
		pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return &Literal{V: types.Value{Type: types.TimestampTZ, I: b.clock().UnixMicro()}}, nil
	}
	return nil, errs.At(errs.Analysis, int(f.Location), "unsupported SQL value function")
}

func (b *binder) funcCall(fc *pg.FuncCall, ec *exprCtx) (Expr, error) {
	name := funcName(fc)
	pos := int(fc.Location)
	if fc.Over != nil {
		return b.windowCall(fc, ec)
	}
	if name == "grouping_id" {
		return b.groupingCall(name, fc.Args, pos, ec)
	}
	if name == "unnest" {
		return b.bindUnnest(fc, ec)
	}
	if name == "generate_subscripts" {
		return b.bindSubscripts(fc, ec)
	}
	switch {
	case name == "map" && b.dialect.IsMapLiteral(fc.Location):
		return b.mapLiteral(fc, ec)
	case name == "struct_pack" && len(fc.Funcname) == 1:
		return b.structPackCall(fc, ec)
	case (name == "list_value" || name == "list_pack") && len(fc.Funcname) == 1 && !fc.AggStar:
		args, err := b.exprs(fc.Args, ec)
		if err != nil {
			return nil, err
		}
		return b.listValue(args, pos)
	}
	if isAggregate(name) {
		if ec.noAgg || ec.agg == nil {
			clause := ec.clause
			if clause == "" {
				clause = "this context"
			}
			return nil, errs.At(errs.Analysis, pos, "aggregate functions are not allowed in %s", clause)
		}
	}
	if fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
		return nil, errs.At(errs.Analysis, pos, "%s is not an aggregate function", name)
	}
	if e, ok, err := b.conditionalCall(name, fc, ec); ok {
		return e, err
	}
	if e, ok, err := b.lambdaCall(name, fc, ec); ok {
		return e, err
	}
	args, err := b.exprs(fc.Args, ec)
	if err != nil {
		return nil, err
	}
	switch name {
	case "btrim":
		name = "trim"
	case "coalesce", "greatest", "least", "concat":
		if name != "concat" {
			return b.variadic(name, args, pos)
		}
	case "extract", "date_part", "date_trunc", "datetrunc", "datepart", "date_diff", "datediff":
		// The part is a lower-case string.
		if len(args) > 0 {
			if u, ok := args[0].(*untypedString); ok {
				args[0] = &Literal{V: types.StringValue(strings.ToLower(u.V.S))}
			}
		}
	case "now", "current_timestamp", "get_current_timestamp", "transaction_timestamp":
		if len(args) == 0 {
			return &Literal{V: types.Value{Type: types.TimestampTZ, I: b.clock().UnixMicro()}}, nil
		}
	case "current_date", "today":
		if len(args) == 0 {
			return &Literal{V: types.DateValue(int32(b.clock().Unix() / 86400))}, nil
		}
	}
	for i, a := range args {
		if u, ok := a.(*untypedString); ok {
			args[i] = &u.Literal
		}
	}
	return b.call(name, args, pos)
}

// postAggregate binds n over an aggregate's output: aggregate calls become columns of
// the aggregate, expressions equal to a group expression become group columns.
func (b *binder) postAggregate(n *pg.Node, ec *exprCtx) (Expr, bool, error) {
	agg := ec.agg
	if fc := n.GetFuncCall(); fc != nil && fc.Over == nil && isAggregate(funcName(fc)) {
		e, err := b.aggregateCall(fc, agg)
		return e, true, err
	}
	if n.GetAConst() != nil || n.GetSubLink() != nil {
		return nil, false, nil
	}
	if err := unknownFunction(n); err != nil {
		// Said before its arguments are bound over the groups, where they would be
		// reported as columns missing from GROUP BY.
		return nil, false, err
	}
	if len(agg.groups) > 0 && !containsAggregate(n) && !hasWindow(n) {
		trial := &exprCtx{sc: agg.pre, noSubquery: true, noAgg: true}
		if e, err := b.expr(n, trial); err == nil {
			if i := agg.findGroup(e); i >= 0 {
				return &ColRef{Idx: i, T: e.Type(), Name: colRefName(e)}, true, nil
			}
		}
	}
	return nil, false, nil
}

// binderFunctions are the functions the binder itself turns into expressions,
// which the kernels' registry does not know.
var binderFunctions = map[string]bool{"btrim": true, "grouping_id": true, "if": true, "try": true, "unnest": true, "generate_subscripts": true}

// unknownFunction is the error for a call of n to a function that is neither an
// aggregate nor a scalar function, nil otherwise.
func unknownFunction(n *pg.Node) error {
	fc := n.GetFuncCall()
	if fc == nil || fc.Over != nil {
		return nil
	}
	name := funcName(fc)
	if isAggregate(name) || kernels.Known(name) || binderFunctions[name] || isLambdaFunction(name) {
		return nil
	}
	return errs.At(errs.Analysis, int(fc.Location), "function %s does not exist", name)
}

func hasWindow(n *pg.Node) bool {
	found := false
	walkPG(n, func(x *pg.Node) bool {
		if fc := x.GetFuncCall(); fc != nil && fc.Over != nil {
			found = true
		}
		return !found && x.GetSubLink() == nil
	})
	return found
}

// aggregateCall registers an aggregate and returns a reference to its column.
func (b *binder) aggregateCall(fc *pg.FuncCall, agg *aggState) (Expr, error) {
	call, err := b.bindAggCall(fc, &exprCtx{sc: agg.pre, sel: agg.sel, noAgg: true, clause: "aggregate function arguments"}, false)
	if err != nil {
		return nil, err
	}
	key := call.key()
	for i, k := range agg.akeys {
		if k == key {
			return &ColRef{Idx: len(agg.groups) + i, T: call.T, Name: call.Func}, nil
		}
	}
	agg.aggs = append(agg.aggs, call)
	agg.akeys = append(agg.akeys, key)
	return &ColRef{Idx: len(agg.groups) + len(agg.aggs) - 1, T: call.T, Name: call.Func}, nil
}

// bindAggCall binds one aggregate function call, its arguments and its FILTER over
// ec's scope: the one binding of an aggregate, whether it is grouped (aggregateCall)
// or a window function (windowCall, with window set).
func (b *binder) bindAggCall(fc *pg.FuncCall, ec *exprCtx, window bool) (AggCall, error) {
	name := funcName(fc)
	pos := int(fc.Location)
	if fc.AggWithinGroup && !window {
		return b.bindWithinGroup(fc, ec)
	}
	if len(fc.AggOrder) > 0 && !fc.AggWithinGroup {
		return b.bindOrderedAggCall(fc, ec)
	}
	if moreAggregate(name) && len(fc.AggOrder) == 0 && !fc.AggWithinGroup {
		return b.bindMoreAggCall(fc, ec, window)
	}
	if len(fc.AggOrder) > 0 || fc.AggWithinGroup {
		return AggCall{}, errs.At(errs.Analysis, pos, "ORDER BY and WITHIN GROUP in aggregates are not supported")
	}
	call := AggCall{Func: name}
	switch name {
	case "approx_count_distinct", "approx_distinct":
		call.Func = "approx_count_distinct"
		if fc.AggStar || fc.AggDistinct || len(fc.Args) != 1 {
			return AggCall{}, errs.At(errs.Analysis, pos, "%s takes exactly one argument", name)
		}
	case "approx_percentile":
		if fc.AggStar || fc.AggDistinct || len(fc.Args) != 2 {
			return AggCall{}, errs.At(errs.Analysis, pos, "approx_percentile takes a value and a fraction (or ARRAY of fractions)")
		}
		qs, list, err := b.fractions(fc.Args[1])
		if err != nil {
			return AggCall{}, err
		}
		call.Quantiles, call.List = qs, list
		fc = &pg.FuncCall{Funcname: fc.Funcname, Args: fc.Args[:1], AggFilter: fc.AggFilter, Location: fc.Location}
	case "mean":
		call.Func = "avg"
	}
	name = call.Func
	if fc.AggStar {
		if name != "count" {
			return AggCall{}, errs.At(errs.Analysis, pos, "%s(*) is not valid", name)
		}
		call.Func = "count_star"
	} else {
		if len(fc.Args) != 1 {
			return AggCall{}, errs.At(errs.Analysis, pos, "%s takes exactly one argument", name)
		}
		arg, err := b.expr(fc.Args[0], ec)
		if err != nil {
			return AggCall{}, err
		}
		if u, ok := arg.(*untypedString); ok {
			arg = &u.Literal
		}
		if arg.Type().ID() == arrow.NULL {
			arg = &Literal{V: types.NullOf(types.Int32)}
		}
		call.Arg = arg
		if fc.AggDistinct {
			switch name {
			case "count":
				call.Func = "count_distinct"
				if b.approximate {
					call.Func, call.Written = "approx_count_distinct", "count"
				}
			case "min", "max":
			case "sum", "avg":
				call.Func = name + "_distinct"
			default:
				return AggCall{}, errs.At(errs.Analysis, pos, "%s(DISTINCT …) is not supported", name)
			}
		}
	}
	if err := b.aggFilter(fc, ec, window, &call); err != nil {
		return AggCall{}, err
	}
	t, err := aggResultType(call)
	if err != nil {
		if e, ok := err.(*errs.Error); ok && e.Pos == errs.NoPosition {
			e.Pos = pos
		}
		return AggCall{}, err
	}
	call.T = t
	return call, nil
}

// key identifies an aggregate call, so that one written twice is computed once.
func (c *AggCall) key() string {
	k := fmt.Sprintf("%s(%s)%v%v filter(%s)", c.Func, exprKey(c.Arg), c.Quantiles, c.List, exprKey(c.Filter))
	return k + c.moreKey()
}

func exprKey(e Expr) string {
	if e == nil {
		return "*"
	}
	return e.String()
}

// windowCall binds f(…) OVER (…).
func (b *binder) windowCall(fc *pg.FuncCall, ec *exprCtx) (Expr, error) {
	pos := int(fc.Location)
	if ec.wins == nil {
		return nil, errs.At(errs.Analysis, pos, "window functions are not allowed in %s", ec.clause)
	}
	name := funcName(fc)
	w, err := b.resolveWindow(fc.Over)
	if err != nil {
		return nil, err
	}
	inner := *ec
	inner.wins = nil
	inner.clause = "window function arguments"
	call := WindowCall{Func: name}
	if call.IgnoreNulls, err = b.nullTreatment(fc, name); err != nil {
		return nil, err
	}
	switch name {
	case "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile",
		"lead", "lag", "first_value", "last_value", "nth_value":
		if err := b.windowArgs(fc, &inner, &call); err != nil {
			return nil, err
		}
	default:
		// Any aggregate is a window function.
		if !isAggregate(name) {
			return nil, errs.At(errs.Analysis, pos, "window function %s does not exist", name)
		}
		ac, err := b.bindAggCall(fc, &inner, true)
		if err != nil {
			return nil, err
		}
		call.Func, call.Arg, call.T, call.Agg = ac.Func, ac.Arg, ac.T, &ac
	}
	for _, p := range w.PartitionClause {
		e, err := b.expr(p, &inner)
		if err != nil {
			return nil, err
		}
		call.Partition = append(call.Partition, e)
	}
	for _, o := range w.OrderClause {
		sb := o.GetSortBy()
		e, err := b.expr(sb.Node, &inner)
		if err != nil {
			return nil, err
		}
		call.Order = append(call.Order, sortKey(e, sb))
	}
	frame, err := b.frame(w, len(call.Order) > 0)
	if err != nil {
		return nil, err
	}
	if frame.StartVal == nil && !frame.Rows && !frame.Groups && (offsetBound(frame.Start) || offsetBound(frame.End)) {
		if err := b.rangeBounds(w, &frame, call.Order); err != nil {
			return nil, err
		}
	}
	call.Frame = frame
	*ec.wins = append(*ec.wins, call)
	return &winRef{k: len(*ec.wins) - 1, t: call.T}, nil
}

// PostgreSQL's frame option bits.
const (
	frameNonDefault        = 0x00001
	frameRange             = 0x00002
	frameRows              = 0x00004
	frameGroups            = 0x00008
	frameStartUnbPrec      = 0x00020
	frameStartUnbFollow    = 0x00080
	frameEndUnbFollow      = 0x00100
	frameStartCurrent      = 0x00200
	frameEndCurrent        = 0x00400
	frameStartOffsetPrec   = 0x00800
	frameEndOffsetPrec     = 0x01000
	frameStartOffsetFollw  = 0x02000
	frameEndOffsetFollow   = 0x04000
	frameExcludeCurrentRow = 0x08000
	frameExcludeGroup      = 0x10000
	frameExcludeTies       = 0x20000
)

func (b *binder) frame(w *pg.WindowDef, ordered bool) (Frame, error) {
	opt := w.FrameOptions
	if opt&frameNonDefault == 0 {
		if ordered {
			return Frame{Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}, nil
		}
		return Frame{Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: UnboundedFollowing}}, nil
	}
	f := Frame{Rows: opt&frameRows != 0, Groups: opt&frameGroups != 0}
	switch {
	case opt&frameExcludeCurrentRow != 0:
		f.Exclude = ExcludeCurrentRow
	case opt&frameExcludeGroup != 0:
		f.Exclude = ExcludeGroup
	case opt&frameExcludeTies != 0:
		f.Exclude = ExcludeTies
	}
	// A RANGE offset is a distance in the key (rangeBounds), not a count.
	offset := func(n *pg.Node) (int64, error) {
		if !f.Rows && !f.Groups {
			return 0, nil
		}
		return b.constInt(n, "frame offset")
	}
	var err error
	switch {
	case opt&frameStartUnbPrec != 0:
		f.Start.Kind = UnboundedPreceding
	case opt&frameStartCurrent != 0:
		f.Start.Kind = CurrentRow
	case opt&frameStartOffsetPrec != 0:
		f.Start.Kind = Preceding
		f.Start.N, err = offset(w.StartOffset)
	case opt&frameStartOffsetFollw != 0:
		f.Start.Kind = Following
		f.Start.N, err = offset(w.StartOffset)
	case opt&frameStartUnbFollow != 0:
		return Frame{}, errs.At(errs.Analysis, int(w.Location), "frame start cannot be UNBOUNDED FOLLOWING")
	}
	if err != nil {
		return Frame{}, err
	}
	switch {
	case opt&frameEndUnbFollow != 0:
		f.End.Kind = UnboundedFollowing
	case opt&frameEndCurrent != 0:
		f.End.Kind = CurrentRow
	case opt&frameEndOffsetPrec != 0:
		f.End.Kind = Preceding
		f.End.N, err = offset(w.EndOffset)
	case opt&frameEndOffsetFollow != 0:
		f.End.Kind = Following
		f.End.N, err = offset(w.EndOffset)
	default:
		f.End.Kind = CurrentRow
	}
	if err != nil {
		return Frame{}, err
	}
	return f, nil
}

// offsetBound reports a frame bound with an offset (N PRECEDING or N FOLLOWING).
func offsetBound(b FrameBound) bool { return b.Kind == Preceding || b.Kind == Following }

// columnName derives an output column name from an expression, as DuckDB names them.
func columnName(n *pg.Node) string {
	switch {
	case n.GetColumnRef() != nil:
		f := n.GetColumnRef().Fields
		if s := f[len(f)-1].GetString_(); s != nil {
			return s.Sval
		}
		return "*"
	case n.GetFuncCall() != nil:
		fc := n.GetFuncCall()
		name := funcName(fc)
		if fc.AggStar {
			return name + "_star()"
		}
		args := make([]string, len(fc.Args))
		for i, a := range fc.Args {
			args[i] = columnName(a)
		}
		prefix := ""
		if fc.AggDistinct {
			prefix = "DISTINCT "
		}
		return name + "(" + prefix + strings.Join(args, ", ") + ")"
	case n.GetAConst() != nil:
		c := n.GetAConst()
		if c.Isnull {
			return "NULL"
		}
		switch v := c.Val.(type) {
		case *pg.A_Const_Ival:
			return strconv.Itoa(int(v.Ival.Ival))
		case *pg.A_Const_Fval:
			return v.Fval.Fval
		case *pg.A_Const_Sval:
			return "'" + v.Sval.Sval + "'"
		case *pg.A_Const_Boolval:
			return strconv.FormatBool(v.Boolval.Boolval)
		}
	case n.GetAExpr() != nil:
		a := n.GetAExpr()
		op := ""
		if len(a.Name) > 0 {
			op = a.Name[len(a.Name)-1].GetString_().GetSval()
		}
		if a.Lexpr == nil {
			return "(" + op + columnName(a.Rexpr) + ")"
		}
		if a.Kind == pg.A_Expr_Kind_AEXPR_OP {
			return "(" + columnName(a.Lexpr) + " " + op + " " + columnName(a.Rexpr) + ")"
		}
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		if t, err := typeName(tc.TypeName); err == nil {
			return "CAST(" + columnName(tc.Arg) + " AS " + types.Name(t) + ")"
		}
	case n.GetCaseExpr() != nil:
		return "CASE"
	case n.GetCoalesceExpr() != nil:
		return "coalesce"
	case n.GetSubLink() != nil:
		return "subquery"
	case n.GetAIndirection() != nil:
		return indirectionName(n.GetAIndirection())
	}
	return "?column?"
}

// settle replaces the untyped string literals left in e by VARCHAR literals.
func settle(e Expr) Expr {
	out, _ := MapExpr(e, func(x Expr) (Expr, error) {
		if u, ok := x.(*untypedString); ok {
			return &u.Literal, nil
		}
		return x, nil
	})
	return out
}

// likeEscape rewrites pattern ESCAPE 'c' (both literals) into the pattern form the
// LIKE kernel reads, where the escape character is a backslash.
func likeEscape(fc *pg.FuncCall) (Expr, error) {
	pos := int(fc.Location)
	lit := func(n *pg.Node) (string, bool) {
		if c := n.GetAConst(); c != nil {
			if sv, ok := c.Val.(*pg.A_Const_Sval); ok {
				return sv.Sval.Sval, true
			}
		}
		return "", false
	}
	if len(fc.Args) != 2 {
		return nil, errs.At(errs.Analysis, pos, "LIKE … ESCAPE needs a pattern and one escape character")
	}
	pattern, ok1 := lit(fc.Args[0])
	esc, ok2 := lit(fc.Args[1])
	if !ok1 || !ok2 {
		return nil, errs.At(errs.Analysis, pos, "LIKE … ESCAPE is supported with a literal pattern and escape character")
	}
	runes := []rune(esc)
	if len(runes) > 1 {
		return nil, errs.At(errs.Analysis, pos, "the LIKE escape must be a single character")
	}
	if len(runes) == 0 {
		// No escape character: every character is literal or a wildcard.
		return &Literal{V: types.StringValue(strings.ReplaceAll(pattern, `\`, `\\`))}, nil
	}
	e := runes[0]
	var out strings.Builder
	pr := []rune(pattern)
	for i := 0; i < len(pr); i++ {
		switch {
		case pr[i] == e:
			if i+1 >= len(pr) {
				return nil, errs.At(errs.Analysis, pos, "LIKE pattern must not end with the escape character")
			}
			i++
			out.WriteRune('\\')
			out.WriteRune(pr[i])
		case pr[i] == '\\':
			out.WriteString(`\\`)
		default:
			out.WriteRune(pr[i])
		}
	}
	return &Literal{V: types.StringValue(out.String())}, nil
}

// decimalLiteral types a number written with a decimal point and no exponent as
// DuckDB does: an exact DECIMAL with as many digits as written (0.06 is
// DECIMAL(2,2), 12.50 is DECIMAL(4,2)), so that 0.06 + 0.01 = 0.07 holds. Numbers
// with more than 38 digits are not decimals.
func decimalLiteral(s string) (types.Value, bool) {
	intPart, frac, ok := strings.Cut(s, ".")
	if !ok || strings.ContainsAny(s, "eE") {
		return types.Value{}, false
	}
	intPart = strings.TrimLeft(intPart, "0")
	scale := len(frac)
	prec := max(len(intPart)+scale, 1)
	if prec > 38 {
		return types.Value{}, false
	}
	dt := types.Decimal(int32(prec), int32(scale))
	v, err := kernels.ParseLiteral(s, dt)
	if err != nil {
		return types.Value{}, false
	}
	return v, true
}

// wideIntegerLiteral types an integer literal beyond BIGINT. DuckDB makes it a
// HUGEINT; Lore has no HUGEINT and makes it DECIMAL(38,0), which holds every such
// literal of up to 38 digits exactly and gives the same answers. Longer ones are
// left to DOUBLE.
func wideIntegerLiteral(s string) (types.Value, bool) {
	if len(strings.TrimLeft(s, "0")) > 38 {
		return types.Value{}, false
	}
	v, err := kernels.ParseLiteral(s, &arrow.Decimal128Type{Precision: 38, Scale: 0})
	if err != nil {
		return types.Value{}, false
	}
	return v, true
}

// fractions reads approx_percentile's second argument: a constant fraction in
// [0, 1], or ARRAY[…] of them.
func (b *binder) fractions(n *pg.Node) ([]float64, bool, error) {
	one := func(x *pg.Node) (float64, error) {
		e, err := b.expr(x, &exprCtx{sc: newScope(nil), clause: "approx_percentile"})
		if err != nil {
			return 0, err
		}
		l, ok := e.(*Literal)
		if !ok || l.V.Null || !types.IsNumeric(l.V.Type) {
			return 0, errs.At(errs.Analysis, location(x), "approx_percentile's fraction must be a constant number")
		}
		v, err := kernels.Cast(kernels.ConstArray(l.V, 1), types.Float64)
		if err != nil {
			return 0, err
		}
		f := types.ValueAt(v, 0).F
		if f < 0 || f > 1 || math.IsNaN(f) {
			return 0, errs.At(errs.Analysis, location(x), "approx_percentile's fraction must be between 0 and 1, not %v", f)
		}
		return f, nil
	}
	if arr := n.GetAArrayExpr(); arr != nil {
		if len(arr.Elements) == 0 {
			return nil, false, errs.At(errs.Analysis, int(arr.Location), "approx_percentile needs at least one fraction")
		}
		qs := make([]float64, len(arr.Elements))
		for i, el := range arr.Elements {
			f, err := one(el)
			if err != nil {
				return nil, false, err
			}
			qs[i] = f
		}
		return qs, true, nil
	}
	f, err := one(n)
	if err != nil {
		return nil, false, err
	}
	return []float64{f}, false, nil
}

// foldCall evaluates a call whose arguments are all constants once, at bind time
// (DATE '1998-12-01' - INTERVAL '90' DAY is one literal, not a computation per
// row). A call that fails is left to fail, or not, where it runs.
func (b *binder) foldCall(c *Call) Expr {
	args := make([]arrow.Array, len(c.Args))
	for i, a := range c.Args {
		l, ok := a.(*Literal)
		if !ok {
			return c
		}
		args[i] = kernels.ConstArray(l.V, 1)
	}
	out, err := c.Fn.Eval(args, 1)
	if err != nil || out.Len() != 1 {
		return c
	}
	v := types.ValueAt(out, 0)
	v.Type = c.Fn.Result
	return &Literal{V: v}
}

// dateComparison compares a DATE with a midnight TIMESTAMP constant as dates:
// CAST(d AS TIMESTAMP) <= TIMESTAMP '1998-09-02' is d <= DATE '1998-09-02', which
// needs no cast per row and can prune row groups by the column's bounds.
func (b *binder) dateComparison(op string, args []Expr, pos int) (Expr, bool) {
	for i := 0; i < 2; i++ {
		c, ok := args[i].(*Cast)
		lit, lok := args[1-i].(*Literal)
		if !ok || !lok || lit.V.Null || c.E.Type().ID() != arrow.DATE32 || c.To.ID() != arrow.TIMESTAMP || lit.V.Type.ID() != arrow.TIMESTAMP {
			continue
		}
		ts := lit.V.Type.(*arrow.TimestampType)
		if ts.TimeZone != "" || c.To.(*arrow.TimestampType).TimeZone != "" {
			continue
		}
		per := types.UnitsPerSecond(ts.Unit) * 86400
		if lit.V.I%per != 0 {
			continue
		}
		day := &Literal{V: types.DateValue(int32(lit.V.I / per))}
		pair := []Expr{c.E, day}
		if i == 1 {
			pair = []Expr{day, c.E}
		}
		fn, err := kernels.Resolve(op, []arrow.DataType{types.Date, types.Date})
		if err != nil {
			return nil, false
		}
		return &Call{Fn: fn, Args: pair}, true
	}
	return nil, false
}
