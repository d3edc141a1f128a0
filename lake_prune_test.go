package lore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/types"
)

// TestLakePruningKeepsEveryRow is the differential guarantee of skipping over the
// real Delta and Iceberg fixtures: for every column, a filter at its least, middle and
// greatest values counts the same rows as the same test inside an aggregate, which
// nothing prunes by. It would catch a file, manifest, row group or page skipped by
// metadata that holds a matching row (a bound decoded wrongly, a partition transform
// ranged wrongly, a truncated string taken for a bound).
func TestLakePruningKeepsEveryRow(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of statements; the full run checks them")
	}
	e := open(t, lore.Options{NoAutoRefresh: true})
	var tables []string
	deltaDir, deltaFacts := deltaFacts(t)
	for _, f := range deltaFacts {
		if !strings.HasPrefix(f.Note, "LOG-ONLY") {
			tables = append(tables, fmt.Sprintf("delta_scan(%s)", types.QuoteString(filepath.Join(deltaDir, f.Table))))
		}
	}
	icebergDir, icebergFacts := icebergFacts(t)
	for _, f := range icebergFacts {
		if _, ok := unread[f.Table]; !ok && !caseBlind[f.Table] {
			tables = append(tables, fmt.Sprintf("iceberg_scan(%s)", types.QuoteString(filepath.Join(icebergDir, f.Table, f.MetadataFile))))
		}
	}
	ctx := context.Background()
	checked, skipped := 0, 0
	for _, from := range tables {
		res, err := e.Query(ctx, "SELECT * FROM "+from+" LIMIT 0", scanned)
		if err != nil {
			continue // a table the facts say cannot be read: TestDeltaTablesMatchTheirFacts checks it
		}
		for _, f := range res.Schema.Fields() {
			if types.IsNested(f.Type) || (types.IsBinary(f.Type) && !types.IsString(f.Type)) {
				continue
			}
			c := types.QuoteIdent(f.Name)
			n := run(t, e, fmt.Sprintf("SELECT count(%s) // 2 FROM %s", c, from), scanned)
			vals := run(t, e, fmt.Sprintf("SELECT min(%s)::VARCHAR, (SELECT %s::VARCHAR FROM %s WHERE %s IS NOT NULL ORDER BY %s LIMIT 1 OFFSET %s), max(%s)::VARCHAR FROM %s",
				c, c, from, c, c, text(n, 0, 0), c, from), scanned)
			for k := range 3 {
				v := text(vals, 0, k)
				if v == "None" || v == "<no row>" {
					continue
				}
				lit := fmt.Sprintf("CAST(%s AS %s)", types.QuoteString(v), types.Name(f.Type))
				for _, op := range []string{"=", "<", "<=", ">", ">=", "<>"} {
					cond := fmt.Sprintf("%s %s %s", c, op, lit)
					pruned, err := e.Query(ctx, fmt.Sprintf("SELECT count(*) FROM %s WHERE %s", from, cond), scanned)
					if err != nil {
						t.Errorf("%s WHERE %s: %v", from, cond, err)
						continue
					}
					all := run(t, e, fmt.Sprintf("SELECT count(CASE WHEN %s THEN 1 END) FROM %s", cond, from), scanned)
					if p, a := text(pruned, 0, 0), text(all, 0, 0); p != a {
						t.Errorf("%s WHERE %s: %s rows, but %s match", from, cond, p, a)
					}
					checked++
					for _, sc := range pruned.Record.Scans {
						if sc.FilesSkipped+sc.FilesPrunedByPartition+sc.RowGroupsPruned > 0 {
							skipped++
							break
						}
					}
				}
			}
		}
	}
	if checked == 0 || skipped == 0 {
		t.Fatalf("%d filters checked, %d of them skipping something", checked, skipped)
	}
	t.Logf("%d filters over %d tables, %d of them skipping files or row groups", checked, len(tables), skipped)
}
