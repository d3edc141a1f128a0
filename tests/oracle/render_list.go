package oracle

import (
	"strings"
)

// renderList formats a DuckDB list as DuckDB's own cast to VARCHAR writes it;
// typ is the list's type name (VARCHAR[]), whose element type renders each value.
func renderList(x []any, typ string) (string, error) {
	elem := strings.TrimSuffix(typ, "[]")
	parts := make([]string, len(x))
	for i, v := range x {
		switch e := v.(type) {
		case nil:
			parts[i] = "NULL"
		case string:
			parts[i] = listString(e)
		default:
			s, err := render(v, elem)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
	}
	return "[" + strings.Join(parts, ", ") + "]", nil
}

// listString quotes a list's string element the way DuckDB does: when it is empty,
// spells NULL, starts or ends with white space, or holds one of []{}(),:='" —
// then ' and \ inside are escaped with a backslash.
func listString(s string) string {
	needs := s == "" || strings.ToLower(s) == "null" || strings.ContainsAny(s, "[]{}(),:='\"") ||
		strings.TrimSpace(s[:1]) == "" || strings.TrimSpace(s[len(s)-1:]) == ""
	if !needs {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(s) + "'"
}
