package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/loredb/lore"
)

// Version is the version printed by "lore version". Release builds set it with
// -ldflags "-X github.com/loredb/lore/cli.Version=…"; otherwise the module version
// from the build information is used.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // the work failed (a statement error, an I/O error)
	exitUsage = 2 // the command line was wrong
)

// env is what a command may touch: its standard streams.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// command is one "lore" subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) int
}

func commands() []command {
	return []command{
		{"sql", "run SQL: an interactive shell, -c TEXT, -f FILE or a script on stdin", runSQL},
		{"serve", "serve the HTTP API (POST /v1/statement, …; docs/server.md)", runServe},
		{"analyze", "learn a table's statistics (ANALYZE)", runAnalyze},
		{"optimize", "rewrite a table's files sorted by its clustering columns (OPTIMIZE)", runOptimize},
		{"table", "show a table's statistics or detail (table stats|detail NAME)", runTable},
		{"gen", "generate synthetic tables (gen events …)", runGen},
		{"demo", "build a demo lake and query it", runDemo},
		{"version", "print the version", runVersion},
		{"help", "show help for a command", nil}, // handled by Main
	}
}

// Main runs the lore command line with args (without the program name) and returns
// the process exit status: 0 on success, 1 when the work failed, 2 for a bad
// command line.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 && rest[0] != "help" {
			if c, ok := lookup(rest[0]); ok {
				return c.run(context.Background(), e, []string{"--help"})
			}
			fmt.Fprintf(stderr, "lore: unknown command %q\n", rest[0])
			usage(stderr)
			return exitUsage
		}
		usage(stdout)
		return exitOK
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "lore: unknown command %q\n\n", name)
		usage(stderr)
		return exitUsage
	}
	// Each command decides what an interrupt means: scripts and generators stop,
	// the shell cancels the running statement and carries on.
	return c.run(context.Background(), e, rest)
}

func lookup(name string) (command, bool) {
	i := slices.IndexFunc(commands(), func(c command) bool { return c.name == name && c.run != nil })
	if i < 0 {
		return command{}, false
	}
	return commands()[i], true
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "lore — an analytical SQL engine for lake tables\n\nUsage:\n  lore <command> [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun \"lore <command> --help\" for a command's flags.\n")
}

// newFlags returns a flag set for a subcommand whose usage names the command and
// its synopsis and whose errors go to the command's stderr.
func newFlags(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("lore "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: lore %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and maps the outcome to an exit status: ok is false when
// the command should return status (0 after --help, 2 after a bad flag).
func parseFlags(fs *flag.FlagSet, args []string) (status int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return exitOK, true
}

// usageError reports a command-line mistake the flag package cannot see.
func usageError(e *env, fs *flag.FlagSet, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "%s: %s\n", fs.Name(), fmt.Sprintf(format, args...))
	fs.Usage()
	return exitUsage
}

// isTerminal reports whether a stream is an interactive terminal.
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func runVersion(_ context.Context, e *env, args []string) int {
	fs := newFlags(e, "version", "")
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return usageError(e, fs, "unexpected argument %q", fs.Arg(0))
	}
	fmt.Fprintf(e.stdout, "lore %s\n", version())
	return exitOK
}

// memoryLimitFlag is the --memory-limit flag of the commands that open an engine: a
// size such as 4GiB (lore.ParseMemoryLimit); zero when not given.
type memoryLimitFlag int64

func (m *memoryLimitFlag) String() string {
	if m == nil || *m == 0 {
		return ""
	}
	return strconv.FormatInt(int64(*m), 10)
}

func (m *memoryLimitFlag) Set(v string) error {
	n, err := lore.ParseMemoryLimit(v)
	if err != nil {
		return errors.New(err.Error())
	}
	*m = memoryLimitFlag(n)
	return nil
}

// addMemoryLimit defines --memory-limit on fs.
func addMemoryLimit(fs *flag.FlagSet) *memoryLimitFlag {
	m := new(memoryLimitFlag)
	fs.Var(m, "memory-limit", "the engine's memory `size`, e.g. 4GiB or 512MiB (default $LORE_MEMORY_LIMIT, else 80 % of the machine's or the control group's memory)")
	return m
}

// settingsFlag collects repeated --set key=value flags.
type settingsFlag map[string]string

func (s settingsFlag) String() string {
	parts := make([]string, 0, len(s))
	for k, v := range s {
		parts = append(parts, k+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func (s settingsFlag) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want key=value, got %q", kv)
	}
	s[strings.TrimSpace(k)] = strings.TrimSpace(v)
	return nil
}
