// Package catalog is Lore's durable state: table definitions and their declared layout,
// statistics records, per-file column statistics, the audit log and the query log, kept
// in one SQLite database (<Home>/catalog.db) through the pure-Go driver. It is the only
// importer of that driver.
//
// The schema is versioned: Open applies the missing migrations in order, each in one
// transaction together with its row in schema_migrations, and refuses a database whose
// version is newer than this build knows. docs/format/catalog.md documents every table.
//
// Invariants:
//   - Every value reaches SQL through a placeholder; the only SQL text assembled at run
//     time is chosen from constant strings.
//   - Every write that changes a definition writes its audit event in the same
//     transaction, so the log holds exactly the writes that committed.
//   - Deleting a table deletes, by foreign-key cascade, every row keyed by its id;
//     ids are never reused (AUTOINCREMENT).
//   - Definitions are validated before they reach SQL; a bad one is an ANALYSIS_ERROR
//     naming the problem, and a driver error is INTERNAL.
//
// Concurrency: a Catalog is safe for use by many goroutines. Writes share one
// connection and so run one at a time (as SQLite would anyway, but without SQLITE_BUSY
// between our own goroutines); reads run on a pool of read-only connections and, under
// WAL, never wait for a writer. Other processes are waited for up to a busy timeout.
package catalog
