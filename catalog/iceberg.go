package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/loredb/lore/errs"
)

// IcebergCatalogName is the catalog_name under which Lore records, in its own
// catalog's iceberg_tables, the Iceberg tables registered by path.
const IcebergCatalogName = "lore"

// DefaultIcebergNamespace is the namespace a table registered by path is recorded in
// when CREATE TABLE names none.
const DefaultIcebergNamespace = "default"

// maxIcebergField bounds a name or metadata location read from an Iceberg catalog: the
// layout declares at most 1,000 characters, and a longer value is not a catalog's.
const maxIcebergField = 64 << 10

// IcebergRef names a table in an Iceberg SQL catalog on SQLite: a catalog file, or Lore's
// own catalog.
type IcebergRef struct {
	File      string // the catalog file; "" for Lore's own catalog
	Catalog   string // the catalog_name; "" for the only one that holds the table
	Namespace string // the namespace, its levels joined by dots
	Table     string
}

// String renders r as a location ParseIcebergLocation reads back.
func (r IcebergRef) String() string {
	var b strings.Builder
	if r.File != "" {
		b.WriteString("sqlite:" + r.File)
	} else {
		b.WriteString("lore:")
	}
	if r.Catalog != "" {
		b.WriteString("?catalog=" + r.Catalog)
	}
	if r.File != "" || r.Catalog != "" {
		b.WriteString("#")
	}
	b.WriteString(r.Namespace + "." + r.Table)
	return b.String()
}

// ParseIcebergLocation reads a table location that names an Iceberg SQL catalog:
//
//	sqlite:<catalog file>[?catalog=<name>]#<namespace>.<table>
//	lore:[?catalog=<name>#]<namespace>.<table>
//
// The namespace may hold dots (levels); the last segment is the table. ok is false
// when loc is neither form (a path or URL); a location of one of the forms that is
// malformed is an ANALYSIS_ERROR saying what is wrong.
func ParseIcebergLocation(loc string) (ref IcebergRef, ok bool, err error) {
	bad := func(format string, args ...any) (IcebergRef, bool, error) {
		return IcebergRef{}, true, errs.New(errs.Analysis, "Iceberg catalog location %q: %s", loc, fmt.Sprintf(format, args...))
	}
	var rest string
	switch {
	case strings.HasPrefix(loc, "sqlite:"):
		rest = loc[len("sqlite:"):]
		head, ident, found := strings.Cut(rest, "#")
		if !found {
			return bad("needs #<namespace>.<table> after the catalog file")
		}
		file, query, _ := strings.Cut(head, "?")
		if file == "" {
			return bad("names no catalog file")
		}
		ref.File = file
		if ref.Catalog, err = catalogParam(query, head != file); err != nil {
			return bad("%v", err)
		}
		rest = ident
	case strings.HasPrefix(loc, "lore:"):
		rest = loc[len("lore:"):]
		if head, ident, found := strings.Cut(rest, "#"); found {
			query, hasQuery := strings.CutPrefix(head, "?")
			if !hasQuery {
				return bad("a Lore catalog location has no file before #")
			}
			if ref.Catalog, err = catalogParam(query, true); err != nil {
				return bad("%v", err)
			}
			rest = ident
		}
	default:
		return IcebergRef{}, false, nil
	}
	dot := strings.LastIndexByte(rest, '.')
	if dot < 0 {
		return bad("needs <namespace>.<table>, not %q", rest)
	}
	ref.Namespace, ref.Table = rest[:dot], rest[dot+1:]
	if err := ValidateIcebergNamespace(ref.Namespace); err != nil {
		return bad("%v", err)
	}
	if ref.Table == "" {
		return bad("names no table after the namespace")
	}
	if !utf8.ValidString(ref.Table) || strings.ContainsRune(ref.Table, 0) {
		return bad("the table name is not valid UTF-8 text")
	}
	return ref, true, nil
}

// catalogParam reads the query after a catalog file: nothing, or catalog=<name>.
func catalogParam(query string, present bool) (string, error) {
	if !present {
		return "", nil
	}
	name, ok := strings.CutPrefix(query, "catalog=")
	if !ok || name == "" || strings.ContainsAny(name, "?&#") {
		return "", fmt.Errorf("the only parameter is ?catalog=<name>, not %q", "?"+query)
	}
	if !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return "", errors.New("the catalog name is not valid UTF-8 text")
	}
	return name, nil
}

// ValidateIcebergNamespace checks a namespace: dot-separated levels, none empty, valid
// UTF-8 without NUL.
func ValidateIcebergNamespace(ns string) error {
	if ns == "" {
		return errors.New("the namespace is empty")
	}
	if !utf8.ValidString(ns) || strings.ContainsRune(ns, 0) {
		return errors.New("the namespace is not valid UTF-8 text")
	}
	if len(ns) > MaxNameLength {
		return fmt.Errorf("the namespace is longer than %d bytes", MaxNameLength)
	}
	for _, level := range strings.Split(ns, ".") {
		if level == "" {
			return fmt.Errorf("namespace %q has an empty level", ns)
		}
	}
	return nil
}

// IcebergMetadataLocation reads, from the SQLite Iceberg catalog file ref.File, the
// metadata location ref's table currently has: as the catalog holds it, which may be
// relative. The file is opened read-only for this one lookup, so that a commit by
// another engine is seen by the next. A missing file, namespace or table is
// SOURCE_UNAVAILABLE naming it; a file that is not SQLite, or not an Iceberg catalog, is
// CORRUPT_SOURCE.
func IcebergMetadataLocation(ctx context.Context, ref IcebergRef) (string, error) {
	abs, err := filepath.Abs(ref.File)
	if err != nil {
		return "", errs.New(errs.SourceUnavailable, "cannot find Iceberg catalog %q: %w", ref.File, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", errs.New(errs.SourceUnavailable, "Iceberg catalog file %q does not exist", ref.File)
	case err != nil:
		return "", errs.New(errs.SourceUnavailable, "cannot open Iceberg catalog %q: %w", ref.File, err)
	case fi.IsDir():
		return "", errs.New(errs.SourceUnavailable, "Iceberg catalog %q is a directory, not a catalog file", ref.File)
	}
	db, err := sql.Open("sqlite3", dsn(abs, "mode=ro", "_query_only=1"))
	if err != nil {
		return "", errs.New(errs.SourceUnavailable, "cannot open Iceberg catalog %q: %w", ref.File, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	loc, err := lookupIceberg(ctx, db, ref, ref.File)
	if err != nil {
		return "", foreignError(err, ref.File)
	}
	return loc, nil
}

// IcebergMetadataLocation reads ref's current metadata location from Lore's own
// catalog (ref.File is ignored), with the errors of the package function.
func (c *Catalog) IcebergMetadataLocation(ctx context.Context, ref IcebergRef) (string, error) {
	loc, err := lookupIceberg(ctx, c.reader, ref, c.path)
	if err != nil {
		return "", c.internal(err, "cannot read Iceberg table %s.%s", ref.Namespace, ref.Table)
	}
	return loc, nil
}

// foreignError gives a driver error reading another engine's catalog file its code:
// bytes SQLite does not recognise are a corrupt source, anything else (a lock held
// too long, an I/O error) an unavailable one.
func foreignError(err error, file string) error {
	var coded *errs.Error
	if errors.As(err, &coded) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	msg := strings.ToLower(err.Error())
	if strings.Contains(msg, "not a database") || strings.Contains(msg, "malformed") || strings.Contains(msg, "corrupt") {
		return errs.New(errs.CorruptSource, "Iceberg catalog %q is not a SQLite database: %w", file, err)
	}
	return errs.New(errs.SourceUnavailable, "cannot read Iceberg catalog %q: %w", file, err)
}

// hasTable reports whether the database has a table of that name.
func hasTable(ctx context.Context, q queryer, name string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, name).Scan(&n)
	return n > 0, err
}

// hasTypeColumn reports whether iceberg_tables has the iceberg_type column, which
// catalogs written before views existed lack.
func hasTypeColumn(ctx context.Context, q queryer) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('iceberg_tables') WHERE name = 'iceberg_type'`).Scan(&n)
	return n > 0, err
}

// lookupIceberg finds ref's metadata location in the iceberg_tables of db; file names
// the catalog in errors.
func lookupIceberg(ctx context.Context, db *sql.DB, ref IcebergRef, file string) (string, error) {
	ok, err := hasTable(ctx, db, "iceberg_tables")
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errs.New(errs.CorruptSource, "%q is not an Iceberg SQL catalog: it has no iceberg_tables table", file)
	}
	typed, err := hasTypeColumn(ctx, db)
	if err != nil {
		return "", err
	}
	typeCol := "NULL"
	if typed {
		typeCol = "iceberg_type"
	}
	// Two rows are enough to tell one table from an ambiguous name.
	rows, err := db.QueryContext(ctx, `SELECT catalog_name, metadata_location, `+typeCol+` FROM iceberg_tables
		WHERE table_namespace = ? AND table_name = ? AND (? = '' OR catalog_name = ?)
		ORDER BY catalog_name LIMIT 2`, ref.Namespace, ref.Table, ref.Catalog, ref.Catalog)
	if err != nil {
		return "", err
	}
	type found struct {
		catalog string
		loc     sql.NullString
		typ     sql.NullString
	}
	var hits []found
	for rows.Next() {
		var f found
		if err := rows.Scan(&f.catalog, &f.loc, &f.typ); err != nil {
			rows.Close()
			return "", err
		}
		hits = append(hits, f)
	}
	if err := closeRows(rows); err != nil {
		return "", err
	}
	name := ref.Namespace + "." + ref.Table
	switch len(hits) {
	case 0:
		return "", missingIceberg(ctx, db, ref, file)
	case 2:
		return "", errs.New(errs.Analysis, "Iceberg catalog %q holds %s in catalogs %q and %q: name one with ?catalog=<name>",
			file, name, hits[0].catalog, hits[1].catalog)
	}
	h := hits[0]
	if h.typ.Valid && strings.EqualFold(h.typ.String, "VIEW") {
		return "", errs.New(errs.Analysis, "%s in Iceberg catalog %q is a view, not a table", name, file)
	}
	if !h.loc.Valid || strings.TrimSpace(h.loc.String) == "" {
		return "", errs.New(errs.SourceUnavailable, "%s in Iceberg catalog %q has no metadata location", name, file)
	}
	if len(h.loc.String) > maxIcebergField || !utf8.ValidString(h.loc.String) {
		return "", errs.New(errs.CorruptSource, "%s in Iceberg catalog %q has a metadata location that is not a path (%d bytes)",
			name, file, len(h.loc.String))
	}
	return h.loc.String, nil
}

// missingIceberg says what of ref the catalog lacks: the catalog name, the namespace,
// or the table.
func missingIceberg(ctx context.Context, db *sql.DB, ref IcebergRef, file string) error {
	withProps, err := hasTable(ctx, db, "iceberg_namespace_properties")
	if err != nil {
		return err
	}
	exists := func(tableQuery, propsQuery string, args ...any) (bool, error) {
		q := `SELECT EXISTS (` + tableQuery + `)`
		if withProps {
			q = `SELECT EXISTS (` + tableQuery + `) OR EXISTS (` + propsQuery + `)`
		}
		var n int
		err := db.QueryRowContext(ctx, q, append(append([]any(nil), args...), args...)...).Scan(&n)
		return n != 0, err
	}
	if ref.Catalog != "" {
		ok, err := exists(`SELECT 1 FROM iceberg_tables WHERE catalog_name = ?`,
			`SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ?`, ref.Catalog)
		if err != nil {
			return err
		}
		if !ok {
			return errs.New(errs.SourceUnavailable, "Iceberg catalog %q has no catalog named %q", file, ref.Catalog)
		}
	}
	ok, err := exists(`SELECT 1 FROM iceberg_tables WHERE table_namespace = ? AND (? = '' OR catalog_name = ?)`,
		`SELECT 1 FROM iceberg_namespace_properties WHERE namespace = ? AND (? = '' OR catalog_name = ?)`,
		ref.Namespace, ref.Catalog, ref.Catalog)
	if err != nil {
		return err
	}
	if !ok {
		return errs.New(errs.SourceUnavailable, "Iceberg catalog %q has no namespace %q", file, ref.Namespace)
	}
	return errs.New(errs.SourceUnavailable, "Iceberg catalog %q has no table %q in namespace %q", file, ref.Table, ref.Namespace)
}

// IcebergEntry is the row CreateTable records in the catalog's iceberg_tables for an
// Iceberg table registered by path, so that other engines find it under catalog
// IcebergCatalogName.
type IcebergEntry struct {
	Namespace        string
	MetadataLocation string // the metadata file read at registration
}

// recordIceberg writes e for the table named name in tx. The rows of catalog
// IcebergCatalogName mirror Lore's registered tables by name, so a row already there
// under that namespace and name (a table registered before and dropped, the row left
// for other engines) is replaced, its metadata location kept as the previous one.
func (c *Catalog) recordIceberg(ctx context.Context, tx *sql.Tx, name string, e IcebergEntry) error {
	if err := ValidateIcebergNamespace(e.Namespace); err != nil {
		return errs.New(errs.Analysis, "iceberg_namespace: %v", err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE iceberg_tables SET previous_metadata_location = metadata_location, metadata_location = ?
		WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location IS NOT ?`,
		e.MetadataLocation, IcebergCatalogName, e.Namespace, name, e.MetadataLocation)
	if err != nil {
		return c.internal(err, "cannot record Iceberg table %s.%s", e.Namespace, name)
	}
	var have int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM iceberg_tables
		WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?`, IcebergCatalogName, e.Namespace, name).Scan(&have); err != nil {
		return c.internal(err, "cannot read iceberg_tables")
	}
	if n, _ := res.RowsAffected(); n > 0 || have > 0 {
		return nil
	}
	typed, err := hasTypeColumn(ctx, tx)
	if err != nil {
		return c.internal(err, "cannot read iceberg_tables")
	}
	insert := `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location)
		VALUES (?, ?, ?, ?, NULL)`
	if typed {
		insert = `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)
		VALUES (?, ?, ?, ?, NULL, 'TABLE')`
	}
	if _, err := tx.ExecContext(ctx, insert, IcebergCatalogName, e.Namespace, name, e.MetadataLocation); err != nil {
		return c.internal(err, "cannot record Iceberg table %s.%s", e.Namespace, name)
	}
	// The namespace exists for the other engines as their own create_namespace leaves it.
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO iceberg_namespace_properties
		(catalog_name, namespace, property_key, property_value) VALUES (?, ?, 'exists', 'true')`,
		IcebergCatalogName, e.Namespace); err != nil {
		return c.internal(err, "cannot record Iceberg namespace %s", e.Namespace)
	}
	return nil
}

// CommitIcebergMetadata moves the table ref names in Lore's own catalog from metadata
// file from to metadata file to, as Iceberg SQL catalogs commit (iceberg-go's and
// pyiceberg's alike): one UPDATE conditional on the current location, the old one kept
// as the previous. A table whose location is no longer from was committed by another
// writer first: SOURCE_CHANGED, and nothing is changed.
func (c *Catalog) CommitIcebergMetadata(ctx context.Context, ref IcebergRef, from, to string) error {
	return c.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ?
			WHERE table_namespace = ? AND table_name = ? AND (? = '' OR catalog_name = ?) AND metadata_location = ?`,
			to, from, ref.Namespace, ref.Table, ref.Catalog, ref.Catalog, from)
		if err != nil {
			return c.internal(err, "cannot commit Iceberg table %s.%s", ref.Namespace, ref.Table)
		}
		switch n, _ := res.RowsAffected(); {
		case n == 0:
			return errs.New(errs.SourceChanged, "Iceberg table %s.%s is not at metadata file %q: another commit came first",
				ref.Namespace, ref.Table, from)
		case n > 1:
			return errs.New(errs.Analysis, "Iceberg table %s.%s is in several catalogs: name one", ref.Namespace, ref.Table)
		}
		return nil
	})
}
