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
var knownWrong = map[string]string{
	"SELECT date_trunc('century', d), date_trunc('millennium', d), date_trunc('decade', d) FROM dates": "century and millennium start at years ending in 01",
	"SELECT strftime(ts, '%A %B %-d %Y %I:%M %p') FROM dates":                                          "strftime echoes codes it does not know",
	"SELECT strftime(d, '%w %u %j %U %W %V %G') FROM dates":                                            "strftime echoes codes it does not know",
	"SELECT strftime(ts, '%c'), strftime(ts, '%x %X') FROM dates":                                      "strftime echoes codes it does not know",
	"SELECT date_diff('microsecond', TIMESTAMP '0001-01-01', TIMESTAMP '9999-12-31')":                  "date_diff overflows",
}

// An outcome is how one statement of the corpus fared.
type outcome int

const (
	equal     outcome = iota // both engines answer, with the same rows
	wrong                    // both answer, with different rows
	refused                  // DuckDB answers, Lore refuses
	lenient                  // Lore answers, DuckDB refuses
	bothError                // both refuse
)

var outcomeNames = [...]string{"equal", "WRONG", "refused", "lenient", "both-error"}

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
	var counts [bothError + 1]int
	for _, path := range files {
		stmts, err := splitStatements(path)
		if err != nil {
			t.Fatal(err)
		}
		var fc [bothError + 1]int
		for _, s := range stmts {
			o, detail := conformOne(ctx, eng, duck, s)
			fc[o]++
			counts[o]++
			fmt.Fprintf(&log, "%s:%d: %s\n%s\n", filepath.Base(path), s.line, outcomeNames[o], s.text)
			if detail != "" {
				fmt.Fprintf(&log, "  %s\n", strings.ReplaceAll(detail, "\n", "\n  "))
			}
			if why, ok := knownWrong[s.text]; ok && o == wrong {
				t.Logf("%s:%d: known wrong answer (%s)", filepath.Base(path), s.line, why)
			} else if o == wrong {
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
func summarize(c [bothError + 1]int) string {
	answered := c[equal] + c[wrong] + c[refused]
	pct := 0.0
	if answered > 0 {
		pct = 100 * float64(c[equal]) / float64(answered)
	}
	var parts []string
	for o, n := range c {
		parts = append(parts, fmt.Sprintf("%s %d", outcomeNames[o], n))
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

// conformOne runs one statement in both engines, each under a time limit, and
// classifies the result.
func conformOne(ctx context.Context, eng *lore.Engine, duck *DB, s statement) (outcome, string) {
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	_, want, derr := duck.Query(dctx, s.text)
	cancel()
	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	res, lerr := eng.Query(lctx, s.text, nil)
	cancel()
	switch {
	case derr != nil && lerr != nil:
		return bothError, fmt.Sprintf("lore: %v\nduckdb: %v", lerr, derr)
	case derr != nil:
		return lenient, fmt.Sprintf("duckdb: %v", derr)
	case lerr != nil:
		return refused, fmt.Sprintf("lore: %v", lerr)
	}
	got := renderResult(res)
	if len(got) != len(want) {
		return wrong, fmt.Sprintf("lore returns %d rows, duckdb %d; first rows:\nlore:   %v\nduckdb: %v",
			len(got), len(want), head(got), head(want))
	}
	if len(got) > 0 && len(got[0]) != len(want[0]) {
		return wrong, fmt.Sprintf("lore returns %d columns, duckdb %d", len(got[0]), len(want[0]))
	}
	for _, rows := range [][][]string{got, want} {
		for _, r := range rows {
			for c := range r {
				if r[c] == "" {
					r[c] = "(empty)"
				}
			}
		}
	}
	if msg := compareBags(got, want); msg != "" {
		return wrong, msg
	}
	return equal, ""
}
