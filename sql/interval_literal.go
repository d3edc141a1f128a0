package sql

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// intervalQualifiers are the units PostgreSQL's grammar takes after an interval
// string (INTERVAL '14' DAY); DuckDB also takes their plurals and other units.
var intervalQualifiers = map[string]bool{"year": true, "month": true, "day": true, "hour": true, "minute": true, "second": true}

// rewriteIntervalNumbers makes DuckDB's interval literal with an unquoted integer
// (INTERVAL 14 DAY, INTERVAL 3 MONTHS) parse: PostgreSQL's grammar wants a string
// there. The blanks around the number become quotes, at equal length:
//
//	INTERVAL 14 DAY     ->  INTERVAL'14'DAY
//	INTERVAL 14 DAYS x  ->  INTERVAL'14 DAYS'x   (the unit inside the string)
//	INTERVAL 14 DAYS)   ->  INTERVAL'14'DAY )    (a plural qualifier made singular)
//
// A form with no blank to spare (a comment or nothing between the words, another
// unit directly before a parenthesis) is left to the grammar, which refuses it.
func rewriteIntervalNumbers(text string, toks []token, src []byte, base int) {
	for i := 0; i+2 < len(toks); i++ {
		kw, num, unit := toks[i], toks[i+1], toks[i+2]
		if !is(text, kw, "interval") || num.kind != pg.Token_ICONST || !isWordToken(unit) || isQuotedIdent(text, unit) {
			continue
		}
		if !isBlank(text[num.start-1]) || num.start-1 < kw.end || !isBlank(text[num.end]) || num.end >= unit.start {
			continue
		}
		u := strings.ToLower(text[unit.start:unit.end])
		plural := strings.HasSuffix(u, "s") && intervalQualifiers[strings.TrimSuffix(u, "s")]
		switch {
		case intervalQualifiers[u]:
			src[num.start-1-base] = '\''
			src[num.end-base] = '\''
		case unit.end < len(text) && unit.end-base < len(src) && isBlank(text[unit.end]):
			src[num.start-1-base] = '\''
			src[unit.end-base] = '\''
		case plural:
			src[num.start-1-base] = '\''
			src[num.end-base] = '\''
			src[unit.end-1-base] = ' '
		}
	}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
