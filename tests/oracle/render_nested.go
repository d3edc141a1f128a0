package oracle

import (
	"fmt"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// renderNested formats a DuckDB list, struct or map as Lore's types renders one
// (DuckDB's own text form); typ is DuckDB's type name, which gives the element
// types and a struct's field order.
func renderNested(v any, typ string) (string, bool, error) {
	var sb strings.Builder
	switch x := v.(type) {
	case []any:
		elem := strings.TrimSuffix(typ, "[]")
		if i := strings.LastIndexByte(typ, '['); i > 0 && strings.HasSuffix(typ, "]") {
			elem = typ[:i]
		}
		sb.WriteByte('[')
		for k, e := range x {
			if k > 0 {
				sb.WriteString(", ")
			}
			s, err := renderElement(e, elem)
			if err != nil {
				return "", true, err
			}
			sb.WriteString(s)
		}
		sb.WriteByte(']')
	case duckdb.OrderedMap:
		return renderNested(&x, typ)
	case *duckdb.OrderedMap:
		args := splitTop(strings.TrimSuffix(strings.TrimPrefix(typ, "MAP("), ")"))
		if len(args) != 2 {
			return "", true, fmt.Errorf("cannot read the map type %s", typ)
		}
		keys, vals := x.Keys(), x.Values()
		sb.WriteByte('{')
		for k := range keys {
			if k > 0 {
				sb.WriteString(", ")
			}
			ks, err := renderElement(keys[k], args[0])
			if err != nil {
				return "", true, err
			}
			vs, err := renderElement(vals[k], args[1])
			if err != nil {
				return "", true, err
			}
			sb.WriteString(ks + "=" + vs)
		}
		sb.WriteByte('}')
	case map[string]any:
		if !strings.HasPrefix(typ, "STRUCT(") {
			return "", true, fmt.Errorf("cannot render a %s as a struct", typ)
		}
		sb.WriteByte('{')
		for k, f := range splitTop(strings.TrimSuffix(strings.TrimPrefix(typ, "STRUCT("), ")")) {
			name, ftyp := splitField(f)
			if k > 0 {
				sb.WriteString(", ")
			}
			s, err := renderElement(x[name], ftyp)
			if err != nil {
				return "", true, err
			}
			sb.WriteString("'" + strings.ReplaceAll(name, "'", `\'`) + "': " + s)
		}
		sb.WriteByte('}')
	default:
		return "", false, nil
	}
	return sb.String(), true, nil
}

// renderElement renders a value nested in a list, struct or map: NULL, and strings
// bare or quoted by the rule of Lore's types.quoteNested.
func renderElement(v any, typ string) (string, error) {
	if v == nil {
		return "NULL", nil
	}
	if s, ok := v.(string); ok && typ == "VARCHAR" {
		if needsQuotes(s) {
			return "'" + strings.ReplaceAll(s, "'", `\'`) + "'", nil
		}
		return s, nil
	}
	return render(v, typ)
}

func needsQuotes(s string) bool {
	if s == "" || strings.EqualFold(s, "null") {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return true
	}
	return strings.ContainsAny(s, `,[]{}():='"`)
}

// splitTop splits a type's argument list at its top-level commas.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// splitField splits a struct field "name TYPE" (the name possibly quoted).
func splitField(f string) (name, typ string) {
	if strings.HasPrefix(f, `"`) {
		end := strings.Index(f[1:], `"`) + 1
		for end+1 < len(f) && f[end+1] == '"' { // a doubled quote inside the name
			next := strings.Index(f[end+2:], `"`)
			if next < 0 {
				break
			}
			end += 2 + next
		}
		return strings.ReplaceAll(f[1:end], `""`, `"`), strings.TrimSpace(f[end+1:])
	}
	name, typ, _ = strings.Cut(f, " ")
	return name, strings.TrimSpace(typ)
}
