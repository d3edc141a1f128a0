package sql

import (
	"math"
	"strconv"
	"strings"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
)

// parser reads one of Lore's own statements by recursive descent over its tokens.
type parser struct {
	text string
	toks []token
	i    int
	end  int // byte offset just past the statement's last token
}

// peek returns the current token; ok is false at the end of the statement.
func (p *parser) peek() (token, bool) {
	if p.i >= len(p.toks) {
		return token{}, false
	}
	return p.toks[p.i], true
}

// peekIs reports whether the current token is the unquoted word w.
func (p *parser) peekIs(w string) bool {
	t, ok := p.peek()
	return ok && is(p.text, t, w)
}

// accept consumes the current token when it is the unquoted word w.
func (p *parser) accept(w string) bool {
	if p.peekIs(w) {
		p.i++
		return true
	}
	return false
}

// acceptKind consumes the current token when it is of kind k.
func (p *parser) acceptKind(k pg.Token) bool {
	if t, ok := p.peek(); ok && t.kind == k {
		p.i++
		return true
	}
	return false
}

// fail is the SYNTAX_ERROR at the current token, in PostgreSQL's words, followed by
// what was expected there.
func (p *parser) fail(expected string) error {
	t, ok := p.peek()
	if !ok {
		return errs.At(errs.Syntax, p.end, "syntax error at end of input: expected %s", expected)
	}
	return errs.At(errs.Syntax, t.start, "syntax error at or near \"%s\": expected %s", p.text[t.start:t.end], expected)
}

// expect consumes the unquoted word w or fails naming it.
func (p *parser) expect(w string) error {
	if p.accept(w) {
		return nil
	}
	return p.fail(strings.ToUpper(w))
}

// expectKind consumes a token of kind k or fails naming what (e.g. `"("`).
func (p *parser) expectKind(k pg.Token, what string) error {
	if p.acceptKind(k) {
		return nil
	}
	return p.fail(what)
}

// done fails unless every token of the statement has been read.
func (p *parser) done() error {
	if p.i < len(p.toks) {
		return p.fail("end of statement")
	}
	return nil
}

func (p *parser) start() int { return p.toks[0].start }

// name reads a table name: one or more identifiers joined by dots ("s.t"). Like
// PostgreSQL's own names, an unquoted part may be a non-reserved keyword but not a
// reserved one, so that `ANALYZE WITH (…)` is an error rather than a table "with".
func (p *parser) name() (string, error) {
	var parts []string
	for {
		t, ok := p.peek()
		if !ok || !isNameToken(p.text, t) {
			return "", p.fail("a table name")
		}
		p.i++
		parts = append(parts, TruncateIdent(identValue(p.text, t)))
		if !p.acceptKind(tokDot) {
			return strings.Join(parts, "."), nil
		}
	}
}

// isNameToken reports whether t may stand for a name: an identifier, or an unquoted
// keyword that PostgreSQL also accepts as a name (unreserved or column-name keywords).
func isNameToken(text string, t token) bool {
	if t.kind == pg.Token_IDENT {
		return true
	}
	return t.kw == pg.KeywordKind_UNRESERVED_KEYWORD || t.kw == pg.KeywordKind_COL_NAME_KEYWORD
}

// word reads any bare word (identifier or keyword of any kind), for option keys and
// column lists where nothing else could follow.
func (p *parser) word(expected string) (string, token, error) {
	t, ok := p.peek()
	if !ok || !isWordToken(t) {
		return "", token{}, p.fail(expected)
	}
	p.i++
	return TruncateIdent(identValue(p.text, t)), t, nil
}

// createTable: CREATE TABLE [IF NOT EXISTS] name WITH (options).
func (p *parser) createTable() (Statement, error) {
	p.i = 2 // CREATE TABLE
	st := &CreateTable{Start: p.start(), End: p.end}
	if p.accept("if") {
		if err := p.expect("not"); err != nil {
			return nil, err
		}
		if err := p.expect("exists"); err != nil {
			return nil, err
		}
		st.IfNotExists = true
	}
	var err error
	if st.Name, err = p.name(); err != nil {
		return nil, err
	}
	if !p.accept("with") {
		return nil, p.fail("WITH (location = …, format = …)")
	}
	if st.Options, err = p.options(); err != nil {
		return nil, err
	}
	return st, p.done()
}

// dropTable: DROP TABLE [IF EXISTS] name.
func (p *parser) dropTable() (Statement, error) {
	p.i = 2 // DROP TABLE
	st := &DropTable{Start: p.start(), End: p.end}
	if p.accept("if") {
		if err := p.expect("exists"); err != nil {
			return nil, err
		}
		st.IfExists = true
	}
	var err error
	if st.Name, err = p.name(); err != nil {
		return nil, err
	}
	return st, p.done()
}

// alterTable: ALTER TABLE name SET CLUSTERED BY (cols) | SET BLOOM (cols).
func (p *parser) alterTable() (Statement, error) {
	p.i = 2 // ALTER TABLE
	st := &AlterTable{Start: p.start(), End: p.end}
	var err error
	if st.Name, err = p.name(); err != nil {
		return nil, err
	}
	if err := p.expect("set"); err != nil {
		return nil, err
	}
	switch {
	case p.accept("clustered"):
		if err := p.expect("by"); err != nil {
			return nil, err
		}
		cols, err := p.columnList()
		if err != nil {
			return nil, err
		}
		st.ClusteredBy = &cols
	case p.accept("bloom"):
		cols, err := p.columnList()
		if err != nil {
			return nil, err
		}
		st.Bloom = &cols
	default:
		return nil, p.fail("CLUSTERED BY (…) or BLOOM (…)")
	}
	return st, p.done()
}

// columnList: ( [col {, col}] ). The result is never nil, so that "()" is told apart
// from "absent".
func (p *parser) columnList() ([]string, error) {
	if err := p.expectKind(tokLParen, `"("`); err != nil {
		return nil, err
	}
	cols := []string{}
	if p.acceptKind(tokRParen) {
		return cols, nil
	}
	for {
		c, _, err := p.word("a column name")
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
		if p.acceptKind(tokRParen) {
			return cols, nil
		}
		if err := p.expectKind(tokComma, `"," or ")"`); err != nil {
			return nil, err
		}
	}
}

// show: SHOW TABLES | SHOW CREATE TABLE name | SHOW STATS FOR name.
func (p *parser) show() (Statement, error) {
	p.i = 1 // SHOW
	start := p.start()
	switch {
	case p.accept("tables"):
		return &ShowTables{Start: start, End: p.end}, p.done()
	case p.accept("create"):
		if err := p.expect("table"); err != nil {
			return nil, err
		}
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		return &ShowCreateTable{Start: start, End: p.end, Name: n}, p.done()
	case p.accept("stats"):
		if err := p.expect("for"); err != nil {
			return nil, err
		}
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		return &ShowStats{Start: start, End: p.end, Name: n}, p.done()
	default:
		return nil, p.fail("TABLES, CREATE TABLE or STATS FOR")
	}
}

// describe: DESCRIBE name | DESCRIBE DETAIL name (DESC for DESCRIBE). A table may be
// called "detail": DESCRIBE detail and DESCRIBE detail.x describe tables.
func (p *parser) describe() (Statement, error) {
	p.i = 1 // DESCRIBE
	start := p.start()
	if p.peekIs("detail") && p.i+1 < len(p.toks) && p.toks[p.i+1].kind != tokDot {
		p.i++
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		return &DescribeDetail{Start: start, End: p.end, Name: n}, p.done()
	}
	n, err := p.name()
	if err != nil {
		return nil, err
	}
	return &Describe{Start: start, End: p.end, Name: n}, p.done()
}

// analyze: ANALYZE name [WITH (options)].
func (p *parser) analyze() (Statement, error) {
	p.i = 1 // ANALYZE
	st := &Analyze{Start: p.start(), End: p.end}
	var err error
	if st.Name, err = p.name(); err != nil {
		return nil, err
	}
	if p.accept("with") {
		if st.Options, err = p.options(); err != nil {
			return nil, err
		}
	}
	return st, p.done()
}

// optimize: OPTIMIZE name [WITH (options)] [WHERE predicate].
func (p *parser) optimize() (Statement, error) {
	p.i = 1 // OPTIMIZE
	st := &Optimize{Start: p.start(), End: p.end}
	var err error
	if st.Name, err = p.name(); err != nil {
		return nil, err
	}
	if p.accept("with") {
		if st.Options, err = p.options(); err != nil {
			return nil, err
		}
	}
	if p.peekIs("where") {
		where := p.i
		p.i++
		if p.i >= len(p.toks) {
			return nil, p.fail("a predicate")
		}
		if st.WhereExpr, err = parsePredicate(p.text, p.toks, where); err != nil {
			return nil, err
		}
		st.WhereStart = p.toks[where+1].start
		st.Where = p.text[st.WhereStart:p.end]
		return st, nil
	}
	return st, p.done()
}

// setSession: SET SESSION key = value (or key TO value).
func (p *parser) setSession() (Statement, error) {
	p.i = 1 // SET
	if !p.accept("session") {
		return nil, p.fail("SESSION (settings are changed with SET SESSION key = value)")
	}
	st := &SetSession{Start: p.start(), End: p.end}
	var err error
	if st.Key, _, err = p.word("a setting name"); err != nil {
		return nil, err
	}
	st.Key = strings.ToLower(st.Key)
	if !p.acceptKind(tokEquals) && !p.accept("to") {
		return nil, p.fail(`"=" or TO`)
	}
	if st.Value, err = p.value(true); err != nil {
		return nil, err
	}
	return st, p.done()
}

// options: ( [key = value {, key = value}] ). Keys are lower-cased; repeated or
// unknown keys are left for the planner to judge.
func (p *parser) options() ([]Option, error) {
	if err := p.expectKind(tokLParen, `"(" after WITH`); err != nil {
		return nil, err
	}
	var opts []Option
	if p.acceptKind(tokRParen) {
		return opts, nil
	}
	for {
		key, kt, err := p.word("an option name")
		if err != nil {
			return nil, err
		}
		if err := p.expectKind(tokEquals, `"=" after option `+key); err != nil {
			return nil, err
		}
		v, err := p.value(true)
		if err != nil {
			return nil, err
		}
		opts = append(opts, Option{Key: strings.ToLower(key), KeyPos: kt.start, Value: v})
		if p.acceptKind(tokRParen) {
			return opts, nil
		}
		if err := p.expectKind(tokComma, `"," or ")"`); err != nil {
			return nil, err
		}
	}
}

// value reads a literal: a string, a number (optionally signed), true/false,
// ARRAY[literal, …], or — when words is set — a bare word.
func (p *parser) value(words bool) (OptionValue, error) {
	t, ok := p.peek()
	if !ok {
		return OptionValue{}, p.fail("a value")
	}
	v := OptionValue{Pos: t.start}
	switch {
	case t.kind == pg.Token_SCONST:
		s, err := stringValue(p.text, t)
		if err != nil {
			return OptionValue{}, err
		}
		p.i++
		v.Kind, v.Str = ValueString, s
	case t.kind == pg.Token_ICONST || t.kind == pg.Token_FCONST ||
		t.kind == tokMinus || t.kind == tokPlus:
		neg := false
		if t.kind == tokMinus || t.kind == tokPlus {
			neg = t.kind == tokMinus
			p.i++
			n, ok := p.peek()
			if !ok || (n.kind != pg.Token_ICONST && n.kind != pg.Token_FCONST) {
				return OptionValue{}, p.fail("a number")
			}
			t = n
		}
		p.i++
		if err := numberValue(p.text, t, neg, &v); err != nil {
			return OptionValue{}, err
		}
	case t.kind == pg.Token_TRUE_P || t.kind == pg.Token_FALSE_P:
		p.i++
		v.Kind, v.Bool = ValueBool, t.kind == pg.Token_TRUE_P
	case t.kind == pg.Token_ARRAY:
		p.i++
		if err := p.expectKind(tokLBracket, `"[" after ARRAY`); err != nil {
			return OptionValue{}, err
		}
		v.Kind, v.Array = ValueArray, []OptionValue{}
		if p.acceptKind(tokRBracket) {
			return v, nil
		}
		for {
			e, err := p.value(false)
			if err != nil {
				return OptionValue{}, err
			}
			if e.Kind == ValueArray {
				return OptionValue{}, errs.At(errs.Syntax, e.Pos, "syntax error at or near \"ARRAY\": array elements must be literals, not arrays")
			}
			v.Array = append(v.Array, e)
			if p.acceptKind(tokRBracket) {
				return v, nil
			}
			if err := p.expectKind(tokComma, `"," or "]"`); err != nil {
				return OptionValue{}, err
			}
		}
	case words && isWordToken(t):
		p.i++
		v.Kind, v.Str = ValueIdent, identValue(p.text, t)
	default:
		if words {
			return OptionValue{}, p.fail("a value (a string, a number, true, false, a word or ARRAY[…])")
		}
		return OptionValue{}, p.fail("a literal (a string, a number, true or false)")
	}
	return v, nil
}

// stringValue returns the value of a string constant token. Plain '…' strings (a
// doubled quote standing for one, and PostgreSQL's continuation of literals separated
// by a newline) and dollar-quoted strings are accepted; escape (E'…'), national and
// Unicode strings are refused rather than half-interpreted.
func stringValue(text string, t token) (string, error) {
	s := text[t.start:t.end]
	switch {
	case strings.HasPrefix(s, "'"):
		var b strings.Builder
		for len(s) > 0 {
			// One quoted segment starting at s[0] == '\''.
			i := 1
			for {
				j := strings.IndexByte(s[i:], '\'')
				if j < 0 {
					return "", errs.At(errs.Syntax, t.start, "syntax error: unterminated string")
				}
				b.WriteString(s[i : i+j])
				i += j + 1
				if i < len(s) && s[i] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				break
			}
			s = strings.TrimLeft(s[i:], " \t\r\n\f\v")
			if len(s) > 0 && s[0] != '\'' {
				return "", errs.At(errs.Syntax, t.start, "syntax error: malformed string constant")
			}
		}
		return b.String(), nil
	case strings.HasPrefix(s, "$"):
		j := strings.IndexByte(s[1:], '$')
		if j < 0 {
			return "", errs.At(errs.Syntax, t.start, "syntax error: malformed dollar-quoted string")
		}
		tag := s[:j+2]
		if len(s) < 2*len(tag) || !strings.HasSuffix(s, tag) {
			return "", errs.At(errs.Syntax, t.start, "syntax error: malformed dollar-quoted string")
		}
		return s[len(tag) : len(s)-len(tag)], nil
	default:
		return "", errs.At(errs.Syntax, t.start, "syntax error at or near \"%s\": only plain '…' or $$…$$ strings are accepted here", s)
	}
}

// numberValue sets v from a numeric constant token: an integer when the text is one
// and fits int64 (decimal, 0x, 0o, 0b, with _ separators as PostgreSQL allows),
// otherwise a float.
func numberValue(text string, t token, neg bool, v *OptionValue) error {
	s := strings.ReplaceAll(text[t.start:t.end], "_", "")
	if isIntegerText(s) {
		digits, base := s, 10
		if len(s) > 2 && s[0] == '0' {
			switch s[1] {
			case 'x', 'X':
				digits, base = s[2:], 16
			case 'o', 'O':
				digits, base = s[2:], 8
			case 'b', 'B':
				digits, base = s[2:], 2
			}
		}
		if neg {
			digits = "-" + digits
		}
		n, err := strconv.ParseInt(digits, base, 64)
		if err != nil {
			return errs.At(errs.Syntax, t.start, "integer %s is out of range", text[t.start:t.end])
		}
		v.Kind, v.Int = ValueInt, n
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return errs.At(errs.Syntax, t.start, "syntax error at or near \"%s\": not a valid number", text[t.start:t.end])
	}
	if neg {
		f = -f
	}
	v.Kind, v.Float = ValueFloat, f
	return nil
}

// isIntegerText reports whether a numeric constant (underscores removed) is an
// integer rather than a decimal or exponent form.
func isIntegerText(s string) bool {
	if len(s) > 2 && s[0] == '0' && strings.ContainsRune("xXoObB", rune(s[1])) {
		return true
	}
	return !strings.ContainsAny(s, ".eE")
}

// MaxIdentBytes is PostgreSQL's identifier length limit: longer identifiers are
// truncated to it (at a character boundary), in query trees and here alike.
const MaxIdentBytes = 63

// TruncateIdent truncates an identifier the way PostgreSQL's parser does, so a name
// read by Lore's own statements matches the same name read in a query. A binder
// comparing a query's identifier with a longer column name should truncate the
// column name with it.
func TruncateIdent(s string) string {
	if len(s) <= MaxIdentBytes {
		return s
	}
	n := MaxIdentBytes
	for n > 0 && s[n]&0xC0 == 0x80 { // do not cut a UTF-8 sequence
		n--
	}
	return s[:n]
}

// describeTokens names a statement for a message by its leading words: the first
// keyword, and for CREATE/ALTER/DROP the keywords that follow it ("CREATE INDEX").
func describeTokens(text string, toks []token) string {
	var words []string
	for i, t := range toks {
		if i > 0 && (i >= 4 || t.kw == pg.KeywordKind_NO_KEYWORD) {
			break
		}
		words = append(words, strings.ToUpper(text[t.start:t.end]))
		if i == 0 && !(is(text, t, "create") || is(text, t, "alter") || is(text, t, "drop")) {
			break
		}
	}
	return strings.Join(words, " ")
}
