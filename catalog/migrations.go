package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/loredb/lore/errs"
)

// migration is one step of the schema: applied once, in order, in one transaction
// together with its row in schema_migrations. A released migration is never edited;
// a change to the schema is a new migration appended to the list (and documented in
// docs/format/catalog.md).
type migration struct {
	version int
	name    string
	stmts   []string
	// then, when set, runs after stmts in the same transaction: for a step that
	// computes values SQL cannot.
	then func(ctx context.Context, tx *sql.Tx) error
}

// migrations is the schema history. Versions start at 1 and increase by one.
var migrations = []migration{
	{version: 1, name: "initial schema", stmts: []string{
		fmt.Sprintf("PRAGMA application_id = %d", applicationID),

		// A registered table. AUTOINCREMENT keeps ids durable: the id of a dropped table
		// is never given to another, so nothing keyed by an old id can attach to a new
		// table.
		`CREATE TABLE tables (
			id            INTEGER PRIMARY KEY AUTOINCREMENT,
			name          TEXT    NOT NULL UNIQUE,
			location      TEXT    NOT NULL,
			format        TEXT    NOT NULL CHECK (format IN ('parquet', 'delta', 'iceberg')),
			created_at_ms INTEGER NOT NULL,
			updated_at_ms INTEGER NOT NULL
		) STRICT`,

		// The table's columns in schema order; column_id is the 0-based position and
		// is what statistics rows refer to.
		`CREATE TABLE table_columns (
			table_id     INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
			column_id    INTEGER NOT NULL CHECK (column_id >= 0),
			name         TEXT    NOT NULL,
			type         TEXT    NOT NULL,
			is_partition INTEGER NOT NULL CHECK (is_partition IN (0, 1)),
			PRIMARY KEY (table_id, column_id),
			UNIQUE (table_id, name)
		) STRICT, WITHOUT ROWID`,

		// The declared layout: clustered_by and bloom column lists, in order.
		`CREATE TABLE table_layout (
			table_id  INTEGER NOT NULL,
			kind      TEXT    NOT NULL CHECK (kind IN ('clustered_by', 'bloom')),
			position  INTEGER NOT NULL CHECK (position >= 0),
			column_id INTEGER NOT NULL,
			PRIMARY KEY (table_id, kind, position),
			UNIQUE (table_id, kind, column_id),
			FOREIGN KEY (table_id, column_id)
				REFERENCES table_columns (table_id, column_id) ON DELETE CASCADE
		) STRICT, WITHOUT ROWID`,
		// Deleting a column looks its layout rows up by this key.
		`CREATE INDEX table_layout_by_column ON table_layout (table_id, column_id)`,

		// One statistics record per table (the document is the statistics object).
		`CREATE TABLE table_statistics (
			table_id         INTEGER PRIMARY KEY REFERENCES tables (id) ON DELETE CASCADE,
			document_version INTEGER NOT NULL,
			source_kind      TEXT    NOT NULL,
			source_identity  TEXT    NOT NULL,
			depth            TEXT    NOT NULL CHECK (depth IN ('metadata', 'full')),
			row_count        INTEGER,
			computed_at_ms   INTEGER NOT NULL,
			document         BLOB    NOT NULL
		) STRICT`,

		// The files the statistics record describes.
		`CREATE TABLE table_files (
			table_id         INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
			file_id          INTEGER NOT NULL,
			path             TEXT    NOT NULL,
			row_count        INTEGER NOT NULL,
			size_bytes       INTEGER NOT NULL,
			last_modified_ms INTEGER,
			PRIMARY KEY (table_id, file_id),
			UNIQUE (table_id, path)
		) STRICT, WITHOUT ROWID`,

		// Per-file, per-column bounds in the order-preserving byte encoding, so that
		// "which files can match x > 5" is a range query on the index below.
		`CREATE TABLE file_column_stats (
			table_id     INTEGER NOT NULL,
			file_id      INTEGER NOT NULL,
			column_id    INTEGER NOT NULL,
			min          BLOB,
			max          BLOB,
			bounds_exact INTEGER NOT NULL DEFAULT 0 CHECK (bounds_exact IN (0, 1)),
			null_count   INTEGER,
			has_nan      INTEGER NOT NULL DEFAULT 0 CHECK (has_nan IN (0, 1)),
			PRIMARY KEY (table_id, file_id, column_id),
			FOREIGN KEY (table_id, file_id)
				REFERENCES table_files (table_id, file_id) ON DELETE CASCADE
		) STRICT, WITHOUT ROWID`,
		// "x < v" ranges over min; "x > v" ranges over max. Each index covers both
		// bounds, so either probe is answered from the index alone.
		`CREATE INDEX file_column_stats_by_min ON file_column_stats (table_id, column_id, min, max)`,
		`CREATE INDEX file_column_stats_by_max ON file_column_stats (table_id, column_id, max, min)`,

		// Every catalog write, kept after the table is dropped (no foreign key).
		`CREATE TABLE audit_events (
			id         INTEGER PRIMARY KEY AUTOINCREMENT,
			at_ms      INTEGER NOT NULL,
			actor      TEXT    NOT NULL,
			action     TEXT    NOT NULL,
			table_name TEXT    NOT NULL,
			detail     TEXT    NOT NULL CHECK (json_valid(detail))
		) STRICT`,

		// One row per statement; record is the query record as JSON.
		`CREATE TABLE query_log (
			seq           INTEGER PRIMARY KEY AUTOINCREMENT,
			id            TEXT    NOT NULL UNIQUE,
			sql           TEXT    NOT NULL,
			state         TEXT    NOT NULL,
			mode          TEXT    NOT NULL,
			started_at_ms INTEGER NOT NULL,
			elapsed_ms    REAL    NOT NULL,
			row_count     INTEGER NOT NULL,
			error_code    TEXT    NOT NULL,
			record        TEXT    NOT NULL CHECK (json_valid(record))
		) STRICT`,
		`CREATE INDEX query_log_by_start ON query_log (started_at_ms)`,
	}},
	// The catalog serves as an Iceberg SQL catalog too: these are the two tables of
	// the layout iceberg-go's catalog/sql and pyiceberg's SqlCatalog use, column for
	// column, so that either, pointed at catalog.db, sees and commits the Iceberg
	// tables recorded here. They are not STRICT (their VARCHAR columns are the other
	// engines' declarations), and IF NOT EXISTS keeps tables such an engine made
	// before this migration.
	{version: 2, name: "iceberg sql catalog", stmts: []string{
		`CREATE TABLE IF NOT EXISTS iceberg_tables (
			catalog_name               VARCHAR(255)  NOT NULL,
			table_namespace            VARCHAR(255)  NOT NULL,
			table_name                 VARCHAR(255)  NOT NULL,
			metadata_location          VARCHAR(1000),
			previous_metadata_location VARCHAR(1000),
			iceberg_type               VARCHAR(5),
			PRIMARY KEY (catalog_name, table_namespace, table_name)
		)`,
		`CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
			catalog_name   VARCHAR(255)  NOT NULL,
			namespace      VARCHAR(255)  NOT NULL,
			property_key   VARCHAR(255)  NOT NULL,
			property_value VARCHAR(1000),
			PRIMARY KEY (catalog_name, namespace, property_key)
		)`,
	}},

	// How a table's objects are reached when not as the engine's defaults say (an
	// S3-compatible store's endpoint, region, addressing): a JSON object of
	// StorageOptions, '{}' for none. Never credentials.
	{version: 3, name: "table storage options", stmts: []string{
		`ALTER TABLE tables ADD COLUMN storage_options TEXT NOT NULL DEFAULT '{}'`,
	}},

	// "Which files can match" becomes index searches that visit about the matching
	// entries only (docs/format/catalog.md, "The bounds search").
	//
	// A file that has no usable bounds for a column may hold anything, so the search
	// returns it; it used to find those files by a NOT EXISTS per recorded file, which
	// visits every file. Now every recorded file has a row per column of the record —
	// one that states nothing when nothing is known — and the rows without usable
	// bounds have their own partial index, searched by (table, column). Existing
	// records gain the rows they lacked: a column's ids are 0 … n-1, n the columns of
	// the record's document. A document that is not JSON (which no build reads back as
	// a record) cannot say n; its per-file rows are dropped, so that nothing keeps half
	// of what the search relies on.
	//
	// A range [lo, hi] was a search of the (max, min) index from lo up, which visits
	// every file above lo: half of the files for a point in the middle of a clustered
	// table. Now each bounded row has a level, the bit length of the width of its
	// bounds' first eight bytes, and the (level, min) index is searched, level by
	// level, only from lo less the level's width.
	{version: 4, name: "bounds search", stmts: []string{
		`DELETE FROM table_files WHERE table_id IN (
			SELECT table_id FROM table_statistics WHERE NOT json_valid(CAST(document AS TEXT)))`,
		`WITH RECURSIVE record_columns (table_id, column_id, n) AS (
			SELECT table_id, 0, json_array_length(CAST(document AS TEXT), '$.columns')
				FROM table_statistics WHERE json_valid(CAST(document AS TEXT))
			UNION ALL
			SELECT table_id, column_id + 1, n FROM record_columns WHERE column_id + 1 < n)
		INSERT INTO file_column_stats (table_id, file_id, column_id)
			SELECT f.table_id, f.file_id, c.column_id
				FROM table_files f JOIN record_columns c ON c.table_id = f.table_id
				WHERE c.column_id < c.n
			ON CONFLICT (table_id, file_id, column_id) DO NOTHING`,
		`ALTER TABLE file_column_stats ADD COLUMN level INTEGER CHECK (level BETWEEN 0 AND 64)`,
		`CREATE INDEX file_column_stats_unbounded
			ON file_column_stats (table_id, column_id, file_id) WHERE level IS NULL`,
		`CREATE INDEX file_column_stats_by_level
			ON file_column_stats (table_id, column_id, level, min, max) WHERE level IS NOT NULL`,
		`DROP INDEX file_column_stats_by_min`,
		`DROP INDEX file_column_stats_by_max`,
	}, then: setLevels},

	// A statistics record of document version 3 is stored in two parts: the head in
	// document, the per-file list and the zones in detail, so that a statement
	// answered from the table-level partials reads and decodes the head alone. A
	// record written before has its detail inline in document and detail NULL.
	{version: 5, name: "statistics detail", stmts: []string{
		`ALTER TABLE table_statistics ADD COLUMN detail BLOB`,
	}},
}

// LatestSchemaVersion is the newest catalog schema version this build knows.
func LatestSchemaVersion() int { return latest(migrations) }

func latest(ms []migration) int {
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// migrate brings the database up to the last version in ms. Each migration runs in
// its own write transaction, which re-reads the version first: another process may
// have migrated the file between our read and our lock.
func (c *Catalog) migrate(ctx context.Context, ms []migration) error {
	for i, m := range ms {
		if m.version != i+1 {
			panic(fmt.Sprintf("BUG: catalog migration %d (%s) has version %d", i, m.name, m.version))
		}
	}
	want := latest(ms)
	// A catalog at the current version, every open but the first, needs no write:
	// reading its version takes no lock that another process's write would hold.
	// A file that cannot be written still goes the writing way, whose refusal
	// opens it for reading (open).
	if have, err := schemaVersion(ctx, c.writer); err == nil && have == want && c.fileWritable() {
		return nil
	}
	err := c.writeTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version       INTEGER PRIMARY KEY,
			applied_at_ms INTEGER NOT NULL
		) STRICT`)
		return err
	})
	if err != nil {
		return c.internal(err, "cannot create schema_migrations")
	}
	tooNew := func(have int) error {
		return errs.New(errs.Internal, "catalog at %q has schema version %d; this build supports up to %d",
			c.path, have, want)
	}
	have, err := schemaVersion(ctx, c.writer)
	if err != nil {
		return c.internal(err, "cannot read the schema version")
	}
	if have > want {
		return tooNew(have)
	}
	for _, m := range ms[have:] {
		err := c.writeTx(ctx, func(tx *sql.Tx) error {
			have, err := schemaVersion(ctx, tx)
			if err != nil {
				return c.internal(err, "cannot read the schema version")
			}
			if have > want {
				return tooNew(have)
			}
			if have >= m.version {
				return nil // another process applied it first
			}
			for _, stmt := range m.stmts {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return c.internal(err, "cannot apply migration %d (%s)", m.version, m.name)
				}
			}
			if m.then != nil {
				if err := m.then(ctx, tx); err != nil {
					return c.internal(err, "cannot apply migration %d (%s)", m.version, m.name)
				}
			}
			if _, err := tx.ExecContext(ctx,
				"INSERT INTO schema_migrations (version, applied_at_ms) VALUES (?, ?)", m.version, nowMS()); err != nil {
				return c.internal(err, "cannot record migration %d (%s)", m.version, m.name)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// fileWritable reports whether this process may write the catalog's file, its
// directory and its log files: SQLite opens a file it is not allowed to write
// read-only, without a word. An in-memory catalog has no file.
func (c *Catalog) fileWritable() bool {
	return c.wal != "" && filesWritable(strings.TrimSuffix(c.wal, "-wal"))
}
