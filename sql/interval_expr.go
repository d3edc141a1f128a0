package sql

import (
	"strings"

	pg "github.com/loredb/lore/sql/pgast"
)

// DuckDB writes an interval of a computed or unquoted count as INTERVAL (expr) unit
// or INTERVAL 3 unit, which PostgreSQL's grammar does not read (it takes only a
// quoted string after INTERVAL). Each becomes a call of the unit's constructor,
// to_days(expr), as DuckDB binds it.

// intervalUnits maps DuckDB's unit words to their constructor functions.
var intervalUnits = map[string]string{
	"year": "to_years", "years": "to_years", "month": "to_months", "months": "to_months",
	"week": "to_weeks", "weeks": "to_weeks", "day": "to_days", "days": "to_days",
	"hour": "to_hours", "hours": "to_hours", "minute": "to_minutes", "minutes": "to_minutes",
	"second": "to_seconds", "seconds": "to_seconds", "millisecond": "to_milliseconds",
	"milliseconds": "to_milliseconds", "microsecond": "to_microseconds", "microseconds": "to_microseconds",
	"quarter": "to_quarters", "quarters": "to_quarters", "decade": "to_decades", "decades": "to_decades",
	"century": "to_centuries", "centuries": "to_centuries", "millennium": "to_millennia", "millennia": "to_millennia",
}

// rewriteIntervalExprs returns the edits of src (the statement toks, from byte base
// of text) that turn INTERVAL (expr) unit and INTERVAL n unit into calls.
func rewriteIntervalExprs(text string, toks []token, base int) []edit {
	var edits []edit
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].kind != pg.Token_INTERVAL {
			continue
		}
		// The count: a parenthesized expression, or a number.
		first, last := i+1, i+1
		switch toks[i+1].kind {
		case tokLParen:
			if last = closeParen(toks, i+1); last < 0 {
				continue
			}
		case pg.Token_ICONST, pg.Token_FCONST:
		default:
			continue
		}
		if last+1 >= len(toks) || !isWordToken(toks[last+1]) || isQuotedIdent(text, toks[last+1]) {
			continue
		}
		unit := toks[last+1]
		fn, ok := intervalUnits[strings.ToLower(text[unit.start:unit.end])]
		if !ok {
			continue
		}
		// INTERVAL ( … ) unit → to_unit( … ); INTERVAL 3 unit → to_unit(3).
		if toks[first].kind == tokLParen {
			edits = append(edits,
				edit{at: toks[i].start - base, end: toks[first].end - base, ins: fn + "(", from: -1},
				edit{at: toks[last].start - base, end: unit.end - base, ins: ")", from: -1})
		} else {
			edits = append(edits,
				edit{at: toks[i].start - base, end: toks[first].start - base, ins: fn + "(", from: -1},
				edit{at: toks[last].end - base, end: unit.end - base, ins: ")", from: -1})
		}
		i = last + 1
	}
	return edits
}
