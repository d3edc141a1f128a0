package lore_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/types"
)

// deltaFact is one table of the Delta fixtures' facts.json: what an independent
// reader found in it.
type deltaFact struct {
	Table          string   `json:"table"`
	Version        int64    `json:"version"`
	Rows           int64    `json:"rows"`
	Note           string   `json:"note"`
	ColumnFacts    []string `json:"column_facts"`
	LiveFiles      int      `json:"live_files"`
	RowsPerVersion [][]any  `json:"rows_per_version"`
}

func deltaFacts(t *testing.T) (string, []deltaFact) {
	t.Helper()
	dir := filepath.Join(shareddata.Dir(t), "delta")
	b, err := os.ReadFile(filepath.Join(dir, "facts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var facts []deltaFact
	if err := json.Unmarshal(b, &facts); err != nil {
		t.Fatal(err)
	}
	return dir, facts
}

// columnFact is "name: min=X max=Y non-null=N" of facts.json.
type columnFact struct{ name, min, max, nonNull string }

func parseColumnFact(t *testing.T, s string) columnFact {
	t.Helper()
	i := strings.LastIndex(s, ": min=")
	j := strings.LastIndex(s, " max=")
	k := strings.LastIndex(s, " non-null=")
	if i < 0 || j < i || k < j {
		t.Fatalf("unreadable fact %q", s)
	}
	return columnFact{name: s[:i], min: s[i+len(": min=") : j], max: s[j+len(" max=") : k], nonNull: s[k+len(" non-null="):]}
}

// text renders a result cell as the facts print values: NULL as None.
func text(res *lore.Result, r, c int) string {
	for _, b := range res.Batches {
		if r < int(b.NumRows()) {
			v := types.ValueAt(b.Column(c), r)
			if v.Null {
				return "None"
			}
			return v.String()
		}
		r -= int(b.NumRows())
	}
	return "<no row>"
}

// TestDeltaTablesMatchTheirFacts reads every Delta fixture at its latest version and
// checks the rows, and per column the bounds and non-NULL counts, against what an
// independent reader of the protocol found (facts.json).
func TestDeltaTablesMatchTheirFacts(t *testing.T) {
	dir, facts := deltaFacts(t)
	e := open(t, lore.Options{})
	for i, f := range facts {
		t.Run(f.Table, func(t *testing.T) {
			name := fmt.Sprintf("d%d", i)
			loc := filepath.Join(dir, f.Table)
			query(t, e, fmt.Sprintf("CREATE TABLE %s WITH (location = %s, format = 'delta')", name, types.QuoteString(loc)))
			if strings.HasPrefix(f.Note, "LOG-ONLY") {
				// Its data files were never there: the log alone is read (by CREATE
				// TABLE above and source/delta's TestLogOnlyTables).
				return
			}
			res := query(t, e, "SELECT count(*) FROM "+name)
			if got := cell(res, 0, 0); got != fmt.Sprint(f.Rows) {
				t.Errorf("count(*) = %s, want %d", got, f.Rows)
			}
			for _, s := range f.ColumnFacts {
				cf := parseColumnFact(t, s)
				col := types.QuoteIdent(cf.name)
				res := query(t, e, fmt.Sprintf("SELECT CAST(min(%s) AS VARCHAR), CAST(max(%s) AS VARCHAR), count(%s) FROM %s", col, col, col, name))
				if got := [3]string{text(res, 0, 0), text(res, 0, 1), text(res, 0, 2)}; got != [3]string{cf.min, cf.max, cf.nonNull} {
					t.Errorf("%s: min, max, non-null = %q, want %q", cf.name, got, [3]string{cf.min, cf.max, cf.nonNull})
				}
			}
		})
	}
}
