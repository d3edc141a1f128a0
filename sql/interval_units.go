package sql

import (
	"strings"

	pg "github.com/loredb/lore/sql/pgast"
)

// duckIntervalUnits are the units DuckDB reads after INTERVAL '…' that PostgreSQL's
// grammar does not (it knows YEAR, MONTH, DAY, HOUR, MINUTE and SECOND): it reads
// `INTERVAL '90' QUARTER` as the interval '90' named "quarter", and fails on it
// elsewhere.
var duckIntervalUnits = map[string]bool{
	"years": true, "months": true, "days": true, "hours": true, "minutes": true, "seconds": true,
	"millisecond": true, "milliseconds": true, "microsecond": true, "microseconds": true,
	"week": true, "weeks": true, "quarter": true, "quarters": true, "decade": true, "decades": true,
	"century": true, "centuries": true, "millennium": true, "millennia": true,
}

// rewriteIntervalUnits blanks such a unit after INTERVAL '…' with spaces in src (so
// every offset stays put) and returns the unit by the offset of the string before
// it, which markIntervalUnits appends to the string's value.
func rewriteIntervalUnits(text string, toks []token, src []byte, base int) map[int]string {
	var units map[int]string
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].kind != pg.Token_INTERVAL || toks[i+1].kind != pg.Token_SCONST {
			continue
		}
		u := toks[i+2]
		if isQuotedIdent(text, u) || !isWordToken(u) {
			continue
		}
		w := strings.ToLower(text[u.start:u.end])
		if !duckIntervalUnits[w] {
			continue
		}
		for k := u.start; k < u.end; k++ {
			src[k-base] = ' '
		}
		if units == nil {
			units = map[int]string{}
		}
		units[toks[i+1].start] = w
	}
	return units
}

// markIntervalUnits appends its unit to each string constant of units.
func markIntervalUnits(root any, units map[int]string) {
	walk(root, func(m any) {
		if c, ok := m.(*pg.A_Const); ok {
			if u, ok := units[int(c.Location)]; ok {
				if s := c.GetSval(); s != nil {
					s.Sval += " " + u
				}
			}
		}
	})
}
