package sql

import (
	"strings"

	pg "github.com/loredb/lore/sql/pgast"
)

// rewriteTryCasts makes DuckDB's TRY_CAST(x AS t) parse: PostgreSQL's grammar has no
// TRY_CAST, so each TRY_CAST followed by "(" becomes four blanks and CAST in src (the
// text from byte base on), which keeps every offset, and so every error position, as
// it was. It returns the offsets of those CAST keywords, the Location of the
// TypeCast nodes that are TRY_CASTs; nil when there are none.
func rewriteTryCasts(text string, toks []token, src []byte, base int) map[int]bool {
	var at map[int]bool
	for i, t := range toks {
		if t.kind != pg.Token_IDENT || t.end-t.start != len("try_cast") || !strings.EqualFold(text[t.start:t.end], "try_cast") {
			continue
		}
		if i+1 >= len(toks) || toks[i+1].kind != tokLParen {
			continue
		}
		copy(src[t.start-base:], "    CAST")
		if at == nil {
			at = map[int]bool{}
		}
		at[t.start+4] = true
	}
	return at
}
