//go:build cgo

package plan

import (
	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/types"
)

// lateralOf returns the LATERAL subquery a FROM item is, or nil.
func lateralOf(it *pg.Node) *pg.RangeSubselect {
	if rs := it.GetRangeSubselect(); rs != nil && rs.Lateral {
		return rs
	}
	return nil
}

// bindLateral joins a LATERAL subquery, which may name the columns of left, onto
// left: for every left row, the rows the subquery gives with its references bound to
// that row. It is decorrelated as a correlated subquery is (attachCorrelated), kind
// being a cross, inner or left join and quals its ON condition, if any.
func (b *binder) bindLateral(left Node, rs *pg.RangeSubselect, kind JoinKind, quals *pg.Node, outer *scope) (Node, error) {
	if kind != CrossJoin && kind != InnerJoin && kind != LeftJoin {
		return nil, errs.New(errs.Analysis, "LATERAL is supported only in cross, inner and left joins")
	}
	lsc := newScope(left.Columns())
	lsc.outer = outer
	n, err := b.bindQuery(rs.Subquery.GetSelectStmt(), lsc)
	if err != nil {
		return nil, err
	}
	return b.lateralJoin(left, lsc, n, rs, kind, quals, outer)
}

// lateralJoin joins n, a subquery bound with lsc (left's columns) as its outer
// scope, onto left.
func (b *binder) lateralJoin(left Node, lsc *scope, n Node, rs *pg.RangeSubselect, kind JoinKind, quals *pg.Node, outer *scope) (Node, error) {
	cols, err := requalify(n.Columns(), rs.Alias, "")
	if err != nil {
		return nil, err
	}
	sub := rename(n, cols)
	lcols := left.Columns()
	nl := len(lcols)
	var cond Expr
	if quals != nil {
		sc := newScope(concatCols(lcols, cols))
		sc.outer = outer
		if cond, err = b.expr(quals, &exprCtx{sc: sc, noSubquery: true, clause: "JOIN condition"}); err != nil {
			return nil, err
		}
		if cond, err = b.boolean(cond, "JOIN condition"); err != nil {
			return nil, err
		}
	}
	dc, ls, keys, err := b.newDecorr(left, map[*scope]outerMap{lsc: columnsOf(lsc)}, sub, errs.NoPosition)
	if err != nil {
		return nil, err
	}
	r, err := dc.push(sub)
	if err != nil {
		return nil, err
	}
	nd := dc.nd
	inner := kind != LeftJoin
	if inner {
		// An inner join is the left join's matched rows: a column of TRUE marks them.
		rc := r.Columns()
		exprs := make([]Expr, 0, len(rc)+1)
		for i, c := range rc {
			exprs = append(exprs, &ColRef{Idx: i, T: c.Type, Name: c.Name})
		}
		exprs = append(exprs, &Literal{V: types.BoolValue(true)})
		r = &Project{Input: r, Exprs: exprs, Cols: concatCols(rc, []Column{{Name: "matched", Type: types.Boolean, Hidden: true}})}
	}
	j := &Join{Kind: LeftJoin, Left: ls, Right: r, NullEq: true, Cols: concatCols(ls.Columns(), r.Columns())}
	for i, k := range keys {
		j.LeftKeys = append(j.LeftKeys, k)
		j.RightKeys = append(j.RightKeys, &ColRef{Idx: i, T: k.Type(), Name: dc.dcols[i].Name})
	}
	if cond != nil {
		j.Residual = ShiftColumnsFrom(cond, nl, nd)
	}
	var out Node = j
	if inner {
		m := len(j.Cols) - 1
		matched, err := b.call("is_not_null", []Expr{&ColRef{Idx: m, T: types.Boolean, Name: "matched"}}, errs.NoPosition)
		if err != nil {
			return nil, err
		}
		out = &Filter{Input: j, Cond: matched}
	}
	// The left columns and the subquery's, without D's.
	exprs := make([]Expr, 0, nl+len(cols))
	for i, c := range lcols {
		exprs = append(exprs, &ColRef{Idx: i, T: c.Type, Name: c.Name})
	}
	for i, c := range cols {
		exprs = append(exprs, &ColRef{Idx: nl + nd + i, T: c.Type, Name: c.Name})
	}
	return &Project{Input: out, Exprs: exprs, Cols: concatCols(lcols, cols)}, nil
}

// ShiftColumnsFrom returns e with every ColRef index from at on moved by delta.
func ShiftColumnsFrom(e Expr, at, delta int) Expr {
	out, _ := MapExpr(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*ColRef); ok && c.Idx >= at {
			return &ColRef{Idx: c.Idx + delta, T: c.T, Name: c.Name}, nil
		}
		return x, nil
	})
	return out
}

// bindLateralJoin binds left JOIN LATERAL (…) ON …, or its LEFT or CROSS form.
func (b *binder) bindLateralJoin(left Node, rs *pg.RangeSubselect, j *pg.JoinExpr, outer *scope) (Node, error) {
	if len(j.UsingClause) > 0 || j.IsNatural {
		return nil, errs.New(errs.Analysis, "a LATERAL join takes an ON condition, not USING or NATURAL")
	}
	kind := InnerJoin
	switch j.Jointype {
	case pg.JoinType_JOIN_INNER:
		if j.Quals == nil {
			kind = CrossJoin
		}
	case pg.JoinType_JOIN_LEFT:
		kind = LeftJoin
	default:
		return nil, errs.New(errs.Analysis, "LATERAL is supported only in cross, inner and left joins")
	}
	return b.bindLateral(left, rs, kind, j.Quals, outer)
}

// derivedAfter binds a derived table (not marked LATERAL) that follows left in FROM.
// As in DuckDB, one that names left's columns is a LATERAL subquery; ok is false
// for one that does not, which joins as any FROM item does.
func (b *binder) derivedAfter(left Node, rs *pg.RangeSubselect, kind JoinKind, quals *pg.Node, outer *scope) (n Node, ok bool, err error) {
	lsc := newScope(left.Columns())
	lsc.outer = outer
	sub, err := b.bindQuery(rs.Subquery.GetSelectStmt(), lsc)
	if err != nil {
		return nil, false, err
	}
	if len(corrRefs(sub, map[*scope]outerMap{lsc: nil})) == 0 {
		cols, err := requalify(sub.Columns(), rs.Alias, "")
		if err != nil {
			return nil, false, err
		}
		return rename(sub, cols), false, nil
	}
	if kind != CrossJoin && kind != InnerJoin && kind != LeftJoin {
		return nil, false, errs.New(errs.Analysis, "a subquery that names the columns of the FROM items before it joins them only by a cross, inner or left join")
	}
	n, err = b.lateralJoin(left, lsc, sub, rs, kind, quals, outer)
	return n, true, err
}
