package sql

import (
	"errors"
	"testing"

	"github.com/loredb/lore/errs"
)

// DuckDB's INTERVAL 14 DAY reads as INTERVAL '14' DAY, with the unit in the string
// where PostgreSQL's grammar has no qualifier for it; forms with no blank to turn
// into a quote, and a negative number, stay syntax errors.
func TestIntervalNumbers(t *testing.T) {
	for _, text := range []string{
		"SELECT INTERVAL 14 DAY",
		"SELECT d + INTERVAL 14 DAY FROM t",
		"SELECT (d + INTERVAL 3 MONTHS) FROM t",
		"SELECT INTERVAL 2 WEEK + INTERVAL 1\tday, interval 5\nminutes FROM t",
		"SELECT INTERVAL /* c */ 14 DAY",
	} {
		if _, err := Parse(text); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
	for _, bad := range []string{"SELECT INTERVAL/* c */14 DAY", "SELECT INTERVAL 2 WEEK", "SELECT INTERVAL -2 DAY FROM t"} {
		_, err := Parse(bad)
		var e *errs.Error
		if !errors.As(err, &e) || e.Code != errs.Syntax {
			t.Errorf("%q: %v, want a syntax error", bad, err)
		}
	}
}
