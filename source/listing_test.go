package source

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

func names(t *testing.T, l *Listing, base string) []string {
	t.Helper()
	var out []string
	for _, f := range l.Files {
		rel, err := filepath.Rel(base, f.Info.Path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

func resolve(t *testing.T, loc string) *Listing {
	t.Helper()
	l, err := Resolve(context.Background(), storage.Local{}, loc)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", loc, err)
	}
	return l
}

func TestResolveFileGlobAndDirectory(t *testing.T) {
	dir := t.TempDir()
	one := col{"x", types.Int64, ints(1, 2)}
	for _, p := range []string{"a.parquet", "b.parquet", "sub/c.parquet", "sub/deep/d.parquet",
		".hidden.parquet", "_tmp/e.parquet", "sub/.cache/f.parquet"} {
		writeParquet(t, filepath.Join(dir, p), 10, one)
	}
	for _, p := range []string{"_SUCCESS", "copy.csv", "sub/notes.json"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("not parquet"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		loc  string
		want []string
	}{
		{"a.parquet", []string{"a.parquet"}},
		{".hidden.parquet", []string{".hidden.parquet"}}, // named exactly: taken
		{"*.parquet", []string{"a.parquet", "b.parquet"}},
		{"?.parquet", []string{"a.parquet", "b.parquet"}},
		{"[b-z].parquet", []string{"b.parquet"}},
		{"*/*.parquet", []string{"sub/c.parquet"}},
		{"**/*.parquet", []string{"a.parquet", "b.parquet", "sub/c.parquet", "sub/deep/d.parquet"}},
		{"sub/**/d.parquet", []string{"sub/deep/d.parquet"}},
		{"", []string{"a.parquet", "b.parquet", "sub/c.parquet", "sub/deep/d.parquet"}},
		{"sub", []string{"sub/c.parquet", "sub/deep/d.parquet"}},
		{"sub/", []string{"sub/c.parquet", "sub/deep/d.parquet"}},
	}
	for _, c := range cases {
		loc := filepath.Join(dir, c.loc)
		if strings.HasSuffix(c.loc, "/") {
			loc += "/"
		}
		l := resolve(t, loc)
		if got := names(t, l, dir); !slices.Equal(got, c.want) {
			t.Errorf("%q: files %v, want %v", c.loc, got, c.want)
		}
		if l.Schema.NumFields() != 1 || l.Partition(0) != -1 || len(l.Partitions) != 0 {
			t.Errorf("%q: schema %s, partitions %v", c.loc, l.Schema, l.Partitions)
		}
	}
}

func TestResolveMissing(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"nope.parquet", "nope/*.parquet", "empty", "*.parquet"} {
		_, err := Resolve(context.Background(), storage.Local{}, filepath.Join(dir, loc))
		if errs.CodeOf(err) != errs.SourceUnavailable || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%q: want SOURCE_UNAVAILABLE wrapping ErrNotExist, got %v", loc, err)
		}
		if err != nil && !strings.Contains(err.Error(), "no Parquet files at") {
			t.Errorf("%q: message %q", loc, err)
		}
	}
}

func TestResolveCorruptFirstFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.parquet"), []byte("PAR1 this is not a footer PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Resolve(context.Background(), storage.Local{}, dir)
	if errs.CodeOf(err) != errs.CorruptSource || !strings.Contains(err.Error(), "bad.parquet") {
		t.Fatalf("want CORRUPT_SOURCE naming the file, got %v", err)
	}
}

func TestHivePartitionTypes(t *testing.T) {
	dir := t.TempDir()
	files := []string{
		"n=1/d=2024-01-02/s=x/m=7/a.parquet",
		"n=-20/d=1969-12-31/s=/m=abc/a.parquet",
		"n=NULL/d=__HIVE_DEFAULT_PARTITION__/s=NULL/m=3/a.parquet",
		"n=300/d=2024-02-29/s=a%2Fb/m=2024-01-01/a.parquet",
	}
	for _, f := range files {
		writeParquet(t, filepath.Join(dir, f), 10, col{"v", types.Int64, ints(1)})
	}
	l := resolve(t, dir)
	if !slices.Equal(l.Partitions, []string{"n", "d", "s", "m"}) {
		t.Fatalf("partitions %v", l.Partitions)
	}
	wantTypes := []string{"BIGINT", "BIGINT", "DATE", "VARCHAR", "VARCHAR"}
	for i, f := range l.Schema.Fields() {
		if types.Name(f.Type) != wantTypes[i] {
			t.Errorf("column %s: %s, want %s", f.Name, types.Name(f.Type), wantTypes[i])
		}
	}
	for i := range l.Schema.NumFields() {
		if want := i - 1; l.Partition(i) != want {
			t.Errorf("column %d: partition %d, want %d", i, l.Partition(i), want)
		}
	}
	// Files are in path order: n=-20, n=1, n=300, n=NULL.
	want := [][]string{
		{"-20", "1969-12-31", "", "abc"},
		{"1", "2024-01-02", "x", "7"},
		{"300", "2024-02-29", "a/b", "2024-01-01"},
		{"NULL", "NULL", "NULL", "3"},
	}
	for i, f := range l.Files {
		var got []string
		for _, v := range f.PartitionValues {
			got = append(got, v.String())
		}
		if !slices.Equal(got, want[i]) {
			t.Errorf("file %s: partition values %q, want %q", f.Info.Path, got, want[i])
		}
	}
	if v := l.Files[0].PartitionValues[2]; v.Null || v.S != "" {
		t.Errorf("s= should be the empty string, got %#v", v)
	}
	if v := l.Files[3].PartitionValues[2]; !v.Null {
		t.Errorf("s=NULL should be NULL, got %#v", v)
	}
}

func TestHiveKeyOrdersAndMismatch(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "a=1/b=x/f.parquet"), 10, col{"v", types.Int64, ints(1)})
	writeParquet(t, filepath.Join(dir, "b=y/a=2/f.parquet"), 10, col{"v", types.Int64, ints(2)})
	l := resolve(t, dir)
	if !slices.Equal(l.Partitions, []string{"a", "b"}) {
		t.Fatalf("partitions %v", l.Partitions)
	}
	rows := scanAll(t, l, ScanSpec{Columns: []string{"v", "a", "b"}}, nil)
	got := render(rows)
	want := []string{"1|1|x", "2|2|y"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}

	bad := t.TempDir()
	writeParquet(t, filepath.Join(bad, "a=1/f.parquet"), 10, col{"v", types.Int64, ints(1)})
	writeParquet(t, filepath.Join(bad, "b=2/f.parquet"), 10, col{"v", types.Int64, ints(1)})
	if _, err := Resolve(context.Background(), storage.Local{}, bad); errs.CodeOf(err) != errs.Analysis ||
		!strings.Contains(err.Error(), "Hive partition mismatch") {
		t.Errorf("want a partition mismatch, got %v", err)
	}
}

func render(rows [][]types.Value) []string {
	var out []string
	for _, r := range rows {
		parts := make([]string, len(r))
		for i, v := range r {
			parts[i] = v.String()
		}
		out = append(out, strings.Join(parts, "|"))
	}
	slices.Sort(out)
	return out
}

// sharedData finds ../shared/data beside the repository, or skips.
func sharedData(t *testing.T) string { return shareddata.Dir(t) }

// TestHiveDirectoriesFromDuckDB reads DuckDB's Hive test folders and checks the rows
// DuckDB returns for them (see the data's MANIFEST.md).
func TestHiveDirectoriesFromDuckDB(t *testing.T) {
	root := filepath.Join(sharedData(t), "parquet-testing", "duckdb", "hive-partitioning")
	cases := []struct {
		dir  string
		cols []string
		want []string
	}{
		{"simple/**/*.parquet", []string{"id", "value", "date", "part"}, []string{"1|value1|2012-01-01|a", "2|value2|2013-01-01|b"}},
		{"different_order", []string{"id", "value", "date", "part"}, []string{"1|value1|2012-01-01|a", "2|value2|2013-01-01|b"}},
		{"empty_string", []string{"col", "key"}, []string{"a|a", "b|", "c|NULL"}},
		{"hive_col_also_in_file", []string{"a", "b"}, nil},
		{"duplicate_names", []string{"id", "x"}, []string{"1|1", "2|2"}},
		{"missing", []string{"id", "part"}, []string{"3|c", "4|d"}},
		// The file's col1 and the path's COL1 are one column; the path's value is used.
		{"ci-column-names", []string{"col1", "col2"}, []string{"Hannes|2", "Mark|1"}},
	}
	for _, c := range cases {
		l := resolve(t, filepath.Join(root, c.dir))
		rows := render(scanAll(t, l, ScanSpec{Columns: c.cols}, nil))
		if c.want == nil {
			// The partition value wins over the file's own column a (which holds 1 and 3).
			if len(rows) != 2 || !strings.HasPrefix(rows[0], "5|") || !strings.HasPrefix(rows[1], "6|") {
				t.Errorf("%s: rows %v, want a = 5 and 6", c.dir, rows)
			}
			continue
		}
		if !slices.Equal(rows, c.want) {
			t.Errorf("%s: rows %v, want %v", c.dir, rows, c.want)
		}
	}
	sl := resolve(t, filepath.Join(root, "simple"))
	if !slices.Equal(sl.Partitions, []string{"part", "date"}) {
		t.Errorf("partitions %v", sl.Partitions)
	}
	if f := sl.Schema.Field(sl.fieldIndex("date")); types.Name(f.Type) != "DATE" {
		t.Errorf("date partition typed %s", types.Name(f.Type))
	}
	// Files with different columns are read by name, as DuckDB's union_by_name: a
	// column a file lacks is NULL in its rows.
	ul := resolve(t, filepath.Join(root, "union_by_name"))
	var names []string
	for _, f := range ul.Schema.Fields() {
		names = append(names, f.Name)
	}
	rows := render(scanAll(t, ul, ScanSpec{Columns: names}, nil))
	if want := []string{"42|84|NULL|1", "42|84|NULL|1", "NULL|128|33|2"}; !slices.Equal(names, []string{"i", "j", "k", "x"}) || !slices.Equal(rows, want) {
		t.Errorf("union_by_name: columns %v, rows %v, want i j k x and %v", names, rows, want)
	}
	for _, bad := range []string{"mismatching_names", "mismatching_count"} {
		if _, err := Resolve(context.Background(), storage.Local{}, filepath.Join(root, bad)); err == nil {
			t.Errorf("%s: want a partition mismatch error", bad)
		}
	}
}
