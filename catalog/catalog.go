package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/loredb/lore/errs"

	// SQLite's C library, registered as "sqlite3". This package is its only importer.
	sqlite3 "github.com/mattn/go-sqlite3"
)

// applicationID is written to the database header (PRAGMA application_id) so that a
// SQLite file belonging to something else is refused rather than migrated. It spells
// "LORE" in ASCII.
const applicationID = 0x4C4F5245

// busyTimeout is how long a connection waits for another process's write lock before
// failing with SQLITE_BUSY.
const busyTimeout = 10 * time.Second

// maxReaders bounds the read pool. Readers run concurrently under WAL; a handful is
// enough for a catalog whose reads are point lookups and short lists.
const maxReaders = 8

// Catalog is an open catalog database. It is safe for concurrent use by many
// goroutines: writes go through a single connection (SQLite admits one writer at a
// time, and queueing in-process avoids SQLITE_BUSY between our own goroutines), reads
// through a pool of read-only connections that see consistent snapshots under WAL.
type Catalog struct {
	path   string
	writer *sql.DB // exactly one connection; every write transaction runs here
	// writerOpen, when not nil, is closed once the writer has connected in the
	// background (openCurrent, ConnectWriter); writerErr is then why it could not.
	// Writes wait for it (writerDB).
	writerOpen    chan struct{}
	writerErr     error
	writerConnect sync.Once
	// logStmt is the query log's insert on the writer (logInsert).
	logStmt     *sql.Stmt
	logStmtErr  error
	logStmtOnce sync.Once
	reader      *sql.DB // query_only connections
	log         *logWriter
	// prepared are the reader's statements of the hot path (a table's lookup, its
	// statistics stamp), prepared once: parsing SQL costs more than running them.
	prepared sync.Map // query text -> *sql.Stmt
	// readOnly is set when the catalog could only be opened for reading (a read-only
	// home): every write is refused with FORBIDDEN and the query log is not kept.
	readOnly bool
	// changed is set once this Catalog commits anything but query log entries; Close
	// then checkpoints the write-ahead log, the file wal.
	changed atomic.Bool
	wal     string
}

// Open opens or creates the catalog database at path (creating its parent directory if
// needed) and applies pending migrations, each in one transaction. A database whose
// schema version is newer than this build knows is refused with an INTERNAL error
// naming both versions; a SQLite file that is not a Lore catalog is refused too.
//
// A catalog OpenAhead is opening at the same path is taken instead, once.
func Open(ctx context.Context, path string) (*Catalog, error) {
	if c := takeAhead(path); c != nil {
		return c, nil
	}
	return open(ctx, path, migrations)
}

// open is openOnce, tried again while it fails with SQLITE_BUSY, for up to
// busyTimeout. Connections that open a fresh file at once can get SQLITE_BUSY
// without waiting on their busy timeout (while one of them switches the file to
// WAL); nothing is half done then — each migration is one transaction — so the open
// starts over.
//
// A catalog that cannot be written (a read-only file system, a file or directory
// without write permission) is opened for reading instead when that works (openReadOnly).
func open(ctx context.Context, path string, ms []migration) (*Catalog, error) {
	var c *Catalog
	err := whileBusy(ctx, func() (err error) {
		c, err = openOnce(ctx, path, ms)
		return err
	})
	if err != nil && cannotWrite(err) {
		if ro, roErr := openReadOnly(ctx, path, ms); roErr == nil {
			return ro, nil
		}
	}
	return c, err
}

// whileBusy calls f again while it fails with SQLITE_BUSY (and not for a file that
// cannot be written, which no wait mends), pausing 1 ms, then twice as long each
// time up to 100 ms, for up to busyTimeout or until ctx ends; it returns f's last
// error.
func whileBusy(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(busyTimeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := f()
		if err == nil || cannotWrite(err) || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// openOnce is one attempt of Open, with the migration list as a parameter, so that
// tests can append a failing migration without touching package state.
func openOnce(ctx context.Context, path string, ms []migration) (*Catalog, error) {
	if path == "" {
		return nil, errs.New(errs.Internal, "cannot open catalog: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, errs.New(errs.Internal, "cannot open catalog at %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, errs.New(errs.Internal, "cannot create the directory of catalog %q: %w", path, err)
	}
	if c := openCurrent(ctx, path, abs, ms); c != nil {
		return c, nil
	}

	writer, err := openWriter(abs)
	if err != nil {
		return nil, errs.New(errs.Internal, "cannot open catalog at %q: %w", path, err)
	}
	c := &Catalog{path: path, writer: writer, wal: abs + "-wal"}
	if err := c.checkApplication(ctx); err != nil {
		writer.Close()
		return nil, err
	}
	if err := c.migrate(ctx, ms); err != nil {
		writer.Close()
		return nil, err
	}

	// Readers are read-only connections, which never checkpoint (Close).
	reader, err := openReaders(abs)
	if err != nil {
		writer.Close()
		return nil, errs.New(errs.Internal, "cannot open catalog at %q: %w", path, err)
	}
	if err := reader.PingContext(ctx); err != nil {
		reader.Close()
		writer.Close()
		return nil, errs.New(errs.Internal, "cannot open catalog at %q: %w", path, err)
	}
	c.reader = reader
	c.log = newLogWriter(c)
	return c, nil
}

// openWriter is the writer's pool of one connection. It sets the persistent journal
// mode, WAL (on a fresh file, before any reader connects), and starts every
// transaction with BEGIN IMMEDIATE so that a transaction that reads before it writes
// cannot fail on lock upgrade when another process writes too. synchronous=NORMAL under WAL keeps the
// file consistent on power loss (it may lose the last commits, never corrupt) and
// spares the query log an fsync per statement. Nothing connects until it is used.
func openWriter(abs string) (*sql.DB, error) {
	writer, err := sql.Open("sqlite3", dsn(abs,
		"_txlock=immediate",
		"_journal_mode=WAL",
		"_synchronous=NORMAL",
	))
	if err != nil {
		return nil, err
	}
	oneConnection(writer)
	return writer, nil
}

// oneConnection makes db a pool of one connection, kept for the pool's life.
func oneConnection(db *sql.DB) {
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
}

// openReaders is the pool of read-only connections of the catalog file abs, opened
// with the extra URI parameters given.
func openReaders(abs string, extra ...string) (*sql.DB, error) {
	params := append(append([]string{"mode=ro"}, extra...), "_query_only=1")
	reader, err := sql.Open("sqlite3", dsn(abs, params...))
	if err != nil {
		return nil, err
	}
	reader.SetMaxOpenConns(maxReaders)
	reader.SetMaxIdleConns(maxReaders)
	return reader, nil
}

// openCurrent opens a catalog that needs no migration — every open but the first
// — reading first. A reader checks that the file is a Lore catalog, in WAL mode, at
// the schema version of ms, and that this process may write it. The writer connects
// later, in the background, when the first write or query log entry asks for it
// (ConnectWriter), and writes wait for it (writerDB). Connecting costs a fresh
// process about half a millisecond of CPU, the connection reading the schema: done
// at once, it took one of two cores from the statement that opened the catalog,
// whose record read and listing ran side by side on them; done for the query log,
// it overlaps the printing of the answer. Any other file (missing, foreign, older,
// read-only, or one another process holds) returns nil, and openOnce opens it
// writer first, as a fresh catalog is.
func openCurrent(ctx context.Context, path, abs string, ms []migration) *Catalog {
	if !filesWritable(abs) {
		return nil
	}
	reader, err := openReaders(abs)
	if err != nil {
		return nil
	}
	c := &Catalog{path: path, reader: reader, wal: abs + "-wal"}
	var mode string
	if c.checkReadable(ctx, ms) != nil ||
		reader.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode) != nil || !strings.EqualFold(mode, "wal") {
		reader.Close()
		return nil
	}
	if c.writer, err = openWriter(abs); err != nil {
		reader.Close()
		return nil
	}
	c.writerOpen = make(chan struct{})
	c.log = newLogWriter(c)
	return c
}

// ConnectWriter starts connecting the writer of a catalog opened reader first, in
// the background, unless it has started already; writerOpen closes when it is done.
// Other catalogs connect as they open. Writes and the query log start it
// themselves; a caller that knows a write will come, and has a core to spare for
// it now, starts it earlier (the engine does once a statement's catalog reads are
// done, while the statement lists its files).
func (c *Catalog) ConnectWriter() {
	if c.writerOpen == nil {
		return
	}
	c.writerConnect.Do(func() {
		go func() {
			defer close(c.writerOpen)
			bg := context.Background()
			if c.writerErr = whileBusy(bg, func() error { return c.writer.PingContext(bg) }); c.writerErr == nil {
				c.logInsert() // its first use waits for it; a failure is that use's
			}
		}()
	})
}

// writerDB is the writer, once it has connected.
func (c *Catalog) writerDB() (*sql.DB, error) {
	if c.writerOpen != nil {
		c.ConnectWriter()
		<-c.writerOpen
		if c.writerErr != nil {
			return nil, c.internal(c.writerErr, "cannot open the catalog for writing")
		}
	}
	return c.writer, nil
}

// dsn builds the driver's connection string: a SQLite file URI for abs, percent-encoded
// so that any byte of a path ('?', '#', '%', spaces, unicode) reaches the file system
// unchanged, followed by the settings every connection needs and then extra. The
// open mode is read-write-create unless extra names another.
func dsn(abs string, extra ...string) string {
	params := []string{
		fmt.Sprintf("_busy_timeout=%d", busyTimeout.Milliseconds()),
		"_foreign_keys=1",
	}
	if !slices.ContainsFunc(extra, func(p string) bool { return strings.HasPrefix(p, "mode=") }) {
		params = append([]string{"mode=rwc"}, params...)
	}
	params = append(params, extra...)
	return "file:" + escapePath(filepath.ToSlash(abs)) + "?" + strings.Join(params, "&")
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (or one of its extended codes).
func isBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrBusy
}

// cannotWrite reports whether an error opening the catalog says that its file or
// directory cannot be written or created, as opposed to a broken or foreign file.
func cannotWrite(err error) bool {
	if errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return true
	}
	if se := (sqlite3.Error{}); errors.As(err, &se) && (se.Code == sqlite3.ErrReadonly || se.Code == sqlite3.ErrCantOpen || se.Code == sqlite3.ErrPerm) {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"readonly database", "read-only file system", "permission denied",
		"operation not permitted", "unable to open database file"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// memoryCatalogs numbers the in-memory catalogs of read-only homes, so that each
// open gets its own database.
var memoryCatalogs atomic.Int64

// openReadOnly opens a catalog that cannot be written: statements that only read
// work, statements that would change it fail with FORBIDDEN, and no query log is
// kept. An existing catalog file is opened read-only (and, when even the WAL's
// shared-memory file cannot be made, as immutable); it must be at this build's
// schema version, since it cannot be migrated. Where there is no catalog file and
// none can be made, the catalog is an empty one in memory.
func openReadOnly(ctx context.Context, path string, ms []migration) (*Catalog, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
		return openMemory(ctx, path, ms)
	}
	var lastErr error
	for _, extra := range [][]string{nil, {"immutable=1"}} {
		reader, err := openReaders(abs, extra...)
		if err != nil {
			return nil, err
		}
		c := &Catalog{path: path, reader: reader, readOnly: true}
		if lastErr = c.checkReadable(ctx, ms); lastErr == nil {
			return c, nil
		}
		reader.Close()
	}
	return nil, lastErr
}

// checkReadable checks, through the readers, that the catalog belongs to Lore and
// needs no migration: a read-only catalog's, or a current one's (openCurrent).
func (c *Catalog) checkReadable(ctx context.Context, ms []migration) error {
	var id int64
	if err := c.reader.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id); err != nil {
		return err
	}
	if id != applicationID {
		return fmt.Errorf("the file is not a Lore catalog (application_id %#x)", id)
	}
	have, err := schemaVersion(ctx, c.reader)
	if err != nil {
		return err
	}
	if want := latest(ms); have != want {
		return fmt.Errorf("read-only catalog has schema version %d; this build needs %d", have, want)
	}
	return nil
}

// openMemory makes an empty catalog in memory, migrated and then closed to writes.
// Its writer connection stays open for the catalog's life, since an in-memory
// database lives as long as a connection to it.
func openMemory(ctx context.Context, path string, ms []migration) (*Catalog, error) {
	name := fmt.Sprintf("file:lore-readonly-%d?mode=memory&cache=shared&_foreign_keys=1", memoryCatalogs.Add(1))
	writer, err := sql.Open("sqlite3", name)
	if err != nil {
		return nil, err
	}
	oneConnection(writer)
	c := &Catalog{path: path, writer: writer}
	if err := c.migrate(ctx, ms); err != nil {
		writer.Close()
		return nil, err
	}
	reader, err := sql.Open("sqlite3", name)
	if err != nil {
		writer.Close()
		return nil, err
	}
	c.reader, c.readOnly = reader, true
	return c, nil
}

// ReadOnly reports whether the catalog was opened for reading only: its home could
// not be written. Writes fail with FORBIDDEN and queries are not logged.
func (c *Catalog) ReadOnly() bool { return c.readOnly }

// escapePath percent-encodes every byte of p except unreserved URI characters and '/'.
func escapePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch {
		case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z', '0' <= ch && ch <= '9',
			ch == '-', ch == '_', ch == '.', ch == '~', ch == '/':
			b.WriteByte(ch)
		default:
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String()
}

// checkApplication refuses a SQLite file that some other program owns. A fresh file
// has application_id 0; migration 1 stamps it.
func (c *Catalog) checkApplication(ctx context.Context) error {
	var id int64
	if err := c.writer.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id); err != nil {
		return errs.New(errs.Internal, "cannot open catalog at %q: %w", c.path, err)
	}
	if id != 0 && id != applicationID {
		return errs.New(errs.Internal,
			"cannot open catalog at %q: the file is a SQLite database of another application (application_id %#x)",
			c.path, id)
	}
	return nil
}

// walCheckpointBytes is the length of the write-ahead log past which Close
// checkpoints it even when only the query log was written. The process that opens
// the catalog first replays the whole log, about 2 µs a 4 KiB page, and a
// statement's query log entry adds four pages: the log is checkpointed about every
// 30 statements and costs a fresh process 0.1 ms on average to replay.
const walCheckpointBytes = 512 << 10

// Close closes the database. Calls in flight may fail; the file stays consistent.
//
// The last connection to close checkpoints the write-ahead log: it copies the log's
// pages into the database file, syncs both and removes the log, some 2 ms of fsyncs
// that a one-statement `lore sql` would spend after printing its answer. Where this
// Catalog committed nothing but query log entries, which a power loss may take
// anyway (docs/failure-model.md), and the log is shorter than walCheckpointBytes,
// the writer closes first, while the reader pool still holds the database open, so
// that it cannot take the exclusive lock the checkpoint needs, and the readers,
// read-only, never checkpoint: the log stays for the next process to replay. A
// Catalog that changed the catalog closes the writer last, and its checkpoint makes
// the changes durable before the process goes.
func (c *Catalog) Close() error {
	var errL, errR, errW error
	if c.log != nil {
		errL = c.log.close()
	}
	if c.writerOpen != nil {
		// A writer that started connecting finishes before it is closed; one that
		// never did is not connected now.
		c.writerConnect.Do(func() { close(c.writerOpen) })
		<-c.writerOpen
	}
	c.prepared.Range(func(_, v any) bool {
		v.(*sql.Stmt).Close()
		return true
	})
	if c.logStmt != nil {
		c.logStmt.Close()
	}
	checkpoint := c.changed.Load()
	if fi, err := os.Stat(c.wal); err == nil && fi.Size() > walCheckpointBytes {
		checkpoint = true
	}
	if c.writer != nil && !checkpoint {
		errW = c.writer.Close()
	}
	if c.reader != nil {
		errR = c.reader.Close()
	}
	if c.writer != nil && checkpoint {
		errW = c.writer.Close()
	}
	if err := errors.Join(errL, errR, errW); err != nil {
		return errs.New(errs.Internal, "cannot close catalog at %q: %w", c.path, err)
	}
	return nil
}

// IntegrityCheck runs SQLite's integrity check over the whole catalog database and
// returns an INTERNAL error naming the first problem it reports.
func (c *Catalog) IntegrityCheck(ctx context.Context) error {
	var res string
	if err := c.reader.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return c.internal(err, "cannot check the catalog's integrity")
	}
	if res != "ok" {
		return errs.New(errs.Internal, "the catalog at %q fails its integrity check: %s", c.path, res)
	}
	return nil
}

// SchemaVersion returns the highest migration version applied to the database.
func (c *Catalog) SchemaVersion(ctx context.Context) (int, error) {
	v, err := schemaVersion(ctx, c.reader)
	if err != nil {
		return 0, errs.New(errs.Internal, "cannot read the schema version of catalog %q: %w", c.path, err)
	}
	return v, nil
}

// queryer is what schemaVersion needs: a *sql.DB or a *sql.Tx.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func schemaVersion(ctx context.Context, q queryer) (int, error) {
	var v sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT max(version) FROM schema_migrations").Scan(&v); err != nil {
		return 0, err
	}
	return int(v.Int64), nil
}

// actorKey is the context key of the audit actor.
type actorKey struct{}

// DefaultActor is the actor recorded on audit events when the context names none: the
// embedding program itself.
const DefaultActor = "system"

// WithActor returns a context whose catalog writes are recorded in the audit log as done
// by actor (a user or token name).
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

func actorOf(ctx context.Context) string {
	if a, ok := ctx.Value(actorKey{}).(string); ok && a != "" {
		return a
	}
	return DefaultActor
}

// nowMS is the catalog's clock: Unix milliseconds, the unit of every *_ms column.
func nowMS() int64 { return time.Now().UnixMilli() }

// fromMS converts a stored *_ms value to a UTC time.
func fromMS(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// writeTx runs fn in one write transaction on the writer connection, committing when fn
// returns nil and rolling back otherwise. A rollback after a commit error is harmless.
func (c *Catalog) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if err := c.write(ctx, fn); err != nil {
		return err
	}
	c.changed.Store(true)
	return nil
}

// write is writeTx without marking the catalog changed: the query log's writes.
func (c *Catalog) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if c.readOnly {
		return errs.New(errs.Forbidden, "the catalog at %q is read-only: changing it needs a writable LORE_HOME", c.path)
	}
	writer, err := c.writerDB()
	if err != nil {
		return err
	}
	tx, err := writer.BeginTx(ctx, nil)
	if err != nil {
		return c.internal(err, "cannot begin a write")
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return c.internal(err, "cannot commit a write")
	}
	return nil
}

// readRow runs the one-row read query on the reader pool, prepared once.
func (c *Catalog) readRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := c.prepare(ctx, query)
	if err != nil {
		return c.reader.QueryRowContext(ctx, query, args...) // which reports the error
	}
	return st.QueryRowContext(ctx, args...)
}

// prepare returns the reader's prepared statement of query, preparing it once.
func (c *Catalog) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.prepared.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := c.reader.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := c.prepared.LoadOrStore(query, st); loaded {
		st.Close()
		st = prev.(*sql.Stmt)
	}
	return st, nil
}

// readTx runs fn in one read-only transaction, so that multi-statement reads see one
// snapshot.
func (c *Catalog) readTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := c.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return c.internal(err, "cannot begin a read")
	}
	defer tx.Rollback() //nolint:errcheck // read-only; nothing to undo
	return fn(tx)
}

// internal wraps a driver error with the catalog's path and the INTERNAL code; bad
// input is refused before it reaches SQL, so a driver error is the catalog's fault.
// Errors that already carry a code (ours, or a context's cancellation) keep it.
func (c *Catalog) internal(err error, format string, args ...any) error {
	var coded *errs.Error
	if errors.As(err, &coded) {
		return err
	}
	what := fmt.Sprintf(format, args...)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s in catalog %q: %w", what, c.path, err)
	}
	return errs.New(errs.Internal, "%s in catalog %q: %w", what, c.path, err)
}
