package slt

import (
	"fmt"
	"strings"
)

// Rewrite returns the file's text with the expected rows (and, when types is not
// empty, the type letters) of the given queries replaced; results maps a record's
// index in f.Records to its new result lines. Everything else is kept verbatim.
func (f *File) Rewrite(results map[int]Result) string {
	var out []string
	next := 0 // next line of f.lines to copy
	for i := range f.Records {
		res, ok := results[i]
		rec := &f.Records[i]
		if !ok || rec.Kind != Query {
			continue
		}
		out = append(out, f.lines[next:rec.headerIdx]...)
		types := rec.Types
		if res.Types != "" {
			types = res.Types
		}
		header := "query " + types
		if rec.Sort != NoSort {
			header += " " + string(rec.Sort)
		}
		out = append(out, header)
		out = append(out, f.lines[rec.headerIdx+1:rec.resultIdx]...)
		if !rec.hasSeparator {
			out = append(out, "----")
		}
		out = append(out, res.Lines...)
		next = rec.endIdx
	}
	out = append(out, f.lines[next:]...)
	return strings.Join(out, "\n") + "\n"
}

// Result is a query's new expectation for Rewrite.
type Result struct {
	Types string // "" keeps the record's types
	Lines []string
}

// TypeLetter is the sqllogictest letter of a column: I, R or T.
func TypeLetter(integer, float bool) byte {
	switch {
	case integer:
		return 'I'
	case float:
		return 'R'
	}
	return 'T'
}

// String renders a record header for messages.
func (r *Record) String() string {
	switch r.Kind {
	case Statement:
		if r.ExpectError {
			return strings.TrimSpace(fmt.Sprintf("statement error %s", r.ErrorCode))
		}
		return "statement ok"
	case Query:
		return fmt.Sprintf("query %s %s", r.Types, r.Sort)
	}
	return "halt"
}
