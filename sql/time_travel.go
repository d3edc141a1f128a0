package sql

import (
	"strconv"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
)

// TimeTravel is a version clause written after a table name: [FOR] VERSION AS OF n
// (a Delta version, an Iceberg snapshot id) or [FOR] TIMESTAMP AS OF '…', the forms of
// Spark, Databricks and Trino.
type TimeTravel struct {
	Version   int64
	IsVersion bool
	Timestamp string // the literal's text when not IsVersion
	Pos       int    // where the clause starts
}

// rewriteTimeTravel blanks version clauses in src with spaces (so every offset stays
// put) and returns them by the Location of the table name they follow, which the
// grammar gives that name's RangeVar: an identifier, a qualified name or a path
// written as a string literal.
func rewriteTimeTravel(text string, toks []token, src []byte, base int) (map[int]TimeTravel, error) {
	var out map[int]TimeTravel
	for i := 1; i+3 < len(toks); i++ {
		k := i
		if toks[k].kind == pg.Token_FOR {
			k++
		}
		if k+3 >= len(toks) || !(is(text, toks[k], "version") || is(text, toks[k], "timestamp")) ||
			toks[k+1].kind != pg.Token_AS || !is(text, toks[k+2], "of") {
			continue
		}
		// The name before: word, "quoted", 'path', or schema.name.
		name := i - 1
		if !(toks[name].kind == pg.Token_IDENT || toks[name].kw == pg.KeywordKind_UNRESERVED_KEYWORD ||
			toks[name].kind == pg.Token_SCONST) {
			continue // a table name is an identifier or an unreserved word (not SELECT, FROM, …)
		}
		for name >= 2 && toks[name-1].kind == tokDot && isWordToken(toks[name-2]) {
			name -= 2
		}
		tt := TimeTravel{Pos: toks[i].start}
		lit := toks[k+3]
		end := lit.end
		if is(text, toks[k], "version") {
			neg := false
			if lit.kind == tokMinus && k+4 < len(toks) {
				neg, lit, end = true, toks[k+4], toks[k+4].end
			}
			if lit.kind != pg.Token_ICONST && lit.kind != pg.Token_FCONST {
				continue // `SELECT version AS of FROM t` names a column
			}
			// The grammar calls an integer beyond 32 bits FCONST: snapshot ids are.
			n, err := strconv.ParseInt(text[lit.start:lit.end], 10, 64)
			if err != nil {
				return nil, errs.At(errs.Syntax, lit.start, "VERSION AS OF takes an integer literal")
			}
			if neg {
				n = -n
			}
			tt.Version, tt.IsVersion = n, true
		} else {
			if lit.kind != pg.Token_SCONST || text[lit.start] != '\'' || lit.end-lit.start < 2 {
				continue
			}
			tt.Timestamp = text[lit.start+1 : lit.end-1]
		}
		if out == nil {
			out = map[int]TimeTravel{}
		}
		out[toks[name].start] = tt
		for j := toks[i].start; j < end; j++ {
			if src[j-base] != '\n' {
				src[j-base] = ' '
			}
		}
		i = k + 3
	}
	return out, nil
}
