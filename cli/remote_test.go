package cli

import (
	"bytes"
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
