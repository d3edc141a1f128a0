package oracle

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	lore "github.com/loredb/lore"
)

var conformLog = flag.String("conform-log", "", "write every statement's outcome of TestConformance to this file")

// conformTables are the fixtures of ../testdata that the conformance corpus reads,
// registered under these names in both engines.
var conformTables = map[string]string{
	"nums": "nums.parquet", "limits": "limits.parquet", "strs": "strs.parquet",
	"dates": "dates.parquet", "bools": "bools.parquet", "people": "people.parquet",
	"orders": "orders.parquet", "items": "items.parquet", "sales": "sales.parquet",
	"big": "big.parquet", "multi": "multi", "empty": "empty.parquet",
	"nested": "nested.parquet",
}

// knownWrong are statements of the corpus Lore is known to answer wrongly, with the
// reason; they are reported but do not fail the test. The list only shrinks.
var knownWrong = map[string]string{}

// TestConformance runs the everyday statements of ../conform/*.sql through Lore and
// DuckDB over the same fixtures and compares the answers as bags of rows (numbers
// within a relative 1e-9). A statement both engines answer differently is a wrong
// answer and fails the test; the share of statements Lore answers as DuckDB does is
// reported (-v), per file and in total. Statements are separated by a line ending in
// ";"; a line starting with "--" is a comment.
func TestConformance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "conform", "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no ../conform/*.sql files")
	}
	testdata, err := filepath.Abs(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eng, err := lore.Open(ctx, lore.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	duck, err := Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer duck.Close()
	names := make([]string, 0, len(conformTables))
	for name := range conformTables {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		loc := filepath.Join(testdata, conformTables[name])
		create := fmt.Sprintf("CREATE TABLE %s WITH (location = '%s', format = 'parquet')", name, loc)
		if _, err := eng.Query(ctx, create, nil); err != nil {
			t.Fatalf("lore: register %s: %v", name, err)
		}
		q, err := Translate(create, testdata)
		if err != nil {
			t.Fatal(err)
		}
		if err := duck.Exec(ctx, q); err != nil {
			t.Fatalf("duckdb: register %s: %v", name, err)
		}
	}

	var log strings.Builder
	var counts [BothError + 1]int
	for _, path := range files {
		stmts, err := splitStatements(path)
		if err != nil {
			t.Fatal(err)
		}
		var fc [BothError + 1]int
		for _, s := range stmts {
			o, detail := Compare(ctx, eng, duck, s.text, time.Minute)
			fc[o]++
			counts[o]++
			fmt.Fprintf(&log, "%s:%d: %s\n%s\n", filepath.Base(path), s.line, Names[o], s.text)
			if detail != "" {
				fmt.Fprintf(&log, "  %s\n", strings.ReplaceAll(detail, "\n", "\n  "))
			}
			if why, ok := knownWrong[s.text]; ok && o == Wrong {
				t.Logf("%s:%d: known wrong answer (%s)", filepath.Base(path), s.line, why)
			} else if o == Wrong {
				t.Errorf("%s:%d: wrong answer: %s\n%s", filepath.Base(path), s.line, s.text, detail)
			}
		}
		t.Logf("%s: %s", filepath.Base(path), summarize(fc))
	}
	t.Logf("total: %s", summarize(counts))
	if *conformLog != "" {
		if err := os.WriteFile(*conformLog, []byte(log.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// summarize says how many statements had each outcome and the share answered as
// DuckDB does among those DuckDB answers.
func summarize(c [BothError + 1]int) string {
	answered := c[Equal] + c[Wrong] + c[Refused]
	pct := 0.0
	if answered > 0 {
		pct = 100 * float64(c[Equal]) / float64(answered)
	}
	var parts []string
	for o, n := range c {
		parts = append(parts, fmt.Sprintf("%s %d", Names[o], n))
	}
	return fmt.Sprintf("%.1f%% equal (%s)", pct, strings.Join(parts, ", "))
}

type statement struct {
	text string
	line int
}

// splitStatements reads a corpus file: statements end with a line ending in ";".
func splitStatements(path string) ([]statement, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []statement
	var cur []string
	start := 0
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if len(cur) == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "--")) {
			continue
		}
		if len(cur) == 0 {
			start = i + 1
		}
		cur = append(cur, line)
		if strings.HasSuffix(trimmed, ";") {
			text := strings.TrimSuffix(strings.TrimSpace(strings.Join(cur, "\n")), ";")
			out = append(out, statement{text: text, line: start})
			cur = nil
		}
	}
	if len(cur) > 0 {
		return nil, fmt.Errorf("%s:%d: statement without a closing ';'", path, start)
	}
	return out, nil
}
