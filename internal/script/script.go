// Package script cuts a SQL script into statements and into the requests the engine
// runs: the command line's scripts and shell use it, and so does the start of a
// `lore sql` process, which parses its first request while the program initialises.
package script

import (
	"strings"
	"unicode"
)

// Span is one statement of a script: text[Start:End], without its terminating
// semicolon and without surrounding whitespace. Terminated is false for a final
// statement that no semicolon ends (or that ends inside a quote or comment).
type Span struct {
	Start, End int
	Terminated bool
}

// Statements cuts text into statements at semicolons that are outside
// single-quoted strings, double-quoted identifiers, -- line comments and /* */
// block comments (which nest, as in PostgreSQL). A quote written twice inside a
// quoted run stands for itself and does not end it. Statements holding only
// whitespace and comments are dropped.
func Statements(text string) []Span {
	var spans []Span
	start := 0
	emit := func(end int, terminated bool) {
		if s, e := trimSpan(text, start, end); !Blank(text[s:e]) {
			spans = append(spans, Span{Start: s, End: e, Terminated: terminated})
		}
	}
	for i := 0; i < len(text); {
		switch c := text[i]; {
		case c == '\'' || c == '"':
			i = skipQuoted(text, i)
		case c == '-' && strings.HasPrefix(text[i:], "--"):
			if nl := strings.IndexByte(text[i:], '\n'); nl >= 0 {
				i += nl + 1
			} else {
				i = len(text)
			}
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			i = skipBlockComment(text, i)
		case c == ';':
			emit(i, true)
			i++
			start = i
		default:
			i++
		}
	}
	emit(len(text), false)
	return spans
}

// skipQuoted returns the index just past the quoted run that starts at i, or
// len(text) when the quote is not closed.
func skipQuoted(text string, i int) int {
	q := text[i]
	for j := i + 1; j < len(text); j++ {
		if text[j] == q {
			if j+1 < len(text) && text[j+1] == q {
				j++ // a doubled quote stands for itself
				continue
			}
			return j + 1
		}
	}
	return len(text)
}

// skipBlockComment returns the index just past the (possibly nested) block comment
// that starts at i, or len(text) when it is not closed.
func skipBlockComment(text string, i int) int {
	end, _ := blockComment(text, i)
	return end
}

// blockComment returns the index just past the (possibly nested) block comment that
// starts at i and whether it is closed; len(text) when it is not.
func blockComment(text string, i int) (end int, closed bool) {
	depth := 0
	for j := i; j < len(text)-1; {
		switch text[j : j+2] {
		case "/*":
			depth++
			j += 2
		case "*/":
			depth--
			j += 2
			if depth == 0 {
				return j, true
			}
		default:
			j++
		}
	}
	return len(text), false
}

// trimSpan narrows [s, e) to exclude surrounding whitespace.
func trimSpan(text string, s, e int) (int, int) {
	for s < e && isSpace(text[s]) {
		s++
	}
	for e > s && isSpace(text[e-1]) {
		e--
	}
	return s, e
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// Blank reports whether s holds only whitespace and comments. A block comment that
// is not closed is not blank: the engine refuses it, where dropping it would let a
// script whose end was cut off (or a stray "/*") pass in silence.
func Blank(s string) bool {
	for i := 0; i < len(s); {
		switch {
		case isSpace(s[i]):
			i++
		case strings.HasPrefix(s[i:], "--"):
			if nl := strings.IndexByte(s[i:], '\n'); nl >= 0 {
				i += nl + 1
			} else {
				return true
			}
		case strings.HasPrefix(s[i:], "/*"):
			end, closed := blockComment(s, i)
			if !closed {
				return false
			}
			i = end
		default:
			return false
		}
	}
	return true
}

// leadingWords returns up to n words at the start of stmt, upper-cased, skipping
// comments.
func leadingWords(stmt string, n int) []string {
	var words []string
	for i := 0; i < len(stmt) && len(words) < n; {
		switch {
		case isSpace(stmt[i]):
			i++
		case strings.HasPrefix(stmt[i:], "--"):
			nl := strings.IndexByte(stmt[i:], '\n')
			if nl < 0 {
				return words
			}
			i += nl + 1
		case strings.HasPrefix(stmt[i:], "/*"):
			i = skipBlockComment(stmt, i)
		default:
			j := i
			for j < len(stmt) && (stmt[j] == '_' || unicode.IsLetter(rune(stmt[j])) || unicode.IsDigit(rune(stmt[j]))) {
				j++
			}
			if j == i {
				return words
			}
			words = append(words, strings.ToUpper(stmt[i:j]))
			i = j
		}
	}
	return words
}

// IsSetSession reports whether stmt is a SET SESSION statement, which the engine
// accepts only as a prefix of the statement it configures.
func IsSetSession(stmt string) bool {
	w := leadingWords(stmt, 2)
	return len(w) == 2 && w[0] == "SET" && w[1] == "SESSION"
}

// Request is one engine call: leading SET SESSION statements and the statement
// they configure, as one slice of the script text.
type Request struct {
	Start, End int
}

// Requests joins each run of SET SESSION statements with the statement after
// it. A trailing run with no statement after it forms a request of its own (the
// engine refuses it, with a clear error).
func Requests(text string, spans []Span) []Request {
	var reqs []Request
	first := -1
	for i, sp := range spans {
		if first < 0 {
			first = i
		}
		if IsSetSession(text[sp.Start:sp.End]) && i < len(spans)-1 {
			continue
		}
		reqs = append(reqs, Request{Start: spans[first].Start, End: sp.End})
		first = -1
	}
	return reqs
}
