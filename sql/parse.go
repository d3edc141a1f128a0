package sql

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/sql/pgtree"
)

// MaxTextBytes bounds the text of one request. PostgreSQL's parser copies the whole
// text for every statement, so an unbounded text is an unbounded cost.
const MaxTextBytes = 16 << 20

const byteOrderMark = "\uFEFF"

// Parse splits text into statements and parses each. Statements are separated by
// semicolons outside strings, quoted identifiers and comments; empty statements
// (only whitespace, comments or semicolons) are dropped, so Parse("") is (nil, nil).
//
// Lore's own statements (CREATE TABLE … WITH, DROP TABLE, ALTER TABLE, SHOW, DESCRIBE,
// ANALYZE, OPTIMIZE, SET SESSION) are read by a small parser here; queries are read by
// PostgreSQL's grammar (pg_query). Any other statement PostgreSQL knows is an
// ANALYSIS_ERROR naming it; anything unparseable is a SYNTAX_ERROR whose position is
// a byte offset into text.
func Parse(text string) ([]Statement, error) {
	if qs, ok := recent.get(text); ok {
		return qs, nil
	}
	out, err := parse(text)
	if err == nil && len(text) <= maxCachedText {
		recent.put(text, out)
	}
	return out, err
}

// ParseAhead parses text in the background into the cache Parse reads, for a caller
// that has a statement before it can run it: `lore sql` parses its first request
// while the engine opens, on a core the open leaves idle, which spares the
// statement the few tenths of a millisecond a first parse costs a fresh process. A
// Parse of the same text meanwhile waits for this one rather than parse it again.
// A text that fails to parse, is not all queries, or is too long to cache leaves
// nothing behind, and its Parse reports what is wrong with it as ever.
func ParseAhead(text string) {
	if len(text) > maxCachedText || !recent.startAhead(text) {
		return
	}
	go func() {
		defer recent.endAhead(text)
		// A panic is the statement's to report, when it parses text itself.
		_ = errs.Safe(func() error {
			out, err := parse(text)
			if err == nil {
				recent.put(text, out)
			}
			return nil
		})()
	}()
}

// maxCachedText bounds the texts the cache keeps. The queries sent again and again
// are short; copying the tree of a long one into the cache would cost a third of
// parsing it again, for a text that is rarely repeated.
const maxCachedText = 64 << 10

// recent caches the parse of the last texts made only of queries, which dashboards
// and applications send again and again. The trees are shared, not copied: no one
// changes a parse tree after Parse returns it (the binder reads a tree and copies
// what it rewrites), and copying one cost a tenth of a warm answer from statistics.
var recent = &parseCache{m: map[string][]*Query{}}

const parseCacheSize = 256

type parseCache struct {
	mu    sync.Mutex
	m     map[string][]*Query
	order []string // oldest first
	// ahead holds the texts ParseAhead is parsing, each with a channel closed when
	// it is done.
	ahead map[string]chan struct{}
}

// startAhead reports whether text is neither cached nor being parsed ahead, and
// then marks it as being parsed.
func (c *parseCache) startAhead(text string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[text]; ok || c.ahead[text] != nil {
		return false
	}
	if c.ahead == nil {
		c.ahead = map[string]chan struct{}{}
	}
	c.ahead[text] = make(chan struct{})
	return true
}

func (c *parseCache) endAhead(text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.ahead[text])
	delete(c.ahead, text)
}

// get returns the statements cached for text: each its own Query, sharing its tree
// with the cache.
func (c *parseCache) get(text string) ([]Statement, bool) {
	c.mu.Lock()
	qs, ok := c.m[text]
	ahead := c.ahead[text]
	c.mu.Unlock()
	if !ok && ahead != nil {
		<-ahead
		c.mu.Lock()
		qs, ok = c.m[text]
		c.mu.Unlock()
	}
	if !ok {
		return nil, false
	}
	out := make([]Statement, len(qs))
	for i, q := range qs {
		cp := *q
		out[i] = &cp
	}
	return out, true
}

// put caches statements when every one is a query, evicting the oldest text.
func (c *parseCache) put(text string, sts []Statement) {
	qs := make([]*Query, len(sts))
	for i, st := range sts {
		q, ok := st.(*Query)
		if !ok {
			return
		}
		if testing.Testing() {
			q.digest = treeDigest(q.Select)
		}
		cp := *q
		qs[i] = &cp
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[text]; ok {
		return
	}
	if len(c.order) == parseCacheSize {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[text] = qs
	c.order = append(c.order, text)
}

// CheckUnchanged panics when q's tree, shared with the parse cache, was changed since
// it was parsed: the rule that makes sharing safe was broken. Only tests keep the
// digest it compares; elsewhere it does nothing.
func (q *Query) CheckUnchanged() {
	if q.digest == nil {
		return
	}
	if !bytes.Equal(treeDigest(q.Select), q.digest) {
		panic("BUG: a cached parse tree was changed after Parse returned it: " + q.Text)
	}
}

func treeDigest(sel *pg.SelectStmt) []byte {
	return pgtree.EncodeSelect(sel)
}

func parse(text string) ([]Statement, error) {
	if len(text) > MaxTextBytes {
		return nil, errs.New(errs.Syntax, "statement text is %d bytes; the limit is %d bytes", len(text), MaxTextBytes)
	}
	// A byte-order mark is not text; PostgreSQL would read it as part of a name.
	// Blanking it keeps every offset.
	if strings.HasPrefix(text, byteOrderMark) {
		text = strings.Repeat(" ", len(byteOrderMark)) + text[len(byteOrderMark):]
	}
	if err := checkText(text); err != nil {
		return nil, err
	}
	toks, err := scan(text)
	if err != nil {
		return nil, err
	}
	var out []Statement
	for len(toks) > 0 {
		n := 0
		for n < len(toks) && toks[n].kind != tokSemicolon {
			n++
		}
		if n > 0 {
			st, err := parseStatement(text, toks[:n])
			if err != nil {
				return nil, err
			}
			out = append(out, st)
		}
		if n < len(toks) {
			n++ // the semicolon
		}
		toks = toks[n:]
	}
	return out, nil
}

// checkText refuses text PostgreSQL's parser cannot be handed faithfully: a NUL byte
// would silently end the text at the C boundary, and invalid UTF-8 would make the
// parser's character-counted error positions disagree with byte offsets.
func checkText(text string) error {
	for i := 0; i < len(text); {
		c := text[i]
		if c == 0 {
			return errs.At(errs.Syntax, i, "syntax error: NUL character in statement text")
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			return errs.At(errs.Syntax, i, "syntax error: invalid UTF-8 byte sequence")
		}
		i += size
	}
	return nil
}

// parseStatement dispatches one statement (its tokens, semicolon excluded) on its
// leading words.
func parseStatement(text string, toks []token) (Statement, error) {
	p := &parser{text: text, toks: toks, end: toks[len(toks)-1].end}
	second := func(w string) bool { return len(toks) > 1 && is(text, toks[1], w) }
	first := toks[0]
	switch {
	case is(text, first, "create") && second("table"):
		return p.createTable()
	case is(text, first, "drop") && second("table"):
		return p.dropTable()
	case is(text, first, "alter") && second("table"):
		return p.alterTable()
	case is(text, first, "show"):
		return p.show()
	case is(text, first, "describe") || is(text, first, "desc"):
		return p.describe()
	case is(text, first, "analyze") || is(text, first, "analyse"):
		return p.analyze()
	case is(text, first, "optimize"):
		return p.optimize()
	case is(text, first, "set"):
		return p.setSession()
	default:
		return parsePostgres(text, toks)
	}
}

// convertPgError turns an error of pg_query on parsed, a text that starts at byte
// offset base of the request, into a SYNTAX_ERROR positioned within [lo, hi] of the
// request.
func convertPgError(err error, parsed string, base, lo, hi int) error {
	var pe *pgparser.Error
	if errors.As(err, &pe) {
		pos := lo
		if pe.Cursorpos > 0 {
			pos = base + charToByte(parsed, pe.Cursorpos-1)
		}
		if strings.HasPrefix(pe.Message, "memory exhausted") {
			// The grammar's own stack is full: bison's words for a statement nested
			// too deeply (a CASE within a CASE … thousands of times), not for the
			// memory of the process.
			return errs.At(errs.Syntax, min(max(pos, lo), hi), "statement is nested too deeply (the parser's stack is full)")
		}
		return errs.At(errs.Syntax, min(max(pos, lo), hi), "%s", pe.Message)
	}
	// The C parser succeeded but its tree could not be decoded: the only way this
	// happens is a tree deeper than the decoder's bound (pgtree.MaxDepth, far above
	// what checkDepth admits), a broken promise of the parser.
	return errs.At(errs.Syntax, lo, "statement is nested too deeply: %w", err)
}

// charToByte converts PostgreSQL's 0-based character position in s into a byte
// offset. PostgreSQL counts characters of the server encoding (UTF-8 here), and s
// is valid UTF-8 (checkText), so decoding runes counts the same characters.
func charToByte(s string, chars int) int {
	i := 0
	for n := 0; n < chars && i < len(s); n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// parseTree runs PostgreSQL's parser over src, the text of one statement (possibly
// rewritten at equal length) that starts at byte offset base of the request, and
// moves every Location in the tree by base so it is an offset into the request.
// toks are the statement's tokens, which bound error positions and feed the depth
// check that keeps the C parser's stack safe.
//
// Parsing the statement alone keeps a request of many statements linear in its
// length.
func parseTree(src string, base int, toks []token, text string) (*pg.Node, error) {
	if err := checkDepth(text, toks); err != nil {
		return nil, err
	}
	res, err := pgtree.Parse(src)
	if err != nil {
		return nil, convertPgError(err, src, base, toks[0].start, toks[len(toks)-1].end)
	}
	if len(res.Stmts) != 1 || res.Stmts[0].Stmt == nil {
		return nil, errs.New(errs.Internal, "parser returned %d statements for one statement", len(res.Stmts))
	}
	n := res.Stmts[0].Stmt
	if base != 0 {
		shiftLocations(n, int32(base))
	}
	return n, nil
}

// shiftLocations adds by to every known location in the tree below m. pg_query marks
// an unknown location -1.
func shiftLocations(m any, by int32) {
	mapLocations(m, func(v int) int { return v + int(by) })
}

// mapLocations replaces every known location in the tree below m by at(location).
func mapLocations(m any, at func(int) int) {
	pgtree.Walk(m, func(m any) bool {
		pgtree.Locations(m, func(_ bool, p *int32) {
			if *p >= 0 {
				*p = int32(at(int(*p)))
			}
		})
		return true
	})
}
