// Command duckchild is DuckDB as a process of its own for the bench harness's
// processes mode: it opens an in-memory DuckDB set up as the harness sets up its
// in-process one (threads, UTC, no external file cache, one view per table over
// the table's Parquet files), runs the query of one file and writes its rows as
// CSV to stdout, so that its peak RSS can be set against a `lore sql` process.
// No DuckDB CLI is needed, and the process links DuckDB alone (not Lore), so its
// memory is DuckDB's and Go's small runtime.
//
//	duckchild --threads N --tables tables.json -f query.sql
//
// tables.json is [{"name": "lineitem", "files": ["…/part-0.parquet", …]}, …].
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// table is one view to define.
type table struct {
	Name  string   `json:"name"`
	Files []string `json:"files"`
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "duckchild: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("duckchild", flag.ContinueOnError)
	threads := fs.Int("threads", 2, "DuckDB's threads")
	tablesFile := fs.String("tables", "", "JSON file of the tables")
	queryFile := fs.String("f", "", "the query's file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var tables []table
	b, err := os.ReadFile(*tablesFile)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &tables); err != nil {
		return fmt.Errorf("%s: %w", *tablesFile, err)
	}
	q, err := os.ReadFile(*queryFile)
	if err != nil {
		return err
	}
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		return err
	}
	db := sql.OpenDB(c)
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	setup := []string{fmt.Sprintf("SET threads = %d", *threads), "SET TimeZone = 'UTC'", "SET enable_external_file_cache = false"}
	for _, t := range tables {
		quoted := make([]string, len(t.Files))
		for i, f := range t.Files {
			quoted[i] = "'" + strings.ReplaceAll(f, "'", "''") + "'"
		}
		setup = append(setup, fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet([%s])", t.Name, strings.Join(quoted, ", ")))
	}
	for _, s := range setup {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%.80s: %w", s, err)
		}
	}
	w := bufio.NewWriterSize(stdout, 1<<16)
	if err := writeCSV(ctx, db, strings.TrimSuffix(strings.TrimSpace(string(q)), ";"), w); err != nil {
		return err
	}
	return w.Flush()
}

// writeCSV runs q and writes a header and its rows as CSV, NULL as an empty
// field (as Lore's CLI does).
func writeCSV(ctx context.Context, db *sql.DB, q string, w io.Writer) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(cols); err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	rec := make([]string, len(cols))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			rec[i] = ""
			if v != nil {
				rec[i] = fmt.Sprint(v)
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}
