package sql

import (
	"sort"
	"strings"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
)

// DuckDB's nested literals, which PostgreSQL's grammar does not have:
//
//	[1, 2]            a list: read as ARRAY[1, 2], with ARRAY inserted before the bracket
//	{'a': 1, b: 2}    a struct: read at equal length as the row ('a', 1, b, 2)
//	MAP {'k': 1}      a map: read at equal length as the call MAP ('k', 1)
//
// A struct's row and a map's call are marked in the Dialect by their Location, so
// the binder reads their arguments as key/value pairs. A list needs text inserted,
// so it is a splice with an offset map, like a FROM-first query.

// Tokens the scanner reports under their ASCII code and has no name for.
const (
	tokLBrace = pg.Token(123)
	tokRBrace = pg.Token(125)
	tokColon  = pg.Token_ASCII_58
)

// edit is one change of a statement's text: the bytes [at, end) are replaced by ins.
// An inserted text that is moved from elsewhere in the statement maps back there
// (from ≥ 0: its byte k came from from+k); any other maps to at.
type edit struct {
	at, end int
	ins     string
	from    int
	first   bool // goes before the other insertions at the same offset
}

// splice applies edits (offsets into src, not overlapping) and returns the new text
// with a map from its offsets back to src's.
func splice(src string, edits []edit) (string, func(int) int) {
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].at != edits[j].at {
			return edits[i].at < edits[j].at
		}
		return edits[i].first && !edits[j].first
	})
	var sb strings.Builder
	// Each piece of the output starts at out and maps to src at org; a piece that
	// is not from src maps every byte to org (step 0).
	type piece struct{ out, org, step int }
	var pieces []piece
	prev := 0
	for _, e := range edits {
		pieces = append(pieces, piece{sb.Len(), prev, 1})
		sb.WriteString(src[prev:e.at])
		if e.from >= 0 {
			pieces = append(pieces, piece{sb.Len(), e.from, 1})
		} else {
			pieces = append(pieces, piece{sb.Len(), e.at, 0})
		}
		sb.WriteString(e.ins)
		prev = e.end
	}
	pieces = append(pieces, piece{sb.Len(), prev, 1})
	sb.WriteString(src[prev:])
	return sb.String(), func(o int) int {
		k := sort.Search(len(pieces), func(i int) bool { return pieces[i].out > o }) - 1
		if k < 0 {
			return o
		}
		p := pieces[k]
		return p.org + (o-p.out)*p.step
	}
}

// rewriteNested finds DuckDB's list, struct and map literals among toks (a statement
// whose text src starts at offset base of text). It rewrites struct and map literals
// in src at equal length, recording them in d (created when nil), and returns the
// insertions a list literal needs, as edits of src.
func rewriteNested(text string, toks []token, src []byte, base int, d *Dialect) (*Dialect, []edit, error) {
	type open struct {
		kind pg.Token // tokLParen, tokLBracket or tokLBrace
		at   int      // index of the opening token
	}
	var stack []open
	var edits []edit
	// opened[i] is the index of the token that opens the bracket toks[i] closes;
	// list[i] tells whether the [ at i opens a list literal.
	opened := map[int]int{}
	list := map[int]bool{}
	// wrap puts the operand that ends at token i-1 in parentheses when the grammar
	// takes no subscript or field after it: a constant, a list, struct or map
	// literal, a function call (DuckDB's [1, 2][1], 'abc'[1], {'a': 1}.a, f(x)[1]).
	wrap := func(i int) {
		if i == 0 {
			return
		}
		p := toks[i-1]
		from := -1
		switch p.kind {
		case pg.Token_SCONST, pg.Token_USCONST, pg.Token_BCONST, pg.Token_XCONST:
			from = p.start
		case tokRBracket:
			if o, ok := opened[i-1]; ok && list[o] {
				from = toks[o].start
			}
		case tokRBrace:
			if o, ok := opened[i-1]; ok {
				from = toks[o].start
				if o > 0 && is(text, toks[o-1], "map") {
					from = toks[o-1].start
				}
			}
		case tokRParen:
			if o, ok := opened[i-1]; ok && o > 0 && callsFunction(toks[o-1]) {
				k := o - 1
				for k >= 2 && toks[k-1].kind == tokDot && isWordToken(toks[k-2]) {
					k -= 2
				}
				from = toks[k].start
			}
		}
		if from >= 0 {
			edits = append(edits, edit{at: from - base, end: from - base, ins: "(", from: -1, first: true},
				edit{at: toks[i].start - base, end: toks[i].start - base, ins: ")", from: -1})
		}
	}
	mark := func(m *map[int]bool, pos int) {
		if *m == nil {
			*m = map[int]bool{}
		}
		(*m)[pos] = true
	}
	for i, t := range toks {
		switch t.kind {
		case tokLParen:
			stack = append(stack, open{tokLParen, i})
		case tokLBracket:
			if i == 0 || startsListLiteral(toks[i-1]) {
				edits = append(edits, edit{at: t.start - base, end: t.start - base, ins: "ARRAY", from: -1})
				list[i] = true
			} else {
				wrap(i)
			}
			stack = append(stack, open{tokLBracket, i})
		case tokDot:
			if i+1 < len(toks) && isWordToken(toks[i+1]) {
				wrap(i)
			}
		case tokLBrace:
			src[t.start-base] = '('
			if d == nil {
				d = &Dialect{}
			}
			if i > 0 && is(text, toks[i-1], "map") {
				mark(&d.maps, toks[i-1].start)
			} else {
				mark(&d.structs, t.start)
			}
			stack = append(stack, open{tokLBrace, i})
		case tokRParen, tokRBracket, tokRBrace:
			want := map[pg.Token]pg.Token{tokRParen: tokLParen, tokRBracket: tokLBracket, tokRBrace: tokLBrace}[t.kind]
			if len(stack) == 0 || stack[len(stack)-1].kind != want {
				if t.kind == tokRBrace || (len(stack) > 0 && stack[len(stack)-1].kind == tokLBrace) {
					return nil, nil, errs.At(errs.Syntax, t.start, "syntax error at or near %q: unbalanced braces", text[t.start:t.end])
				}
				// Leave other imbalance to the grammar, which reports it.
				continue
			}
			opened[i] = stack[len(stack)-1].at
			stack = stack[:len(stack)-1]
			if t.kind == tokRBrace {
				src[t.start-base] = ')'
			}
		case tokColon:
			if len(stack) > 0 && stack[len(stack)-1].kind == tokLBrace {
				// A key's colon in a struct or map literal separates it from its value.
				src[t.start-base] = ','
			}
		}
	}
	if len(stack) > 0 && stack[len(stack)-1].kind == tokLBrace {
		t := toks[stack[len(stack)-1].at]
		return nil, nil, errs.At(errs.Syntax, t.start, "syntax error at or near \"{\": the literal is not closed")
	}
	return d, edits, nil
}

// startsListLiteral reports whether a [ after token p opens a list literal rather
// than subscripting what p ends: after an operator, an opening bracket, a comma, or
// a reserved word that cannot end an expression. After a name, a constant, a
// closing bracket or a non-reserved keyword (a column or type name) it is a
// subscript or an array bound.
func startsListLiteral(p token) bool {
	switch p.kind {
	case pg.Token_IDENT, pg.Token_ICONST, pg.Token_FCONST, pg.Token_SCONST, pg.Token_USCONST,
		pg.Token_BCONST, pg.Token_XCONST, pg.Token_PARAM, tokRParen, tokRBracket, tokRBrace:
		return false
	case pg.Token_ARRAY, pg.Token_NULL_P, pg.Token_TRUE_P, pg.Token_FALSE_P, pg.Token_END_P:
		return false
	}
	if p.kw != pg.KeywordKind_NO_KEYWORD {
		return p.kw == pg.KeywordKind_RESERVED_KEYWORD
	}
	return true
}

// IsStructLiteral reports whether a row at Location loc was written as DuckDB's
// struct literal {k: v, …}: its items are keys and values in turn.
func (d *Dialect) IsStructLiteral(loc int32) bool { return d != nil && d.structs[int(loc)] }

// IsMapLiteral reports whether a call of map at Location loc was written as DuckDB's
// map literal MAP {k: v, …}: its arguments are keys and values in turn.
func (d *Dialect) IsMapLiteral(loc int32) bool { return d != nil && d.maps[int(loc)] }

// callsFunction reports whether a ( after token p opens a function's arguments
// (p is its name) rather than a parenthesized expression: p is a name or a keyword
// that may name a function, not a reserved word that starts an expression.
func callsFunction(p token) bool {
	switch p.kind {
	case pg.Token_IDENT, pg.Token_CAST, pg.Token_ARRAY:
		return true
	}
	return p.kw == pg.KeywordKind_UNRESERVED_KEYWORD || p.kw == pg.KeywordKind_COL_NAME_KEYWORD ||
		p.kw == pg.KeywordKind_TYPE_FUNC_NAME_KEYWORD
}
