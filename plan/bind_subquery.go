//go:build cgo

package plan

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/types"
)

func aggResultType(c AggCall) (arrow.DataType, error) {
	return agg.ResultType(c.Spec())
}

func exprHasOuter(e Expr) bool {
	found := false
	WalkExpr(e, func(x Expr) {
		if _, ok := x.(*OuterRef); ok {
			found = true
		}
	})
	return found
}

// subLink binds a subquery used as an expression. An uncorrelated one is evaluated
// once (scalar, EXISTS, IN); a correlated one is decorrelated and joined onto the
// rows of the clause it is in (see attachCorrelated), as is an ANY or ALL other than
// IN. EXISTS and the quantified comparisons become one-row aggregates over the
// subquery, so they decorrelate like any scalar subquery.
func (b *binder) subLink(sl *pg.SubLink, ec *exprCtx) (Expr, error) {
	pos := int(sl.Location)
	if ec.noSubquery {
		return nil, errs.At(errs.Analysis, pos, "subqueries are not allowed here")
	}
	sub := sl.Subselect.GetSelectStmt()
	outer := ec.sc
	if ec.agg != nil {
		outer = ec.agg.pre
	}
	switch sl.SubLinkType {
	case pg.SubLinkType_EXPR_SUBLINK:
		node, err := b.bindQuery(sub, outer)
		if err != nil {
			return nil, err
		}
		if len(node.Columns()) != 1 {
			return nil, errs.At(errs.Analysis, pos, "subquery must return only one column")
		}
		if !hasOuterRefs(node) {
			return &Subquery{Plan: node, T: node.Columns()[0].Type}, nil
		}
		if ec.sel != nil && ec.sc == ec.sel.sc && onlyRefsTo(node, ec.sc) {
			if e, ok, err := b.decorrelateScalar(sub, ec.sel, pos); err != nil || ok {
				return e, err
			}
		}
		q, err := b.singleRow(node, pos)
		if err != nil {
			return nil, err
		}
		return b.correlatedValue(ec, q, pos)
	case pg.SubLinkType_EXISTS_SUBLINK:
		node, err := b.bindQuery(sub, outer)
		if err != nil {
			return nil, err
		}
		if hasOuterRefs(node) {
			q, err := b.existsPlan(node, pos)
			if err != nil {
				return nil, err
			}
			return b.correlatedValue(ec, q, pos)
		}
		// EXISTS (q) is (SELECT count(*) FROM (q LIMIT 1)) > 0.
		limited := &Limit{Input: node, Count: 1}
		count := &Aggregate{Input: limited, Aggs: []AggCall{{Func: "count_star", T: types.Int64}},
			Cols: []Column{{Name: "count_star", Type: types.Int64}}}
		return b.call(">", []Expr{&Subquery{Plan: count, T: types.Int64}, &Literal{V: types.IntValue(0)}}, pos)
	case pg.SubLinkType_ANY_SUBLINK, pg.SubLinkType_ALL_SUBLINK:
		op := subLinkOp(sl)
		all := sl.SubLinkType == pg.SubLinkType_ALL_SUBLINK
		left, err := b.expr(sl.Testexpr, ec)
		if err != nil {
			return nil, err
		}
		node, err := b.bindQuery(sub, outer)
		if err != nil {
			return nil, err
		}
		if len(node.Columns()) != 1 {
			return nil, errs.At(errs.Analysis, pos, "subquery has too many columns")
		}
		if op == "=" && !all && !hasOuterRefs(node) {
			rc := node.Columns()[0]
			lk, rk, err := b.keyPair(left, &ColRef{Idx: 0, T: rc.Type, Name: rc.Name}, pos)
			if err != nil {
				return nil, err
			}
			if !sameType(rk.Type(), rc.Type) {
				node = &Project{Input: node, Exprs: []Expr{rk}, Cols: []Column{{Name: rc.Name, Type: rk.Type()}}}
			}
			return &InSubquery{E: lk, Plan: node}, nil
		}
		if !hasOuterRefs(node) {
			if e, ok, err := b.quantifiedByExtreme(left, node, op, all, pos); ok || err != nil {
				return e, err
			}
		}
		q, err := b.quantified(b.asOuter(left, ec), node, op, all, pos)
		if err != nil {
			return nil, err
		}
		if !hasOuterRefs(q) {
			return &Subquery{Plan: q, T: types.Boolean}, nil
		}
		return b.correlatedValue(ec, q, pos)
	}
	return nil, errs.At(errs.Analysis, pos, "unsupported subquery form")
}

// whereSubquery turns a WHERE conjunct [NOT] EXISTS (…) or x [NOT] IN (…) into a semi
// or anti join on the SELECT's input. It reports false for any other conjunct.
func (b *binder) whereSubquery(st *selState, c *pg.Node) (bool, error) {
	not := false
	n := c
	if be := n.GetBoolExpr(); be != nil && be.Boolop == pg.BoolExprType_NOT_EXPR && len(be.Args) == 1 {
		not, n = true, be.Args[0]
	}
	sl := n.GetSubLink()
	if sl == nil {
		return false, nil
	}
	isIn := false
	switch sl.SubLinkType {
	case pg.SubLinkType_EXISTS_SUBLINK:
	case pg.SubLinkType_ANY_SUBLINK:
		if subLinkOp(sl) != "=" {
			return false, nil
		}
		isIn = true
	default:
		return false, nil
	}
	pos := int(sl.Location)
	sub := sl.Subselect.GetSelectStmt()
	kind := SemiJoin
	if not {
		kind = AntiJoin
	}
	var testExpr Expr
	if isIn {
		var err error
		if testExpr, err = b.expr(sl.Testexpr, &exprCtx{sc: st.sc, noSubquery: true, clause: "WHERE"}); err != nil {
			return false, err
		}
	}
	node, err := b.bindQuery(sub, st.sc)
	if err != nil {
		return false, err
	}
	nl := len(st.input.Columns())
	if !hasOuterRefs(node) {
		j := &Join{Kind: kind, Left: st.input, Right: node, Cols: st.input.Columns()}
		if isIn {
			if len(node.Columns()) != 1 {
				return false, errs.At(errs.Analysis, pos, "subquery has too many columns")
			}
			rc := node.Columns()[0]
			lk, rk, err := b.keyPair(testExpr, &ColRef{Idx: 0, T: rc.Type, Name: rc.Name}, pos)
			if err != nil {
				return false, err
			}
			j.LeftKeys, j.RightKeys = []Expr{lk}, []Expr{rk}
			j.NullAwareAnti = not
		}
		st.setInput(j)
		return true, nil
	}

	// Correlated: bind the subquery's FROM and WHERE by hand, move the correlated
	// conjuncts into the join condition. Other shapes, NOT IN, and references further
	// out are decorrelated in general (subLink).
	if sub.Op != pg.SetOperation_SETOP_NONE || len(sub.GroupClause) > 0 || sub.HavingClause != nil ||
		sub.LimitCount != nil || sub.LimitOffset != nil || sub.WithClause != nil || len(sub.ValuesLists) > 0 ||
		len(sub.DistinctClause) > 0 || (isIn && not) || !onlyRefsTo(node, st.sc) {
		return false, nil
	}
	for _, t := range sub.TargetList {
		if containsAggregate(t.GetResTarget().Val) || containsSubLink(t.GetResTarget().Val) {
			return false, nil
		}
	}
	if sub.WhereClause != nil {
		for _, wc := range pgConjuncts(sub.WhereClause) {
			if containsSubLink(wc) {
				return false, nil
			}
		}
	}
	inner, err := b.bindFrom(sub.FromClause, st.sc)
	if err != nil {
		return false, err
	}
	if hasOuterRefs(inner) {
		return false, nil
	}
	isc := newScope(inner.Columns())
	isc.outer = st.sc
	var plain, corr []Expr
	if sub.WhereClause != nil {
		for _, wc := range pgConjuncts(sub.WhereClause) {
			e, err := b.expr(wc, &exprCtx{sc: isc, noSubquery: true, clause: "WHERE"})
			if err != nil {
				return false, err
			}
			if e, err = b.boolean(e, "WHERE"); err != nil {
				return false, err
			}
			if exprHasOuter(e) {
				corr = append(corr, e)
			} else {
				plain = append(plain, e)
			}
		}
	}
	if len(plain) > 0 {
		inner = &Filter{Input: inner, Cond: AndAll(plain)}
	}
	j := &Join{Kind: kind, Left: st.input, Right: inner, Cols: st.input.Columns()}
	// Correlated conjuncts over left ++ right: outer refs are left columns, inner
	// columns move right by the left width.
	var conds []Expr
	for _, e := range corr {
		m, _ := MapExpr(e, func(x Expr) (Expr, error) {
			switch c := x.(type) {
			case *ColRef:
				return &ColRef{Idx: c.Idx + nl, T: c.T, Name: c.Name}, nil
			case *OuterRef:
				return &ColRef{Idx: c.Idx, T: c.Col.Type, Name: c.Col.Name}, nil
			}
			return x, nil
		})
		conds = append(conds, m)
	}
	if isIn {
		if len(sub.TargetList) != 1 {
			return false, errs.At(errs.Analysis, pos, "subquery has too many columns")
		}
		re, err := b.expr(sub.TargetList[0].GetResTarget().Val, &exprCtx{sc: isc, noSubquery: true, clause: "SELECT"})
		if err != nil {
			return false, err
		}
		if exprHasOuter(re) {
			return false, nil
		}
		lk, rk, err := b.keyPair(testExpr, re, pos)
		if err != nil {
			return false, err
		}
		j.LeftKeys, j.RightKeys = []Expr{lk}, []Expr{rk}
		j.NullAwareAnti = not
	}
	if len(conds) > 0 {
		tmp := &Join{Kind: InnerJoin, Left: st.input, Right: inner}
		splitJoinCondition(tmp, AndAll(conds))
		j.LeftKeys = append(j.LeftKeys, tmp.LeftKeys...)
		j.RightKeys = append(j.RightKeys, tmp.RightKeys...)
		j.Residual = tmp.Residual
	}
	st.setInput(j)
	return true, nil
}

// keyPair casts two join keys to their common type.
func (b *binder) keyPair(l, r Expr, pos int) (Expr, Expr, error) {
	args := typeLiteralPair([]Expr{l, r})
	t, ok := commonType(args[0].Type(), args[1].Type())
	if !ok {
		return nil, nil, errs.At(errs.Analysis, pos, "cannot compare %s with %s", types.Name(l.Type()), types.Name(r.Type()))
	}
	return b.fold(castTo(args[0], t)), b.fold(castTo(args[1], t)), nil
}

// decorrelateScalar rewrites a correlated scalar subquery of the form
// (SELECT f(aggregates) FROM … WHERE inner = outer AND …) into a left join of the
// SELECT's input with the subquery grouped by its correlation keys, and returns the
// expression that reads the joined value. COUNT over no matching row is 0, as if the
// subquery had run on an empty input.
//
// It reports false, having changed nothing, for any other shape, which the general
// decorrelation takes.
func (b *binder) decorrelateScalar(sub *pg.SelectStmt, st *selState, pos int) (Expr, bool, error) {
	if sub.Op != pg.SetOperation_SETOP_NONE || len(sub.GroupClause) > 0 || sub.HavingClause != nil ||
		sub.LimitCount != nil || sub.LimitOffset != nil || sub.WithClause != nil || len(sub.DistinctClause) > 0 ||
		len(sub.ValuesLists) > 0 {
		return nil, false, nil
	}
	if len(sub.TargetList) != 1 || !containsAggregate(sub.TargetList[0].GetResTarget().Val) ||
		containsSubLink(sub.TargetList[0].GetResTarget().Val) {
		return nil, false, nil
	}
	if sub.WhereClause != nil && containsSubLink(sub.WhereClause) {
		return nil, false, nil
	}
	inner, err := b.bindFrom(sub.FromClause, st.sc)
	if err != nil {
		return nil, false, err
	}
	if hasOuterRefs(inner) {
		return nil, false, nil
	}
	isc := newScope(inner.Columns())
	isc.outer = st.sc
	var plain []Expr
	var innerKeys, outerKeys []Expr
	if sub.WhereClause != nil {
		for _, wc := range pgConjuncts(sub.WhereClause) {
			e, err := b.expr(wc, &exprCtx{sc: isc, noSubquery: true, clause: "WHERE"})
			if err != nil {
				return nil, false, err
			}
			if !exprHasOuter(e) {
				plain = append(plain, e)
				continue
			}
			call, ok := e.(*Call)
			if !ok || call.Fn.Name != "=" {
				return nil, false, nil
			}
			l, r := call.Args[0], call.Args[1]
			if exprHasOuter(l) {
				l, r = r, l
			}
			if exprHasOuter(l) || !onlyOuter(r) {
				return nil, false, nil
			}
			innerKeys = append(innerKeys, l)
			outerKeys = append(outerKeys, unOuter(r))
		}
	}
	if len(plain) > 0 {
		inner = &Filter{Input: inner, Cond: AndAll(plain)}
	}
	as := &aggState{pre: isc}
	for _, k := range innerKeys {
		if as.findGroup(k) < 0 {
			as.groups = append(as.groups, k)
			as.keys = append(as.keys, k.String())
		}
	}
	val, err := b.expr(sub.TargetList[0].GetResTarget().Val, &exprCtx{sc: &scope{}, agg: as, noSubquery: true, clause: "SELECT"})
	if err != nil {
		return nil, false, err
	}
	cols := make([]Column, 0, len(as.groups)+len(as.aggs))
	for i, g := range as.groups {
		cols = append(cols, Column{Name: "key" + string(rune('0'+i%10)), Type: g.Type(), Hidden: true})
	}
	for _, a := range as.aggs {
		cols = append(cols, Column{Name: a.Func, Type: a.T, Hidden: true})
	}
	right := &Aggregate{Input: inner, Groups: as.groups, Aggs: as.aggs, Cols: cols}
	nl := len(st.input.Columns())
	j := &Join{Kind: LeftJoin, Left: st.input, Right: right, Cols: concatCols(st.input.Columns(), cols)}
	for i, k := range innerKeys {
		gi := as.findGroup(k)
		lk, rk, err := b.keyPair(outerKeys[i], &ColRef{Idx: gi, T: k.Type(), Name: cols[gi].Name}, pos)
		if err != nil {
			return nil, false, err
		}
		j.LeftKeys = append(j.LeftKeys, lk)
		j.RightKeys = append(j.RightKeys, rk)
	}
	st.setInput(j)
	// The value, over the joined columns; COUNT columns read 0 where nothing matched.
	e, err := MapExpr(val, func(x Expr) (Expr, error) {
		c, ok := x.(*ColRef)
		if !ok {
			return x, nil
		}
		ref := &ColRef{Idx: nl + c.Idx, T: c.T, Name: c.Name}
		k := c.Idx - len(as.groups)
		if k >= 0 && (as.aggs[k].Func == "count" || as.aggs[k].Func == "count_star" || as.aggs[k].Func == "count_distinct") {
			return b.call("coalesce", []Expr{ref, &Literal{V: types.IntValue(0)}}, pos)
		}
		return ref, nil
	})
	return e, err == nil, err
}

// containsSubLink reports a subquery anywhere in n.
func containsSubLink(n *pg.Node) bool {
	found := false
	walkPG(n, func(x *pg.Node) bool {
		if x.GetSubLink() != nil {
			found = true
		}
		return !found
	})
	return found
}

func onlyOuter(e Expr) bool {
	ok := true
	WalkExpr(e, func(x Expr) {
		if _, c := x.(*ColRef); c {
			ok = false
		}
	})
	return ok
}

func unOuter(e Expr) Expr {
	out, _ := MapExpr(e, func(x Expr) (Expr, error) {
		if o, ok := x.(*OuterRef); ok {
			return &ColRef{Idx: o.Idx, T: o.Col.Type, Name: o.Col.Name}, nil
		}
		return x, nil
	})
	return out
}
