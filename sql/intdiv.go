package sql

import (
	pg "github.com/loredb/lore/sql/pgast"
)

// PostgreSQL's grammar knows no integer division operator: it reads // as an
// operator of its own kind, which binds more loosely than + and -, so that
// 16 // 34 + -98 would mean 16 // (34 + -98). In DuckDB // binds as * and / do.
// rewriteIntDiv writes each // as "/ " (so the grammar gives it the precedence of /,
// and every offset stays put) and returns the operators' offsets; markIntDiv then
// names those divisions "//" again in the tree.
func rewriteIntDiv(text string, toks []token, src []byte, base int) map[int32]bool {
	var at map[int32]bool
	for _, t := range toks {
		if t.kind != pg.Token_Op || text[t.start:t.end] != "//" {
			continue
		}
		src[t.start+1-base] = ' '
		if at == nil {
			at = map[int32]bool{}
		}
		at[int32(t.start)] = true
	}
	return at
}

// markIntDiv renames the "/" expressions at the offsets rewriteIntDiv returned.
func markIntDiv(m any, at map[int32]bool) {
	walk(m, func(m any) {
		a, ok := m.(*pg.A_Expr)
		if !ok || a.Kind != pg.A_Expr_Kind_AEXPR_OP || !at[a.Location] || len(a.Name) != 1 {
			return
		}
		if s := a.Name[0].GetString_(); s != nil && s.Sval == "/" {
			s.Sval = "//"
		}
	})
}
