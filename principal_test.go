package lore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/gen"
)

// TestRoles: a reader runs queries over registered tables and reads what describes
// them; statements that change the catalog or what it learnt are FORBIDDEN to it, as
// is reading a location by path outside the allowed prefixes. The process itself (no
// principal) and an admin may do all of it. The query log names who ran what.
func TestRoles(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir, other := filepath.Join(root, "shared", "events"), filepath.Join(root, "private", "events")
	for _, d := range []string{dir, other} {
		if err := gen.Events(ctx, gen.EventsOptions{Rows: 100, Files: 1, Out: d, Seed: 1}); err != nil {
			t.Fatal(err)
		}
	}
	e := open(t, lore.Options{NoAutoRefresh: true, AllowPaths: []string{filepath.Join(root, "shared")}})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	reader := lore.WithPrincipal(ctx, lore.Principal{Name: "ana", Role: lore.RoleReader})
	admin := lore.WithPrincipal(ctx, lore.Principal{Name: "root", Role: lore.RoleAdmin})

	for _, q := range []string{
		"SELECT count(*) FROM ev", "SHOW TABLES", "DESCRIBE ev", "SHOW CREATE TABLE ev",
		fmt.Sprintf("SELECT count(*) FROM '%s'", dir),
		fmt.Sprintf("SELECT count(*) FROM read_parquet('%s/*.parquet')", dir),
	} {
		res, err := e.Query(reader, q, nil)
		if err != nil {
			t.Errorf("a reader: %s: %v", q, err)
			continue
		}
		if res.Record.Subject != "ana" {
			t.Errorf("%s: the record's subject is %q", q, res.Record.Subject)
		}
	}
	for _, q := range []string{
		"ANALYZE ev", "DROP TABLE ev", "ALTER TABLE ev SET CLUSTERED BY (user_id)", "OPTIMIZE ev",
		fmt.Sprintf("CREATE TABLE x WITH (location = '%s', format = 'parquet')", dir),
		fmt.Sprintf("SELECT count(*) FROM '%s'", other),
		fmt.Sprintf("SELECT count(*) FROM '%s/../../private/events'", dir),
		fmt.Sprintf("SELECT count(*) FROM delta_scan('%s')", other),
	} {
		if _, err := e.Query(reader, q, nil); errs.CodeOf(err) != errs.Forbidden {
			t.Errorf("a reader: %s: %v, want FORBIDDEN", q, err)
		}
	}
	for _, c := range []context.Context{admin, ctx} {
		if _, err := e.Query(c, fmt.Sprintf("SELECT count(*) FROM '%s'", other), nil); err != nil {
			t.Errorf("an admin's path scan: %v", err)
		}
		if _, err := e.Query(c, "ANALYZE ev", nil); err != nil {
			t.Errorf("an admin's ANALYZE: %v", err)
		}
	}
}
