package sql

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/loredb/lore/errs"
)

// duckJoinWords are DuckDB's join kinds that PostgreSQL's grammar does not know. It
// reads `a SEMI JOIN b` as a join of a (aliased "semi") with b, which would answer a
// different question; Lore refuses them instead.
var duckJoinWords = map[string]bool{"semi": true, "anti": true, "asof": true, "positional": true}

// checkJoinKinds refuses SEMI, ANTI, ASOF or POSITIONAL before JOIN (a quoted
// identifier is an alias; DuckDB refuses the bare words as aliases).
func checkJoinKinds(text string, toks []token) error {
	for i := 0; i+1 < len(toks); i++ {
		t := toks[i]
		if toks[i+1].kind != pg.Token_JOIN || isQuotedIdent(text, t) || !isWordToken(t) {
			continue
		}
		if w := strings.ToLower(text[t.start:t.end]); duckJoinWords[w] {
			return errs.At(errs.Analysis, t.start, "%s JOIN is not supported", strings.ToUpper(w))
		}
	}
	return nil
}
