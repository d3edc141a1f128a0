package tests

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage/s3"
	"github.com/loredb/lore/storage/s3/s3test"
	"github.com/loredb/lore/tests/slt"
	"github.com/loredb/lore/types"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected results of sql/*.slt from Lore's answers")

// engineName is the name conditions (skipif/onlyif) use for Lore.
const engineName = "lore"

// testdataToken is replaced in every statement by the absolute path of testdata/.
const testdataToken = "__TESTDATA__"

// recordTimeout bounds one statement, so a hang fails its record, not the suite.
const recordTimeout = time.Minute

func TestSQLLogic(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("sql", "*.slt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no sql/*.slt files")
	}
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	runFiles(t, files, testdata, nil)
}

// TestSQLLogicOnS3 runs the same files with testdata/ in an S3 store on loopback
// (the real protocol, through Lore's S3 store): every location the files name is
// then an s3:// URL, and every answer must be the one on local disk.
func TestSQLLogicOnS3(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("sql", "*.slt"))
	if err != nil {
		t.Fatal(err)
	}
	srv := s3test.Start(t, "testdata")
	srv.Upload(t, "testdata", "s3://testdata")
	srv.Reset()
	cfg := srv.Config()
	runFiles(t, files, "s3://testdata", &cfg)
	c := srv.Counts()
	if c.List == 0 || c.Get == 0 {
		t.Fatalf("the files were not read from the store: %+v", c)
	}
	t.Logf("requests to the store: %+v", c)
}

func runFiles(t *testing.T, files []string, testdata string, s3cfg *s3.Config) {
	sort.Strings(files)
	total := 0
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			n := runFile(t, path, testdata, s3cfg)
			total += n
			t.Logf("%s: %d records run", path, n)
		})
	}
	t.Logf("%d records run in %d files", total, len(files))
}

// runFile runs one .slt file on a fresh engine and returns the number of records
// it ran. testdata is where the token points: a directory, or an s3:// URL with
// s3cfg reaching its store.
func runFile(t *testing.T, path, testdata string, s3cfg *s3.Config) int {
	f, err := slt.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eng, err := lore.Open(ctx, lore.Options{Home: t.TempDir(), S3: s3cfg})
	if err != nil {
		t.Fatalf("cannot open engine: %v", err)
	}
	defer eng.Close()

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
		q := strings.ReplaceAll(rec.SQL, testdataToken, testdata)
		res, err := query(ctx, eng, q)
		switch rec.Kind {
		case slt.Statement:
			checkStatement(t, rec, err)
		case slt.Query:
			if err != nil {
				t.Errorf("%s: query failed: %s: %v\n%s", rec.Pos(), errs.CodeOf(err), err, rec.SQL)
				continue
			}
			letters, rows, err := render(res, testdata)
			if err != nil {
				t.Errorf("%s: %v", rec.Pos(), err)
				continue
			}
			if *rewrite {
				results[i] = slt.Result{Types: letters, Lines: slt.Lines(rows, rec.Sort)}
				continue
			}
			if letters != rec.Types {
				t.Errorf("%s: result column types %s, expected %s (schema %v)\n%s", rec.Pos(), letters, rec.Types, res.Schema, rec.SQL)
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

// query runs one statement; a panic in the engine is turned into a failure of
// the record (with its stack) so that the rest of the suite still runs.
func query(ctx context.Context, eng *lore.Engine, q string) (res *lore.Result, err error) {
	ctx, cancel := context.WithTimeout(ctx, recordTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return eng.Query(ctx, q, nil)
}

func checkStatement(t *testing.T, rec *slt.Record, err error) {
	t.Helper()
	// A misspelt code in a file would otherwise only ever fail as a mismatch.
	if c := errs.Code(rec.ErrorCode); c != "" && c != errs.Internal && errs.Status(c) == 500 {
		t.Errorf("%s: %q is not a Lore error code", rec.Pos(), rec.ErrorCode)
		return
	}
	switch {
	case !rec.ExpectError && err != nil:
		t.Errorf("%s: statement failed: %s: %v\n%s", rec.Pos(), errs.CodeOf(err), err, rec.SQL)
	case rec.ExpectError && err == nil:
		t.Errorf("%s: statement succeeded, expected error %s\n%s", rec.Pos(), rec.ErrorCode, rec.SQL)
	case rec.ExpectError && rec.ErrorCode != "" && string(errs.CodeOf(err)) != rec.ErrorCode:
		t.Errorf("%s: expected error %s, got %s: %v\n%s", rec.Pos(), rec.ErrorCode, errs.CodeOf(err), err, rec.SQL)
	}
}

// render turns a result into its type letters and rows of text cells. The
// absolute path of testdata is written back as the token, so that results naming
// locations (SHOW CREATE TABLE) do not depend on where the repository lives.
func render(res *lore.Result, testdata string) (string, [][]string, error) {
	if res == nil || res.Schema == nil {
		return "", nil, fmt.Errorf("query returned no result schema")
	}
	var letters strings.Builder
	for _, fld := range res.Schema.Fields() {
		letters.WriteByte(letter(fld.Type))
	}
	var rows [][]string
	for _, b := range res.Batches {
		if int(b.NumCols()) != len(res.Schema.Fields()) {
			return "", nil, fmt.Errorf("a batch has %d columns, the schema %d", b.NumCols(), len(res.Schema.Fields()))
		}
		for r := 0; r < int(b.NumRows()); r++ {
			row := make([]string, b.NumCols())
			for c := range row {
				v := types.ValueAt(b.Column(c), r)
				if v.Null {
					row[c] = slt.Null
				} else {
					row[c] = slt.Cell(strings.ReplaceAll(v.String(), testdata, testdataToken))
				}
			}
			rows = append(rows, row)
		}
	}
	return letters.String(), rows, nil
}

// letter is the sqllogictest letter of a column type: I integer, R float or decimal,
// T anything else.
func letter(dt arrow.DataType) byte {
	dt = types.Unwrap(dt)
	return slt.TypeLetter(types.IsInteger(dt), types.IsFloat(dt) || types.IsDecimal(dt))
}
