package lore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// An unknown function among grouped aggregates is reported as unknown, at its
// place, not as its argument missing from GROUP BY.
func TestUnknownFunctionInAGroupedSelect(t *testing.T) {
	e := open(t, lore.Options{})
	for _, sql := range []string{
		"SELECT g, nosuchagg(x) FROM (VALUES (1, 2)) t(g, x) GROUP BY g",
		"SELECT g, 1 + nosuchagg(x) FROM (VALUES (1, 2)) t(g, x) GROUP BY g",
		"SELECT g FROM (VALUES (1, 2)) t(g, x) GROUP BY g HAVING nosuchagg(x) > 1",
		"SELECT nosuchagg(x), count(*) FROM (VALUES (1, 2)) t(g, x)",
	} {
		_, err := e.Query(context.Background(), sql, nil)
		var le *errs.Error
		if !errors.As(err, &le) || le.Code != errs.Analysis || le.Message != "function nosuchagg does not exist" {
			t.Errorf("%s: error %v, want ANALYSIS_ERROR function nosuchagg does not exist", sql, err)
			continue
		}
		if want := strings.Index(sql, "nosuchagg"); le.Pos != want {
			t.Errorf("%s: error at %d, want %d", sql, le.Pos, want)
		}
	}
}
