//go:build cgo

package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/types"
)

// unnest in the select list: each call is bound to a placeholder (unnestRef), and
// once the rest of the SELECT is planned the calls become Unnest nodes under the
// final projection, one per level of lists (unnest(ll, max_depth := 2) unnests the
// outer list first, then each of its elements).

// unnestCall is one unnest(…) of a select list: its argument, over the columns of
// the node the select list reads (which may name lower levels' placeholders).
type unnestCall struct {
	arg Expr
	// level is the call's place in its chain of unnests (1 the outermost), chain
	// the chain's length.
	level, chain int
	// ordinal gives the elements' positions instead: generate_subscripts.
	ordinal bool
}

// unnestRef stands for the elements of the k-th unnest call until its Unnest node
// exists.
type unnestRef struct {
	k     int
	t     arrow.DataType
	level int
}

func (e *unnestRef) Type() arrow.DataType { return e.t }
func (e *unnestRef) Children() []Expr     { return nil }
func (e *unnestRef) String() string       { return fmt.Sprintf("unnest#%d", e.k) }

// unnestStruct is unnest of a struct at the top of a select item: the item becomes
// one column per field.
type unnestStruct struct {
	arg Expr
	// depth is the number of levels of structs expanded: 1 the struct's own
	// fields, 2 those of its struct fields too, and so on.
	depth int
}

func (e *unnestStruct) Type() arrow.DataType { return e.arg.Type() }
func (e *unnestStruct) Children() []Expr     { return []Expr{e.arg} }
func (e *unnestStruct) String() string       { return "unnest(" + e.arg.String() + ")" }

// bindUnnest binds unnest(l) (and unnest(l, recursive := true), max_depth := n)
// where the select list allows it; anywhere else it is an error, as in DuckDB.
func (b *binder) bindUnnest(fc *pg.FuncCall, ec *exprCtx) (Expr, error) {
	pos := int(fc.Location)
	if ec.unnests == nil || ec.clause != "SELECT" {
		return nil, errs.At(errs.Analysis, pos, "UNNEST is not supported here: only in the select list")
	}
	if len(fc.Args) == 0 {
		return nil, errs.At(errs.Analysis, pos, "unnest takes one argument")
	}
	recursive, depth := false, 1
	for _, a := range fc.Args[1:] {
		na := a.GetNamedArgExpr()
		if na == nil {
			return nil, errs.At(errs.Analysis, location(a), "unnest takes one argument, then recursive := and max_depth :=")
		}
		v, err := b.expr(na.Arg, &exprCtx{sc: newScope(nil), noAgg: true, noSubquery: true, clause: "unnest options"})
		if err != nil {
			return nil, err
		}
		if u, ok := v.(*untypedString); ok {
			v = &u.Literal
		}
		l, ok := b.fold(v).(*Literal)
		switch strings.ToLower(na.Name) {
		case "recursive":
			if !ok || l.V.Type.ID() != arrow.BOOL || l.V.Null {
				return nil, errs.At(errs.Analysis, location(a), "unnest: recursive must be a constant BOOLEAN")
			}
			recursive = l.V.Bool()
		case "max_depth":
			if !ok || !types.IsInteger(l.V.Type) || l.V.Null || l.V.I < 1 {
				return nil, errs.At(errs.Analysis, location(a), "unnest: max_depth must be a positive integer constant")
			}
			depth = int(l.V.I)
		default:
			return nil, errs.At(errs.Analysis, location(a), "unnest has no parameter %q", na.Name)
		}
	}
	arg, err := b.expr(fc.Args[0], ec)
	if err != nil {
		return nil, err
	}
	arg = settle(arg)
	nested := false
	WalkExpr(arg, func(x Expr) {
		if _, ok := x.(*unnestRef); ok {
			nested = true
		}
	})
	if nested {
		return nil, errs.At(errs.Analysis, pos, "nested unnest calls are not supported: unnest(x, recursive := true) unnests several levels")
	}
	if recursive {
		depth = 1 << 20
	}
	return b.unnestLevels(arg, depth, ec, pos)
}

// bindSubscripts binds generate_subscripts(l, 1) of the select list: the positions
// 1…len(l), one row each, in lockstep with the list's unnests.
func (b *binder) bindSubscripts(fc *pg.FuncCall, ec *exprCtx) (Expr, error) {
	pos := int(fc.Location)
	if ec.unnests == nil || ec.clause != "SELECT" {
		return nil, errs.At(errs.Analysis, pos, "generate_subscripts is not supported here: only in the select list")
	}
	if len(fc.Args) != 2 {
		return nil, errs.At(errs.Analysis, pos, "generate_subscripts takes a list and a dimension")
	}
	arg, err := b.expr(fc.Args[0], ec)
	if err != nil {
		return nil, err
	}
	arg = settle(arg)
	if t := types.Unwrap(arg.Type()); !kernels.IsList(t) && t.ID() != arrow.NULL {
		return nil, errs.At(errs.Analysis, pos, "generate_subscripts needs a LIST, not %s", types.Name(arg.Type()))
	}
	dim, err := b.expr(fc.Args[1], &exprCtx{sc: newScope(nil), noAgg: true, noSubquery: true, clause: "generate_subscripts"})
	if err != nil {
		return nil, err
	}
	if l, ok := b.fold(settle(dim)).(*Literal); !ok || !types.IsInteger(l.V.Type) || l.V.Null || l.V.I != 1 {
		return nil, errs.At(errs.Analysis, location(fc.Args[1]), "generate_subscripts: only dimension 1 is supported")
	}
	*ec.unnests = append(*ec.unnests, unnestCall{arg: arg, level: 1, chain: 1, ordinal: true})
	return &unnestRef{k: len(*ec.unnests) - 1, t: types.Int64, level: 1}, nil
}

// unnestLevels unnests arg depth levels (stopping at a non-list), lists first; the
// levels left expand a struct reached into its fields, and then its struct fields
// into theirs. The calls of one chain are numbered from 1 and told the chain's
// length: planUnnests aligns every chain on the deepest, as DuckDB does, so that a
// one-level unnest runs in lockstep with the innermost level of a recursive one.
func (b *binder) unnestLevels(arg Expr, depth int, ec *exprCtx, pos int) (Expr, error) {
	t := types.Unwrap(arg.Type())
	switch {
	case t.ID() == arrow.STRUCT:
		return &unnestStruct{arg: arg, depth: depth}, nil
	case !kernels.IsList(t) && t.ID() != arrow.NULL:
		return nil, errs.At(errs.Analysis, pos, "unnest needs a LIST or a STRUCT, not %s", types.Name(arg.Type()))
	}
	var e Expr = arg
	first := len(*ec.unnests)
	d := 0
	for ; d < depth; d++ {
		t := types.Unwrap(e.Type())
		if !kernels.IsList(t) && t.ID() != arrow.NULL {
			break
		}
		elem := arrow.DataType(types.Null)
		if t.ID() != arrow.NULL {
			elem = kernels.ListElem(t)
		}
		*ec.unnests = append(*ec.unnests, unnestCall{arg: e, level: d + 1})
		e = &unnestRef{k: len(*ec.unnests) - 1, t: elem, level: d + 1}
		if t.ID() == arrow.NULL {
			d++
			break
		}
	}
	for k := first; k < len(*ec.unnests); k++ {
		(*ec.unnests)[k].chain = d
	}
	if d < depth && types.Unwrap(e.Type()).ID() == arrow.STRUCT {
		return &unnestStruct{arg: e, depth: depth - d}, nil
	}
	return e, nil
}

// expandUnnestStructs replaces each select item that is unnest of a struct by one
// item per field (recursively for structs in structs when they came from a
// recursive unnest), named after the fields.
func (b *binder) expandUnnestStructs(targets []target, exprs []Expr, cols []Column) ([]target, []Expr, []Column, error) {
	found := false
	for _, e := range exprs {
		if _, ok := e.(*unnestStruct); ok {
			found = true
		}
	}
	if !found {
		for _, e := range exprs {
			if err := nestedUnnestStruct(e); err != nil {
				return nil, nil, nil, err
			}
		}
		return targets, exprs, cols, nil
	}
	var ts []target
	var es []Expr
	var cs []Column
	for i, e := range exprs {
		us, ok := e.(*unnestStruct)
		if !ok {
			if err := nestedUnnestStruct(e); err != nil {
				return nil, nil, nil, err
			}
			ts, es, cs = append(ts, targets[i]), append(es, e), append(cs, cols[i])
			continue
		}
		var expand func(e Expr, depth int) error
		expand = func(e Expr, depth int) error {
			st := types.Unwrap(e.Type()).(*arrow.StructType)
			for _, f := range st.Fields() {
				fe, err := b.fieldAccess(e, f.Name, errs.NoPosition)
				if err != nil {
					return err
				}
				if depth > 1 && types.Unwrap(fe.Type()).ID() == arrow.STRUCT {
					if err := expand(fe, depth-1); err != nil {
						return err
					}
					continue
				}
				ts = append(ts, target{node: nil, pre: fe, name: f.Name})
				es = append(es, fe)
				cs = append(cs, Column{Name: f.Name, Type: fe.Type()})
			}
			return nil
		}
		if err := expand(us.arg, us.depth); err != nil {
			return nil, nil, nil, err
		}
	}
	return ts, es, cs, nil
}

// planUnnests puts the Unnest nodes of calls over node, level by level, and maps
// the placeholders in exprs to the element columns. Each level projects node's
// columns and its calls' lists, then unnests those lists in place.
func planUnnests(node Node, calls []unnestCall, exprs []Expr) (Node, []Expr) {
	col := make([]int, len(calls)) // each call's column once its level is planned
	resolve := func(e Expr) Expr {
		out, _ := MapExpr(e, func(x Expr) (Expr, error) {
			if r, ok := x.(*unnestRef); ok {
				return &ColRef{Idx: col[r.k], T: r.t, Name: "unnest"}, nil
			}
			return x, nil
		})
		return out
	}
	deepest := 0
	for _, c := range calls {
		deepest = max(deepest, c.chain)
	}
	for level := 1; level <= deepest; level++ {
		var ks []int
		for k, c := range calls {
			if deepest-c.chain+c.level == level {
				ks = append(ks, k)
			}
		}
		if len(ks) == 0 {
			continue
		}
		in := node.Columns()
		pexprs := make([]Expr, 0, len(in)+len(ks))
		pcols := make([]Column, 0, len(in)+len(ks))
		for i, c := range in {
			pexprs = append(pexprs, &ColRef{Idx: i, T: c.Type, Name: c.Name})
			pcols = append(pcols, c)
		}
		u := &Unnest{}
		for _, k := range ks {
			col[k] = len(pexprs)
			u.Lists = append(u.Lists, len(pexprs))
			u.Ordinal = append(u.Ordinal, calls[k].ordinal)
			pexprs = append(pexprs, resolve(calls[k].arg))
			pcols = append(pcols, Column{Name: "unnest", Type: calls[k].arg.Type(), Hidden: true})
		}
		u.Input = &Project{Input: node, Exprs: pexprs, Cols: pcols}
		u.Cols = append([]Column(nil), pcols...)
		for _, k := range ks {
			c := &u.Cols[col[k]]
			if t := types.Unwrap(c.Type); calls[k].ordinal {
				c.Type = types.Int64
			} else if t.ID() == arrow.NULL {
				c.Type = types.Null
			} else {
				c.Type = kernels.ListElem(t)
			}
		}
		node = u
	}
	out := make([]Expr, len(exprs))
	for i, e := range exprs {
		out[i] = resolve(e)
	}
	return node, out
}

// nestedUnnestStruct is the error for unnest of a struct anywhere but at the top of
// a select item, where its fields cannot become columns.
func nestedUnnestStruct(e Expr) error {
	var err error
	WalkExpr(e, func(x Expr) {
		if _, ok := x.(*unnestStruct); ok && err == nil {
			err = errs.New(errs.Analysis, "unnest of a STRUCT must be a select item of its own")
		}
	})
	return err
}

// unnestFunction returns the unnest(…) call a FROM item is, or nil.
func unnestFunction(it *pg.Node) (*pg.RangeFunction, *pg.FuncCall) {
	rf := it.GetRangeFunction()
	if rf == nil || len(rf.Functions) != 1 {
		return nil, nil
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil || funcName(items[0].GetFuncCall()) != "unnest" {
		return nil, nil
	}
	return rf, items[0].GetFuncCall()
}

// bindUnnestFrom binds unnest(l) as a FROM item after left (nil when it comes
// first): the list may name left's columns (FROM t, unnest(t.l)), and every row of
// left is repeated once per element of its list, so the join is lateral by nature.
// The element column is named unnest, or by the alias; WITH ORDINALITY adds the
// elements' positions.
func (b *binder) bindUnnestFrom(left Node, rf *pg.RangeFunction, fc *pg.FuncCall, outer *scope) (Node, error) {
	pos := int(fc.Location)
	if len(fc.Args) != 1 {
		return nil, errs.At(errs.Analysis, pos, "unnest in FROM takes one list")
	}
	if left == nil {
		left = &Values{Rows: [][]Expr{{}}}
	}
	sc := newScope(left.Columns())
	sc.outer = outer
	arg, err := b.expr(fc.Args[0], &exprCtx{sc: sc, noAgg: true, clause: "FROM"})
	if err != nil {
		return nil, err
	}
	arg = settle(arg)
	t := types.Unwrap(arg.Type())
	if !kernels.IsList(t) && t.ID() != arrow.NULL {
		return nil, errs.At(errs.Analysis, pos, "unnest needs a LIST, not %s", types.Name(arg.Type()))
	}
	in := left.Columns()
	exprs := make([]Expr, 0, len(in)+2)
	cols := make([]Column, 0, len(in)+2)
	for i, c := range in {
		exprs = append(exprs, &ColRef{Idx: i, T: c.Type, Name: c.Name})
		cols = append(cols, c)
	}
	own := []Column{{Name: "unnest", Type: arg.Type()}}
	u := &Unnest{Lists: []int{len(in)}, Ordinal: []bool{false}}
	exprs = append(exprs, arg)
	if rf.Ordinality {
		own = append(own, Column{Name: "ordinality", Type: arg.Type()})
		u.Lists = append(u.Lists, len(in)+1)
		u.Ordinal = append(u.Ordinal, true)
		exprs = append(exprs, arg)
	}
	cols = append(cols, own...)
	u.Input = &Project{Input: left, Exprs: exprs, Cols: cols}
	if t.ID() == arrow.NULL {
		own[0].Type = types.Null
	} else {
		own[0].Type = kernels.ListElem(t)
	}
	if rf.Ordinality {
		own[1].Type = types.Int64
	}
	if own, err = requalify(own, rf.Alias, "unnest"); err != nil {
		return nil, err
	}
	u.Cols = append(append([]Column(nil), in...), own...)
	return u, nil
}

// pushUnnest decorrelates an Unnest: its input's rows carry D's columns in front,
// which are repeated with the rest of each row.
func (dc *decorr) pushUnnest(x *Unnest) (Node, error) {
	in, err := dc.push(x.Input)
	if err != nil {
		return nil, err
	}
	lists := make([]int, len(x.Lists))
	for i, k := range x.Lists {
		lists[i] = dc.after(k)
	}
	return &Unnest{Input: in, Lists: lists, Ordinal: x.Ordinal, Cols: concatCols(dc.dcols, x.Cols)}, nil
}
