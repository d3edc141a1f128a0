package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loredb/lore/errs"
)

// Column is one column of a registered table, in schema order.
type Column struct {
	Name      string
	Type      string // SQL type name in types.Name form, e.g. "BIGINT", "DECIMAL(10,2)"
	Partition bool   // a Hive partition column: its values live in paths, not in files
}

// Table is a registered table's definition and declared layout.
type Table struct {
	ID          int64
	Name        string // lower-case unless created quoted; unique, compared byte for byte
	Location    string
	Format      string // "parquet", "delta" or "iceberg"
	ClusteredBy []string
	Bloom       []string
	Columns     []Column
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Iceberg, when set on CreateTable, records the table in the catalog's Iceberg SQL
	// catalog tables too (in the same transaction). It is not read back.
	Iceberg *IcebergEntry
	// Storage says how the table's objects are reached, where not as the engine's
	// defaults say.
	Storage StorageOptions
}

// StorageOptions are how one table's objects are reached when not as the engine's
// defaults say: the S3-compatible store that holds them. They are kept as a JSON
// object in tables.storage_options. They never hold credentials: those come from the
// standard chain of the process reading the table.
type StorageOptions struct {
	S3Endpoint  string `json:"s3_endpoint,omitempty"`
	S3Region    string `json:"s3_region,omitempty"`
	S3AllowHTTP *bool  `json:"s3_allow_http,omitempty"`
	S3PathStyle *bool  `json:"s3_path_style,omitempty"`
}

// IsZero reports options that say nothing: the engine's defaults apply.
func (o StorageOptions) IsZero() bool { return o.Key() == "{}" }

// Key is the options' stored form, which is also a key for the store they describe:
// equal options give equal keys.
func (o StorageOptions) Key() string {
	b, err := json.Marshal(o)
	if err != nil {
		panic("BUG: storage options do not encode: " + err.Error())
	}
	return string(b)
}

// parseStorage reads tables.storage_options.
func parseStorage(s string) (StorageOptions, error) {
	var o StorageOptions
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		return o, errs.New(errs.Internal, "catalog: storage options %q do not read: %v", s, err)
	}
	return o, nil
}

// Formats are the table formats the catalog accepts.
var Formats = []string{"parquet", "delta", "iceberg"}

// MaxNameLength is the longest table or column name accepted, in bytes. Names are
// identifiers; a longer one is a mistake, refused with a clear error rather than
// stored.
const MaxNameLength = 1024

// Layout kinds, as stored in table_layout.kind.
const (
	layoutClusteredBy = "clustered_by"
	layoutBloom       = "bloom"
)

// CreateTable registers t and returns it with ID, CreatedAt and UpdatedAt set. If a
// table of that name exists, it returns (existing, false, nil) when ifNotExists, and an
// ANALYSIS_ERROR otherwise. An invalid definition (empty name or location, unknown
// format, duplicate or empty column names, clustered_by or bloom naming an unknown,
// duplicated or partition column) is an ANALYSIS_ERROR naming the problem. The
// returned bool reports whether the table was created. One audit event is written in
// the same transaction.
func (c *Catalog) CreateTable(ctx context.Context, t Table, ifNotExists bool) (Table, bool, error) {
	t.Format = strings.ToLower(t.Format)
	if err := validateTable(t); err != nil {
		return Table{}, false, err
	}
	var (
		out     Table
		created bool
	)
	err := c.writeTx(ctx, func(tx *sql.Tx) error {
		existing, err := c.loadTable(ctx, tx, t.Name)
		if err == nil {
			if ifNotExists {
				out = existing
				return nil
			}
			return errs.New(errs.Analysis, "table %q already exists", t.Name)
		}
		if !errors.Is(err, errs.ErrTableNotFound) {
			return err
		}

		now := nowMS()
		res, err := tx.ExecContext(ctx,
			`INSERT INTO tables (name, location, format, created_at_ms, updated_at_ms, storage_options) VALUES (?, ?, ?, ?, ?, ?)`,
			t.Name, t.Location, t.Format, now, now, t.Storage.Key())
		if err != nil {
			return c.internal(err, "cannot insert table %q", t.Name)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return c.internal(err, "cannot insert table %q", t.Name)
		}
		for i, col := range t.Columns {
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO table_columns (table_id, column_id, name, type, is_partition) VALUES (?, ?, ?, ?, ?)`,
				id, i, col.Name, col.Type, col.Partition); err != nil {
				return c.internal(err, "cannot insert column %q of table %q", col.Name, t.Name)
			}
		}
		if err := c.writeLayout(ctx, tx, id, t, layoutClusteredBy, t.ClusteredBy); err != nil {
			return err
		}
		if err := c.writeLayout(ctx, tx, id, t, layoutBloom, t.Bloom); err != nil {
			return err
		}
		detail := map[string]any{}
		if t.Iceberg != nil {
			if err := c.recordIceberg(ctx, tx, t.Name, *t.Iceberg); err != nil {
				return err
			}
			detail["iceberg_namespace"] = t.Iceberg.Namespace
		}
		out = t
		out.ID = id
		out.ClusteredBy = cloneNames(t.ClusteredBy)
		out.Bloom = cloneNames(t.Bloom)
		out.Columns = append([]Column(nil), t.Columns...)
		out.CreatedAt, out.UpdatedAt = fromMS(now), fromMS(now)
		created = true
		detail["id"] = id
		detail["location"] = t.Location
		detail["format"] = t.Format
		detail["columns"] = len(t.Columns)
		detail["clustered_by"] = jsonList(out.ClusteredBy)
		detail["bloom"] = jsonList(out.Bloom)
		return c.audit(ctx, tx, "create_table", t.Name, detail)
	})
	if err != nil {
		return Table{}, false, err
	}
	return out, created, nil
}

// DropTable removes the table named name and, by cascade, everything keyed by it
// (columns, layout, statistics, per-file statistics); it never touches the data. A
// missing table is TABLE_NOT_FOUND unless ifExists, when DropTable returns false.
func (c *Catalog) DropTable(ctx context.Context, name string, ifExists bool) (bool, error) {
	var dropped bool
	err := c.writeTx(ctx, func(tx *sql.Tx) error {
		t, err := c.loadTable(ctx, tx, name)
		if err != nil {
			if ifExists && errors.Is(err, errs.ErrTableNotFound) {
				return nil
			}
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tables WHERE id = ?`, t.ID); err != nil {
			return c.internal(err, "cannot drop table %q", name)
		}
		dropped = true
		return c.audit(ctx, tx, "drop_table", name, map[string]any{
			"id":       t.ID,
			"location": t.Location,
			"format":   t.Format,
		})
	})
	return dropped, err
}

// Table returns the definition of the table named name, or TABLE_NOT_FOUND.
func (c *Catalog) Table(ctx context.Context, name string) (Table, error) {
	var t Table
	err := c.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		t, err = c.loadTable(ctx, tx, name)
		return err
	})
	return t, err
}

// lookupQuery is Lookup's query.
const lookupQuery = `SELECT id, name, location, format, storage_options FROM tables WHERE name = ?`

// Lookup returns what reading the table named name needs — its id, name, location
// and format — in one indexed query, without its columns or layout (Table has
// those). A missing table is TABLE_NOT_FOUND.
func (c *Catalog) Lookup(ctx context.Context, name string) (Table, error) {
	var (
		t       Table
		storage string
	)
	err := c.readRow(ctx, lookupQuery, name).
		Scan(&t.ID, &t.Name, &t.Location, &t.Format, &storage)
	if errors.Is(err, sql.ErrNoRows) {
		return Table{}, errs.New(errs.TableNotFound, "table %q does not exist", name)
	}
	if err != nil {
		return Table{}, c.internal(err, "cannot read table %q", name)
	}
	if t.Storage, err = parseStorage(storage); err != nil {
		return Table{}, err
	}
	return t, nil
}

// Tables returns every registered table, sorted by name (byte order).
func (c *Catalog) Tables(ctx context.Context) ([]Table, error) {
	var out []Table
	err := c.readTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx,
			`SELECT id, name, location, format, created_at_ms, updated_at_ms, storage_options FROM tables ORDER BY name`)
		if err != nil {
			return c.internal(err, "cannot list tables")
		}
		byID := map[int64]int{}
		for rows.Next() {
			var (
				t                Table
				created, updated int64
				storage          string
			)
			if err := rows.Scan(&t.ID, &t.Name, &t.Location, &t.Format, &created, &updated, &storage); err != nil {
				rows.Close()
				return c.internal(err, "cannot list tables")
			}
			if t.Storage, err = parseStorage(storage); err != nil {
				rows.Close()
				return err
			}
			t.CreatedAt, t.UpdatedAt = fromMS(created), fromMS(updated)
			byID[t.ID] = len(out)
			out = append(out, t)
		}
		if err := closeRows(rows); err != nil {
			return c.internal(err, "cannot list tables")
		}
		return c.loadDetails(ctx, tx, out, byID, 0)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetClusteredBy replaces the clustered_by columns of the table named name; an empty
// list clears them. The columns are validated as in CreateTable.
func (c *Catalog) SetClusteredBy(ctx context.Context, name string, cols []string) error {
	return c.setLayout(ctx, name, layoutClusteredBy, cols)
}

// SetBloom replaces the bloom filter columns of the table named name; an empty list
// clears them. The columns are validated as in CreateTable.
func (c *Catalog) SetBloom(ctx context.Context, name string, cols []string) error {
	return c.setLayout(ctx, name, layoutBloom, cols)
}

func (c *Catalog) setLayout(ctx context.Context, name, kind string, cols []string) error {
	return c.writeTx(ctx, func(tx *sql.Tx) error {
		t, err := c.loadTable(ctx, tx, name)
		if err != nil {
			return err
		}
		if err := validateLayout(t, kind, cols); err != nil {
			return err
		}
		old := t.ClusteredBy
		if kind == layoutBloom {
			old = t.Bloom
		}
		if _, err := tx.ExecContext(ctx,
			`DELETE FROM table_layout WHERE table_id = ? AND kind = ?`, t.ID, kind); err != nil {
			return c.internal(err, "cannot change %s of table %q", kind, name)
		}
		if err := c.writeLayout(ctx, tx, t.ID, t, kind, cols); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx,
			`UPDATE tables SET updated_at_ms = ? WHERE id = ?`, nowMS(), t.ID); err != nil {
			return c.internal(err, "cannot change %s of table %q", kind, name)
		}
		return c.audit(ctx, tx, "alter_table", name, map[string]any{
			"id":  t.ID,
			"set": kind,
			"old": jsonList(old),
			"new": jsonList(cols),
		})
	})
}

// writeLayout inserts the layout rows of one kind; cols are already validated against
// t.Columns.
func (c *Catalog) writeLayout(ctx context.Context, tx *sql.Tx, id int64, t Table, kind string, cols []string) error {
	for pos, name := range cols {
		colID := columnIndex(t.Columns, name)
		if colID < 0 {
			panic("BUG: layout column " + name + " was validated but is not a column")
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO table_layout (table_id, kind, position, column_id) VALUES (?, ?, ?, ?)`,
			id, kind, pos, colID); err != nil {
			return c.internal(err, "cannot write %s of table %q", kind, t.Name)
		}
	}
	return nil
}

// loadTable reads one table with its columns and layout inside tx.
func (c *Catalog) loadTable(ctx context.Context, tx *sql.Tx, name string) (Table, error) {
	var (
		t                Table
		created, updated int64
		storage          string
	)
	err := tx.QueryRowContext(ctx,
		`SELECT id, name, location, format, created_at_ms, updated_at_ms, storage_options FROM tables WHERE name = ?`, name).
		Scan(&t.ID, &t.Name, &t.Location, &t.Format, &created, &updated, &storage)
	if errors.Is(err, sql.ErrNoRows) {
		return Table{}, errs.New(errs.TableNotFound, "table %q does not exist", name)
	}
	if err != nil {
		return Table{}, c.internal(err, "cannot read table %q", name)
	}
	t.CreatedAt, t.UpdatedAt = fromMS(created), fromMS(updated)
	if t.Storage, err = parseStorage(storage); err != nil {
		return Table{}, err
	}
	list := []Table{t}
	if err := c.loadDetails(ctx, tx, list, map[int64]int{t.ID: 0}, t.ID); err != nil {
		return Table{}, err
	}
	return list[0], nil
}

// loadDetails fills the columns and layout of the tables in list (indexed by id in
// byID): of the one table onlyID, or of all tables when onlyID is 0 (ids start at 1).
func (c *Catalog) loadDetails(ctx context.Context, tx *sql.Tx, list []Table, byID map[int64]int, onlyID int64) error {
	if len(list) == 0 {
		return nil
	}
	// The filters are constant strings chosen here; values are always placeholders.
	colFilter, layoutFilter, args := "", "", []any(nil)
	if onlyID != 0 {
		colFilter, layoutFilter, args = "WHERE table_id = ?", "WHERE l.table_id = ?", []any{onlyID}
	}
	rows, err := tx.QueryContext(ctx,
		`SELECT table_id, name, type, is_partition FROM table_columns `+colFilter+
			` ORDER BY table_id, column_id`, args...)
	if err != nil {
		return c.internal(err, "cannot read columns")
	}
	for rows.Next() {
		var (
			id  int64
			col Column
		)
		if err := rows.Scan(&id, &col.Name, &col.Type, &col.Partition); err != nil {
			rows.Close()
			return c.internal(err, "cannot read columns")
		}
		if i, ok := byID[id]; ok {
			list[i].Columns = append(list[i].Columns, col)
		}
	}
	if err := closeRows(rows); err != nil {
		return c.internal(err, "cannot read columns")
	}

	rows, err = tx.QueryContext(ctx,
		`SELECT l.table_id, l.kind, c.name FROM table_layout AS l
		 JOIN table_columns AS c ON c.table_id = l.table_id AND c.column_id = l.column_id `+layoutFilter+
			` ORDER BY l.table_id, l.kind, l.position`, args...)
	if err != nil {
		return c.internal(err, "cannot read table layouts")
	}
	for rows.Next() {
		var (
			id         int64
			kind, name string
		)
		if err := rows.Scan(&id, &kind, &name); err != nil {
			rows.Close()
			return c.internal(err, "cannot read table layouts")
		}
		i, ok := byID[id]
		if !ok {
			continue
		}
		switch kind {
		case layoutClusteredBy:
			list[i].ClusteredBy = append(list[i].ClusteredBy, name)
		case layoutBloom:
			list[i].Bloom = append(list[i].Bloom, name)
		}
	}
	if err := closeRows(rows); err != nil {
		return c.internal(err, "cannot read table layouts")
	}
	return nil
}

// closeRows closes rows and returns the first error of iterating or closing them.
func closeRows(rows *sql.Rows) error {
	return errors.Join(rows.Err(), rows.Close())
}

// validateTable checks a definition before it reaches SQL, so that every refusal is an
// ANALYSIS_ERROR that names what is wrong.
func validateTable(t Table) error {
	if err := validateName("table", t.Name); err != nil {
		return err
	}
	if t.Location == "" {
		return errs.New(errs.Analysis, "table %q has no location", t.Name)
	}
	if !utf8.ValidString(t.Location) || strings.IndexByte(t.Location, 0) >= 0 {
		return errs.New(errs.Analysis, "location of table %q is not valid UTF-8 text", t.Name)
	}
	known := false
	for _, f := range Formats {
		known = known || t.Format == f
	}
	if !known {
		return errs.New(errs.Analysis, "table %q has unknown format %q; expected one of %s",
			t.Name, t.Format, strings.Join(Formats, ", "))
	}
	seen := make(map[string]bool, len(t.Columns))
	for i, col := range t.Columns {
		if err := validateName("column", col.Name); err != nil {
			return errs.New(errs.Analysis, "column %d of table %q: %w", i+1, t.Name, err)
		}
		if seen[col.Name] {
			return errs.New(errs.Analysis, "table %q has two columns named %q", t.Name, col.Name)
		}
		seen[col.Name] = true
		if col.Type == "" {
			return errs.New(errs.Analysis, "column %q of table %q has no type", col.Name, t.Name)
		}
		if !utf8.ValidString(col.Type) || strings.IndexByte(col.Type, 0) >= 0 {
			return errs.New(errs.Analysis, "column %q of table %q has a type that is not valid UTF-8 text",
				col.Name, t.Name)
		}
	}
	if err := validateLayout(t, layoutClusteredBy, t.ClusteredBy); err != nil {
		return err
	}
	return validateLayout(t, layoutBloom, t.Bloom)
}

// validateName checks a table or column name: non-empty, valid UTF-8 without NUL bytes,
// at most MaxNameLength bytes.
func validateName(what, name string) error {
	switch {
	case name == "":
		return errs.New(errs.Analysis, "%s name is empty", what)
	case !utf8.ValidString(name):
		return errs.New(errs.Analysis, "%s name %q is not valid UTF-8", what, name)
	case strings.IndexByte(name, 0) >= 0:
		return errs.New(errs.Analysis, "%s name %q contains a NUL byte", what, name)
	case len(name) > MaxNameLength:
		return errs.New(errs.Analysis, "%s name %q… is %d bytes long; the limit is %d",
			what, truncateName(name), len(name), MaxNameLength)
	}
	return nil
}

// validateLayout checks a clustered_by or bloom list against t's columns: each a column
// of the table, not a partition column (its values are not in the files, so the files
// can be neither sorted nor filtered by it), and listed once.
func validateLayout(t Table, kind string, cols []string) error {
	seen := make(map[string]bool, len(cols))
	for _, name := range cols {
		i := columnIndex(t.Columns, name)
		if i < 0 {
			return errs.New(errs.Analysis, "%s names column %q, which table %q does not have", kind, name, t.Name)
		}
		if t.Columns[i].Partition {
			return errs.New(errs.Analysis,
				"%s names partition column %q of table %q; partition values are not stored in the files",
				kind, name, t.Name)
		}
		if seen[name] {
			return errs.New(errs.Analysis, "%s lists column %q more than once", kind, name)
		}
		seen[name] = true
	}
	return nil
}

func columnIndex(cols []Column, name string) int {
	for i, c := range cols {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// truncateName shortens a name for an error message, on a rune boundary.
func truncateName(name string) string {
	const keep = 64
	if len(name) <= keep {
		return name
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut]
}

// cloneNames copies a name list, keeping nil as nil so that "no columns" reads the same
// whether it came back from the database or from the caller.
func cloneNames(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	return append([]string(nil), names...)
}

// jsonList makes a nil list encode as [] rather than null in audit details.
func jsonList(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}
