package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"
)

// AuditEvent is one catalog write as recorded in the audit log.
type AuditEvent struct {
	ID        int64
	At        time.Time
	Actor     string // from WithActor, or DefaultActor
	Action    string // "create_table", "drop_table", "alter_table", …
	TableName string // the table written; kept after the table is dropped
	Detail    string // JSON object: what changed
}

// audit appends an event inside tx, so that the event exists exactly when the write
// it describes does.
func (c *Catalog) audit(ctx context.Context, tx *sql.Tx, action, table string, detail map[string]any) error {
	doc, err := json.Marshal(detail)
	if err != nil {
		return c.internal(err, "cannot encode the audit detail of %s %q", action, table)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO audit_events (at_ms, actor, action, table_name, detail) VALUES (?, ?, ?, ?, ?)`,
		nowMS(), actorOf(ctx), action, table, string(doc)); err != nil {
		return c.internal(err, "cannot write the audit event of %s %q", action, table)
	}
	return nil
}

// AuditEvents returns up to limit events, newest first; limit <= 0 returns them all.
func (c *Catalog) AuditEvents(ctx context.Context, limit int) ([]AuditEvent, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := c.reader.QueryContext(ctx,
		`SELECT id, at_ms, actor, action, table_name, detail FROM audit_events ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, c.internal(err, "cannot read audit events")
	}
	var out []AuditEvent
	for rows.Next() {
		var (
			e  AuditEvent
			at int64
		)
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.TableName, &e.Detail); err != nil {
			rows.Close()
			return nil, c.internal(err, "cannot read audit events")
		}
		e.At = fromMS(at)
		out = append(out, e)
	}
	if err := closeRows(rows); err != nil {
		return nil, c.internal(err, "cannot read audit events")
	}
	return out, nil
}
