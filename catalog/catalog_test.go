package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loredb/lore/errs"
)

// openTest opens a fresh catalog in a temporary directory and closes it with the test.
func openTest(t *testing.T) (*Catalog, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalog.db")
	c, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c, path
}

// rawDB opens the file directly, bypassing the catalog, to inspect or tamper with it.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func tableNames(t *testing.T, db *sql.DB) map[string]bool {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[n] = true
	}
	return out
}

func TestOpenAppliesAllMigrations(t *testing.T) {
	ctx := context.Background()
	c, path := openTest(t)
	v, err := c.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v != LatestSchemaVersion() || v != len(migrations) {
		t.Fatalf("schema version %d, want %d", v, LatestSchemaVersion())
	}
	names := tableNames(t, rawDB(t, path))
	for _, want := range []string{"schema_migrations", "tables", "table_columns", "table_layout",
		"table_statistics", "table_files", "file_column_stats", "audit_events", "query_log"} {
		if !names[want] {
			t.Errorf("table %s missing after migration; have %v", want, names)
		}
	}

	// The pragmas the catalog relies on are in force on its connections.
	var mode string
	if err := c.reader.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode %q, want wal", mode)
	}
	for _, db := range []*sql.DB{c.reader, c.writer} {
		var fk int
		if err := db.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if fk != 1 {
			t.Errorf("foreign_keys = %d, want 1", fk)
		}
	}
	if _, err := c.reader.ExecContext(ctx, `DELETE FROM query_log`); err == nil {
		t.Errorf("a reader connection accepted a write")
	}
}

func TestReopenIsNoOp(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "dir", "catalog.db") // parents are created
	c, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.CreateTable(ctx, Table{Name: "t", Location: "/x", Format: "parquet"}, false); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var n int
		if err := rawDB(t, path).QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()

	c, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer c.Close()
	if after := count(); after != before {
		t.Errorf("reopen changed schema_migrations from %d to %d rows", before, after)
	}
	if _, err := c.Table(ctx, "t"); err != nil {
		t.Errorf("table lost across reopen: %v", err)
	}
}

// TestReopenReadsFirst checks that a catalog at the current version is opened by
// its readers, its writer connecting in the background once a write asks for it,
// and that writes and the query log wait for that writer rather than fail or hang;
// an older or foreign file still goes the writer's way.
func TestReopenReadsFirst(t *testing.T) {
	ctx := context.Background()
	c, path := openTest(t)
	if c.writerOpen != nil {
		t.Fatal("a fresh catalog was opened reader first")
	}
	if _, _, err := c.CreateTable(ctx, Table{Name: "t", Location: "/x", Format: "parquet"}, false); err != nil {
		t.Fatal(err)
	}

	r, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if r.writerOpen == nil {
		t.Fatal("a current catalog was not opened reader first")
	}
	if _, err := r.Table(ctx, "t"); err != nil {
		t.Fatalf("read before the writer connects: %v", err)
	}
	select {
	case <-r.writerOpen:
		t.Fatal("the writer connected before a write asked for it")
	default:
	}
	// A catalog closed before anything was written never connects its writer.
	ro, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.Table(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if err := ro.Close(); err != nil {
		t.Fatalf("closing a catalog whose writer never connected: %v", err)
	}
	if _, _, err := r.CreateTable(ctx, Table{Name: "u", Location: "/y", Format: "parquet"}, false); err != nil {
		t.Fatalf("write after a reader-first open: %v", err)
	}
	if err := r.LogQuery(ctx, QueryLogEntry{ID: "q1", SQL: "SELECT 1", State: "finished", StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if e, err := r.Query(ctx, "q1"); err != nil || e.SQL != "SELECT 1" {
		t.Fatalf("the query log after a reader-first open: %+v, %v", e, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Table(ctx, "u"); err != nil {
		t.Fatalf("the other catalog does not see the write: %v", err)
	}

	// A writer that could not connect fails the writes that wait for it.
	broken := &Catalog{path: path, writerOpen: make(chan struct{}), writerErr: errors.New("disk on fire")}
	broken.writerConnect.Do(func() { close(broken.writerOpen) })
	err = broken.writeTx(ctx, func(*sql.Tx) error { return nil })
	if errs.CodeOf(err) != errs.Internal || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("write with a failed writer: %v", err)
	}

	// A catalog one version behind is migrated, which only the writer can do.
	old := filepath.Join(t.TempDir(), "old.db")
	o, err := open(ctx, old, migrations[:len(migrations)-1])
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	o, err = Open(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.writerOpen != nil {
		t.Error("a catalog that needed a migration was opened reader first")
	}
	if v, err := schemaVersion(ctx, o.reader); err != nil || v != latest(migrations) {
		t.Errorf("schema version after reopening an old catalog: %d, %v", v, err)
	}
}

func TestFutureSchemaRefused(t *testing.T) {
	ctx := context.Background()
	_, path := openTest(t)
	future := LatestSchemaVersion() + 7
	if _, err := rawDB(t, path).Exec(
		`INSERT INTO schema_migrations (version, applied_at_ms) VALUES (?, 0)`, future); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, path)
	if err == nil {
		t.Fatal("Open accepted a catalog from a newer build")
	}
	want := `has schema version ` + strconv.Itoa(future) + `; this build supports up to ` + strconv.Itoa(LatestSchemaVersion())
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not say %q and name the file", err, want)
	}
	if errs.CodeOf(err) != errs.Internal {
		t.Errorf("code %s, want %s", errs.CodeOf(err), errs.Internal)
	}
}

func TestForeignSQLiteFileRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db := rawDB(t, path)
	if _, err := db.Exec(`PRAGMA application_id = 12345`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err := Open(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "another application") {
		t.Fatalf("Open of a foreign SQLite file: %v, want a refusal", err)
	}
}

func TestNotADatabaseRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "garbage.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 512)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), path)
	if err == nil {
		t.Fatal("Open accepted a file that is not a database")
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file", err)
	}
}

func TestFailingMigrationIsRolledBack(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	next := LatestSchemaVersion() + 1
	bad := append(append([]migration(nil), migrations...), migration{
		version: next,
		name:    "half-applied",
		stmts: []string{
			`CREATE TABLE half_applied (x INTEGER)`,
			`INSERT INTO half_applied (x) VALUES (1)`,
			`INSERT INTO no_such_table (x) VALUES (1)`,
		},
	})
	_, err := open(ctx, path, bad)
	if err == nil {
		t.Fatal("a failing migration did not fail Open")
	}
	if !strings.Contains(err.Error(), "migration "+strconv.Itoa(next)) {
		t.Errorf("error %q does not name migration %d", err, next)
	}

	// The earlier migrations stay applied; the failing one left nothing behind.
	db := rawDB(t, path)
	if names := tableNames(t, db); names["half_applied"] || !names["tables"] {
		t.Errorf("after the failed migration the tables are %v", names)
	}
	var v int
	if err := db.QueryRow(`SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != LatestSchemaVersion() {
		t.Errorf("schema version %d after a failed migration, want %d", v, LatestSchemaVersion())
	}
	db.Close()

	// And the database is still usable by this build.
	c, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen after failed migration: %v", err)
	}
	c.Close()
}

func TestMigrationVersionsAreDense(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 {
			t.Fatalf("migration %d (%s) has version %d", i, m.name, m.version)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "BUG:") {
			t.Errorf("a gap in migration versions did not panic with BUG: %v", r)
		}
	}()
	_, _ = open(context.Background(), filepath.Join(t.TempDir(), "c.db"),
		[]migration{{version: 2, name: "gap"}})
}

func TestPathsWithSpecialCharacters(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "we?ird #dir %20 ünï")
	path := filepath.Join(dir, "cat&alog=1.db")
	c, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.CreateTable(ctx, Table{Name: "t", Location: "/x", Format: "parquet"}, false); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the catalog is not at the path given: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "cat&alog=1.db") {
			t.Errorf("unexpected file %q beside the catalog", e.Name())
		}
	}
}

func TestCanceledContext(t *testing.T) {
	c, _ := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := c.CreateTable(ctx, Table{Name: "t", Location: "/x", Format: "parquet"}, false)
	if errs.CodeOf(err) != errs.Canceled {
		t.Errorf("CreateTable with a canceled context: %v (code %s), want CANCELED", err, errs.CodeOf(err))
	}
	if _, err := c.Table(context.Background(), "t"); !errors.Is(err, errs.ErrTableNotFound) {
		t.Errorf("a canceled create left a table behind: %v", err)
	}
}

// Several opens of one fresh file at once (as several processes would) all succeed and
// apply each migration exactly once.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	const openers = 6
	var wg sync.WaitGroup
	cats := make([]*Catalog, openers)
	errc := make(chan error, openers)
	for i := range openers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Open(ctx, path)
			if err != nil {
				errc <- err
				return
			}
			cats[i] = c
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	for _, c := range cats {
		if c != nil {
			c.Close()
		}
	}
	var n, v int
	if err := rawDB(t, path).QueryRow(`SELECT count(*), max(version) FROM schema_migrations`).Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	if n != len(migrations) || v != LatestSchemaVersion() {
		t.Errorf("%d migration rows up to version %d, want %d up to %d", n, v, len(migrations), LatestSchemaVersion())
	}
}

// Two Catalogs on one file (two processes) write at the same time: the busy timeout and
// immediate transactions make them take turns instead of failing.
func TestTwoCatalogsOneFile(t *testing.T) {
	ctx := context.Background()
	a, path := openTest(t)
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	for w, c := range []*Catalog{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				name := fmt.Sprintf("t_%d_%d", w, i)
				if _, _, err := c.CreateTable(ctx, sampleTable(name), false); err != nil {
					errc <- err
					return
				}
				if err := c.LogQuery(ctx, QueryLogEntry{ID: name, StartedAt: time.Now()}); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	for _, c := range []*Catalog{a, b} {
		list, err := c.Tables(ctx)
		if err != nil || len(list) != 40 {
			t.Errorf("Tables: %d, %v", len(list), err)
		}
	}
}

// TestOpenWhileAnotherProcessWrites opens a current catalog while another connection
// holds its write lock: the open reads, it does not wait for the lock, and what it
// reads is there.
func TestOpenWhileAnotherProcessWrites(t *testing.T) {
	ctx := context.Background()
	c, path := openTest(t)
	if _, _, err := c.CreateTable(ctx, Table{Name: "t", Location: "/x", Format: "parquet"}, false); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite3", dsn(path, "_txlock=immediate"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Begin() // BEGIN IMMEDIATE: the write lock, held until the end of the test
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	openCtx, cancel := context.WithTimeout(ctx, busyTimeout/2)
	defer cancel()
	c2, err := Open(openCtx, path)
	if err != nil {
		t.Fatalf("open while another connection holds the write lock: %v", err)
	}
	defer c2.Close()
	if _, err := c2.Table(ctx, "t"); err != nil {
		t.Fatalf("table: %v", err)
	}
}
