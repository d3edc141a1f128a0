package types

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// parseNested reads the names of nested types: T[] (a list), STRUCT(name T, …) with field names kept as
// written (double-quoted ones unquoted), and MAP(K, V). ok is false for any other
// name.
func parseNested(s string) (t arrow.DataType, ok bool, err error) {
	if strings.HasSuffix(s, "]") {
		open := strings.LastIndexByte(s, '[')
		if open < 0 || strings.TrimSpace(s[open+1:len(s)-1]) != "" {
			// T[n], DuckDB's fixed-size array, is not a list: it is not read.
			return nil, true, fmt.Errorf("unknown type %q", s)
		}
		elem, err := Parse(s[:open])
		if err != nil {
			return nil, true, err
		}
		return arrow.ListOf(elem), true, nil
	}
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return nil, false, nil
	}
	kind := strings.ToUpper(strings.TrimSpace(s[:open]))
	if kind != "STRUCT" && kind != "MAP" {
		return nil, false, nil
	}
	parts := splitTypeList(s[open+1 : len(s)-1])
	if kind == "MAP" {
		if len(parts) != 2 {
			return nil, true, fmt.Errorf("MAP needs a key and a value type in %q", s)
		}
		k, err := Parse(parts[0])
		if err != nil {
			return nil, true, err
		}
		v, err := Parse(parts[1])
		if err != nil {
			return nil, true, err
		}
		return arrow.MapOf(k, v), true, nil
	}
	if len(parts) == 0 {
		return nil, true, fmt.Errorf("STRUCT needs at least one field in %q", s)
	}
	fields := make([]arrow.Field, len(parts))
	seen := map[string]bool{}
	for i, p := range parts {
		p = strings.TrimSpace(p)
		var name, rest string
		if strings.HasPrefix(p, `"`) {
			end := 1
			for end < len(p) && (p[end] != '"' || end+1 < len(p) && p[end+1] == '"') {
				if p[end] == '"' {
					end++
				}
				end++
			}
			if end >= len(p) {
				return nil, true, fmt.Errorf("unterminated field name in %q", s)
			}
			name, rest = strings.ReplaceAll(p[1:end], `""`, `"`), p[end+1:]
		} else {
			sp := strings.IndexAny(p, " \t\n")
			if sp < 0 {
				return nil, true, fmt.Errorf("STRUCT field %q has no type", p)
			}
			name, rest = p[:sp], p[sp:]
		}
		ft, err := Parse(rest)
		if err != nil {
			return nil, true, err
		}
		key := strings.ToLower(name)
		if seen[key] {
			return nil, true, fmt.Errorf("duplicate STRUCT field %q in %q", name, s)
		}
		seen[key] = true
		fields[i] = arrow.Field{Name: name, Type: ft, Nullable: true}
	}
	return arrow.StructOf(fields...), true, nil
}

// splitTypeList splits a comma-separated list of type names at the commas outside
// parentheses and double quotes; an empty list has no parts.
func splitTypeList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var parts []string
	depth, start, quoted := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}
