package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestAnalyzeAndTableCommands(t *testing.T) {
	fixtures, err := filepath.Abs("../tests/testdata")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(args, strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, _, stderr := run("sql", "--home", home, "-c",
		"CREATE TABLE people WITH (location = '"+fixtures+"/people.parquet', format = 'parquet')"); code != 0 {
		t.Fatalf("create: %s", stderr)
	}
	if code, _, stderr := run("table", "stats", "people", "--home", home); code != 1 || !strings.Contains(stderr, "STATISTICS_UNAVAILABLE") {
		t.Fatalf("stats before ANALYZE: exit %d, %s", code, stderr)
	}
	code, stdout, stderr := run("analyze", "people", "--home", home, "--columns", "city", "--format", "csv")
	if code != 0 || !strings.HasPrefix(stdout, "table,row_count,distinct_columns,full_read,source_version,elapsed_ms\npeople,") {
		t.Fatalf("analyze: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = run("table", "stats", "people", "--home", home, "--format", "csv")
	if code != 0 || !strings.Contains(stdout, "\ncity,VARCHAR,") || !strings.Contains(stdout, "listing") && !strings.Contains(stdout, "file (") {
		t.Fatalf("stats: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = run("table", "detail", "people", "--home", home, "--format", "csv")
	if code != 0 || !strings.HasPrefix(stdout, "format,location,") || strings.Count(stdout, "\n") != 2 {
		t.Fatalf("detail: exit %d\n%s", code, stdout)
	}
	for _, bad := range [][]string{{"table"}, {"table", "nope", "people"}, {"table", "stats"}, {"analyze"}, {"analyze", "people", "extra"}} {
		if code, _, _ := run(append(bad, "--home", home)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}
