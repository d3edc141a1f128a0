//go:build cgo

package enginetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/dist/disttest"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// dataFiles lists the Parquet files of a table's directory, by partition, each
// partition's in name order (the staging directory left out).
func dataFiles(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, p := range disttest.ParquetFiles(t, dir) {
		out[filepath.Dir(p)] = append(out[filepath.Dir(p)], p)
	}
	return out
}

// compareKey orders two rendered (s, x) keys, NULLs first.
func compareKey(a, b []string) int {
	for i := range a {
		an, bn := a[i] == "(null)", b[i] == "(null)"
		switch {
		case an && bn:
			continue
		case an:
			return -1
		case bn:
			return 1
		}
		if i == 1 {
			x, _ := strconv.ParseFloat(a[i], 64)
			y, _ := strconv.ParseFloat(b[i], 64)
			if x != y {
				if x < y {
					return -1
				}
				return 1
			}
			continue
		}
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// checkClustered checks that the files of every partition of dir, in name order,
// hold their rows by (s, x): each file sorted (the writer checks its rows' order),
// and every key of a file at most every key of the next.
func checkClustered(t *testing.T, e *lore.Engine, dir string) {
	t.Helper()
	for part, files := range dataFiles(t, dir) {
		var last []string
		for _, f := range files {
			keys := rows(query(t, e, fmt.Sprintf("SELECT s, x FROM read_parquet(%s) ORDER BY s NULLS FIRST, x NULLS FIRST", types.QuoteString(f)), nil))
			if len(keys) == 0 {
				t.Errorf("%s: an empty file", f)
				continue
			}
			first := strings.Split(keys[0], "\t")
			if last != nil && compareKey(last, first) > 0 {
				t.Errorf("%s: %s begins at %v, below the end of the file before, %v", part, filepath.Base(f), first, last)
			}
			last = strings.Split(keys[len(keys)-1], "\t")
		}
	}
}

// TestOptimizeOnPrism: OPTIMIZE under execution = 'beam' rewrites a Hive table of
// several files (one lacking a column) partition by partition, sorted on Beam's
// workers into ranges: the table holds the same rows, every partition's files hold
// them in clustering order, and the record says what ran where. Under 'auto' with a
// size threshold the same runs there unasked.
func TestOptimizeOnPrism(t *testing.T) {
	for _, auto := range []bool{false, true} {
		t.Run(fmt.Sprintf("auto=%t", auto), func(t *testing.T) {
			dir := disttest.WriteHive(t)
			settings := beam
			o := lore.BeamOptions{}
			if auto {
				settings, o.Above = nil, 1
			}
			e := open(t, o)
			query(t, e, fmt.Sprintf("CREATE TABLE h WITH (location = %s, format = 'parquet')", types.QuoteString(dir)), nil)
			query(t, e, "ALTER TABLE h SET CLUSTERED BY (s, x)", nil)
			all := "SELECT p, id, x, s FROM h ORDER BY p, id NULLS FIRST, x NULLS FIRST, s NULLS FIRST"
			noCache := map[string]string{"result_cache": "false"}
			before := rows(query(t, e, all, noCache))
			res := query(t, e, "OPTIMIZE h WITH (file_bytes = 6000)", settings)
			row := strings.Split(rows(res)[0], "\t")
			if row[1] != "4" || row[3] != strconv.Itoa(len(before)) {
				t.Errorf("OPTIMIZE's result %v: want 4 files replaced, %d rows", row, len(before))
			}
			if n, _ := strconv.Atoi(row[2]); n <= 4 {
				t.Errorf("%d files written: the rows were not cut into ranges", n)
			}
			d := res.Record.Execution.Distributed
			if d == nil || d.Runner != "prism" || d.ZonesShipped != 18 || d.Bytes <= 0 || d.WorkerMS <= 0 {
				t.Errorf("the record's distributed part %+v, want 18 zones on prism", d)
			}
			if diff := sameRows(rows(query(t, e, all, noCache)), before); diff != "" {
				t.Errorf("after OPTIMIZE on Beam: %s", diff)
			}
			checkClustered(t, e, dir)
		})
	}
}

// TestChangedFileFailsOptimize: a file rewritten after the engine planned OPTIMIZE
// fails it with SOURCE_CHANGED, and the table keeps its files.
func TestChangedFileFailsOptimize(t *testing.T) {
	dir := disttest.WriteHive(t)
	e := open(t, lore.BeamOptions{})
	query(t, e, fmt.Sprintf("CREATE TABLE h WITH (location = %s, format = 'parquet')", types.QuoteString(dir)), nil)
	query(t, e, "ALTER TABLE h SET CLUSTERED BY (x)", nil)
	files := dataFiles(t, dir)
	t.Setenv(rewriteEnv, filepath.Join(dir, "p=b", "3.parquet"))
	_, err := e.Query(context.Background(), "OPTIMIZE h", beam)
	if errs.CodeOf(err) != errs.SourceChanged {
		t.Fatalf("%v, want SOURCE_CHANGED", err)
	}
	if got := dataFiles(t, dir); fmt.Sprint(got) != fmt.Sprint(files) {
		t.Errorf("files %v after a failed OPTIMIZE, want %v", got, files)
	}
	stages, _ := os.ReadDir(filepath.Join(dir, "_lore_optimize"))
	for _, s := range stages {
		if s.IsDir() {
			t.Errorf("a staging directory is left: %s", s.Name())
		}
	}
}
