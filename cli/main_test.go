package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/chzyer/readline"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/internal/script"
)

// run calls Main with stdin and returns the exit status and both outputs.
func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	status := Main(args, strings.NewReader(stdin), &out, &errOut)
	return status, out.String(), errOut.String()
}

func TestMainUsageErrors(t *testing.T) {
	home := t.TempDir()
	script := filepath.Join(t.TempDir(), "q.sql")
	if err := os.WriteFile(script, []byte("SELECT 1;"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		args   []string
		status int
		stderr string // a fragment the error output must hold
	}{
		{"no command", nil, exitUsage, "Usage:"},
		{"unknown command", []string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{"bad format", []string{"sql", "--home", home, "--format", "xml", "-c", "SELECT 1"}, exitUsage, `unknown format "xml"`},
		{"both -c and -f", []string{"sql", "--home", home, "-c", "SELECT 1", "-f", script}, exitUsage, "cannot be used together"},
		{"bad flag", []string{"sql", "--nope"}, exitUsage, "flag provided but not defined"},
		{"stray argument", []string{"sql", "--home", home, "SELECT 1"}, exitUsage, "unexpected argument"},
		{"bad setting flag", []string{"sql", "--set", "novalue", "-c", "SELECT 1"}, exitUsage, "want key=value"},
		{"missing script", []string{"sql", "--home", home, "-f", filepath.Join(home, "absent.sql")}, exitError, "cannot read script"},
		{"gen without kind", []string{"gen"}, exitUsage, "which table"},
		{"gen unknown kind", []string{"gen", "trades"}, exitUsage, `unknown kind "trades"`},
		{"gen events without out", []string{"gen", "events", "--rows", "10"}, exitUsage, "--out is required"},
		{"gen events bad cluster", []string{"gen", "events", "--out", home, "--clustered-by", "user_id"}, exitUsage, "only ts"},
		{"version with argument", []string{"version", "x"}, exitUsage, "unexpected argument"},
		{"help unknown", []string{"help", "nope"}, exitUsage, `unknown command "nope"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, _, stderr := run(t, "", c.args...)
			if status != c.status {
				t.Errorf("status = %d, want %d (stderr %q)", status, c.status, stderr)
			}
			if !strings.Contains(stderr, c.stderr) {
				t.Errorf("stderr %q does not mention %q", stderr, c.stderr)
			}
		})
	}
}

func TestMainHelpAndVersion(t *testing.T) {
	status, out, _ := run(t, "", "help")
	if status != exitOK || !strings.Contains(out, "sql") || !strings.Contains(out, "gen") {
		t.Errorf("help: status %d, output %q", status, out)
	}
	for _, args := range [][]string{{"sql", "--help"}, {"help", "sql"}, {"gen", "events", "-h"}} {
		status, _, stderr := run(t, "", args...)
		if status != exitOK || !strings.Contains(stderr, "Usage: lore") {
			t.Errorf("%v: status %d, stderr %q", args, status, stderr)
		}
	}
	status, out, _ = run(t, "", "version")
	if status != exitOK || !strings.HasPrefix(out, "lore ") {
		t.Errorf("version: status %d, output %q", status, out)
	}
}

// The engine's own answer decides the outcome: an invalid statement is an error
// with exit status 1 and a described error on stderr, nothing on stdout.
func TestMainSQLErrorExits1(t *testing.T) {
	status, out, stderr := run(t, "", "sql", "--home", t.TempDir(), "-c", "SELEC 1")
	if status != exitError {
		t.Errorf("status = %d, want 1", status)
	}
	if out != "" {
		t.Errorf("stdout = %q, want nothing", out)
	}
	if !strings.Contains(stderr, "_ERROR") && !strings.Contains(stderr, "INTERNAL") {
		t.Errorf("stderr %q holds no error code", stderr)
	}
}

func TestMainSQLEmptyScript(t *testing.T) {
	status, out, stderr := run(t, "-- nothing to do\n;\n", "sql", "--home", t.TempDir())
	if status != exitOK || out != "" || stderr != "" {
		t.Errorf("empty script: status %d, stdout %q, stderr %q", status, out, stderr)
	}
}

func TestMainGenEvents(t *testing.T) {
	out := t.TempDir()
	status, stdout, stderr := run(t, "", "gen", "events", "--rows", "5000", "--files", "2", "--out", out,
		"--clustered-by", "ts", "--seed", "9", "--row-group-rows", "1000")
	if status != exitOK {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	if !strings.Contains(stdout, "wrote 5000 rows in 2 files") {
		t.Errorf("stdout = %q", stdout)
	}
	if stderr != "" {
		t.Errorf("stderr = %q, want no progress output when stderr is not a terminal", stderr)
	}
	for k := range 2 {
		if _, err := os.Stat(filepath.Join(out, gen.EventsFileName(k))); err != nil {
			t.Error(err)
		}
	}
}

// TestMainGenRefusesNonEmptyOut checks that lore gen leaves a directory that already
// holds files alone unless --force says to write into it, and never writes over a
// file named as the output directory.
func TestMainGenRefusesNonEmptyOut(t *testing.T) {
	out := t.TempDir()
	keep := filepath.Join(out, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kind := range [][]string{{"events", "--rows", "100"}, {"tpch", "--sf", "0.001"}} {
		args := append([]string{"gen"}, kind...)
		status, _, stderr := run(t, "", append(args, "--out", out)...)
		if status != exitUsage || !strings.Contains(stderr, "not empty") || !strings.Contains(stderr, "--force") {
			t.Errorf("gen %s into a non-empty directory: status %d, stderr %q", kind[0], status, stderr)
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil || len(entries) != 1 {
		t.Fatalf("a refused gen wrote into %s: %v %v", out, entries, err)
	}
	status, _, stderr := run(t, "", "gen", "events", "--rows", "100", "--out", out, "--force")
	if status != exitOK {
		t.Fatalf("gen --force: status %d, stderr %q", status, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, gen.EventsFileName(0))); err != nil {
		t.Error(err)
	}
	status, _, stderr = run(t, "", "gen", "events", "--rows", "100", "--out", keep, "--force")
	if status != exitUsage || !strings.Contains(stderr, "not a directory") {
		t.Errorf("gen into a file: status %d, stderr %q", status, stderr)
	}
	if b, _ := os.ReadFile(keep); string(b) != "mine" {
		t.Errorf("the file named as output was changed: %q", b)
	}
}

// recorder is a querier that records the requests it is sent and answers each with
// a one-column result holding the request text, or with the error errFor returns.
type recorder struct {
	requests []string
	settings []map[string]string
	errFor   func(sql string) error
}

func (r *recorder) Query(_ context.Context, sql string, settings map[string]string) (*lore.Result, error) {
	r.requests = append(r.requests, sql)
	r.settings = append(r.settings, settings)
	if r.errFor != nil {
		if err := r.errFor(sql); err != nil {
			return nil, err
		}
	}
	return &lore.Result{
		Schema:  arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil),
		Batches: []arrow.Record{oneInt(int64(len(r.requests)))},
		Record:  &lore.Record{ID: "q", Execution: lore.Execution{Mode: "context"}, ElapsedMS: 0.5},
	}, nil
}

func TestScriptSendsRequestsInOrder(t *testing.T) {
	q := &recorder{}
	var out, errOut bytes.Buffer
	r := &sqlRun{q: q, format: "csv", settings: map[string]string{"result_cache": "false"},
		stdout: &out, stderr: &errOut, timerOut: &errOut, timer: true}
	text := "SET SESSION use_statistics = false;\nSELECT count(*) FROM t;\n-- next\nSELECT 2;"
	if status := r.script(context.Background(), text, script.Requests(text, script.Statements(text))); status != exitOK {
		t.Fatalf("status %d, stderr %q", status, errOut.String())
	}
	want := []string{"SET SESSION use_statistics = false;\nSELECT count(*) FROM t", "-- next\nSELECT 2"}
	if !slices.Equal(q.requests, want) {
		t.Errorf("requests = %q, want %q", q.requests, want)
	}
	if q.settings[0]["result_cache"] != "false" {
		t.Errorf("settings = %v, want the --set values", q.settings[0])
	}
	if out.String() != "n\n1\nn\n2\n" {
		t.Errorf("stdout = %q", out.String())
	}
	if strings.Count(errOut.String(), "mode context") != 2 {
		t.Errorf("timer output = %q, want two lines naming the mode", errOut.String())
	}
}

func TestScriptStopsAtFirstError(t *testing.T) {
	q := &recorder{errFor: func(sql string) error {
		if strings.Contains(sql, "bad") {
			return errs.At(errs.Syntax, strings.Index(sql, "bad"), "syntax error at or near \"bad\"")
		}
		return nil
	}}
	var out, errOut bytes.Buffer
	r := &sqlRun{q: q, format: "table", stdout: &out, stderr: &errOut, timerOut: &errOut}
	text := "SELECT 1;\nSELECT\n  bad;\nSELECT 3;"
	status := r.script(context.Background(), text, script.Requests(text, script.Statements(text)))
	if status != exitError {
		t.Errorf("status = %d, want 1", status)
	}
	if len(q.requests) != 2 {
		t.Errorf("%d requests sent, want 2 (the script stops at the error)", len(q.requests))
	}
	msg := errOut.String()
	for _, frag := range []string{"line 2", "SYNTAX_ERROR", "(line 2, column 3)", "LINE 2:   bad\n          ^"} {
		if !strings.Contains(msg, frag) {
			t.Errorf("stderr %q does not hold %q", msg, frag)
		}
	}
}

// lines is a lineReader that replays typed lines, then reports end of input. An
// entry "^C" stands for Ctrl-C.
type lines struct {
	input   []string
	prompts []string
	history []string
}

func (l *lines) Readline() (string, error) {
	if len(l.input) == 0 {
		return "", io.EOF
	}
	line := l.input[0]
	l.input = l.input[1:]
	if line == "^C" {
		return "", readline.ErrInterrupt
	}
	return line, nil
}

func (l *lines) SetPrompt(p string) { l.prompts = append(l.prompts, p) }

func (l *lines) SaveHistory(s string) error {
	l.history = append(l.history, s)
	return nil
}

func TestShell(t *testing.T) {
	q := &recorder{errFor: func(sql string) error {
		if strings.Contains(sql, "nonsense") {
			return errs.New(errs.InvalidSetting, "unknown setting nonsense")
		}
		if strings.Contains(sql, "missing") {
			return errs.New(errs.TableNotFound, "table missing does not exist")
		}
		return nil
	}}
	var out, errOut bytes.Buffer
	s := &shellState{sqlRun: &sqlRun{q: q, format: "table", stdout: &out, stderr: &errOut, timerOut: &out}}
	in := &lines{input: []string{
		"SELECT", "  1;", // continued over two lines
		"SELECT * FROM missing;", // an error does not end the shell
		".mode csv",
		".timer on",
		"SELECT 'half", "^C", // Ctrl-C abandons the statement
		"-- just a comment",
		"SET SESSION use_statistics = false;",
		"SELECT 2; SELECT 3;",
		"SET SESSION nonsense = 1;",
		"SELECT 4;", // refused: the unconfirmed SET is dropped
		"SELECT 5;",
		".mode bogus",
		".nope",
		".quit",
		"SELECT 'never';",
	}}
	s.loop(context.Background(), in)

	want := []string{
		"SELECT\n  1",
		"SELECT * FROM missing",
		"SET SESSION use_statistics = false;\nSELECT 2",
		"SET SESSION use_statistics = false;\nSELECT 3",
		"SET SESSION use_statistics = false;\nSET SESSION nonsense = 1;\nSELECT 4",
		"SET SESSION use_statistics = false;\nSELECT 5",
	}
	if !slices.Equal(q.requests, want) {
		t.Errorf("requests:\n%q\nwant\n%q", q.requests, want)
	}
	if in.prompts[0] != promptFirst || in.prompts[1] != promptMore || in.prompts[2] != promptFirst {
		t.Errorf("prompts = %q", in.prompts[:3])
	}
	if !slices.Contains(in.history, "SELECT 1;") {
		t.Errorf("history = %q, want the multi-line statement saved as one line", in.history)
	}
	o, e := out.String(), errOut.String()
	if !strings.Contains(o, "│ bigint │") {
		t.Errorf("table output missing: %q", o)
	}
	if !strings.Contains(o, "n\n3\n") || !strings.Contains(o, "Run Time:") {
		t.Errorf("csv output with timer missing: %q", o)
	}
	for _, frag := range []string{"TABLE_NOT_FOUND", "INVALID_SETTING", "were dropped", `unknown format "bogus"`, "unknown command .nope"} {
		if !strings.Contains(e, frag) {
			t.Errorf("stderr %q does not hold %q", e, frag)
		}
	}
}

func TestShellEndsOnEOFWithPartialInput(t *testing.T) {
	q := &recorder{}
	var out bytes.Buffer
	s := &shellState{sqlRun: &sqlRun{q: q, format: "table", stdout: &out, stderr: &out, timerOut: &out}}
	s.loop(context.Background(), &lines{input: []string{"SELECT 1"}})
	if len(q.requests) != 0 {
		t.Errorf("an unterminated statement was sent: %q", q.requests)
	}
}

func TestDemoShowsTheLearningPath(t *testing.T) {
	home := t.TempDir()
	status, stdout, stderr := run(t, "", "demo", "--home", home, "--rows", "2000", "--files", "2")
	for k := range 2 {
		if _, err := os.Stat(filepath.Join(home, "demo", "events", gen.EventsFileName(k))); err != nil {
			t.Errorf("demo table not generated: %v", err)
		}
	}
	if !strings.Contains(stdout, "CREATE TABLE IF NOT EXISTS events") {
		t.Errorf("stdout %q does not show the statement", stdout)
	}
	// The demo shows the learning path: the same statement scanned, then answered
	// from statistics.
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	if strings.Count(stdout, "Run Time:") != 6 || !strings.Contains(stdout, "the same statement: scan in ") ||
		!strings.Contains(stdout, ", then context in ") {
		t.Errorf("stdout does not show the learning path:\n%s", stdout)
	}
}
