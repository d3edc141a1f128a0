package cli

import (
	"strings"
	"testing"
)

// A script that ends in an open block comment fails with a syntax error instead of
// running what comes before and ignoring the rest.
func TestScriptWithAnOpenCommentFails(t *testing.T) {
	home := t.TempDir()
	for _, text := range []string{"/*", "SELECT 1; /*", "SELECT 1 /* x"} {
		status, _, stderr := run(t, "", "sql", "--home", home, "-c", text)
		if status != exitError || !strings.Contains(stderr, "SYNTAX_ERROR") || !strings.Contains(stderr, "unterminated /* comment") {
			t.Errorf("%q: status %d, stderr %q; want a syntax error", text, status, stderr)
		}
	}
}
