package catalog

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math/bits"
	"slices"
)

// The bounds search answers "which recorded files can hold a value of a column in
// [lo, hi]" — a file whose bounds [min, max] meet the range: max ≥ lo and min ≤ hi —
// by index searches that visit about the matching entries only, never every file.
//
// A B-tree on (min) or on (max) alone finds one side of that condition: searching
// max ≥ lo visits every file above lo, half the files of a clustered table for a
// point in its middle. So each bounded row also records its level: the bit length of
// the width of its bounds, measured on their first eight bytes read as a big-endian
// number (the prefix, which orders like the bytes). A row of level L has a width
// below 2^L, so if it meets the range its min's prefix is above prefix(lo) − 2^L. The
// search is then, for each level, a range of the (level, min) index from there to
// hi: the files that meet the range and the few of that level that start just below
// lo. Strings whose first eight bytes differ widely have high levels and are
// searched more widely, never wrongly.

// levels is the number of levels: bit lengths 0 … 64.
const levels = 65

// prefix reads the first eight bytes of b as a big-endian number, b padded with zero
// bytes when shorter. It orders like the bytes: a ≤ b implies prefix(a) ≤ prefix(b).
func prefix(b []byte) uint64 {
	var p [8]byte
	copy(p[:], b)
	return binary.BigEndian.Uint64(p[:])
}

// levelOf is the level of a row with bounds min and max, or nil (SQL NULL) for a row
// without usable bounds: one missing, or NaN in the column (never a bound). Bounds out
// of order get the top level, which is searched from the bottom.
func levelOf(min, max []byte, hasNaN bool) any {
	if min == nil || max == nil || hasNaN {
		return nil
	}
	lo, hi := prefix(min), prefix(max)
	if hi < lo {
		return levels - 1
	}
	return bits.Len64(hi - lo)
}

// levelStarts is, per level, the least min a row of that level meeting a range from
// lo up can have, as hex for the search's json_each: a row of level L has
// prefix(min) > prefix(lo) − 2^L, and every byte string whose prefix is above p sorts
// at or after p followed by a zero byte. Where prefix(lo) < 2^L the level is searched
// from its first row (the empty string).
func levelStarts(lo []byte) string {
	starts := make([]string, levels)
	p := prefix(lo)
	for l := range levels {
		if lo == nil || l == levels-1 || p < uint64(1)<<l {
			continue // from the empty string
		}
		start := binary.BigEndian.AppendUint64(nil, p-uint64(1)<<l)
		starts[l] = hex.EncodeToString(append(start, 0))
	}
	doc, _ := json.Marshal(starts) // strings only: cannot fail
	return string(doc)
}

// boundsSearch is the bounds search of one column, the file ids of the files that
// can match; hi is the upper bound's condition, or "" for none. Its parameters: ?1
// table, ?2 column, ?3 lo or NULL, ?4 hi, ?5 levelStarts(lo). The first part searches
// each level of the (level, min) index from its start up to hi, keeping the rows whose
// max reaches lo; the second reads the rows without usable bounds from their partial
// index (every recorded file has a row per column, so a file without bounds is a row
// found, not a row missing). UNION drops a file found twice.
func boundsSearch(hi string) string {
	return `SELECT s.file_id FROM json_each(?5) AS l
			CROSS JOIN file_column_stats s INDEXED BY file_column_stats_by_level
				ON s.table_id = ?1 AND s.column_id = ?2 AND s.level = l.key
					AND s.min >= unhex(l.value)` + hi + `
					AND s.max >= coalesce(?3, x'') AND s.level IS NOT NULL
		UNION
		SELECT s.file_id FROM file_column_stats s INDEXED BY file_column_stats_unbounded
			WHERE s.table_id = ?1 AND s.column_id = ?2 AND s.level IS NULL`
}

// pathsOf is a bounds search's files as paths, found by primary key, in path order.
func pathsOf(search string) string {
	return `SELECT f.path FROM (` + search + `) AS m
		CROSS JOIN table_files f ON f.table_id = ?1 AND f.file_id = m.file_id
		ORDER BY f.path`
}

var (
	idsBelow   = boundsSearch(` AND s.min <= ?4`) // with an upper bound
	idsAbove   = boundsSearch(``)                 // from lo up
	pathsBelow = pathsOf(idsBelow)
	pathsAbove = pathsOf(idsAbove)
)

// FilesMatching returns the paths of the recorded files of table tableID whose
// bounds of column columnID may hold a value in [lo, hi] (nil lo or hi: unbounded),
// in path order, by the bounds search. A file without usable bounds for the column
// (one missing, or NaN in the column) may hold anything and is returned. Bounds
// compare as bytes, which is the order of SPEC §3's encoding; a caller that trusts a
// floating column's bounds only after a full read asks only then.
func (c *Catalog) FilesMatching(ctx context.Context, tableID int64, columnID int, lo, hi []byte) ([]string, error) {
	query := pathsBelow
	if hi == nil {
		query = pathsAbove
	}
	var out []string
	err := c.readTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, tableID, columnID, blob(lo), blob(hi), levelStarts(lo))
		if err != nil {
			return c.internal(err, "cannot query the file bounds of table %d", tableID)
		}
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				rows.Close()
				return c.internal(err, "cannot query the file bounds of table %d", tableID)
			}
			out = append(out, p)
		}
		return closeRows(rows)
	})
	return out, err
}

// ColumnRange is a range of one column's values, in the bounds encoding: nil Lo or
// Hi is unbounded.
type ColumnRange struct {
	ColumnID int
	Lo, Hi   []byte
}

// FileIDsMatching returns, in order, the ids (positions in the record's Files) of the
// recorded files of table tableID that can hold a row in every one of ranges, by the
// bounds search of each range (every file when there are none). It answers for the record whose source identity and
// computation time are given: ok is false, and nothing is returned, when the
// table's record is another (written since the caller read it) or none — its file
// ids would name other files.
func (c *Catalog) FileIDsMatching(ctx context.Context, tableID int64, identity string, computedAtMS int64,
	ranges []ColumnRange) (ids []int, ok bool, err error) {
	err = c.readTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM table_statistics
			WHERE table_id = ? AND source_identity = ? AND computed_at_ms = ?`,
			tableID, identity, computedAtMS).Scan(&n); err != nil {
			return c.internal(err, "cannot read the statistics of table %d", tableID)
		}
		if ok = n == 1; !ok {
			return nil
		}
		if len(ranges) == 0 {
			var err error
			ids, err = c.allFileIDs(ctx, tx, tableID)
			return err
		}
		for k, r := range ranges {
			found, err := c.fileIDs(ctx, tx, tableID, r)
			if err != nil {
				return err
			}
			if k == 0 {
				ids = found
			} else {
				ids = intersect(ids, found)
			}
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return ids, ok, nil
}

// fileIDs is the bounds search of one range, its file ids in order.
func (c *Catalog) fileIDs(ctx context.Context, tx *sql.Tx, tableID int64, r ColumnRange) ([]int, error) {
	query := idsBelow
	if r.Hi == nil {
		query = idsAbove
	}
	rows, err := tx.QueryContext(ctx, query, tableID, r.ColumnID, blob(r.Lo), blob(r.Hi), levelStarts(r.Lo))
	if err != nil {
		return nil, c.internal(err, "cannot query the file bounds of table %d", tableID)
	}
	var ids []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, c.internal(err, "cannot query the file bounds of table %d", tableID)
		}
		ids = append(ids, id)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	slices.Sort(ids) // UNION's order is SQLite's choice
	return slices.Compact(ids), nil
}

// allFileIDs is the ids of every recorded file of the table, in order.
func (c *Catalog) allFileIDs(ctx context.Context, tx *sql.Tx, tableID int64) ([]int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT file_id FROM table_files WHERE table_id = ? ORDER BY file_id`, tableID)
	if err != nil {
		return nil, c.internal(err, "cannot read the files of table %d", tableID)
	}
	var ids []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, c.internal(err, "cannot read the files of table %d", tableID)
		}
		ids = append(ids, id)
	}
	return ids, closeRows(rows)
}

// intersect is the ids in both sorted lists a and b, in order.
func intersect(a, b []int) []int {
	out := a[:0]
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// setLevels gives the bounded rows of file_column_stats their level (migration 4):
// SQL has no way to read a blob as a number.
func setLevels(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT table_id, file_id, column_id, min, max FROM file_column_stats
		WHERE min IS NOT NULL AND max IS NOT NULL AND NOT has_nan`)
	if err != nil {
		return err
	}
	type row struct {
		table, file, column int64
		level               any
	}
	var todo []row
	for rows.Next() {
		var r row
		var min, max []byte
		if err := rows.Scan(&r.table, &r.file, &r.column, &min, &max); err != nil {
			rows.Close()
			return err
		}
		r.level = levelOf(nonNil(min), nonNil(max), false)
		todo = append(todo, r)
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	for _, r := range todo {
		if _, err := tx.ExecContext(ctx, `UPDATE file_column_stats SET level = ?
			WHERE table_id = ? AND file_id = ? AND column_id = ?`, r.level, r.table, r.file, r.column); err != nil {
			return err
		}
	}
	return nil
}

// nonNil is b, or an empty bound for the empty BLOB a driver may read back as nil.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
