package oracle

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Token is the placeholder for the absolute path of tests/testdata in .slt files.
const Token = "__TESTDATA__"

// DB is one in-memory DuckDB database, used for one .slt file.
type DB struct {
	db *sql.DB
}

// Open opens an in-memory DuckDB with two threads and a UTC session.
func Open(ctx context.Context) (*DB, error) {
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, fmt.Errorf("cannot open duckdb: %w", err)
	}
	db := sql.OpenDB(c)
	// One connection, so that session settings hold for every statement.
	db.SetMaxOpenConns(1)
	// Division and modulo by zero are NULL in Lore (as in DuckDB's non-IEEE mode),
	// never an infinity or an error.
	for _, s := range []string{"SET threads = 2", "SET TimeZone = 'UTC'"} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, fmt.Errorf("cannot run %q: %w", s, err)
		}
	}
	return &DB{db: db}, nil
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// Exec runs a statement and discards any rows.
func (d *DB) Exec(ctx context.Context, q string) error {
	rows, err := d.db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

// Query runs a query and renders its rows; types holds one sqllogictest letter per
// column (I, R or T) derived from DuckDB's column types.
func (d *DB) Query(ctx context.Context, q string) (types string, out [][]string, err error) {
	rows, err := d.db.QueryContext(ctx, q)
	if err != nil {
		return "", nil, err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return "", nil, err
	}
	names := make([]string, len(cts))
	var tb strings.Builder
	for i, ct := range cts {
		names[i] = ct.DatabaseTypeName()
		tb.WriteByte(letter(names[i]))
	}
	vals := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return "", nil, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			s, err := render(v, names[i])
			if err != nil {
				return "", nil, fmt.Errorf("column %d: %w", i+1, err)
			}
			row[i] = s
		}
		out = append(out, row)
	}
	return tb.String(), out, rows.Err()
}

// letter maps a DuckDB type name to I, R or T.
func letter(name string) byte {
	switch {
	case strings.HasPrefix(name, "DECIMAL") && !strings.HasSuffix(name, "]"), name == "FLOAT", name == "DOUBLE":
		return 'R'
	}
	switch name {
	case "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
		"UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT":
		return 'I'
	}
	return 'T'
}

var (
	createRe   = regexp.MustCompile(`(?is)^\s*CREATE\s+TABLE\s+(IF\s+NOT\s+EXISTS\s+)?("[^"]+"|[\w.]+)\s+WITH\s*\((.*)\)\s*;?\s*$`)
	locationRe = regexp.MustCompile(`(?is)\blocation\s*=\s*'((?:[^']|'')*)'`)
	formatRe   = regexp.MustCompile(`(?is)\bformat\s*=\s*'([^']*)'`)
	dropRe     = regexp.MustCompile(`(?is)^\s*DROP\s+TABLE\b`)
	// Lore's approximate aggregates under DuckDB's names. On the suite's tiny
	// inputs both engines' sketches are exact, so the results agree.
	approxDistinctRe   = regexp.MustCompile(`(?i)\bapprox_distinct\s*\(`)
	approxPercentileRe = regexp.MustCompile(`(?i)\bapprox_percentile\s*\(`)
	literalRe          = regexp.MustCompile(`'((?:[^']|'')*)'`)
)

// Translate turns a Lore statement into DuckDB's dialect; testdata is the absolute
// path that replaces Token.
func Translate(q, testdata string) (string, error) {
	q = strings.ReplaceAll(q, Token, testdata)
	if m := createRe.FindStringSubmatch(q); m != nil {
		loc := locationRe.FindStringSubmatch(m[3])
		if loc == nil {
			return "", fmt.Errorf("CREATE TABLE without a location")
		}
		if f := formatRe.FindStringSubmatch(m[3]); f != nil && !strings.EqualFold(f[1], "parquet") {
			return "", fmt.Errorf("the oracle reads only parquet tables, not %q", f[1])
		}
		ifNot := ""
		if m[1] != "" {
			ifNot = "IF NOT EXISTS "
		}
		return fmt.Sprintf("CREATE VIEW %s%s AS SELECT * FROM read_parquet('%s')",
			ifNot, m[2], strings.ReplaceAll(parquetGlob(strings.ReplaceAll(loc[1], "''", "'")), "'", "''")), nil
	}
	if loc := dropRe.FindStringIndex(q); loc != nil {
		return q[:loc[0]] + "DROP VIEW" + q[loc[1]:], nil
	}
	q = approxDistinctRe.ReplaceAllString(q, "approx_count_distinct(")
	q = approxPercentileRe.ReplaceAllString(q, "approx_quantile(")
	// Directory paths become globs: DuckDB reads files and globs, not directories.
	q = literalRe.ReplaceAllStringFunc(q, func(lit string) string {
		p := strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
		if !strings.HasPrefix(p, testdata) {
			return lit
		}
		return "'" + strings.ReplaceAll(parquetGlob(p), "'", "''") + "'"
	})
	return q, nil
}

// parquetGlob maps a directory to a glob of every Parquet file under it.
func parquetGlob(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return filepath.Join(p, "**", "*.parquet")
	}
	return p
}

// errorKinds maps a Lore error code to the DuckDB error messages of the same kind
// (each a prefix, and optionally a fragment the message must contain).
var errorKinds = map[string][][2]string{
	"SYNTAX_ERROR":    {{"Parser Error", ""}},
	"TABLE_NOT_FOUND": {{"Catalog Error: Table with name", "does not exist"}, {"Catalog Error: View with name", "does not exist"}},
	"ANALYSIS_ERROR": {
		{"Binder Error", ""},
		{"Catalog Error: Scalar Function with name", "does not exist"},
		{"Catalog Error: Aggregate Function with name", "does not exist"},
		// DuckDB finds some type mismatches only when it plans the cast.
		{"Conversion Error: Unimplemented type for cast", ""},
	},
}

// ErrorMatches reports whether DuckDB's error err is of the kind of the Lore error
// code: a syntax error for SYNTAX_ERROR, a missing table for TABLE_NOT_FOUND, a
// binding error for ANALYSIS_ERROR. Any error matches an empty code, and codes
// DuckDB has no counterpart for.
func ErrorMatches(code string, err error) bool {
	kinds, ok := errorKinds[code]
	if err == nil || !ok {
		return err != nil
	}
	msg := err.Error()
	for _, k := range kinds {
		if strings.HasPrefix(msg, k[0]) && strings.Contains(msg, k[1]) {
			return true
		}
	}
	return false
}
