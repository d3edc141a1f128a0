package sql

import (
	"strings"

	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/sql/pgtree"
)

// token is one lexical token of the request, as PostgreSQL's scanner sees it, with
// byte offsets into the original text.
type token struct {
	kind       pg.Token
	kw         pg.KeywordKind
	start, end int
}

// Single-character tokens are reported by the scanner under their ASCII code.
const (
	tokLParen    = pg.Token_ASCII_40
	tokRParen    = pg.Token_ASCII_41
	tokComma     = pg.Token_ASCII_44
	tokMinus     = pg.Token_ASCII_45
	tokPlus      = pg.Token_ASCII_43
	tokDot       = pg.Token_ASCII_46
	tokSemicolon = pg.Token_ASCII_59
	tokEquals    = pg.Token_ASCII_61
	tokLBracket  = pg.Token_ASCII_91
	tokRBracket  = pg.Token_ASCII_93
)

// scan splits text into tokens, dropping comments. A scanner error (an unterminated
// string or comment) is a SYNTAX_ERROR at the place the scanner names.
func scan(text string) ([]token, error) {
	buf, err := pgparser.ScanToProtobuf(text)
	if err != nil {
		return nil, convertPgError(err, text, 0, 0, len(text))
	}
	res, err := pgtree.DecodeScan(buf)
	if err != nil {
		return nil, errs.New(errs.Internal, "cannot decode the scanner's tokens: %v", err)
	}
	toks := make([]token, 0, len(res.Tokens))
	for _, t := range res.Tokens {
		if t.Token == pg.Token_SQL_COMMENT || t.Token == pg.Token_C_COMMENT {
			continue
		}
		start, end := int(t.Start), int(t.End)
		if start < 0 || end > len(text) || start > end {
			// The scanner's offsets are into the text we gave it; anything else is a
			// broken promise of the library, reported rather than trusted.
			return nil, errs.New(errs.Internal, "scanner returned token [%d,%d) outside a text of %d bytes", start, end, len(text))
		}
		toks = append(toks, token{kind: t.Token, kw: t.KeywordKind, start: start, end: end})
	}
	return toks, nil
}

// isWordToken reports whether t can be read as a bare word: an identifier (quoted or
// not) or a keyword of any kind.
func isWordToken(t token) bool {
	return t.kind == pg.Token_IDENT || t.kw != pg.KeywordKind_NO_KEYWORD
}

// isQuotedIdent reports whether t is a double-quoted identifier.
func isQuotedIdent(text string, t token) bool {
	return t.kind == pg.Token_IDENT && text[t.start] == '"'
}

// is reports whether t is the unquoted word w (lower-case), whatever its case in the
// text. Quoted identifiers never match: "table" is a name, not the keyword.
func is(text string, t token, w string) bool {
	if !isWordToken(t) || isQuotedIdent(text, t) || t.end-t.start != len(w) {
		return false
	}
	return strings.EqualFold(text[t.start:t.end], w)
}

// callsWord reports whether a word that names w in any case, quoted or not, appears
// in toks directly before "(".
func callsWord(text string, toks []token, w string) bool {
	for i := 0; i+1 < len(toks); i++ {
		if toks[i+1].kind == tokLParen && isWordToken(toks[i]) && strings.EqualFold(identValue(text, toks[i]), w) {
			return true
		}
	}
	return false
}

// identValue returns the name an identifier token denotes: unquoted identifiers and
// keywords are lower-cased (ASCII only, as PostgreSQL does), double-quoted ones keep
// their case with "" unescaped.
func identValue(text string, t token) string {
	s := text[t.start:t.end]
	if isQuotedIdent(text, t) {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return lowerASCII(s)
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + ('a' - 'A')
				}
			}
			return string(b)
		}
	}
	return s
}
