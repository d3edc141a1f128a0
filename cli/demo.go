package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/gen"
	homedir "github.com/loredb/lore/internal/home"
	"github.com/loredb/lore/types"
)

// runDemo builds a small events table under <home>/demo/events, registers it and
// runs a few statements through the engine, showing each result and how it was
// answered.
func runDemo(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "demo", "[--home DIR] [--memory-limit SIZE] [--rows N] [--files F]")
	home := fs.String("home", "", "the Lore home `directory` (default $LORE_HOME, else ./.lore)")
	memLimit := addMemoryLimit(fs)
	rows := fs.Int64("rows", 200_000, "`rows` in the demo events table")
	files := fs.Int("files", 4, "`files` in the demo events table")
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return usageError(e, fs, "unexpected argument %q", fs.Arg(0))
	}
	if *rows <= 0 || *files <= 0 {
		return usageError(e, fs, "--rows and --files must be positive")
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()

	dir, err := filepath.Abs(filepath.Join(homedir.Dir(*home), "demo", "events"))
	if err != nil {
		fmt.Fprintf(e.stderr, "lore demo: %v\n", err)
		return exitError
	}
	// Keep an existing demo table: rewriting it would change its source version
	// and throw away what the engine has learned about it.
	if !demoTablePresent(dir, *files) {
		fmt.Fprintf(e.stdout, "generating %d events in %d files under %s\n", *rows, *files, dir)
		opts := gen.EventsOptions{Rows: *rows, Files: *files, Out: dir, Seed: 1}
		if err := gen.Events(ctx, opts); err != nil {
			fmt.Fprintf(e.stderr, "lore demo: %v\n", err)
			return exitError
		}
	}

	eng, err := lore.Open(ctx, lore.Options{Home: homedir.Dir(*home), MemoryLimit: int64(*memLimit), Progress: engineProgress(e.stderr)})
	if err != nil {
		fmt.Fprintf(e.stderr, "lore demo: %s\n", errs.Describe(err, ""))
		return exitError
	}
	defer eng.Close()

	// The learning path: the same statement read from the files, then answered from
	// what ANALYZE learnt, with both records' modes and timings.
	const learnt = "SELECT count(*), min(ts), max(ts), approx_count_distinct(user_id), approx_percentile(latency_ms, 0.99) FROM events"
	steps := []struct {
		note     string
		stmt     string
		settings map[string]string
	}{
		{"", fmt.Sprintf("CREATE TABLE IF NOT EXISTS events WITH (location = %s, format = 'parquet')", types.QuoteString(dir)), nil},
		{"", "SELECT category, count(*), avg(amount) FROM events GROUP BY category ORDER BY 2 DESC LIMIT 5", nil},
		{"read from the files (use_statistics = false):", learnt, map[string]string{"use_statistics": "false"}},
		{"learn the table: one read of every column for its sketches", "ANALYZE events WITH (sketches = true)", nil},
		{"the same statement, answered from what was learnt:", learnt, nil},
		{"", "SHOW STATS FOR events", nil},
	}
	var timings []string
	for _, st := range steps {
		if st.note != "" {
			fmt.Fprintf(e.stdout, "\n-- %s", st.note)
		}
		text := st.stmt
		for k, v := range st.settings {
			text = fmt.Sprintf("SET SESSION %s = %s; %s", k, v, text)
		}
		fmt.Fprintf(e.stdout, "\nlore> %s;\n", text)
		start := time.Now()
		res, err := eng.Query(ctx, st.stmt, st.settings)
		if err != nil {
			fmt.Fprintln(e.stderr, errs.Describe(err, st.stmt))
			return exitError
		}
		if err := WriteResult(e.stdout, "table", res); err != nil {
			fmt.Fprintf(e.stderr, "lore demo: %v\n", err)
			return exitError
		}
		fmt.Fprintln(e.stdout, timerLine(res, time.Since(start)))
		if st.stmt == learnt {
			timings = append(timings, fmt.Sprintf("%s in %.1f ms", res.Record.Execution.Mode, res.Record.ElapsedMS))
		}
	}
	fmt.Fprintf(e.stdout, "\nthe same statement: %s\n", strings.Join(timings, ", then "))
	return exitOK
}

// demoTablePresent reports whether dir holds the files of a generated table.
func demoTablePresent(dir string, files int) bool {
	for k := range files {
		if _, err := os.Stat(filepath.Join(dir, gen.EventsFileName(k))); err != nil {
			return false
		}
	}
	return true
}
