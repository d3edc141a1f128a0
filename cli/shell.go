package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/chzyer/readline"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/script"
)

const (
	promptFirst = "lore> "
	promptMore  = "   ...> "
)

// lineReader is what the shell needs from a line editor; *readline.Instance is the
// one used on a terminal.
type lineReader interface {
	// Readline returns the next line without its newline; readline.ErrInterrupt on
	// Ctrl-C and io.EOF on Ctrl-D or end of input.
	Readline() (string, error)
	SetPrompt(prompt string)
	SaveHistory(line string) error
}

// shellState is the interactive shell's session: the output settings and the SET
// SESSION statements in force.
type shellState struct {
	*sqlRun
	// sets are the SET SESSION statements entered so far; each later statement is
	// sent with them as its prefix. The first confirmed of them have been accepted
	// by the engine at least once.
	sets      []string
	confirmed int
}

// shell runs the interactive shell on a terminal until .quit or Ctrl-D.
func (r *sqlRun) shell(ctx context.Context, stdin *os.File, home string) int {
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 promptFirst,
		HistoryFile:            filepath.Join(home, "history"),
		DisableAutoSaveHistory: true, // a statement is saved whole, not line by line
		InterruptPrompt:        "^C",
		EOFPrompt:              "\n",
		Stdin:                  stdin,
		Stdout:                 r.stdout,
		Stderr:                 r.stderr,
	})
	if err != nil {
		fmt.Fprintf(r.stderr, "lore sql: cannot start the shell: %v\n", err)
		return exitError
	}
	defer rl.Close()
	fmt.Fprintf(r.stdout, "lore %s — enter SQL ending in ';', .help for help, .quit to leave\n", version())
	s := &shellState{sqlRun: r}
	s.timerOut = r.stdout
	s.loop(ctx, rl)
	return exitOK
}

// loop reads statements until the input ends or .quit. Errors are printed and the
// shell carries on.
func (s *shellState) loop(ctx context.Context, rl lineReader) {
	var buf strings.Builder
	for {
		if buf.Len() == 0 {
			rl.SetPrompt(promptFirst)
		} else {
			rl.SetPrompt(promptMore)
		}
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			buf.Reset() // Ctrl-C abandons the statement being typed
			continue
		}
		if err != nil { // io.EOF: Ctrl-D or the end of piped input
			return
		}
		if buf.Len() == 0 && strings.HasPrefix(strings.TrimSpace(line), ".") {
			rl.SaveHistory(strings.TrimSpace(line))
			if quit := s.dot(strings.TrimSpace(line)); quit {
				return
			}
			continue
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		text := buf.String()
		spans := script.Statements(text)
		if len(spans) == 0 {
			// Only whitespace and comments so far; keep reading inside an open
			// block comment, else start afresh.
			if !strings.Contains(text, "/*") || !script.Blank(text+"*/") {
				buf.Reset()
			}
			continue
		}
		if !spans[len(spans)-1].Terminated {
			continue
		}
		buf.Reset()
		rl.SaveHistory(strings.Join(strings.Fields(text), " "))
		for _, sp := range spans {
			if err := ctx.Err(); err != nil {
				return
			}
			s.statement(ctx, text[sp.Start:sp.End])
		}
	}
}

// statement runs one statement typed in the shell. A SET SESSION statement is kept
// and applies to every later statement, as users of a session expect.
func (s *shellState) statement(ctx context.Context, stmt string) {
	if script.IsSetSession(stmt) {
		s.sets = append(s.sets, stmt)
		fmt.Fprintln(s.stdout, "SET (applies to the following statements)")
		return
	}
	text := stmt
	if len(s.sets) > 0 {
		text = strings.Join(s.sets, ";\n") + ";\n" + stmt
	}
	// An interrupt while the statement runs cancels it, not the shell.
	qctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	err := s.exec(qctx, text, nil)
	stop()
	if err == nil {
		s.confirmed = len(s.sets)
		return
	}
	fmt.Fprintln(s.stderr, errs.Describe(err, text))
	if errs.CodeOf(err) == errs.InvalidSetting && s.confirmed < len(s.sets) {
		s.sets = s.sets[:s.confirmed]
		fmt.Fprintln(s.stderr, "(the SET SESSION statements entered since the last successful statement were dropped)")
	}
}

const shellHelp = `Statements end with ';' and may span lines. Commands:
  .help                 this help
  .mode [FORMAT]        show or set the output format (table, csv, json, ndjson, markdown)
  .timer on|off         print each statement's elapsed time and answer mode
  .settings             list the SET SESSION statements in force
  .reset                forget the SET SESSION statements
  .quit, .exit          leave (Ctrl-D also leaves; Ctrl-C abandons the current input)
`

// dot runs a shell command; quit is true for .quit and .exit.
func (s *shellState) dot(line string) (quit bool) {
	fields := strings.Fields(line)
	arg := ""
	if len(fields) > 1 {
		arg = fields[1]
	}
	switch fields[0] {
	case ".quit", ".exit":
		return true
	case ".help":
		io.WriteString(s.stdout, shellHelp)
	case ".mode":
		switch {
		case arg == "":
			fmt.Fprintf(s.stdout, "mode %s\n", s.format)
		case validFormat(arg):
			s.format = arg
		default:
			fmt.Fprintf(s.stderr, "unknown format %q (want %s)\n", arg, strings.Join(Formats, ", "))
		}
	case ".timer":
		switch arg {
		case "on":
			s.timer = true
		case "off":
			s.timer = false
		default:
			fmt.Fprintln(s.stderr, "usage: .timer on|off")
		}
	case ".settings":
		if len(s.sets) == 0 {
			fmt.Fprintln(s.stdout, "no SET SESSION statements in force")
		}
		for _, st := range s.sets {
			fmt.Fprintln(s.stdout, st+";")
		}
	case ".reset":
		s.sets, s.confirmed = nil, 0
	default:
		fmt.Fprintf(s.stderr, "unknown command %s (try .help)\n", fields[0])
	}
	return false
}
