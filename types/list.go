package types

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// formatList renders row i of a list array as DuckDB casts a list to VARCHAR:
// [a, b, NULL], its elements in their own text form, strings quoted only where
// they would otherwise read back differently.
func formatList(a *array.List, i int) string {
	from, to := a.ValueOffsets(i)
	values := a.ListValues()
	var sb strings.Builder
	sb.WriteByte('[')
	for j := from; j < to; j++ {
		if j > from {
			sb.WriteString(", ")
		}
		v := ValueAt(values, int(j))
		if !v.Null && IsString(Unwrap(v.Type)) {
			sb.WriteString(ListElementString(v.S))
			continue
		}
		sb.WriteString(v.String())
	}
	sb.WriteByte(']')
	return sb.String()
}

// ListElementString is a string as DuckDB writes it inside a list: quoted (with
// backslash escapes for quotes and backslashes) when it is empty, reads as NULL,
// has leading or trailing white space, or holds a character that delimits list,
// struct or map text; as it is otherwise.
func ListElementString(s string) string {
	quote := s == "" || strings.EqualFold(s, "null") || strings.ContainsAny(s, `[]{}(),:='"`)
	if !quote {
		first, last := s[0], s[len(s)-1]
		quote = isListSpace(first) || isListSpace(last)
	}
	if !quote {
		return s
	}
	var sb strings.Builder
	sb.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\'' || c == '\\' {
			sb.WriteByte('\\')
		}
		sb.WriteByte(s[i])
	}
	sb.WriteByte('\'')
	return sb.String()
}

func isListSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}
