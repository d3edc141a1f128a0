package sql

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// rewriteNestedTypes makes DuckDB's STRUCT(name type, …) and MAP(key, value) type
// names parse: PostgreSQL's grammar has no such types. After :: or AS, each
// STRUCT(…) or MAP(…) becomes the bare word and blanks in src (the text from byte
// base on), which keeps every offset. It returns the full names by the offset of the
// word, the Location of their TypeName nodes; nil when there are none.
func rewriteNestedTypes(text string, toks []token, src []byte, base int) map[int32]string {
	var at map[int32]string
	for i := 1; i+1 < len(toks); i++ {
		t := toks[i]
		if !(is(text, t, "struct") || is(text, t, "map")) || toks[i+1].kind != tokLParen {
			continue
		}
		if prev := toks[i-1]; prev.kind != pg.Token_TYPECAST && !is(text, prev, "as") {
			continue
		}
		depth, j := 0, i+1
		for ; j < len(toks); j++ {
			switch toks[j].kind {
			case tokLParen:
				depth++
			case tokRParen:
				depth--
			}
			if depth == 0 {
				break
			}
		}
		if j == len(toks) {
			continue // unbalanced: the grammar reports it
		}
		end := toks[j].end
		if at == nil {
			at = map[int32]string{}
		}
		at[int32(t.start)] = text[t.start:end]
		copy(src[t.end-base:end-base], strings.Repeat(" ", end-t.end))
		i = j
	}
	return at
}

// markNestedTypes gives each TypeName rewritten by rewriteNestedTypes its full name,
// which the binder reads with types.Parse.
func markNestedTypes(m protoreflect.Message, at map[int32]string) {
	walk(m, func(m protoreflect.Message) {
		tn, ok := m.Interface().(*pg.TypeName)
		if !ok {
			return
		}
		if name, ok := at[tn.Location]; ok {
			tn.Names = []*pg.Node{pg.MakeStrNode(name)}
		}
	})
}
