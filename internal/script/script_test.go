package script

import (
	"slices"
	"testing"
)

func stmtTexts(text string) (stmts []string, lastTerminated bool) {
	spans := Statements(text)
	for _, sp := range spans {
		stmts = append(stmts, text[sp.Start:sp.End])
	}
	if len(spans) > 0 {
		lastTerminated = spans[len(spans)-1].Terminated
	}
	return stmts, lastTerminated
}

func TestSplitStatements(t *testing.T) {
	for _, c := range []struct {
		text       string
		want       []string
		terminated bool
	}{
		{"", nil, false},
		{"   \n\t ", nil, false},
		{";;;", nil, false},
		{"SELECT 1", []string{"SELECT 1"}, false},
		{"SELECT 1;", []string{"SELECT 1"}, true},
		{"  SELECT 1 ;\n  SELECT 2;  ", []string{"SELECT 1", "SELECT 2"}, true},
		{"SELECT 1; SELECT 2", []string{"SELECT 1", "SELECT 2"}, false},
		{"SELECT 'a;b'; SELECT 2;", []string{"SELECT 'a;b'", "SELECT 2"}, true},
		{"SELECT 'it''s; here';", []string{"SELECT 'it''s; here'"}, true},
		{`SELECT "we;ird" FROM t;`, []string{`SELECT "we;ird" FROM t`}, true},
		{`SELECT "a""b;c";`, []string{`SELECT "a""b;c"`}, true},
		{"SELECT 1 -- a comment; not a split\n; SELECT 2;", []string{"SELECT 1 -- a comment; not a split", "SELECT 2"}, true},
		{"SELECT /* ; */ 1;", []string{"SELECT /* ; */ 1"}, true},
		{"SELECT /* outer /* inner; */ still; */ 1;", []string{"SELECT /* outer /* inner; */ still; */ 1"}, true},
		{"-- only a comment\n;\n/* and another */;", nil, false},
		{"SELECT 1;\n-- trailing comment\n", []string{"SELECT 1"}, true},
		{"SELECT 'open;", []string{"SELECT 'open;"}, false},
		{"SELECT /* open ;", []string{"SELECT /* open ;"}, false},
		{"SELECT 1 -- no newline;", []string{"SELECT 1 -- no newline;"}, false},
		{"SELECT 'ü;日本'; SELECT 2;", []string{"SELECT 'ü;日本'", "SELECT 2"}, true},
		{"SELECT a/b; SELECT a-b;", []string{"SELECT a/b", "SELECT a-b"}, true},
		// An open block comment is a statement of its own, which the engine refuses.
		{"/*", []string{"/*"}, false},
		{"SELECT 1; /*", []string{"SELECT 1", "/*"}, false},
		{"SELECT 1;\n/* open /* nested */ still open\n", []string{"SELECT 1", "/* open /* nested */ still open"}, false},
	} {
		got, term := stmtTexts(c.text)
		if !slices.Equal(got, c.want) || term != c.terminated {
			t.Errorf("Statements(%q) = %q (terminated %v), want %q (terminated %v)", c.text, got, term, c.want, c.terminated)
		}
	}
}

func TestIsSetSession(t *testing.T) {
	for stmt, want := range map[string]bool{
		"SET SESSION use_statistics = false":             true,
		"set   session approximate=true":                 true,
		"/* hint */ SET\n  SESSION result_cache = false": true,
		"-- c\nSet Session x = 1":                        true,
		"SET x = 1":                                      false,
		"SELECT 'SET SESSION'":                           false,
		"SETTINGS":                                       false,
		"":                                               false,
	} {
		if got := IsSetSession(stmt); got != want {
			t.Errorf("IsSetSession(%q) = %v, want %v", stmt, got, want)
		}
	}
}

func TestGroupRequests(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"SELECT 1; SELECT 2;", []string{"SELECT 1", "SELECT 2"}},
		{"SET SESSION a = 1; SELECT 1; SELECT 2",
			[]string{"SET SESSION a = 1; SELECT 1", "SELECT 2"}},
		{"SET SESSION a = 1;\nSET SESSION b = 2;\nSELECT 1;\nSET SESSION c = 3; SELECT 2;",
			[]string{"SET SESSION a = 1;\nSET SESSION b = 2;\nSELECT 1", "SET SESSION c = 3; SELECT 2"}},
		// A trailing SET SESSION has nothing to configure; it goes alone and the
		// engine refuses it.
		{"SELECT 1; SET SESSION a = 1;", []string{"SELECT 1", "SET SESSION a = 1"}},
		{"SET SESSION a = 1; SET SESSION b = 2", []string{"SET SESSION a = 1; SET SESSION b = 2"}},
	} {
		var got []string
		for _, r := range Requests(c.text, Statements(c.text)) {
			got = append(got, c.text[r.Start:r.End])
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Requests(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
