package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
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

// LogQuery writes e, replacing any entry with the same ID, so that a statement can be
// logged when it starts and again when it ends. StartedAt is kept to the millisecond.
// An empty ID or a Record that is not JSON is refused.
func (c *Catalog) LogQuery(ctx context.Context, e QueryLogEntry) error {
	if e.ID == "" {
		return errs.New(errs.Internal, "cannot log a query without an id")
	}
	record := "null"
	if e.Record != nil {
		if !json.Valid(e.Record) {
			return errs.New(errs.Internal, "cannot log query %q: its record is not valid JSON", e.ID)
		}
		record = string(e.Record)
	}
	_, err := c.writer.ExecContext(ctx, `
		INSERT INTO query_log (id, sql, state, mode, started_at_ms, elapsed_ms, row_count, error_code, record)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			sql = excluded.sql, state = excluded.state, mode = excluded.mode,
			started_at_ms = excluded.started_at_ms, elapsed_ms = excluded.elapsed_ms,
			row_count = excluded.row_count, error_code = excluded.error_code, record = excluded.record`,
		e.ID, e.SQL, e.State, e.Mode, e.StartedAt.UnixMilli(), e.ElapsedMS, e.Rows, e.ErrorCode, record)
	if err != nil {
		return c.internal(err, "cannot log query %q", e.ID)
	}
	return nil
}

// Query returns the log entry of statement id, or an error wrapping ErrQueryNotFound.
func (c *Catalog) Query(ctx context.Context, id string) (QueryLogEntry, error) {
	row := c.reader.QueryRowContext(ctx, `SELECT `+queryLogColumns+` FROM query_log WHERE id = ?`, id)
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
