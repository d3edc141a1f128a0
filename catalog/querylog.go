package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/loredb/lore/errs"
)

// ErrQueryNotFound is wrapped by Query when no statement has the id. It is not an
// *errs.Error: no statement failed, so the caller (the HTTP layer) decides the status.
var ErrQueryNotFound = errors.New("query not found")

// QueryLogEntry is one statement in the query log.
type QueryLogEntry struct {
	ID        string
	SQL       string
	State     string // "running", "finished", "failed", …
	Mode      string // "context", "scan", "cache", or "" when none applies
	StartedAt time.Time
	ElapsedMS float64
	Rows      int64
	ErrorCode string // "" when the statement succeeded
	Record    []byte // the query record as JSON; nil when none
}

// LogQuery logs e, replacing any entry with the same ID, so that a statement can be
// logged when it starts and again when it ends. StartedAt is kept to the millisecond.
// An empty ID or a Record that is not JSON is refused at once. The write itself
// happens in the background, in order, batched with others (a statement's answer
// does not wait for its log line); reading the log (Query, RecentQueries, FlushLog)
// or closing the catalog first waits for every entry logged before. A read-only
// catalog drops the entry.
func (c *Catalog) LogQuery(ctx context.Context, e QueryLogEntry) error {
	if e.ID == "" {
		return errs.New(errs.Internal, "cannot log a query without an id")
	}
	if e.Record != nil && !json.Valid(e.Record) {
		return errs.New(errs.Internal, "cannot log query %q: its record is not valid JSON", e.ID)
	}
	if c.readOnly {
		return nil // a read-only catalog keeps no log (see ReadOnly)
	}
	return c.log.add(e)
}

// FlushLog waits until every entry logged so far is written, and reports the first
// error a background write met since the last flush.
func (c *Catalog) FlushLog(ctx context.Context) error {
	if c.log == nil {
		return nil
	}
	return c.log.flush(ctx)
}

// logWriter writes query log entries on one goroutine, in the order they were logged.
type logWriter struct {
	c       *Catalog
	mu      sync.Mutex
	pending []QueryLogEntry
	queued  uint64 // entries ever queued
	written uint64 // entries whose write has finished (or failed)
	err     error  // the first failure since the last flush
	closed  bool
	// flushing counts the flushes waiting: the writer then writes without gathering.
	flushing int
	wake     chan struct{}
	// hurry ends the writer's gathering at once: a full batch, a flush or close is
	// waiting. Buffered; a token left over only makes one batch smaller.
	hurry   chan struct{}
	done    chan struct{} // closed when the goroutine ends
	changed *sync.Cond    // broadcast when written moves
}

func newLogWriter(c *Catalog) *logWriter {
	w := &logWriter{c: c, wake: make(chan struct{}, 1), hurry: make(chan struct{}, 1), done: make(chan struct{})}
	w.changed = sync.NewCond(&w.mu)
	go w.loop()
	return w
}

func (w *logWriter) add(e QueryLogEntry) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errs.New(errs.Internal, "cannot log query %q: the catalog is closed", e.ID)
	}
	w.pending = append(w.pending, e)
	w.queued++
	select {
	case w.wake <- struct{}{}:
	default:
	}
	if len(w.pending) >= logGathered {
		w.hasten()
	}
	return nil
}

// logGather is how long the writer waits, once woken, for more entries to join a
// small batch: under load one transaction then writes hundreds of entries instead
// of one, and a commit costs more than the entries it writes.
const (
	logGather   = 2 * time.Millisecond
	logGathered = 256 // entries that make a batch worth writing at once
)

func (w *logWriter) loop() {
	defer close(w.done)
	for range w.wake {
		// The writer connects while the batch gathers.
		w.c.ConnectWriter()
		w.gather()
		for {
			w.mu.Lock()
			batch := w.pending
			w.pending = nil
			closed := w.closed
			w.mu.Unlock()
			if len(batch) == 0 {
				if closed {
					return
				}
				break
			}
			err := w.c.writeLog(batch)
			w.mu.Lock()
			w.written += uint64(len(batch))
			if err != nil && w.err == nil {
				w.err = err
			}
			w.changed.Broadcast()
			w.mu.Unlock()
		}
	}
}

// gather waits up to logGather for a small batch to grow, unless the log closes or a
// flush waits for it.
func (w *logWriter) gather() {
	w.mu.Lock()
	enough := len(w.pending) >= logGathered || w.closed || w.flushing > 0
	w.mu.Unlock()
	if enough {
		return
	}
	// Woken by hurry rather than by polling: a process that logs one statement and
	// closes (lore sql -c) waits for the write, not for a sleep to run out.
	t := time.NewTimer(logGather)
	defer t.Stop()
	select {
	case <-w.hurry:
	case <-t.C:
	}
}

// hasten ends a gathering in progress (or the next one).
func (w *logWriter) hasten() {
	select {
	case w.hurry <- struct{}{}:
	default:
	}
}

// flush waits for the entries queued before it; the wait ends early when ctx ends.
func (w *logWriter) flush(ctx context.Context) error {
	w.mu.Lock()
	w.flushing++
	w.hasten()
	target := w.queued
	for w.written < target && ctx.Err() == nil {
		w.changed.Wait()
	}
	w.flushing--
	err := w.err
	w.err = nil
	w.mu.Unlock()
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// close writes what is pending and stops the goroutine.
func (w *logWriter) close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.hasten()
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// writeLog writes entries in one transaction.
func (c *Catalog) writeLog(entries []QueryLogEntry) error {
	if _, err := c.writerDB(); err != nil {
		return err
	}
	// Prepared outside the transaction, which holds the writer's one connection.
	insert, err := c.logInsert()
	if err != nil {
		return c.internal(err, "cannot log queries")
	}
	return c.write(context.Background(), func(tx *sql.Tx) error {
		stmt := tx.Stmt(insert)
		defer stmt.Close()
		for _, e := range entries {
			record := "null"
			if e.Record != nil {
				record = string(e.Record)
			}
			if _, err := stmt.Exec(e.ID, e.SQL, e.State, e.Mode, e.StartedAt.UnixMilli(), e.ElapsedMS, e.Rows,
				e.ErrorCode, record); err != nil {
				return c.internal(err, "cannot log query %q", e.ID)
			}
		}
		return nil
	})
}

// logInsert is the query log's upsert, prepared on the writer once: by the
// background connect of ConnectWriter, or by the first write of the log.
func (c *Catalog) logInsert() (*sql.Stmt, error) {
	c.logStmtOnce.Do(func() {
		c.logStmt, c.logStmtErr = c.writer.Prepare(`
			INSERT INTO query_log (id, sql, state, mode, started_at_ms, elapsed_ms, row_count, error_code, record)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET
				sql = excluded.sql, state = excluded.state, mode = excluded.mode,
				started_at_ms = excluded.started_at_ms, elapsed_ms = excluded.elapsed_ms,
				row_count = excluded.row_count, error_code = excluded.error_code, record = excluded.record`)
	})
	return c.logStmt, c.logStmtErr
}

func (c *Catalog) Query(ctx context.Context, id string) (QueryLogEntry, error) {
	if err := c.FlushLog(ctx); err != nil {
		return QueryLogEntry{}, err
	}
	row := c.readRow(ctx, `SELECT `+queryLogColumns+` FROM query_log WHERE id = ?`, id)
	e, err := scanQueryLog(row)
	if errors.Is(err, sql.ErrNoRows) {
		return QueryLogEntry{}, fmt.Errorf("query %q: %w", id, ErrQueryNotFound)
	}
	if err != nil {
		return QueryLogEntry{}, c.internal(err, "cannot read query %q", id)
	}
	return e, nil
}

// RecentQueries returns up to limit entries, the most recently started first (ties in
// the order they were first logged, newest first); limit <= 0 returns them all.
func (c *Catalog) RecentQueries(ctx context.Context, limit int) ([]QueryLogEntry, error) {
	if err := c.FlushLog(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := c.reader.QueryContext(ctx,
		`SELECT `+queryLogColumns+` FROM query_log ORDER BY started_at_ms DESC, seq DESC LIMIT ?`, limit)
	if err != nil {
		return nil, c.internal(err, "cannot read the query log")
	}
	var out []QueryLogEntry
	for rows.Next() {
		e, err := scanQueryLog(rows)
		if err != nil {
			rows.Close()
			return nil, c.internal(err, "cannot read the query log")
		}
		out = append(out, e)
	}
	if err := closeRows(rows); err != nil {
		return nil, c.internal(err, "cannot read the query log")
	}
	return out, nil
}

const queryLogColumns = `id, sql, state, mode, started_at_ms, elapsed_ms, row_count, error_code, record`

func scanQueryLog(row interface{ Scan(...any) error }) (QueryLogEntry, error) {
	var (
		e       QueryLogEntry
		started int64
		record  string
	)
	if err := row.Scan(&e.ID, &e.SQL, &e.State, &e.Mode, &started, &e.ElapsedMS, &e.Rows, &e.ErrorCode, &record); err != nil {
		return QueryLogEntry{}, err
	}
	e.StartedAt = fromMS(started)
	if record != "null" {
		e.Record = []byte(record)
	}
	return e, nil
}
