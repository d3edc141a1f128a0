package catalog

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/loredb/lore/errs"
)

// Statistics is one table's statistics record as the catalog stores it: the
// statistics object's JSON document (docs/format/statistics.md; the catalog does not
// read it) with the columns the catalog is queried by, and the per-file bounds.
type Statistics struct {
	TableID         int64
	DocumentVersion int
	SourceKind      string
	SourceIdentity  string // the source version's SHA-256, hex
	SourceLabel     string // for the audit event
	Depth           string // "metadata" or "full"
	RowCount        int64
	ComputedAtMS    int64
	// Document is the record's document: with document version 3 its head, the
	// per-file list and zones being in Detail; before, the whole record.
	Document []byte
	// Detail is the per-file list and the zones of a version 3 record; nil for an
	// older record, and never filled by Statistics (StatisticsDetail reads it).
	Detail []byte
	// Files are the per-file bounds, in path order; empty when the record lists no
	// files one by one (too many files).
	Files []StatisticsFile
}

// StatisticsFile is one data file with its per-column bounds.
type StatisticsFile struct {
	Path           string
	Rows           int64
	Bytes          int64
	LastModifiedMS int64
	Columns        []FileColumnStats
}

// FileColumnStats is one file's bounds of one column. Min and Max are the
// order-preserving encodings of docs/format/bounds.md; nil when unknown.
type FileColumnStats struct {
	ColumnID    int // the column's 0-based position in the record
	Min, Max    []byte
	BoundsExact bool
	NullCount   *int64
	HasNaN      bool
}

// PutStatistics replaces the statistics record of the table named name, whose id
// must be s.TableID (a table dropped and created again under the same name since the
// work began is TABLE_NOT_FOUND: the record described another table). The record, the
// per-file rows and an "analyze" audit event are written in one transaction.
func (c *Catalog) PutStatistics(ctx context.Context, name string, s Statistics) error {
	return c.writeTx(ctx, func(tx *sql.Tx) error {
		t, err := c.loadTable(ctx, tx, name)
		if err != nil {
			return err
		}
		if t.ID != s.TableID {
			return errs.New(errs.TableNotFound, "table %q was dropped and created again while it was analyzed", name)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM table_files WHERE table_id = ?`, s.TableID); err != nil {
			return c.internal(err, "cannot replace the statistics of %q", name)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO table_statistics
			(table_id, document_version, source_kind, source_identity, depth, row_count, computed_at_ms, document, detail)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (table_id) DO UPDATE SET document_version = excluded.document_version,
				source_kind = excluded.source_kind, source_identity = excluded.source_identity,
				depth = excluded.depth, row_count = excluded.row_count,
				computed_at_ms = excluded.computed_at_ms, document = excluded.document, detail = excluded.detail`,
			s.TableID, s.DocumentVersion, s.SourceKind, s.SourceIdentity, s.Depth, s.RowCount, s.ComputedAtMS, s.Document,
			blob(s.Detail)); err != nil {
			return c.internal(err, "cannot write the statistics of %q", name)
		}
		fileStmt, err := tx.PrepareContext(ctx, `INSERT INTO table_files
			(table_id, file_id, path, row_count, size_bytes, last_modified_ms) VALUES (?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return c.internal(err, "cannot write the files of %q", name)
		}
		defer fileStmt.Close()
		colStmt, err := tx.PrepareContext(ctx, `INSERT INTO file_column_stats
			(table_id, file_id, column_id, min, max, bounds_exact, null_count, has_nan, level)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return c.internal(err, "cannot write the file statistics of %q", name)
		}
		defer colStmt.Close()
		columns := recordColumns(s.Files)
		for id, f := range s.Files {
			if _, err := fileStmt.ExecContext(ctx, s.TableID, id, f.Path, f.Rows, f.Bytes, f.LastModifiedMS); err != nil {
				return c.internal(err, "cannot write file %q of %q", f.Path, name)
			}
			for _, fc := range fileColumns(f, columns) {
				if _, err := colStmt.ExecContext(ctx, s.TableID, id, fc.ColumnID, blob(fc.Min), blob(fc.Max),
					fc.BoundsExact, fc.NullCount, fc.HasNaN, levelOf(fc.Min, fc.Max, fc.HasNaN)); err != nil {
					return c.internal(err, "cannot write the statistics of file %q of %q", f.Path, name)
				}
			}
		}
		return c.audit(ctx, tx, "analyze", name, map[string]any{
			"id":             s.TableID,
			"source_version": s.SourceLabel,
			"depth":          s.Depth,
			"rows":           s.RowCount,
			"files":          len(s.Files),
		})
	})
}

// recordColumns are the column ids any of files states something of, in order.
func recordColumns(files []StatisticsFile) []int {
	var ids []int
	for _, f := range files {
		for _, fc := range f.Columns {
			ids = append(ids, fc.ColumnID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// fileColumns are f's rows of file_column_stats: one per column of columns, in that
// order, a column f states nothing of (or its first statement of a repeated column)
// as a row without bounds. Every file has a row per column so that the files without
// bounds for a column are found by an index search (FilesMatching), not by looking
// for the rows that are not there.
func fileColumns(f StatisticsFile, columns []int) []FileColumnStats {
	out := make([]FileColumnStats, len(columns))
	stated := make([]bool, len(columns))
	for i, id := range columns {
		out[i].ColumnID = id
	}
	for _, fc := range f.Columns {
		if i, ok := slices.BinarySearch(columns, fc.ColumnID); ok && !stated[i] {
			out[i], stated[i] = fc, true
		}
	}
	return out
}

// blob stores nil as NULL and an empty bound (the empty string) as an empty BLOB.
func blob(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// Statistics returns the statistics record of the table with id tableID (without
// Files and without Detail); ok is false when the table has none.
func (c *Catalog) Statistics(ctx context.Context, tableID int64) (s Statistics, ok bool, err error) {
	return c.StatisticsSince(ctx, tableID, "", 0)
}

// StatisticsSince is Statistics for a caller that holds the decoded record of stamp
// (identity, computedAtMS; an empty identity is none): when the table's record still
// has that stamp, Document is left nil and only the row's other columns are read. One prepared single-row
// read either way: the caller learns in one round trip whether its copy is current
// and, when it is not, gets the new one — and a current copy costs no read of the
// document, which holds the sketches (tens of KB on a wide table).
func (c *Catalog) StatisticsSince(ctx context.Context, tableID int64, identity string, computedAtMS int64) (s Statistics, ok bool, err error) {
	row := c.readRow(ctx, `SELECT table_id, document_version, source_kind, source_identity, depth,
		COALESCE(row_count, -1), computed_at_ms,
		CASE WHEN ?1 <> '' AND source_identity = ?1 AND computed_at_ms = ?2 THEN NULL ELSE document END
		FROM table_statistics WHERE table_id = ?3`, identity, computedAtMS, tableID)
	switch err := row.Scan(&s.TableID, &s.DocumentVersion, &s.SourceKind, &s.SourceIdentity, &s.Depth,
		&s.RowCount, &s.ComputedAtMS, &s.Document); {
	case errors.Is(err, sql.ErrNoRows):
		return Statistics{}, false, nil
	case err != nil:
		return Statistics{}, false, c.internal(err, "cannot read the statistics of table %d", tableID)
	}
	return s, true, nil
}

// StatisticsDetail returns the Detail of the table's statistics record whose source
// identity and computation time are identity and computedAtMS: the detail of that
// very record, never of one written since. A record replaced since, or one without
// a detail, is STATISTICS_UNAVAILABLE.
func (c *Catalog) StatisticsDetail(ctx context.Context, tableID int64, identity string, computedAtMS int64) ([]byte, error) {
	var detail []byte
	row := c.readRow(ctx, `SELECT detail FROM table_statistics
		WHERE table_id = ? AND source_identity = ? AND computed_at_ms = ? AND detail IS NOT NULL`,
		tableID, identity, computedAtMS)
	switch err := row.Scan(&detail); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, errs.New(errs.StatisticsUnavailable, "the statistics record of table %d was replaced or has no detail", tableID)
	case err != nil:
		return nil, c.internal(err, "cannot read the statistics of table %d", tableID)
	}
	return detail, nil
}

// StatisticsStamp identifies the table's current statistics record without reading
// its document: the source identity and the computation time, which together change
// with every write. ok is false when the table has none.
func (c *Catalog) StatisticsStamp(ctx context.Context, tableID int64) (identity string, computedAtMS int64, ok bool, err error) {
	row := c.readRow(ctx, `SELECT source_identity, computed_at_ms FROM table_statistics WHERE table_id = ?`, tableID)
	switch err := row.Scan(&identity, &computedAtMS); {
	case errors.Is(err, sql.ErrNoRows):
		return "", 0, false, nil
	case err != nil:
		return "", 0, false, c.internal(err, "cannot read the statistics of table %d", tableID)
	}
	return identity, computedAtMS, true, nil
}
