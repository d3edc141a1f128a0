package sql

import (
	"errors"

	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/sql/pgtree"
)

// DuckDB's FROM-first queries — FROM t SELECT list …, and FROM t … alone for
// SELECT * FROM t … — cannot be rewritten at equal length: the select list moves
// before FROM, or SELECT * is added. fromFirst builds the text PostgreSQL reads and a
// map from its offsets back to the request's, which parseMapped applies to every
// Location and to the grammar's error positions.

// starPrefix is what a FROM-first query without SELECT reads as.
const starPrefix = "SELECT * "

// fromFirst returns the statement's text rewritten for PostgreSQL's grammar and the
// map of its offsets into text, when toks (the statement, src its text from byte
// base, already rewritten at equal length) start with FROM, possibly under EXPLAIN.
// ok is false for any other statement.
func fromFirst(text string, toks []token, src []byte, base int) (out string, at func(int) int, ok bool) {
	k := 0
	if toks[0].kind == pg.Token_EXPLAIN {
		inner := skipExplain(text, toks)
		if len(inner) == len(toks) {
			return "", nil, false
		}
		k = len(toks) - len(inner)
	}
	if toks[k].kind != pg.Token_FROM {
		return "", nil, false
	}
	s0 := toks[k].start - base
	// The SELECT of FROM … SELECT, at the outer level before any other clause.
	sel := -1
	depth := 0
	for j := k + 1; j < len(toks) && sel < 0; j++ {
		switch t := toks[j]; {
		case t.kind == tokLParen:
			depth++
		case t.kind == tokRParen:
			depth--
		case depth == 0 && t.kind == pg.Token_SELECT:
			sel = j
		case depth == 0 && (endsFromList(t.kind) || is(text, t, "qualify")):
			j = len(toks)
		}
	}
	if sel < 0 {
		// FROM t …: SELECT * FROM t ….
		out = string(src[:s0]) + starPrefix + string(src[s0:])
		return out, func(o int) int {
			switch {
			case o < s0:
				return base + o
			case o < s0+len(starPrefix):
				return base + s0
			}
			return base + o - len(starPrefix)
		}, true
	}
	// FROM t SELECT list rest: SELECT list FROM t rest, the list ending at the next
	// clause at its level.
	s1 := toks[sel].start - base
	s2 := len(src)
	depth = 0
	for j := sel + 1; j < len(toks); j++ {
		t := toks[j]
		if t.kind == tokLParen {
			depth++
		} else if t.kind == tokRParen {
			depth--
		} else if depth == 0 && (t.kind == pg.Token_FROM || endsFromList(t.kind) || is(text, t, "qualify")) {
			s2 = t.start - base
			break
		}
	}
	list, from := string(src[s1:s2]), string(src[s0:s1])
	out = string(src[:s0]) + list + " " + from + string(src[s2:])
	return out, func(o int) int {
		switch {
		case o < s0:
			return base + o
		case o < s0+len(list):
			return base + s1 + (o - s0)
		case o == s0+len(list):
			return base + s2
		case o < s0+len(list)+1+len(from):
			return base + s0 + (o - s0 - len(list) - 1)
		}
		return base + o - 1
	}, true
}

// parseRewritten parses a statement's text src (toks, from byte base of text, after
// the equal-length rewrites) once the insertions of edits are made and, for a
// FROM-first query, its clauses are put in SELECT order. Each rewrite that moves
// text maps the offsets of what it makes back to what it was given, so every
// Location of the tree and every error position is an offset into text.
func parseRewritten(text string, toks []token, src []byte, base int, edits []edit) (*pg.Node, error) {
	if len(edits) == 0 {
		if ff, at, ok := fromFirst(text, toks, src, base); ok {
			return parseMapped(ff, at, toks, text)
		}
		return parseTree(string(src), base, toks, text)
	}
	out, back := splice(string(src), edits)
	at := func(o int) int { return base + back(o) }
	otoks, err := scan(out)
	if err != nil || len(otoks) == 0 {
		return nil, errs.At(errs.Syntax, base, "syntax error in a nested literal")
	}
	if ff, ffAt, ok := fromFirst(out, otoks, []byte(out), 0); ok {
		out, at = ff, func(o int) int { return base + back(ffAt(o)) }
	}
	return parseMapped(out, at, toks, text)
}

// parseMapped is parseTree for a text whose offsets map to the request's through at.
func parseMapped(src string, at func(int) int, toks []token, text string) (*pg.Node, error) {
	if err := checkDepth(text, toks); err != nil {
		return nil, err
	}
	lo, hi := toks[0].start, toks[len(toks)-1].end
	res, err := pgtree.Parse(src)
	if err != nil {
		var pe *pgparser.Error
		if errors.As(err, &pe) && pe.Cursorpos > 0 {
			pos := min(max(at(charToByte(src, pe.Cursorpos-1)), lo), hi)
			return nil, errs.At(errs.Syntax, pos, "%s", pe.Message)
		}
		return nil, convertPgError(err, src, lo, lo, hi)
	}
	if len(res.Stmts) != 1 || res.Stmts[0].Stmt == nil {
		return nil, errs.New(errs.Internal, "parser returned %d statements for one statement", len(res.Stmts))
	}
	n := res.Stmts[0].Stmt
	mapLocations(n, at)
	return n, nil
}
