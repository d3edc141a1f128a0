package sql

import (
	"strings"

	pg "github.com/loredb/lore/sql/pgast"
)

// markFloat4 gives the type name FLOAT DuckDB's meaning. PostgreSQL's grammar reads
// FLOAT (without a precision) as float8, a DOUBLE; in DuckDB FLOAT is the 4-byte
// REAL. The tree cannot tell FLOAT from DOUBLE PRECISION, so the text at the type
// name's location decides.
func markFloat4(m any, text string) {
	walk(m, func(m any) {
		tn, ok := m.(*pg.TypeName)
		if !ok || len(tn.Names) != 2 || len(tn.Typmods) > 0 || tn.Location < 0 || int(tn.Location) >= len(text) {
			return
		}
		s := tn.Names[1].GetString_()
		if s == nil || s.Sval != "float8" {
			return
		}
		word := text[tn.Location:]
		if len(word) < 5 || !strings.EqualFold(word[:5], "float") || len(word) > 5 && isIdentByte(word[5]) {
			return
		}
		// FLOAT(p) already has the width its precision asks for.
		if rest := strings.TrimLeft(word[5:], " \t\r\n"); strings.HasPrefix(rest, "(") {
			return
		}
		s.Sval = "float4"
	})
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
