package slt

import (
	"fmt"
	"os"
	"strings"
)

// Kind is the kind of a record.
type Kind int

// The record kinds.
const (
	Statement Kind = iota
	Query
	Halt
)

// SortMode says how a query's rows are ordered before comparison.
type SortMode string

// The sort modes.
const (
	NoSort    SortMode = "nosort"
	RowSort   SortMode = "rowsort"
	ValueSort SortMode = "valuesort"
)

// Condition is a "skipif ENGINE" or "onlyif ENGINE" line before a record.
type Condition struct {
	Only   bool // onlyif rather than skipif
	Engine string
}

// Record is one statement, query or halt of a file.
type Record struct {
	File string
	Line int // 1-based line of the record's header (after its conditions)
	Kind Kind

	Conditions []Condition
	SQL        string

	// Statements: whether an error is expected, and the expected code ("" = any).
	ExpectError bool
	ErrorCode   string

	// Queries: the column type letters, the sort mode, and the expected rows as
	// written (one line per row, columns separated by a TAB).
	Types    string
	Sort     SortMode
	Expected []string

	// Line span of the record in the file, for rewriting: the header is line
	// index headerIdx (0-based), the expected rows occupy [resultIdx, endIdx).
	headerIdx, resultIdx, endIdx int
	hasSeparator                 bool
}

// Runs reports whether engine runs the record under its conditions.
func (r *Record) Runs(engine string) bool {
	for _, c := range r.Conditions {
		if c.Only != (c.Engine == engine) {
			return false
		}
	}
	return true
}

// Pos is "file:line" of the record.
func (r *Record) Pos() string { return fmt.Sprintf("%s:%d", r.File, r.Line) }

// File is a parsed .slt file: its records and its lines (kept for Rewrite).
type File struct {
	Name    string
	Records []Record
	lines   []string
}

// ParseFile reads and parses the .slt file at path.
func ParseFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %q: %w", path, err)
	}
	return Parse(path, string(data))
}

// Parse parses the text of a .slt file; name is used in positions.
func Parse(name, text string) (*File, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	f := &File{Name: name, lines: lines}
	var conds []Condition
	for i := 0; i < len(lines); {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			i++
			continue
		}
		fields := strings.Fields(line)
		errorf := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, i+1, fmt.Sprintf(format, args...))
		}
		switch fields[0] {
		case "skipif", "onlyif":
			if len(fields) != 2 {
				return nil, errorf("%s needs one engine name", fields[0])
			}
			conds = append(conds, Condition{Only: fields[0] == "onlyif", Engine: fields[1]})
			i++
			continue
		case "halt":
			f.Records = append(f.Records, Record{File: name, Line: i + 1, Kind: Halt, Conditions: conds,
				headerIdx: i, resultIdx: i + 1, endIdx: i + 1})
			conds = nil
			i++
			continue
		}
		rec := Record{File: name, Line: i + 1, Conditions: conds, headerIdx: i}
		conds = nil
		switch fields[0] {
		case "statement":
			rec.Kind = Statement
			switch {
			case len(fields) == 2 && fields[1] == "ok":
			case len(fields) >= 2 && fields[1] == "error" && len(fields) <= 3:
				rec.ExpectError = true
				if len(fields) == 3 {
					rec.ErrorCode = fields[2]
				}
			default:
				return nil, errorf("want 'statement ok' or 'statement error [CODE]', got %q", line)
			}
		case "query":
			rec.Kind = Query
			rec.Sort = NoSort
			if len(fields) < 2 || len(fields) > 3 {
				return nil, errorf("want 'query TYPES [SORT]', got %q", line)
			}
			rec.Types = fields[1]
			for _, c := range rec.Types {
				if c != 'I' && c != 'R' && c != 'T' {
					return nil, errorf("unknown column type %q in %q (want I, R or T)", c, rec.Types)
				}
			}
			if len(fields) == 3 {
				switch m := SortMode(fields[2]); m {
				case NoSort, RowSort, ValueSort:
					rec.Sort = m
				default:
					return nil, errorf("unknown sort mode %q", fields[2])
				}
			}
		default:
			return nil, errorf("unknown record %q", fields[0])
		}
		i++
		// The SQL runs to a blank line or, for queries, the "----" separator.
		var sqlLines []string
		for i < len(lines) && strings.TrimSpace(lines[i]) != "" && strings.TrimSpace(lines[i]) != "----" {
			sqlLines = append(sqlLines, lines[i])
			i++
		}
		if len(sqlLines) == 0 {
			return nil, fmt.Errorf("%s:%d: record without SQL", name, rec.Line)
		}
		rec.SQL = strings.Join(sqlLines, "\n")
		rec.resultIdx, rec.endIdx = i, i
		if i < len(lines) && strings.TrimSpace(lines[i]) == "----" {
			if rec.Kind != Query {
				return nil, fmt.Errorf("%s:%d: a statement has no result section", name, i+1)
			}
			rec.hasSeparator = true
			i++
			rec.resultIdx = i
			for i < len(lines) && lines[i] != "" {
				rec.Expected = append(rec.Expected, lines[i])
				i++
			}
			rec.endIdx = i
		}
		f.Records = append(f.Records, rec)
	}
	if len(conds) > 0 {
		return nil, fmt.Errorf("%s: conditions at the end of the file apply to no record", name)
	}
	return f, nil
}
