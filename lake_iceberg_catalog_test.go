package lore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/types"
)

// columnMapping is the fixture table pyiceberg wrote through its SQL catalog, and that
// catalog's file.
func columnMapping(t *testing.T) (table, catalogFile string) {
	t.Helper()
	dir := filepath.Join(shareddata.Dir(t), "iceberg", "duckdb-iceberg", "data", "persistent", "column_mapping")
	return filepath.Join(dir, "warehouse", "default.db", "my_table"), filepath.Join(dir, "catalog.sqlite")
}

// TestIcebergFromSQLiteCatalog reads the fixture's table through pyiceberg's SQL catalog
// (its metadata location is relative to the directory above the catalog's) and checks
// the rows DuckDB's test expects.
func TestIcebergFromSQLiteCatalog(t *testing.T) {
	_, file := columnMapping(t)
	e := open(t, lore.Options{})
	query(t, e, "CREATE TABLE cm WITH (location = "+types.QuoteString("sqlite:"+file+"#default.my_table")+", format = 'iceberg')")
	query(t, e, "CREATE TABLE cm2 WITH (location = "+types.QuoteString("sqlite:"+file+"?catalog=my_catalog#default.my_table")+")")
	for _, name := range []string{"cm", "cm2"} {
		res := query(t, e, "SELECT id, name, age FROM "+name+" ORDER BY id")
		var got []string
		for r := 0; r < 3; r++ {
			got = append(got, cell(res, r, 0)+"|"+text(res, r, 1)+"|"+cell(res, r, 2))
		}
		if want := "1|Alice|25 2|Bob|30 3|Charlie|35"; strings.Join(got, " ") != want {
			t.Errorf("%s: rows %q, want %q", name, got, want)
		}
	}
	for _, sql := range []string{
		"SELECT count(*) FROM iceberg_scan(" + types.QuoteString("sqlite:"+file+"#default.my_table") + ")",
		"SELECT count(*) FROM " + types.QuoteString("sqlite:"+file+"#default.my_table"),
		"SELECT count(*) FROM iceberg_scan(" + types.QuoteString("sqlite:"+file+"#default.my_table") + ", snapshot_from_id => 6154553663017965981)",
	} {
		if got := cell(query(t, e, sql), 0, 0); got != "3" {
			t.Errorf("%s = %s, want 3", sql, got)
		}
	}
	res := query(t, e, "SHOW CREATE TABLE cm")
	if s := text(res, 0, 0); !strings.Contains(s, "sqlite:"+file+"#default.my_table") {
		t.Errorf("SHOW CREATE TABLE: %s", s)
	}
}

// TestIcebergCommitThroughLoresCatalog registers a table by path, which records it in
// Lore's catalog as an Iceberg SQL catalog; reads it through that catalog; commits a
// new metadata file there as an Iceberg SQL catalog commit does; and checks that the
// next statement reads the new snapshot while the table registered by its first
// metadata file does not move.
func TestIcebergCommitThroughLoresCatalog(t *testing.T) {
	ctx := context.Background()
	table, _ := columnMapping(t)
	v0 := filepath.Join(table, "metadata", "00000-5d9111ed-e56c-4ceb-9040-09d3be71926b.metadata.json")
	v1 := filepath.Join(table, "metadata", "00001-75643dae-a7a7-46ae-ab30-ea80d3793f3f.metadata.json")
	home := t.TempDir()
	e := open(t, lore.Options{Home: home})
	query(t, e, "CREATE TABLE first WITH (location = "+types.QuoteString(v0)+", format = 'iceberg', iceberg_namespace = 'lake.raw')")
	query(t, e, "CREATE TABLE live WITH (location = 'lore:lake.raw.first', format = 'iceberg')")
	count := func(name string) string { return cell(query(t, e, "SELECT count(*) FROM "+name), 0, 0) }
	if count("first") != "0" || count("live") != "0" {
		t.Fatalf("before the commit: %s and %s rows, want 0", count("first"), count("live"))
	}

	detail := func(name string) (snapshot, version string) {
		res := query(t, e, "DESCRIBE DETAIL "+name)
		return text(res, 0, 8), text(res, 0, 12)
	}
	_, before := detail("live")

	// Another writer commits: the catalog's pointer moves from v0 to v1.
	other, err := catalog.Open(ctx, filepath.Join(home, "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ref := catalog.IcebergRef{Namespace: "lake.raw", Table: "first"}
	if err := other.CommitIcebergMetadata(ctx, ref, v0, v1); err != nil {
		t.Fatal(err)
	}
	if got := count("live"); got != "3" {
		t.Errorf("after the commit: %s rows, want 3", got)
	}
	if snap, after := detail("live"); snap != "6154553663017965981" || after == before {
		t.Errorf("after the commit: snapshot %s, source version %s (before %s)", snap, after, before)
	}
	if got := count("first"); got != "0" {
		t.Errorf("the table registered by its metadata file moved: %s rows", got)
	}
	// A commit from a pointer that has moved is refused.
	if err := other.CommitIcebergMetadata(ctx, ref, v0, v1); errs.CodeOf(err) != errs.SourceChanged {
		t.Errorf("a stale commit: %v", err)
	}
}

func TestIcebergCatalogErrors(t *testing.T) {
	_, file := columnMapping(t)
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not SQLite at all ", 64)), 0o644); err != nil {
		t.Fatal(err)
	}
	e := open(t, lore.Options{})
	cases := []struct {
		loc  string
		code errs.Code
		says string
	}{
		{"sqlite:" + filepath.Join(dir, "absent.db") + "#default.t", errs.SourceUnavailable, "does not exist"},
		{"sqlite:" + file + "#default.nope", errs.SourceUnavailable, `no table "nope"`},
		{"sqlite:" + file + "#elsewhere.my_table", errs.SourceUnavailable, `no namespace "elsewhere"`},
		{"sqlite:" + file + "?catalog=other#default.my_table", errs.SourceUnavailable, `no catalog named "other"`},
		{"sqlite:" + junk + "#default.t", errs.CorruptSource, "not a SQLite database"},
		{"sqlite:" + file, errs.Analysis, "#<namespace>.<table>"},
		{"lore:default.nothing", errs.SourceUnavailable, `no namespace "default"`},
	}
	for _, c := range cases {
		_, err := e.Query(context.Background(), "CREATE TABLE t WITH (location = "+types.QuoteString(c.loc)+", format = 'iceberg')", nil)
		if errs.CodeOf(err) != c.code || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want %s saying %q", c.loc, err, c.code, c.says)
		}
	}
	for _, sql := range []string{
		"CREATE TABLE t WITH (location = " + types.QuoteString("sqlite:"+file+"#default.my_table") + ", format = 'parquet')",
		"CREATE TABLE t WITH (location = " + types.QuoteString("sqlite:"+file+"#default.my_table") + ", iceberg_namespace = 'x')",
		"CREATE TABLE t WITH (location = '/tmp/x.parquet', iceberg_namespace = 'x')",
		"CREATE TABLE t WITH (location = '/tmp/x', format = 'iceberg', iceberg_namespace = 'a..b')",
	} {
		if _, err := e.Query(context.Background(), sql, nil); errs.CodeOf(err) != errs.Analysis {
			t.Errorf("%s: %v, want ANALYSIS_ERROR", sql, err)
		}
	}
}
