package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Transcripts of `lore sql` run end to end through the engine over the repository's
// Parquet fixtures, one golden file per output format. The query record's volatile
// fields (id, elapsed time, byte counts) are masked before comparing.
func TestSQLTranscripts(t *testing.T) {
	fixtures, err := filepath.Abs("../tests/testdata")
	if err != nil {
		t.Fatal(err)
	}
	script := strings.Join([]string{
		"CREATE TABLE people WITH (location = '" + fixtures + "/people.parquet', format = 'parquet')",
		"SELECT city, count(*) AS n, min(age) AS youngest, max(name) AS last_name FROM people GROUP BY city ORDER BY city NULLS FIRST",
		"SELECT 1 AS one, 2.5::DOUBLE AS x, DATE '2024-02-29' AS d, NULL AS nothing, 'a|b' AS s",
	}, ";\n") + ";\n"
	masks := []*regexp.Regexp{
		regexp.MustCompile(`"id":"[0-9a-f]+"`),
		regexp.MustCompile(`"elapsed_ms":[0-9.e+-]+`),
		regexp.MustCompile(`"compressed_bytes_(read|selected)":[0-9]+`),
		regexp.MustCompile(`"location":"[^"]*"`),
		regexp.MustCompile(`"sql":"(\\.|[^"\\])*"`),
	}
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			home := t.TempDir()
			var stdout, stderr bytes.Buffer
			code := Main([]string{"sql", "--home", home, "--format", format, "-c", script}, strings.NewReader(""), &stdout, &stderr)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			got := stdout.String()
			for _, m := range masks {
				got = m.ReplaceAllStringFunc(got, func(s string) string {
					return s[:strings.IndexByte(s, ':')+1] + `"…"`
				})
			}
			path := filepath.Join("testdata", "transcripts", format+".txt")
			if *rewrite {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -rewrite to create it)", err)
			}
			if got != string(want) {
				t.Fatalf("transcript differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
	// An error stops the script with its code, position and caret on stderr.
	var stdout, stderr bytes.Buffer
	code := Main([]string{"sql", "--home", t.TempDir(), "-c", "SELECT 1;\nSELECT nope FROM (SELECT 1 AS a) t;"}, strings.NewReader(""), &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), `ANALYSIS_ERROR: column "nope" not found`) || !strings.Contains(stderr.String(), "^") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
}
