package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loredb/lore/errs"
)

func sampleTable(name string) Table {
	return Table{
		Name:     name,
		Location: "/lake/" + name,
		Format:   "parquet",
		Columns: []Column{
			{Name: "id", Type: "BIGINT"},
			{Name: "ts", Type: "TIMESTAMP WITH TIME ZONE"},
			{Name: "user", Type: "VARCHAR"},
			{Name: "price", Type: "DECIMAL(10,2)"},
			{Name: "day", Type: "DATE", Partition: true},
		},
		ClusteredBy: []string{"ts", "id"},
		Bloom:       []string{"user"},
	}
}

// sameDefinition compares what the caller defines (not ID or times).
func sameDefinition(t *testing.T, got, want Table) {
	t.Helper()
	if got.Name != want.Name || got.Location != want.Location || got.Format != want.Format {
		t.Errorf("got %q %q %q, want %q %q %q", got.Name, got.Location, got.Format, want.Name, want.Location, want.Format)
	}
	if !reflect.DeepEqual(got.Columns, want.Columns) {
		t.Errorf("columns %+v, want %+v", got.Columns, want.Columns)
	}
	if !reflect.DeepEqual(got.ClusteredBy, want.ClusteredBy) {
		t.Errorf("clustered_by %q, want %q", got.ClusteredBy, want.ClusteredBy)
	}
	if !reflect.DeepEqual(got.Bloom, want.Bloom) {
		t.Errorf("bloom %q, want %q", got.Bloom, want.Bloom)
	}
}

func lastEvent(t *testing.T, c *Catalog) AuditEvent {
	t.Helper()
	evs, err := c.AuditEvents(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("%d audit events, want 1", len(evs))
	}
	return evs[0]
}

func countEvents(t *testing.T, c *Catalog) int {
	t.Helper()
	evs, err := c.AuditEvents(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

func TestCreateGetListDrop(t *testing.T) {
	ctx := context.Background()
	c, _ := openTest(t)
	before := time.Now().Add(-time.Second)

	want := sampleTable("events")
	got, created, err := c.CreateTable(WithActor(ctx, "alice"), want, false)
	if err != nil || !created {
		t.Fatalf("CreateTable: %v, created %v", err, created)
	}
	if got.ID <= 0 || got.CreatedAt.Before(before) || !got.CreatedAt.Equal(got.UpdatedAt) {
		t.Errorf("ID %d, CreatedAt %v, UpdatedAt %v", got.ID, got.CreatedAt, got.UpdatedAt)
	}
	sameDefinition(t, got, want)

	read, err := c.Table(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	sameDefinition(t, read, want)
	if read.ID != got.ID || !read.CreatedAt.Equal(got.CreatedAt) {
		t.Errorf("read back ID %d at %v, created ID %d at %v", read.ID, read.CreatedAt, got.ID, got.CreatedAt)
	}

	ev := lastEvent(t, c)
	if ev.Action != "create_table" || ev.TableName != "events" || ev.Actor != "alice" {
		t.Errorf("audit event %+v", ev)
	}
	var detail map[string]any
	if err := json.Unmarshal([]byte(ev.Detail), &detail); err != nil {
		t.Fatalf("audit detail %q: %v", ev.Detail, err)
	}
	if detail["location"] != "/lake/events" || detail["format"] != "parquet" {
		t.Errorf("audit detail %v", detail)
	}

	// A second table; the list is sorted by name.
	if _, _, err := c.CreateTable(ctx, Table{Name: "aardvark", Location: "s3://b/a", Format: "Delta"}, false); err != nil {
		t.Fatal(err)
	}
	list, err := c.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "aardvark" || list[1].Name != "events" {
		t.Fatalf("Tables: %+v", list)
	}
	if list[0].Format != "delta" {
		t.Errorf("format stored as %q, want it lower-cased", list[0].Format)
	}
	if list[0].Columns != nil || list[0].ClusteredBy != nil {
		t.Errorf("a table with no columns lists %+v", list[0])
	}
	sameDefinition(t, list[1], want)
	if ev := lastEvent(t, c); ev.Actor != DefaultActor {
		t.Errorf("actor %q without WithActor, want %q", ev.Actor, DefaultActor)
	}

	dropped, err := c.DropTable(ctx, "events", false)
	if err != nil || !dropped {
		t.Fatalf("DropTable: %v, %v", err, dropped)
	}
	if ev := lastEvent(t, c); ev.Action != "drop_table" || ev.TableName != "events" {
		t.Errorf("audit event after drop %+v", ev)
	}
	if _, err := c.Table(ctx, "events"); !errors.Is(err, errs.ErrTableNotFound) {
		t.Errorf("Table after drop: %v, want TABLE_NOT_FOUND", err)
	}
	list, _ = c.Tables(ctx)
	if len(list) != 1 {
		t.Errorf("after drop Tables has %d entries", len(list))
	}

	// Ids are never reused.
	again, _, err := c.CreateTable(ctx, want, false)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID <= got.ID {
		t.Errorf("re-created table has id %d, not above the dropped table's %d", again.ID, got.ID)
	}
}

func TestIfExistsIfNotExists(t *testing.T) {
	ctx := context.Background()
	c, _ := openTest(t)
	first, _, err := c.CreateTable(ctx, sampleTable("t"), false)
	if err != nil {
		t.Fatal(err)
	}
	n := countEvents(t, c)

	other := sampleTable("t")
	other.Location = "/elsewhere"
	_, created, err := c.CreateTable(ctx, other, false)
	if !errors.Is(err, errs.ErrAnalysis) || created || !strings.Contains(err.Error(), `table "t" already exists`) {
		t.Errorf("duplicate create: %v, created %v", err, created)
	}
	existing, created, err := c.CreateTable(ctx, other, true)
	if err != nil || created {
		t.Fatalf("IF NOT EXISTS: %v, created %v", err, created)
	}
	if existing.ID != first.ID || existing.Location != "/lake/t" {
		t.Errorf("IF NOT EXISTS returned %+v, want the existing table", existing)
	}
	if got := countEvents(t, c); got != n {
		t.Errorf("refused and no-op creates wrote %d audit events", got-n)
	}

	dropped, err := c.DropTable(ctx, "missing", false)
	if !errors.Is(err, errs.ErrTableNotFound) || dropped || !strings.Contains(err.Error(), `table "missing" does not exist`) {
		t.Errorf("drop missing: %v, dropped %v", err, dropped)
	}
	dropped, err = c.DropTable(ctx, "missing", true)
	if err != nil || dropped {
		t.Errorf("drop missing IF EXISTS: %v, dropped %v", err, dropped)
	}
	if got := countEvents(t, c); got != n {
		t.Errorf("drops that changed nothing wrote %d audit events", got-n)
	}
	if _, err := c.Table(ctx, "missing"); !errors.Is(err, errs.ErrTableNotFound) {
		t.Errorf("Table(missing): %v", err)
	}
}

func TestBadDefinitionsRefused(t *testing.T) {
	ctx := context.Background()
	c, _ := openTest(t)
	with := func(f func(*Table)) Table {
		tb := sampleTable("t")
		f(&tb)
		return tb
	}
	cases := []struct {
		name string
		def  Table
		want string
	}{
		{"empty name", with(func(t *Table) { t.Name = "" }), "table name is empty"},
		{"NUL in name", with(func(t *Table) { t.Name = "a\x00b" }), "NUL byte"},
		{"invalid UTF-8 name", with(func(t *Table) { t.Name = "a\xffb" }), "not valid UTF-8"},
		{"too long name", with(func(t *Table) { t.Name = strings.Repeat("n", MaxNameLength+1) }), "the limit is 1024"},
		{"no location", with(func(t *Table) { t.Location = "" }), `table "t" has no location`},
		{"unknown format", with(func(t *Table) { t.Format = "csv" }), `unknown format "csv"; expected one of parquet, delta, iceberg`},
		{"empty column name", with(func(t *Table) { t.Columns[1].Name = "" }), "column 2 of table"},
		{"duplicate column", with(func(t *Table) { t.Columns[2].Name = "id" }), `two columns named "id"`},
		{"column without type", with(func(t *Table) { t.Columns[0].Type = "" }), `column "id" of table "t" has no type`},
		{"unknown clustered_by column", with(func(t *Table) { t.ClusteredBy = []string{"id", "nope"} }),
			`clustered_by names column "nope", which table "t" does not have`},
		{"duplicate clustered_by column", with(func(t *Table) { t.ClusteredBy = []string{"id", "ts", "id"} }),
			`clustered_by lists column "id" more than once`},
		{"unknown bloom column", with(func(t *Table) { t.Bloom = []string{"ID"} }),
			`bloom names column "ID", which table "t" does not have`},
		{"duplicate bloom column", with(func(t *Table) { t.Bloom = []string{"user", "user"} }),
			`bloom lists column "user" more than once`},
		{"partition column in bloom", with(func(t *Table) { t.Bloom = []string{"day"} }),
			`bloom names partition column "day"`},
		{"partition column in clustered_by", with(func(t *Table) { t.ClusteredBy = []string{"day"} }),
			`clustered_by names partition column "day"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, created, err := c.CreateTable(ctx, tc.def, false)
			if err == nil || created {
				t.Fatalf("accepted: created %v", created)
			}
			if !errors.Is(err, errs.ErrAnalysis) {
				t.Errorf("code %s, want ANALYSIS_ERROR: %v", errs.CodeOf(err), err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
	if list, err := c.Tables(ctx); err != nil || len(list) != 0 {
		t.Errorf("after refused creates: %d tables, %v", len(list), err)
	}
	if n := countEvents(t, c); n != 0 {
		t.Errorf("refused creates wrote %d audit events", n)
	}
}

func TestUnusualNamesRoundTrip(t *testing.T) {
	ctx := context.Background()
	c, _ := openTest(t)
	names := []string{
		`it's`,
		`"quoted"`,
		`x'); DROP TABLE tables; --`,
		`Mixed Case`,
		`ünïcødé 表 🚀`,
		strings.Repeat("long", MaxNameLength/4), // exactly the limit
		`back\slash`,
		"tab\tand\nnewline",
	}
	for _, name := range names {
		def := Table{
			Name:        name,
			Location:    "/lake/" + name,
			Format:      "iceberg",
			Columns:     []Column{{Name: name, Type: "VARCHAR"}, {Name: "k", Type: "INTEGER"}},
			ClusteredBy: []string{name},
			Bloom:       []string{"k", name},
		}
		if _, _, err := c.CreateTable(ctx, def, false); err != nil {
			t.Fatalf("CreateTable(%q): %v", name, err)
		}
		got, err := c.Table(ctx, name)
		if err != nil {
			t.Fatalf("Table(%q): %v", name, err)
		}
		sameDefinition(t, got, def)
	}
	// Names are exact: case and quotes distinguish tables.
	if _, err := c.Table(ctx, "mixed case"); !errors.Is(err, errs.ErrTableNotFound) {
		t.Errorf("lookup is not case-sensitive: %v", err)
	}
	list, err := c.Tables(ctx)
	if err != nil || len(list) != len(names) {
		t.Fatalf("Tables: %d, %v", len(list), err)
	}
	for i := 1; i < len(list); i++ {
		if list[i-1].Name >= list[i].Name {
			t.Errorf("Tables not sorted: %q before %q", list[i-1].Name, list[i].Name)
		}
	}
	for _, name := range names {
		if ok, err := c.DropTable(ctx, name, false); err != nil || !ok {
			t.Errorf("DropTable(%q): %v", name, err)
		}
	}
	if v, err := c.SchemaVersion(ctx); err != nil || v != LatestSchemaVersion() {
		t.Errorf("schema after hostile names: %d, %v", v, err)
	}
}

func TestSetLayout(t *testing.T) {
	ctx := context.Background()
	c, _ := openTest(t)
	created, _, err := c.CreateTable(ctx, sampleTable("t"), false)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // UpdatedAt has millisecond resolution

	if err := c.SetClusteredBy(WithActor(ctx, "bob"), "t", []string{"user", "ts"}); err != nil {
		t.Fatal(err)
	}
	got, _ := c.Table(ctx, "t")
	if !reflect.DeepEqual(got.ClusteredBy, []string{"user", "ts"}) || !reflect.DeepEqual(got.Bloom, []string{"user"}) {
		t.Errorf("after SetClusteredBy: clustered_by %q bloom %q", got.ClusteredBy, got.Bloom)
	}
	if !got.UpdatedAt.After(created.UpdatedAt) || !got.CreatedAt.Equal(created.CreatedAt) {
		t.Errorf("UpdatedAt %v (was %v), CreatedAt %v (was %v)", got.UpdatedAt, created.UpdatedAt, got.CreatedAt, created.CreatedAt)
	}
	ev := lastEvent(t, c)
	var detail struct {
		Set      string
		Old, New []string
	}
	if err := json.Unmarshal([]byte(ev.Detail), &detail); err != nil {
		t.Fatal(err)
	}
	if ev.Action != "alter_table" || ev.Actor != "bob" || detail.Set != "clustered_by" ||
		!reflect.DeepEqual(detail.Old, []string{"ts", "id"}) || !reflect.DeepEqual(detail.New, []string{"user", "ts"}) {
		t.Errorf("audit event %+v detail %+v", ev, detail)
	}

	if err := c.SetBloom(ctx, "t", []string{"id", "price"}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetClusteredBy(ctx, "t", nil); err != nil { // SET CLUSTERED BY ()
		t.Fatal(err)
	}
	got, _ = c.Table(ctx, "t")
	if got.ClusteredBy != nil || !reflect.DeepEqual(got.Bloom, []string{"id", "price"}) {
		t.Errorf("clustered_by %q bloom %q", got.ClusteredBy, got.Bloom)
	}
	if ev := lastEvent(t, c); !strings.Contains(ev.Detail, `"new":[]`) {
		t.Errorf("clearing detail %s", ev.Detail)
	}

	n := countEvents(t, c)
	err = c.SetBloom(ctx, "t", []string{"id", "id"})
	if !errors.Is(err, errs.ErrAnalysis) || !strings.Contains(err.Error(), `"id" more than once`) {
		t.Errorf("duplicate bloom: %v", err)
	}
	err = c.SetClusteredBy(ctx, "t", []string{"ghost"})
	if !errors.Is(err, errs.ErrAnalysis) || !strings.Contains(err.Error(), `"ghost"`) {
		t.Errorf("unknown clustered_by column: %v", err)
	}
	err = c.SetClusteredBy(ctx, "nope", []string{"id"})
	if !errors.Is(err, errs.ErrTableNotFound) {
		t.Errorf("SetClusteredBy on a missing table: %v", err)
	}
	if got := countEvents(t, c); got != n {
		t.Errorf("refused alters wrote %d audit events", got-n)
	}
	after, _ := c.Table(ctx, "t")
	if !reflect.DeepEqual(after.Bloom, []string{"id", "price"}) {
		t.Errorf("a refused alter changed the layout: %q", after.Bloom)
	}
}

func TestDropCascades(t *testing.T) {
	ctx := context.Background()
	c, _ := openTest(t)
	keep, _, err := c.CreateTable(ctx, sampleTable("keep"), false)
	if err != nil {
		t.Fatal(err)
	}
	gone, _, err := c.CreateTable(ctx, sampleTable("gone"), false)
	if err != nil {
		t.Fatal(err)
	}
	// Statistics rows are written by a later layer; insert them directly here.
	for _, id := range []int64{keep.ID, gone.ID} {
		stmts := []struct {
			q    string
			args []any
		}{
			{`INSERT INTO table_statistics (table_id, document_version, source_kind, source_identity, depth, row_count, computed_at_ms, document)
			  VALUES (?, 1, 'listing', 'abc', 'metadata', 10, 0, x'7b7d')`, []any{id}},
			{`INSERT INTO table_files (table_id, file_id, path, row_count, size_bytes) VALUES (?, 1, 'a.parquet', 5, 100), (?, 2, 'b.parquet', 5, 100)`, []any{id, id}},
			{`INSERT INTO file_column_stats (table_id, file_id, column_id, min, max, null_count) VALUES
			  (?, 1, 0, x'00', x'05', 0), (?, 2, 0, x'06', x'09', 0), (?, 1, 1, x'01', x'02', NULL)`, []any{id, id, id}},
		}
		for _, s := range stmts {
			if _, err := c.writer.ExecContext(ctx, s.q, s.args...); err != nil {
				t.Fatalf("%s: %v", s.q, err)
			}
		}
	}
	count := func(table string, id int64) int {
		var n int
		if err := c.reader.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE table_id = ?`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	dependents := []string{"table_columns", "table_layout", "table_statistics", "table_files", "file_column_stats"}
	for _, tbl := range dependents {
		if count(tbl, gone.ID) == 0 {
			t.Fatalf("setup: no %s rows", tbl)
		}
	}

	if _, err := c.DropTable(ctx, "gone", false); err != nil {
		t.Fatal(err)
	}
	for _, tbl := range dependents {
		if n := count(tbl, gone.ID); n != 0 {
			t.Errorf("%d %s rows of the dropped table remain", n, tbl)
		}
		if count(tbl, keep.ID) == 0 {
			t.Errorf("dropping another table deleted the %s rows of %q", tbl, keep.Name)
		}
	}
}

// TestFileBoundsRangeQueryUsesIndex: the bounds search (FilesMatching's queries, with
// an upper bound and without) reads file_column_stats and table_files by index
// searches only — the bounded rows by (level, min) range, the files without bounds
// through their partial index, the paths by primary key — and never scans either
// table, which would visit every file.
func TestFileBoundsRangeQueryUsesIndex(t *testing.T) {
	ctx := context.Background()
	c, _ := openTest(t)
	tb, _, err := c.CreateTable(ctx, sampleTable("events"), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PutStatistics(ctx, "events", benchFiles(tb.ID, 100)); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{pathsBelow, pathsAbove} {
		rows, err := c.reader.QueryContext(ctx, `EXPLAIN QUERY PLAN `+q, tb.ID, 3, key(5), key(5), levelStarts(key(5)))
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		joined := strings.Join(plan, "; ")
		for _, want := range []string{
			"SEARCH s USING COVERING INDEX file_column_stats_by_level (table_id=? AND column_id=? AND level=? AND min>?",
			"SEARCH s USING INDEX file_column_stats_unbounded (table_id=? AND column_id=?)",
			"SEARCH f USING PRIMARY KEY (table_id=? AND file_id=?)",
		} {
			if !strings.Contains(joined, want) {
				t.Errorf("plan lacks %q:\n%s", want, joined)
			}
		}
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN s") || strings.HasPrefix(step, "SCAN f") {
				t.Errorf("plan scans a table: %s\n%s", step, joined)
			}
		}
	}
}

// TestStorageOptionsKept: a table's storage options are stored with it and read back
// by every way of reading a table; a table without them reads back none.
func TestStorageOptionsKept(t *testing.T) {
	ctx := context.Background()
	c, err := Open(ctx, filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	yes := true
	opts := StorageOptions{S3Endpoint: "http://127.0.0.1:9000", S3Region: "eu-west-1", S3AllowHTTP: &yes}
	cols := []Column{{Name: "a", Type: "BIGINT"}}
	if _, _, err := c.CreateTable(ctx, Table{Name: "t", Location: "s3://b/t", Format: "parquet", Columns: cols, Storage: opts}, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.CreateTable(ctx, Table{Name: "u", Location: "s3://b/u", Format: "parquet", Columns: cols}, false); err != nil {
		t.Fatal(err)
	}
	looked, err := c.Lookup(ctx, "t")
	if err != nil || looked.Storage.Key() != opts.Key() {
		t.Errorf("Lookup: %+v, %v", looked.Storage, err)
	}
	full, err := c.Table(ctx, "t")
	if err != nil || full.Storage.Key() != opts.Key() {
		t.Errorf("Table: %+v, %v", full.Storage, err)
	}
	all, err := c.Tables(ctx)
	if err != nil || len(all) != 2 || all[0].Storage.Key() != opts.Key() || !all[1].Storage.IsZero() {
		t.Errorf("Tables: %+v, %v", all, err)
	}
}
