package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// loreEngine runs queries in-process through lore.Engine.
type loreEngine struct {
	eng      *lore.Engine
	settings map[string]string
	// last is the query record of the last successful run.
	last *lore.Record
}

// openLore opens an engine over home and defines every table as a Parquet table
// over its directory, or as the Delta or Iceberg table over the same files when it
// has one.
func openLore(ctx context.Context, home string, threads int, settings map[string]string, tables []Table) (*loreEngine, error) {
	return openLoreWith(ctx, lore.Options{Home: home, Threads: threads}, settings, tables)
}

// openLoreWith is openLore with every engine option given (a store's settings, a
// disk cache); a table's Dir may be an s3:// location.
func openLoreWith(ctx context.Context, opts lore.Options, settings map[string]string, tables []Table) (*loreEngine, error) {
	eng, err := lore.Open(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("cannot open Lore: %w", err)
	}
	for _, t := range tables {
		format, loc := "parquet", t.Dir
		if t.Lake != "" {
			format, loc = t.Lake, t.LakeDir
		}
		q := fmt.Sprintf("CREATE TABLE %s WITH (location = %s, format = '%s')", t.Name, sqlString(loc), format)
		if _, err := eng.Query(ctx, q, nil); err != nil {
			eng.Close()
			return nil, fmt.Errorf("cannot define table %s in Lore: %w", t.Name, err)
		}
	}
	return &loreEngine{eng: eng, settings: settings}, nil
}

func (l *loreEngine) name() string { return "lore" }

func (l *loreEngine) close() error { return l.eng.Close() }

func (l *loreEngine) errorCode(err error) string { return string(errs.CodeOf(err)) }

func (l *loreEngine) run(ctx context.Context, q string, keep bool) ([][]string, int, error) {
	res, err := l.eng.Query(ctx, q, l.settings)
	if err != nil {
		return nil, 0, err
	}
	l.last = res.Record
	n := int(res.NumRows())
	if !keep {
		return nil, n, nil
	}
	out := make([][]string, 0, n)
	for _, b := range res.Batches {
		cols := b.Columns()
		for i := range int(b.NumRows()) {
			row := make([]string, len(cols))
			for j, c := range cols {
				// A column of Arrow's null type has no validity bitmap, so
				// ValueAt does not see its rows as nulls; they are all NULL.
				if c.DataType().ID() == arrow.NULL || c.IsNull(i) {
					row[j] = "NULL"
					continue
				}
				row[j] = types.ValueAt(c, i).String()
			}
			out = append(out, row)
		}
	}
	return out, n, nil
}

// duckEngine runs queries through an in-memory DuckDB over database/sql.
type duckEngine struct {
	db    *sql.DB
	notes []string
}

// openDuckDB opens an in-memory DuckDB with threads workers, UTC, and no cache of
// file contents between queries, and defines every table as a view over the list
// of its Parquet files.
func openDuckDB(ctx context.Context, threads int, tables []Table) (*duckEngine, error) {
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, fmt.Errorf("cannot open DuckDB: %w", err)
	}
	db := sql.OpenDB(c)
	// One connection, so that the session settings hold for every query.
	db.SetMaxOpenConns(1)
	d := &duckEngine{db: db}
	for _, s := range []string{fmt.Sprintf("SET threads = %d", threads), "SET TimeZone = 'UTC'"} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, fmt.Errorf("cannot run %q in DuckDB: %w", s, err)
		}
	}
	// The external file cache keeps Parquet bytes in memory across queries (DuckDB
	// 1.3 and later); Lore has no such cache, so it is off.
	if _, err := db.ExecContext(ctx, "SET enable_external_file_cache = false"); err != nil {
		d.notes = append(d.notes, "DuckDB does not know enable_external_file_cache: "+oneLine(err.Error()))
	}
	for _, t := range tables {
		files, err := parquetFiles(t.Dir)
		if err != nil {
			db.Close()
			return nil, err
		}
		if len(files) == 0 {
			db.Close()
			return nil, fmt.Errorf("no Parquet files under %q", t.Dir)
		}
		quoted := make([]string, len(files))
		for i, f := range files {
			quoted[i] = sqlString(f)
		}
		q := fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet([%s])", t.Name, strings.Join(quoted, ", "))
		if _, err := db.ExecContext(ctx, q); err != nil {
			db.Close()
			return nil, fmt.Errorf("cannot define view %s in DuckDB: %w", t.Name, err)
		}
	}
	return d, nil
}

func (d *duckEngine) name() string { return "duckdb" }

func (d *duckEngine) close() error { return d.db.Close() }

// errorCode is DuckDB's error class, the text before the first colon
// ("Binder Error").
func (d *duckEngine) errorCode(err error) string {
	var de *duckdb.Error
	if errors.As(err, &de) {
		if kind, _, ok := strings.Cut(de.Msg, ":"); ok && len(kind) < 40 {
			return kind
		}
	}
	return "error"
}

func (d *duckEngine) run(ctx context.Context, q string, keep bool) ([][]string, int, error) {
	rows, err := d.db.QueryContext(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, 0, err
	}
	typeNames := make([]string, len(cts))
	for i, ct := range cts {
		typeNames[i] = ct.DatabaseTypeName()
	}
	vals := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out [][]string
	n := 0
	for rows.Next() {
		// Every value is converted to Go, as Lore materialises every value in Arrow.
		if err := rows.Scan(ptrs...); err != nil {
			return nil, 0, err
		}
		n++
		if !keep {
			continue
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			s, err := renderDuck(v, typeNames[i])
			if err != nil {
				return nil, 0, fmt.Errorf("column %d: %w", i+1, err)
			}
			row[i] = s
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	return out, n, nil
}

// duckdbVersion asks a fresh in-memory DuckDB for its version.
func duckdbVersion(ctx context.Context) (string, error) {
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		return "", err
	}
	db := sql.OpenDB(c)
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&v); err != nil {
		return "", err
	}
	return v, nil
}

// parquetFiles lists the Parquet files under dir, recursively and sorted, skipping
// names that start with "." or "_" as Lore's listing does.
func parquetFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := e.Name()
		if p != dir && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.IsDir() && strings.HasSuffix(base, ".parquet") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot list %q: %w", dir, err)
	}
	slices.Sort(files)
	return files, nil
}

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
