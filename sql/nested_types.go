package sql

import (
	"strings"

	pg "github.com/loredb/lore/sql/pgast"
)

// rewriteNestedTypes makes DuckDB's STRUCT(name type, …) and MAP(key, value) type
// names parse: PostgreSQL's grammar has no such types. After :: or AS, each
// STRUCT(…) or MAP(…), with any [] or [n] after it, becomes the bare word and blanks
// in src (the text from byte base on), which keeps every offset. It returns the full
// names by the offset of the word, the Location of their TypeName nodes (nil when
// there are none), and toks without the blanked tokens, for the rewrites after it.
func rewriteNestedTypes(text string, toks []token, src []byte, base int) (at map[int32]string, rest []token) {
	var drop [][2]int // token index ranges [from, to] blanked
	for i := 1; i+1 < len(toks); i++ {
		t := toks[i]
		if !isWordToken(t) || toks[i+1].kind != tokLParen {
			continue
		}
		if prev := toks[i-1]; prev.kind != pg.Token_TYPECAST && !is(text, prev, "as") {
			continue
		}
		j := closing(toks, i+1, tokLParen, tokRParen)
		if j < 0 {
			continue // unbalanced: the grammar reports it
		}
		closed := j
		for j+1 < len(toks) && toks[j+1].kind == tokLBracket {
			k := closing(toks, j+1, tokLBracket, tokRBracket)
			if k < 0 {
				break
			}
			j = k
		}
		if !(is(text, t, "struct") || is(text, t, "map")) {
			// DECIMAL(4,1)[]: the brackets are array bounds, which the grammar reads,
			// not a subscript for the rewrites after this one to see.
			if j > closed {
				drop = append(drop, [2]int{closed + 1, j})
			}
			i = j
			continue
		}
		end := toks[j].end
		if at == nil {
			at = map[int32]string{}
		}
		at[int32(t.start)] = text[t.start:end]
		copy(src[t.end-base:end-base], strings.Repeat(" ", end-t.end))
		drop = append(drop, [2]int{i + 1, j})
		i = j
	}
	if drop == nil {
		return at, toks
	}
	rest = make([]token, 0, len(toks))
	k := 0
	for i, t := range toks {
		for k < len(drop) && i > drop[k][1] {
			k++
		}
		if k < len(drop) && i >= drop[k][0] {
			continue
		}
		rest = append(rest, t)
	}
	return at, rest
}

// closing is the index of the token that closes the bracket toks[i] opens, or -1.
func closing(toks []token, i int, open, close pg.Token) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].kind {
		case open:
			depth++
		case close:
			depth--
		}
		if depth == 0 {
			return j
		}
	}
	return -1
}

// markNestedTypes gives each TypeName rewritten by rewriteNestedTypes its full name,
// which the binder reads with types.Parse.
func markNestedTypes(m any, at map[int32]string) {
	walk(m, func(m any) {
		tn, ok := m.(*pg.TypeName)
		if !ok {
			return
		}
		if name, ok := at[tn.Location]; ok {
			tn.Names = []*pg.Node{pg.MakeStrNode(name)}
		}
	})
}
