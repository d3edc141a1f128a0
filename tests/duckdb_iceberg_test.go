package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/tests/slt"
)

// duckdbOnly are SQL fragments of DuckDB functions and statements Lore does not have:
// a record using one is skipped, with the fragment as its reason.
var duckdbOnly = []string{
	"iceberg_metadata", "iceberg_snapshots", "iceberg_column_stats", "iceberg_partition_stats",
	"iceberg_table_properties", "iceberg_to_ducklake", "attach", "detach", "create secret",
	"pragma", "call ", "use ", "set ", "reset ", "explain", "duckdb_", "union_by_name",
	"set_iceberg", "iceberg_scan_filter", "describe", "create table", "copy ",
	"{test_dir}", "filename",
}

// missingFixtures are tables the .test files read that were not copied (MANIFEST.md).
var missingFixtures = []string{"generated_bounds"}

// duckdbKnownFailures are records Lore answers differently from DuckDB, by file and
// line, and why. A record here that passes is reported, so the list shrinks.
var duckdbKnownFailures = map[string]string{
	"test/sql/local/initial_default_all_types.test:22":                  "the file sets a time zone (skipped, DuckDB-only); Lore renders TIMESTAMPTZ in UTC",
	"test/sql/local/initial_default_in_struct_all_types.test:20":        "the file sets a time zone (skipped, DuckDB-only); Lore renders TIMESTAMPTZ in UTC, and DuckDB quotes TIME and TIMESTAMP values inside a STRUCT",
	"test/sql/local/legacy_bare_deletion_vector.test:24":                "DuckDB refuses the bare deletion-vector blob unless a setting allows it; Lore reads it (its length, magic and CRC are checked)",
	"test/sql/local/partitioning/identity/identity_bool.test:12":        "the table's schema says BOOLEAN; DuckDB prints the partition value as 1 or 0",
	"test/sql/local/partitioning/identity/identity_double.test:12":      "the table's schema says FLOAT; DuckDB prints the value widened to DOUBLE",
	"test/sql/local/partitioning/identity/identity_timestamptz.test:20": "the file sets a time zone (skipped, DuckDB-only); Lore renders TIMESTAMPTZ in UTC",
}

// TestDuckDBIcebergFiles runs the sqllogictest files duckdb-iceberg wrote for the
// Iceberg fixtures (iceberg/duckdb-iceberg/test/sql/local): {WORKING_DIRECTORY} is the
// duckdb-iceberg directory, `require` lines are ignored (a file whose require-env is
// not set is skipped, as DuckDB skips it), and every query and statement whose SQL
// Lore supports runs and is compared; those using DuckDB-only functions or settings
// are skipped and counted with their reason.
func TestDuckDBIcebergFiles(t *testing.T) {
	root := filepath.Join(shareddata.Dir(t), "iceberg", "duckdb-iceberg")
	var files []string
	err := filepath.WalkDir(filepath.Join(root, "test", "sql", "local"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".test") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	// Some files name tables relative to the duckdb-iceberg directory, where DuckDB's
	// runner works.
	t.Chdir(root)
	var pass, fail, known int
	skips := map[string]int{}
	for _, path := range files {
		rel, _ := filepath.Rel(root, path)
		t.Run(rel, func(t *testing.T) {
			p, f, k := runDuckDBFile(t, path, rel, root, skips)
			pass, fail, known = pass+p, fail+f, known+k
		})
	}
	var reasons []string
	total := 0
	for r, n := range skips {
		reasons = append(reasons, fmt.Sprintf("%d %s", n, r))
		total += n
	}
	sort.Strings(reasons)
	t.Logf("duckdb-iceberg .test records: %d pass, %d fail (%d of them known), %d skipped", pass, fail, known, total)
	for _, r := range reasons {
		t.Logf("  skipped: %s", r)
	}
}

// duckRecord is one record of a DuckDB .test file.
type duckRecord struct {
	line     int
	kind     string // "statement" or "query"
	header   []string
	sql      string
	expected []string
}

// parseDuckDB splits a DuckDB .test file into its records; directives it does not run
// come back as records of their own kind (require, mode, loop...).
func parseDuckDB(text string) []duckRecord {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []duckRecord
	for i := 0; i < len(lines); {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			i++
			continue
		}
		fields := strings.Fields(line)
		rec := duckRecord{line: i + 1, kind: fields[0], header: fields}
		i++
		if rec.kind != "statement" && rec.kind != "query" {
			out = append(out, rec)
			continue
		}
		var sql []string
		for i < len(lines) && strings.TrimSpace(lines[i]) != "" && strings.TrimSpace(lines[i]) != "----" {
			sql = append(sql, lines[i])
			i++
		}
		rec.sql = strings.Join(sql, "\n")
		if i < len(lines) && strings.TrimSpace(lines[i]) == "----" {
			i++
			for i < len(lines) && lines[i] != "" {
				rec.expected = append(rec.expected, lines[i])
				i++
			}
		}
		out = append(out, rec)
	}
	return out
}

// runDuckDBFile runs one file on a fresh engine; it counts passes, failures and known
// failures, and adds its skips to skips by reason.
func runDuckDBFile(t *testing.T, path, rel, root string, skips map[string]int) (pass, fail, known int) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := parseDuckDB(string(b))
	for _, r := range recs {
		if r.kind == "require-env" {
			if len(r.header) > 1 && os.Getenv(r.header[1]) == "" {
				skips["whole file: require-env "+r.header[1]] += countRuns(recs)
				return
			}
		}
	}
	ctx := context.Background()
	eng, err := lore.Open(ctx, lore.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	skipping, looping := false, 0
	var gone []*regexp.Regexp // tables of skipped CREATE TABLE statements
	for _, r := range recs {
		switch r.kind {
		case "mode":
			if len(r.header) > 1 {
				skipping = r.header[1] == "skip"
			}
			continue
		case "loop", "foreach", "concurrentloop", "concurrentforeach":
			looping++
			continue
		case "endloop":
			looping--
			continue
		case "statement", "query":
		default:
			continue // require, load, restart...
		}
		pos := fmt.Sprintf("%s:%d", rel, r.line)
		switch reason := unsupported(r); {
		case skipping:
			skips["mode skip"]++
			continue
		case looping > 0:
			skips["inside a loop"]++
			continue
		case reason != "":
			skips[reason]++
			if m := createdTable.FindStringSubmatch(r.sql); m != nil {
				gone = append(gone, regexp.MustCompile(`(?i)\b`+regexp.QuoteMeta(m[1])+`\b`))
			}
			continue
		case slices.ContainsFunc(gone, func(re *regexp.Regexp) bool { return re.MatchString(r.sql) }):
			skips["reads a table a skipped statement made"]++
			continue
		}
		sql := strings.ReplaceAll(r.sql, "{WORKING_DIRECTORY}", root)
		sql = strings.ReplaceAll(sql, "__WORKING_DIRECTORY__", root)
		res, err := query(ctx, eng, sql)
		var problem string
		switch {
		case r.kind == "statement" && len(r.header) > 1 && r.header[1] == "error":
			if err == nil {
				problem = "statement succeeded, DuckDB expects an error"
			}
		case r.kind == "statement":
			if err != nil && !(len(r.header) > 1 && r.header[1] == "maybe") {
				problem = fmt.Sprintf("statement failed: %s: %v", errs.CodeOf(err), err)
			}
		case err != nil:
			problem = fmt.Sprintf("query failed: %s: %v", errs.CodeOf(err), err)
		default:
			_, rows, rerr := render(res, root)
			if rerr != nil {
				problem = rerr.Error()
				break
			}
			rec := &slt.Record{File: rel, Line: r.line, Kind: slt.Query, SQL: sql, Sort: slt.NoSort, Expected: r.expected}
			if len(r.header) > 1 {
				rec.Types = r.header[1]
			}
			switch {
			case len(r.header) > 2:
				rec.Sort = slt.SortMode(r.header[2])
			case !strings.Contains(strings.ToLower(sql), "order by"):
				// DuckDB's order of a table's files is its own: without ORDER BY the
				// rows are compared as a set.
				rec.Sort = slt.RowSort
			}
			problem = slt.Compare(rec, rows)
		}
		why, isKnown := duckdbKnownFailures[pos]
		switch {
		case problem == "" && isKnown:
			pass++
			t.Logf("%s: passes now; drop it from duckdbKnownFailures (%s)", pos, why)
		case problem == "":
			pass++
		case isKnown:
			fail++
			known++
		default:
			fail++
			t.Errorf("%s: %s", pos, problem)
		}
	}
	return
}

var createdTable = regexp.MustCompile(`(?i)create\s+(?:or\s+replace\s+)?(?:temp\s+|temporary\s+)?table\s+(?:if\s+not\s+exists\s+)?([A-Za-z_][A-Za-z0-9_]*)`)

// unsupported is why Lore does not run a record, or "".
func unsupported(r duckRecord) string {
	low := strings.ToLower(r.sql)
	for _, f := range missingFixtures {
		if strings.Contains(low, f) {
			return "fixture not copied: " + f
		}
	}
	for _, f := range duckdbOnly {
		if strings.Contains(low, f) {
			return "DuckDB-only: " + strings.TrimSpace(f)
		}
	}
	return ""
}

func countRuns(recs []duckRecord) int {
	n := 0
	for _, r := range recs {
		if r.kind == "statement" || r.kind == "query" {
			n++
		}
	}
	return n
}
