package lore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// A statement run with expected versions reads its tables only at those versions:
// SOURCE_CHANGED once a file lands, whether the table is read, joined or only named,
// and a result-cache hit is no way around it.
func TestExpectedVersions(t *testing.T) {
	dir := events(t, 2_000, 2, 500, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	query(t, e, fmt.Sprintf("CREATE TABLE ev2 WITH (location = '%s', format = 'parquet')", dir))
	v, err := e.CurrentVersion(context.Background(), "ev")
	if err != nil {
		t.Fatal(err)
	}
	at := func(versions map[string]string, sql string) error {
		_, err := e.Query(lore.WithExpectedVersions(context.Background(), versions), sql, nil)
		return err
	}
	digest := v.SourceVersion.IdentitySHA256
	const scan = "SELECT sum(amount) FROM ev"
	for range 2 { // the second is a cache hit
		if err := at(map[string]string{"ev": digest}, scan); err != nil {
			t.Fatalf("the current version: %v", err)
		}
	}
	// A file lands (a copy of one under another name).
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "landed.parquet"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{scan, "SELECT count(*) FROM ev2 JOIN ev USING (user_id)", "SELECT 1", "ANALYZE ev2"} {
		if err := at(map[string]string{"EV": `"` + digest + `"`}, sql); errs.CodeOf(err) != errs.SourceChanged {
			t.Errorf("%s after a landing: %v", sql, err)
		}
	}
	if err := at(map[string]string{"nope": digest}, "SELECT 1"); errs.CodeOf(err) != errs.TableNotFound {
		t.Errorf("an unknown table: %v", err)
	}
	now, _ := e.CurrentVersion(context.Background(), "ev")
	if err := at(map[string]string{"ev": now.SourceVersion.IdentitySHA256}, scan); err != nil {
		t.Errorf("the new version: %v", err)
	}
}
