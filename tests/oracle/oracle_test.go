package oracle

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/loredb/lore/tests/slt"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected results (and type letters) of ../sql/*.slt from DuckDB")

// engineName is the name conditions (skipif/onlyif) use for DuckDB.
const engineName = "duckdb"

// TestOracle runs every record of ../sql/*.slt through DuckDB: a statement must
// succeed or fail as written (a failure with a Lore error code must be DuckDB's
// error of the same kind, see ErrorMatches), and a
// query's rows must equal the expectation under the record's sort mode and float
// tolerance. Passing proves the expectations right.
func TestOracle(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "sql", "*.slt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no ../sql/*.slt files")
	}
	testdata, err := filepath.Abs(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	total := 0
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			n := runFile(t, path, testdata)
			total += n
			t.Logf("%s: %d records run", path, n)
		})
	}
	t.Logf("%d records run in %d files", total, len(files))
}

func runFile(t *testing.T, path, testdata string) int {
	f, err := slt.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	results := map[int]slt.Result{}
	ran := 0
	for i := range f.Records {
		rec := &f.Records[i]
		if !rec.Runs(engineName) {
			continue
		}
		if rec.Kind == slt.Halt {
			break
		}
		ran++
		q, err := Translate(rec.SQL, testdata)
		if err != nil {
			t.Errorf("%s: cannot translate: %v", rec.Pos(), err)
			continue
		}
		switch rec.Kind {
		case slt.Statement:
			err := db.Exec(ctx, q)
			switch {
			case rec.ExpectError && err == nil:
				t.Errorf("%s: statement succeeded in DuckDB, expected an error\n%s", rec.Pos(), q)
			case rec.ExpectError && !ErrorMatches(rec.ErrorCode, err):
				t.Errorf("%s: DuckDB's error is not of the kind %s: %v\n%s", rec.Pos(), rec.ErrorCode, err, q)
			case !rec.ExpectError && err != nil:
				t.Errorf("%s: statement failed in DuckDB: %v\n%s", rec.Pos(), err, q)
			}
		case slt.Query:
			letters, rows, err := db.Query(ctx, q)
			if err != nil {
				t.Errorf("%s: query failed in DuckDB: %v\n%s", rec.Pos(), err, q)
				continue
			}
			if *rewrite {
				results[i] = slt.Result{Types: letters, Lines: slt.Lines(rows, rec.Sort)}
				continue
			}
			if letters != rec.Types {
				t.Errorf("%s: DuckDB's column types are %s, expected %s\n%s", rec.Pos(), letters, rec.Types, rec.SQL)
				continue
			}
			if diff := slt.Compare(rec, rows); diff != "" {
				t.Errorf("%s: %s", rec.Pos(), diff)
			}
		}
	}
	if *rewrite && len(results) > 0 {
		if err := os.WriteFile(path, []byte(f.Rewrite(results)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ran
}
