package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// lore sql --server runs scripts against a running lore serve: results print as a
// local engine prints them, the record says how each was answered, an error is the
// server's coded error with its position, and a bad token is refused.
func TestSQLAgainstServer(t *testing.T) {
	home := t.TempDir()
	srv := startServe(t, "--addr", "127.0.0.1:0", "--home", home)
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(append([]string{"sql", "--server", srv.url}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run("--token", srv.token, "--format", "csv", "-c",
		"SELECT 41 + 1 AS x, 'a' AS s UNION ALL SELECT 7, NULL ORDER BY x")
	if code != exitOK || out != "x,s\n7,\n42,a\n" {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
	// The same script through a local engine prints the same.
	var local bytes.Buffer
	if c := Main([]string{"sql", "--home", t.TempDir(), "--format", "csv", "-c",
		"SELECT 41 + 1 AS x, 'a' AS s UNION ALL SELECT 7, NULL ORDER BY x"}, strings.NewReader(""), &local, &bytes.Buffer{}); c != exitOK || local.String() != out {
		t.Fatalf("local prints %q, the server's result %q", local.String(), out)
	}
	t.Setenv("LORE_TOKEN", srv.token)
	code, _, errOut = run("--timer", "-c", "SELECT count(*) FROM range(10)")
	if code != exitOK || !strings.Contains(errOut, "mode scan") {
		t.Fatalf("exit %d, timer line %q", code, errOut)
	}
	code, _, errOut = run("-c", "SELECT 1 FROM nowhere_table")
	if code != exitError || !strings.Contains(errOut, "TABLE_NOT_FOUND") {
		t.Fatalf("an unknown table: exit %d, %q", code, errOut)
	}
	code, _, errOut = run("-c", "SELECT 1 +")
	if code != exitError || !strings.Contains(errOut, "SYNTAX_ERROR") || !strings.Contains(errOut, "^") {
		t.Fatalf("a syntax error: exit %d, %q", code, errOut)
	}
	// A statement that fails after its result began to stream: the response is cut,
	// and the client prints the statement's coded error, not a partial result.
	code, out, errOut = run("--format", "csv", "-c", "SELECT CAST(CASE WHEN range = 900000 THEN 'x' ELSE '1' END AS INTEGER) AS v FROM range(1000000)")
	if code != exitError || out != "" || !strings.Contains(errOut, "'x'") {
		t.Fatalf("an error mid-stream: exit %d, %d bytes out, %q", code, len(out), errOut)
	}
	code, _, errOut = run("--token", "lore_not_a_token", "-c", "SELECT 1")
	if code != exitError || !strings.Contains(errOut, "UNAUTHENTICATED") || strings.Contains(errOut, "lore_not_a_token") {
		t.Fatalf("a bad token: exit %d, %q", code, errOut)
	}
	if code, _, _ := run("--memory-limit", "1GB", "-c", "SELECT 1"); code != exitUsage {
		t.Fatalf("--memory-limit with --server: exit %d", code)
	}
	var errBuf bytes.Buffer
	if code := Main([]string{"sql", "--server", "ftp://x", "-c", "SELECT 1"}, strings.NewReader(""), &bytes.Buffer{}, &errBuf); code != exitUsage {
		t.Fatalf("a bad URL: exit %d %q", code, errBuf.String())
	}
}

// lore sql --server prints what a local lore sql prints, results and errors alike,
// in every format.
func TestSQLAgainstServerPrintsAsLocal(t *testing.T) {
	srv := startServe(t, "--addr", "127.0.0.1:0")
	url, token := srv.url, srv.token
	local := t.TempDir()
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(append([]string{"sql"}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	statements := []string{
		"SELECT 41 + 1 AS x, 'ünïcode' AS s, CAST(9007199254740993 AS BIGINT) AS big, 1.5::DECIMAL(10,2) AS d, NULL AS n, DATE '2024-02-29' AS day",
		"SELECT * FROM range(3) r(i) ORDER BY i",
		"SELECT [1, 2] AS l, {'a': 1} AS st",
		"SELEC 1",
		"SELECT * FROM nowhere",
	}
	for _, format := range Formats {
		for _, sql := range statements {
			lc, lout, lerr := run("--home", local, "--format", format, "-c", sql)
			rc, rout, rerr := run("--server", url, "--token", token, "--format", format, "-c", sql)
			if format == "json" && lc == exitOK {
				// The record differs (its id, time, subject): compare the rest, and
				// that the server's record came through.
				if !strings.Contains(rout, `"subject":"admin"`) {
					t.Errorf("%s: the server's record is missing: %s", sql, rout)
				}
				lout, rout = withoutRecord(t, lout), withoutRecord(t, rout)
			}
			if lc != rc || lout != rout || lerr != rerr {
				t.Errorf("%s, %s:\nlocal  %d %q %q\nremote %d %q %q", format, sql, lc, lout, lerr, rc, rout, rerr)
			}
		}
	}
	// The token may come from $LORE_TOKEN; a wrong one is an error, never echoed.
	t.Setenv("LORE_TOKEN", token)
	if c, out, _ := run("--server", url, "-c", "SELECT 1 AS one"); c != exitOK || !strings.Contains(out, "1") {
		t.Errorf("$LORE_TOKEN: %d %q", c, out)
	}
	os.Unsetenv("LORE_TOKEN")
	c, _, errOut := run("--server", url, "--token", "lore_wrong", "-c", "SELECT 1")
	if c != exitError || !strings.Contains(errOut, "not known") || strings.Contains(errOut, "lore_wrong") {
		t.Errorf("a wrong token: %d %q", c, errOut)
	}
	if c, _, errOut := run("--server", "http://127.0.0.1:1", "--token", token, "-c", "SELECT 1"); c != exitError || !strings.Contains(errOut, "cannot reach") {
		t.Errorf("no server: %d %q", c, errOut)
	}
}

// withoutRecord is a json output with its record taken out.
func withoutRecord(t *testing.T, out string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	delete(m, "record")
	b, _ := json.Marshal(m)
	return string(b)
}
