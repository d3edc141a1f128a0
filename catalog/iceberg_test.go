package catalog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
)

// fixtureCatalog is pyiceberg's SQL catalog of the column_mapping fixture.
func fixtureCatalog(t testing.TB) string {
	t.Helper()
	return filepath.Join(shareddata.Dir(t), "iceberg", "duckdb-iceberg", "data", "persistent", "column_mapping", "catalog.sqlite")
}

func TestParseIcebergLocation(t *testing.T) {
	good := []struct {
		loc  string
		want IcebergRef
	}{
		{"sqlite:/a/cat.db#default.t", IcebergRef{File: "/a/cat.db", Namespace: "default", Table: "t"}},
		{"sqlite:rel/cat.db?catalog=my_catalog#a.b.c.t", IcebergRef{File: "rel/cat.db", Catalog: "my_catalog", Namespace: "a.b.c", Table: "t"}},
		{"lore:default.t", IcebergRef{Namespace: "default", Table: "t"}},
		{"lore:?catalog=x#ns.t", IcebergRef{Catalog: "x", Namespace: "ns", Table: "t"}},
	}
	for _, c := range good {
		got, ok, err := ParseIcebergLocation(c.loc)
		if err != nil || !ok || got != c.want {
			t.Errorf("%q: %+v %v %v, want %+v", c.loc, got, ok, err, c.want)
			continue
		}
		if back, _, err := ParseIcebergLocation(got.String()); err != nil || back != got {
			t.Errorf("%q renders as %q, which reads back as %+v (%v)", c.loc, got.String(), back, err)
		}
	}
	for _, loc := range []string{"/a/b", "s3://b/k", "a/sqlite:x", "lorem/ipsum", ""} {
		if _, ok, err := ParseIcebergLocation(loc); ok || err != nil {
			t.Errorf("%q: taken as a catalog location (%v)", loc, err)
		}
	}
	for _, loc := range []string{"sqlite:/a/cat.db", "sqlite:#ns.t", "sqlite:/c.db#t", "sqlite:/c.db#ns.", "sqlite:/c.db#.t",
		"sqlite:/c.db#a..b.t", "sqlite:/c.db?cat=x#ns.t", "sqlite:/c.db?catalog=#ns.t", "lore:t", "lore:x#ns.t",
		"lore:?catalog=a&b=c#ns.t", "lore:ns.\xff"} {
		if _, ok, err := ParseIcebergLocation(loc); !ok || errs.CodeOf(err) != errs.Analysis {
			t.Errorf("%q: ok %v, error %v, want an ANALYSIS_ERROR", loc, ok, err)
		}
	}
}

func TestIcebergMetadataLocationFromPyicebergCatalog(t *testing.T) {
	ctx := context.Background()
	file := fixtureCatalog(t)
	const want = "data/persistent/column_mapping/warehouse/default.db/my_table/metadata/00001-75643dae-a7a7-46ae-ab30-ea80d3793f3f.metadata.json"
	for _, catalogName := range []string{"", "my_catalog"} {
		got, err := IcebergMetadataLocation(ctx, IcebergRef{File: file, Catalog: catalogName, Namespace: "default", Table: "my_table"})
		if err != nil || got != want {
			t.Errorf("catalog %q: %q, %v; want %q", catalogName, got, err, want)
		}
	}
	missing := []struct {
		ref  IcebergRef
		code errs.Code
		says string
	}{
		{IcebergRef{File: file, Namespace: "default", Table: "nope"}, errs.SourceUnavailable, `no table "nope" in namespace "default"`},
		{IcebergRef{File: file, Namespace: "other", Table: "my_table"}, errs.SourceUnavailable, `no namespace "other"`},
		{IcebergRef{File: file, Catalog: "x", Namespace: "default", Table: "my_table"}, errs.SourceUnavailable, `no catalog named "x"`},
		{IcebergRef{File: filepath.Join(t.TempDir(), "absent.db"), Namespace: "default", Table: "t"}, errs.SourceUnavailable, "does not exist"},
		{IcebergRef{File: t.TempDir(), Namespace: "default", Table: "t"}, errs.SourceUnavailable, "is a directory"},
	}
	for _, c := range missing {
		_, err := IcebergMetadataLocation(ctx, c.ref)
		if errs.CodeOf(err) != c.code || err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%+v: %v, want %s saying %q", c.ref, err, c.code, c.says)
		}
	}
}

func TestIcebergCatalogFileNotSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	notSQLite := filepath.Join(dir, "cat.db")
	if err := os.WriteFile(notSQLite, []byte(strings.Repeat("this is no database; ", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, luPath := openTest(t) // a SQLite file that is not an Iceberg catalog: Lore's own has one, so drop it
	raw := rawDB(t, luPath)
	if _, err := raw.Exec(`DROP TABLE iceberg_tables`); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{notSQLite, empty, luPath} {
		_, err := IcebergMetadataLocation(ctx, IcebergRef{File: f, Namespace: "default", Table: "t"})
		if errs.CodeOf(err) != errs.CorruptSource {
			t.Errorf("%s: %v, want CORRUPT_SOURCE", filepath.Base(f), err)
		}
	}
}

// TestIcebergTablesLayout checks that migration 2 made the tables of the layout
// iceberg-go and pyiceberg use, with their columns and keys.
func TestIcebergTablesLayout(t *testing.T) {
	_, path := openTest(t)
	db := rawDB(t, path)
	cols := func(table string) string {
		rows, err := db.Query(`SELECT name, "notnull", pk FROM pragma_table_info(?) ORDER BY cid`, table)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var (
				name    string
				nn, key int
			)
			if err := rows.Scan(&name, &nn, &key); err != nil {
				t.Fatal(err)
			}
			s := name
			if nn != 0 {
				s += " notnull"
			}
			if key != 0 {
				s += " pk"
			}
			out = append(out, s)
		}
		return strings.Join(out, ", ")
	}
	if got, want := cols("iceberg_tables"), "catalog_name notnull pk, table_namespace notnull pk, table_name notnull pk, metadata_location, previous_metadata_location, iceberg_type"; got != want {
		t.Errorf("iceberg_tables: %s\nwant %s", got, want)
	}
	if got, want := cols("iceberg_namespace_properties"), "catalog_name notnull pk, namespace notnull pk, property_key notnull pk, property_value"; got != want {
		t.Errorf("iceberg_namespace_properties: %s\nwant %s", got, want)
	}
}

// TestIcebergMigrationOnVersion1 opens a catalog left at schema version 1 and checks that
// migration 2 brings the Iceberg tables, keeping ones another engine made meanwhile.
func TestIcebergMigrationOnVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	c, err := open(ctx, path, migrations[:1])
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// pyiceberg's layout before views: no iceberg_type.
	raw := rawDB(t, path)
	if _, err := raw.Exec(`CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL,
		table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000),
		PRIMARY KEY (catalog_name, table_namespace, table_name));
		INSERT INTO iceberg_tables VALUES ('py', 'ns', 't', '/x/v1.metadata.json', NULL)`); err != nil {
		t.Fatal(err)
	}
	c, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, _ := c.SchemaVersion(ctx); v != LatestSchemaVersion() {
		t.Fatalf("schema version %d, want %d", v, LatestSchemaVersion())
	}
	names := tableNames(t, raw)
	if !names["iceberg_namespace_properties"] {
		t.Errorf("iceberg_namespace_properties missing after migration 2: %v", names)
	}
	got, err := c.IcebergMetadataLocation(ctx, IcebergRef{Namespace: "ns", Table: "t"})
	if err != nil || got != "/x/v1.metadata.json" {
		t.Errorf("the other engine's table: %q, %v", got, err)
	}
	// A table registered into that layout is recorded without iceberg_type.
	_, _, err = c.CreateTable(ctx, Table{Name: "u", Location: "/y", Format: "iceberg", Columns: []Column{{Name: "a", Type: "BIGINT"}},
		Iceberg: &IcebergEntry{Namespace: "ns", MetadataLocation: "/y/metadata/v1.metadata.json"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.IcebergMetadataLocation(ctx, IcebergRef{Catalog: IcebergCatalogName, Namespace: "ns", Table: "u"}); err != nil || got != "/y/metadata/v1.metadata.json" {
		t.Errorf("registered table: %q, %v", got, err)
	}
}

func TestCreateTableRecordsIcebergTable(t *testing.T) {
	ctx := context.Background()
	c, path := openTest(t)
	def := func(name, ns, md string) Table {
		return Table{Name: name, Location: "/w/" + name, Format: "iceberg", Columns: []Column{{Name: "a", Type: "BIGINT"}},
			Iceberg: &IcebergEntry{Namespace: ns, MetadataLocation: md}}
	}
	if _, _, err := c.CreateTable(ctx, def("t", "default", "/w/t/metadata/v1.metadata.json"), false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.CreateTable(ctx, def("u", "a.b", "/w/u/metadata/v3.metadata.json"), false); err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[IcebergRef]string{
		{Namespace: "default", Table: "t"}:                          "/w/t/metadata/v1.metadata.json",
		{Catalog: IcebergCatalogName, Namespace: "a.b", Table: "u"}: "/w/u/metadata/v3.metadata.json",
	} {
		if got, err := c.IcebergMetadataLocation(ctx, ref); err != nil || got != want {
			t.Errorf("%+v: %q, %v; want %q", ref, got, err, want)
		}
	}
	// Other engines read the same rows from the file, with the namespace marked as theirs are.
	if got, err := IcebergMetadataLocation(ctx, IcebergRef{File: path, Namespace: "default", Table: "t"}); err != nil || got != "/w/t/metadata/v1.metadata.json" {
		t.Errorf("from the file: %q, %v", got, err)
	}
	var typ, exists string
	raw := rawDB(t, path)
	if err := raw.QueryRow(`SELECT iceberg_type FROM iceberg_tables WHERE table_name = 't'`).Scan(&typ); err != nil || typ != "TABLE" {
		t.Errorf("iceberg_type %q, %v", typ, err)
	}
	if err := raw.QueryRow(`SELECT property_value FROM iceberg_namespace_properties WHERE catalog_name = 'lore' AND namespace = 'a.b' AND property_key = 'exists'`).Scan(&exists); err != nil || exists != "true" {
		t.Errorf("namespace property %q, %v", exists, err)
	}

	// DROP TABLE leaves the row for other engines; registering the name again
	// replaces it, keeping the old pointer as the previous one.
	if _, err := c.DropTable(ctx, "t", false); err != nil {
		t.Fatal(err)
	}
	if got, err := c.IcebergMetadataLocation(ctx, IcebergRef{Namespace: "default", Table: "t"}); err != nil || got != "/w/t/metadata/v1.metadata.json" {
		t.Errorf("after DROP TABLE: %q, %v", got, err)
	}
	if _, _, err := c.CreateTable(ctx, def("t", "default", "/elsewhere/v1.metadata.json"), false); err != nil {
		t.Fatal(err)
	}
	var prev string
	if err := raw.QueryRow(`SELECT metadata_location || ' ' || previous_metadata_location FROM iceberg_tables
		WHERE catalog_name = 'lore' AND table_namespace = 'default' AND table_name = 't'`).Scan(&prev); err != nil ||
		prev != "/elsewhere/v1.metadata.json /w/t/metadata/v1.metadata.json" {
		t.Errorf("registered again: %q, %v", prev, err)
	}
	if _, _, err := c.CreateTable(ctx, def("v", "bad..ns", "/x"), false); errs.CodeOf(err) != errs.Analysis {
		t.Errorf("bad namespace: %v", err)
	}

	// A missing table and namespace in Lore's own catalog.
	if _, err := c.IcebergMetadataLocation(ctx, IcebergRef{Namespace: "default", Table: "zz"}); errs.CodeOf(err) != errs.SourceUnavailable {
		t.Errorf("missing table: %v", err)
	}
}
