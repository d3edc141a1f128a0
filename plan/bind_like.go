//go:build cgo

package plan

import (
	pg "github.com/loredb/lore/sql/pgast"
)

// likeEscapeIsLiteral reports whether the pattern and the escape of a LIKE …
// ESCAPE (the like_escape call PostgreSQL's grammar makes of them) are both
// string literals, which likeEscape folds into one pattern when the statement is
// bound.
func likeEscapeIsLiteral(fc *pg.FuncCall) bool {
	if len(fc.Args) != 2 {
		return true // likeEscape reports the wrong number
	}
	for _, a := range fc.Args {
		c := a.GetAConst()
		if c == nil || c.Isnull {
			return false
		}
		if _, ok := c.Val.(*pg.A_Const_Sval); !ok {
			return false
		}
	}
	return true
}

// likeWithEscape binds s [NOT] [I]LIKE pattern ESCAPE e whose pattern or escape
// is an expression (a column, NULL): each row's pattern is read with its escape.
func (b *binder) likeWithEscape(name string, l Expr, fc *pg.FuncCall, ec *exprCtx, pos int) (Expr, error) {
	p, err := b.expr(fc.Args[0], ec)
	if err != nil {
		return nil, err
	}
	e, err := b.expr(fc.Args[1], ec)
	if err != nil {
		return nil, err
	}
	return b.call(name+"_escape", []Expr{l, p, e}, pos)
}
