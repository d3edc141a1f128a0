// Command suite measures Lore against DuckDB on another engine's sqllogictest
// files, such as DuckDB's own test/sql tree: each file's setup statements (CREATE
// TABLE, INSERT, CREATE VIEW …) run in DuckDB, whose tables and views are then
// written to Parquet and registered in Lore, and each query record runs in both
// engines over those same files. It reports, per directory and in total, how many
// queries Lore answers as DuckDB does, answers differently (wrong), or refuses, and
// the most frequent reasons for refusing. Expected results written in the files are
// not used: DuckDB's answer is the reference.
//
//	go run ./cmd/suite -dir /path/to/duckdb/test/sql/aggregate [-dir …] [-log out.txt]
//
// Both engines answer from the Parquet files: DuckDB's queries run in a second
// database whose tables are views over them, so that what Parquet does not keep
// (collations, constraints, exact types it has no counterpart for) is the same for
// both.
//
// Files that need extensions, loops, or settings Lore has no counterpart for are
// skipped, and so are queries of DuckDB-only features (PRAGMA, macros, sequences,
// catalog functions).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	lore "github.com/loredb/lore"
	"github.com/loredb/lore/tests/oracle"
)

type dirs []string

func (d *dirs) String() string     { return strings.Join(*d, ",") }
func (d *dirs) Set(s string) error { *d = append(*d, s); return nil }

func main() {
	var roots dirs
	flag.Var(&roots, "dir", "a directory of .test files (repeatable)")
	logPath := flag.String("log", "", "write every query's outcome to this file")
	limit := flag.Duration("timeout", 20*time.Second, "time limit of one query in each engine")
	flag.Parse()
	if len(roots) == 0 {
		log.Fatal("give at least one -dir")
	}
	var out *bufio.Writer
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		out = bufio.NewWriter(f)
		defer out.Flush()
	}
	total := map[oracle.Outcome]int{}
	reasons := map[string]int{}
	for _, root := range roots {
		var files []string
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".test") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			log.Fatal(err)
		}
		sort.Strings(files)
		counts := map[oracle.Outcome]int{}
		skipped := 0
		for _, f := range files {
			ok, err := runFile(f, *limit, counts, reasons, out)
			if err != nil {
				log.Printf("%s: %v", f, err)
			}
			if !ok {
				skipped++
			}
		}
		fmt.Printf("%s: %d files (%d skipped): %s\n", root, len(files), skipped, summary(counts))
		for o, n := range counts {
			total[o] += n
		}
	}
	fmt.Printf("total: %s\n", summary(total))
	type kv struct {
		k string
		n int
	}
	var top []kv
	for k, n := range reasons {
		top = append(top, kv{k, n})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].n > top[j].n || top[i].n == top[j].n && top[i].k < top[j].k })
	fmt.Println("most frequent refusals:")
	for i := 0; i < len(top) && i < 40; i++ {
		fmt.Printf("%5d  %s\n", top[i].n, top[i].k)
	}
}

func summary(c map[oracle.Outcome]int) string {
	answered := c[oracle.Equal] + c[oracle.Wrong] + c[oracle.Refused]
	pct := 0.0
	if answered > 0 {
		pct = 100 * float64(c[oracle.Equal]) / float64(answered)
	}
	return fmt.Sprintf("%.1f%% equal of %d DuckDB answers (equal %d, WRONG %d, refused %d, lenient %d, both-error %d)",
		pct, answered, c[oracle.Equal], c[oracle.Wrong], c[oracle.Refused], c[oracle.Lenient], c[oracle.BothError])
}

// record is one statement or query of a .test file.
type record struct {
	query bool
	sql   string
	line  int
}

var (
	// skipFile: directives whose files cannot be replayed faithfully.
	skipFile = regexp.MustCompile(`(?m)^(require|load|loop|foreach|concurrentloop|concurrentforeach|restart|mode skip|endloop|reconnect|unzip|tags)\b`)
	// duckOnly: queries of features that have no counterpart in a read-only lake
	// engine, left out of the measure.
	duckOnly = regexp.MustCompile(`(?i)\b(pragma|nextval|currval|setseed|random|uuid|gen_random_uuid|current_setting|duckdb_\w+|pg_catalog|information_schema|sqlite_master|summarize|describe|show|explain|checkpoint|export|import|copy|attach|detach|use|install|load|call|test_all_types|test_vector_types|read_csv\w*|read_json\w*|glob|enum_\w+|typeof|stats|alias|export_state|finalize|combine_aggr)\b|\?|\$\d`)
	// settings change how later queries behave; a file stops being compared there.
	setting = regexp.MustCompile(`(?i)^\s*(set|reset|pragma)\b`)
	// macros and the like make later queries DuckDB-only.
	macro     = regexp.MustCompile(`(?i)^\s*create\s+(or\s+replace\s+)?(temp\s+|temporary\s+)?(macro|function|sequence|type)\b`)
	tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func parse(path string) ([]record, bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	text := string(data)
	if skipFile.MatchString(text) {
		return nil, false, nil
	}
	lines := strings.Split(text, "\n")
	var recs []record
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		var isQuery bool
		switch {
		case strings.HasPrefix(l, "query "):
			isQuery = true
		case strings.HasPrefix(l, "statement ok"):
		case strings.HasPrefix(l, "statement error"), strings.HasPrefix(l, "statement maybe"):
			// Run in DuckDB too: a failing statement may still be part of the setup.
		case strings.HasPrefix(l, "onlyif"), strings.HasPrefix(l, "skipif"):
			// The next record is for another engine or not for DuckDB: skip it.
			if strings.Contains(l, "duckdb") || strings.HasPrefix(l, "onlyif") {
				for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
					i++
				}
			}
			continue
		default:
			continue
		}
		start := i + 1
		var sqlLines []string
		for i+1 < len(lines) {
			n := lines[i+1]
			if strings.TrimSpace(n) == "" || strings.TrimSpace(n) == "----" {
				break
			}
			sqlLines = append(sqlLines, n)
			i++
		}
		// Skip the expected results.
		for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
			i++
		}
		q := strings.TrimSpace(strings.Join(sqlLines, "\n"))
		q = strings.TrimSuffix(q, ";")
		if q != "" {
			recs = append(recs, record{query: isQuery, sql: q, line: start})
		}
	}
	return recs, true, nil
}

// runFile replays one file; ok is false when it was skipped whole.
func runFile(path string, limit time.Duration, counts map[oracle.Outcome]int, reasons map[string]int, out *bufio.Writer) (bool, error) {
	recs, ok, err := parse(path)
	if err != nil || !ok {
		return false, err
	}
	ctx := context.Background()
	duck, err := oracle.Open(ctx)
	if err != nil {
		return false, err
	}
	defer duck.Close()
	home, err := os.MkdirTemp("", "lore-suite-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(home)
	eng, err := lore.Open(ctx, lore.Options{Home: filepath.Join(home, "home")})
	if err != nil {
		return false, err
	}
	defer eng.Close()
	dirty := true
	version := 0
	registered := map[string]bool{}
	var reader *oracle.DB // DuckDB over the Parquet files of the latest export
	defer func() {
		if reader != nil {
			reader.Close()
		}
	}()
	for _, r := range recs {
		if setting.MatchString(r.sql) || macro.MatchString(r.sql) {
			break
		}
		if !r.query || !isQuery(r.sql) {
			_ = duck.Exec(ctx, r.sql)
			dirty = true
			continue
		}
		if duckOnly.MatchString(r.sql) {
			continue
		}
		if dirty {
			version++
			if reader != nil {
				reader.Close()
			}
			if reader, err = oracle.Open(ctx); err != nil {
				return true, err
			}
			if err := export(ctx, duck, reader, eng, home, version, registered); err != nil {
				return true, err
			}
			dirty = false
		}
		o, detail := oracle.Compare(ctx, eng, reader, r.sql, limit)
		counts[o]++
		if o == oracle.Refused {
			reasons[reason(detail)]++
		}
		if out != nil {
			fmt.Fprintf(out, "%s:%d: %s\n%s\n", path, r.line, oracle.Names[o], r.sql)
			if detail != "" {
				fmt.Fprintf(out, "  %s\n", strings.ReplaceAll(detail, "\n", "\n  "))
			}
		}
	}
	return true, nil
}

func isQuery(q string) bool {
	l := strings.ToLower(strings.TrimSpace(q))
	return strings.HasPrefix(l, "select") || strings.HasPrefix(l, "with") || strings.HasPrefix(l, "values") ||
		strings.HasPrefix(l, "(") || strings.HasPrefix(l, "from")
}

// export writes every table and view of DuckDB's database to Parquet and registers
// it under its name in Lore and, as a view over the file, in reader.
func export(ctx context.Context, duck, reader *oracle.DB, eng *lore.Engine, home string, version int, registered map[string]bool) error {
	_, rows, err := duck.Query(ctx, `SELECT table_name FROM duckdb_tables() WHERE NOT temporary AND schema_name = 'main'
		UNION ALL SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary AND schema_name = 'main'`)
	if err != nil {
		return err
	}
	for name := range registered {
		_, _ = eng.Query(ctx, fmt.Sprintf("DROP TABLE IF EXISTS %q", name), nil)
		delete(registered, name)
	}
	for _, r := range rows {
		name := r[0]
		if !tableName.MatchString(name) {
			continue
		}
		file := filepath.Join(home, fmt.Sprintf("%s_v%d.parquet", name, version))
		if err := duck.Exec(ctx, fmt.Sprintf("COPY (SELECT * FROM %q) TO '%s' (FORMAT parquet)", name, file)); err != nil {
			continue
		}
		if _, err := eng.Query(ctx, fmt.Sprintf("CREATE TABLE %q WITH (location = '%s', format = 'parquet')", name, file), nil); err != nil {
			continue
		}
		if err := reader.Exec(ctx, fmt.Sprintf("CREATE VIEW %q AS SELECT * FROM read_parquet('%s')", name, file)); err != nil {
			return err
		}
		registered[name] = true
	}
	return nil
}

var digits = regexp.MustCompile(`\d+|"[^"]*"|'[^']*'`)

// reason shortens a refusal to its kind, for counting.
func reason(detail string) string {
	d := strings.TrimPrefix(detail, "lore: ")
	if i := strings.IndexByte(d, '\n'); i >= 0 {
		d = d[:i]
	}
	d = digits.ReplaceAllString(d, "…")
	if len(d) > 100 {
		d = d[:100]
	}
	return d
}
