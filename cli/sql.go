package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	homedir "github.com/loredb/lore/internal/home"
	"github.com/loredb/lore/internal/script"
)

// querier runs one request. *lore.Engine is the implementation; the interface is
// here, where it is consumed, so the script and shell logic does not depend on how
// the engine is built. Query must be safe to call again after it fails.
type querier interface {
	Query(ctx context.Context, sql string, settings map[string]string) (*lore.Result, error)
}

var _ querier = (*lore.Engine)(nil)

// sqlRun is the shared state of one "lore sql" invocation.
type sqlRun struct {
	q        querier
	format   string
	timer    bool
	settings map[string]string
	stdout   io.Writer
	stderr   io.Writer
	// timerOut receives timer lines: stderr for scripts, so that machine-readable
	// output stays clean; stdout in the shell.
	timerOut io.Writer
}

// sqlFlags are the values of lore sql's flags. Package ahead reads the command
// line before they are parsed and must know each flag (TestAheadKnowsSQLFlags).
type sqlFlags struct {
	home, command, file, format, server, token *string
	memLimit                                   *memoryLimitFlag
	timer                                      *bool
	settings                                   settingsFlag
}

// newSQLFlags defines lore sql's flags.
func newSQLFlags(e *env) (*flag.FlagSet, *sqlFlags) {
	fs := newFlags(e, "sql", "[--home DIR] [--memory-limit SIZE | --server URL [--token TOKEN]] [-c SQL | -f FILE] [--format FORMAT]")
	f := &sqlFlags{settings: settingsFlag{}}
	f.home = fs.String("home", "", "the Lore home `directory` (default $LORE_HOME, else ./.lore)")
	f.memLimit = addMemoryLimit(fs)
	f.command = fs.String("c", "", "run the `SQL` text and exit")
	f.file = fs.String("f", "", "run the SQL script in `FILE` (- for stdin) and exit")
	f.format = fs.String("format", "table", "output `format`: "+strings.Join(Formats, ", "))
	f.timer = fs.Bool("timer", false, "print each statement's elapsed time and answer mode")
	fs.Var(f.settings, "set", "a per-statement setting `key=value` (repeatable)")
	f.server = fs.String("server", "", "send the statements to the Lore server at `URL` (lore serve) instead of running them here")
	f.token = fs.String("token", "", "the server's bearer `token` (default $LORE_TOKEN, which keeps it out of the process list)")
	return fs, f
}

func runSQL(ctx context.Context, e *env, args []string) int {
	fs, f := newSQLFlags(e)
	home, memLimit, command, file, format, timer, settings, server, token :=
		f.home, f.memLimit, f.command, f.file, f.format, f.timer, f.settings, f.server, f.token
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return usageError(e, fs, "unexpected argument %q (quote SQL and pass it with -c)", fs.Arg(0))
	}
	if !validFormat(*format) {
		return usageError(e, fs, "unknown format %q (want %s)", *format, strings.Join(Formats, ", "))
	}
	cSet, fSet, memSet := false, false, false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "c":
			cSet = true
		case "f":
			fSet = true
		case "memory-limit":
			memSet = true
		}
	})
	if cSet && fSet {
		return usageError(e, fs, "-c and -f cannot be used together")
	}
	if *server == "" && *token != "" {
		return usageError(e, fs, "--token is the credential of --server; without --server statements run here")
	}
	if *server != "" && memSet {
		return usageError(e, fs, "--memory-limit bounds a local engine; a server has its own (send SET SESSION memory_limit to lower it)")
	}

	// Read the script before opening the engine, so a missing file fails fast.
	var text string
	interactive := false
	switch {
	case cSet:
		text = *command
	case fSet && *file != "-":
		b, err := os.ReadFile(*file)
		if err != nil {
			fmt.Fprintf(e.stderr, "lore sql: cannot read script: %v\n", err)
			return exitError
		}
		text = string(b)
	case !fSet && isTerminal(e.stdin):
		interactive = true
	default:
		b, err := io.ReadAll(e.stdin)
		if err != nil {
			fmt.Fprintf(e.stderr, "lore sql: cannot read stdin: %v\n", err)
			return exitError
		}
		text = string(b)
	}
	reqs := script.Requests(text, script.Statements(text)) // none for the shell

	// Ctrl-C cancels a script's statement (the shell handles it per statement).
	scriptCtx := ctx
	if !interactive {
		var stop context.CancelFunc
		scriptCtx, stop = notifyInterrupt(ctx)
		defer stop()
	}

	var q querier
	if *server != "" {
		if *token == "" {
			*token = os.Getenv("LORE_TOKEN")
		}
		rq, err := newRemote(*server, *token)
		if err != nil {
			return usageError(e, fs, "%v", err)
		}
		q = rq
	} else {
		if len(reqs) > 0 {
			// Parsed while the engine opens, on the other core.
			lore.ParseAhead(text[reqs[0].Start:reqs[0].End])
		}
		eng, err := lore.Open(ctx, lore.Options{Home: homedir.Dir(*home), MemoryLimit: int64(*memLimit), Progress: engineProgress(e.stderr)})
		if err != nil {
			fmt.Fprintf(e.stderr, "lore sql: %s\n", errs.Describe(err, ""))
			return exitError
		}
		defer eng.Close()
		q = eng
	}

	r := &sqlRun{q: q, format: *format, timer: *timer, settings: settings,
		stdout: e.stdout, stderr: e.stderr, timerOut: e.stderr}
	if interactive {
		return r.shell(ctx, e.stdin.(*os.File), homedir.Dir(*home))
	}
	return r.script(scriptCtx, text, reqs)
}

// notifyInterrupt returns ctx canceled at the first Ctrl-C, and the function that
// removes the handler. The handler is installed once the command has run for
// interruptAfter: installing it starts the runtime's signal thread and waits for
// it, a quarter of a millisecond of a fresh process, taken from a statement on the
// other core. A statement answered sooner does not pay for it, and a Ctrl-C before
// then ends the process as it ends any program without a handler.
func notifyInterrupt(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	sigs := make(chan os.Signal, 1)
	t := time.AfterFunc(interruptAfter, func() {
		signal.Notify(sigs, os.Interrupt)
		go func() {
			defer signal.Stop(sigs)
			select {
			case <-sigs:
				cancel()
			case <-ctx.Done():
			}
		}()
	})
	return ctx, func() { t.Stop(); cancel() }
}

// interruptAfter is how long a command runs before Ctrl-C cancels its statement
// rather than ending the process: less than anyone takes to press it.
const interruptAfter = 10 * time.Millisecond

// script runs the requests reqs of text in order and stops at the first error.
func (r *sqlRun) script(ctx context.Context, text string, reqs []script.Request) int {
	for _, req := range reqs {
		sqlText := text[req.Start:req.End]
		if err := r.exec(ctx, sqlText, nil); err != nil {
			if len(reqs) > 1 {
				line := 1 + strings.Count(text[:req.Start], "\n")
				fmt.Fprintf(r.stderr, "in the statement at line %d:\n", line)
			}
			fmt.Fprintln(r.stderr, errs.Describe(err, sqlText))
			return exitError
		}
	}
	return exitOK
}

// exec runs one request and writes its result. extra settings (the shell's) are
// merged over the command line's.
func (r *sqlRun) exec(ctx context.Context, sqlText string, extra map[string]string) (err error) {
	// A panic while a result is written fails that statement alone; the shell goes on.
	defer errs.Recover(&err)
	settings := r.settings
	if len(extra) > 0 {
		settings = make(map[string]string, len(r.settings)+len(extra))
		for k, v := range r.settings {
			settings[k] = v
		}
		for k, v := range extra {
			settings[k] = v
		}
	}
	start := time.Now()
	res, err := r.q.Query(ctx, sqlText, settings)
	if err != nil {
		return err
	}
	if res == nil {
		return errs.New(errs.Internal, "BUG: the engine returned neither a result nor an error")
	}
	if err := WriteResult(r.stdout, r.format, res); err != nil {
		return fmt.Errorf("cannot write the result: %w", err)
	}
	if r.timer {
		fmt.Fprintln(r.timerOut, timerLine(res, time.Since(start)))
	}
	return nil
}

// timerLine describes how long a statement took and how it was answered.
func timerLine(res *lore.Result, wall time.Duration) string {
	ms := float64(wall.Microseconds()) / 1000
	if res.Record == nil {
		return fmt.Sprintf("Run Time: %.1f ms", ms)
	}
	if res.Record.ElapsedMS > 0 {
		ms = res.Record.ElapsedMS
	}
	s := fmt.Sprintf("Run Time: %.1f ms, mode %s", ms, res.Record.Execution.Mode)
	if d := res.Record.Execution.Detail; d != "" {
		s += " (" + d + ")"
	}
	return s
}
