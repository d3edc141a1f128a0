package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loredb/lore/gen"

	_ "github.com/mattn/go-sqlite3" // the query log of the home, read only
)

// ColdstartConfig is one run of the coldstart suite.
type ColdstartConfig struct {
	Rows  int64
	Files int
	// Runs is how many fresh processes are timed, after one warm-up.
	Runs int
	// Binary is a lore binary to measure; empty builds ./cmd/lore of the module
	// this harness runs against.
	Binary  string
	DataDir string
}

// coldstartSQL is the statement every process runs: answered from the table-level
// partials of a current record (mode context).
const coldstartSQL = "SELECT count(*), min(ts), max(ts) FROM t"

// coldRun is one fresh process.
type coldRun struct {
	wall      time.Duration // fork to exit, as the parent sees it
	cpu       time.Duration // user + system time of the process
	elapsedMS float64       // the query record's elapsed_ms
	initEnd   float64       // ms from process start to the end of the last package init (inittrace runs only)
}

// runColdstart measures a fresh "lore sql -c" process answering from statistics:
// the events data in cfg.Files files, registered and analyzed once in a throwaway
// home, then cfg.Runs processes one after the other. It reports the median wall
// time of the process, the median elapsed_ms of the query records they wrote, and
// the share of the wall time spent before main (runtime and package init, from
// GODEBUG=inittrace=1 runs).
func runColdstart(ctx context.Context, cfg ColdstartConfig, stdout, stderr io.Writer) int {
	if err := coldstart(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

func coldstart(ctx context.Context, cfg ColdstartConfig, stdout, stderr io.Writer) error {
	dir := filepath.Join(cfg.DataDir, fmt.Sprintf("events-%d-%d", cfg.Rows, cfg.Files))
	err := ensureData(dir, stderr, func(out string, report func(done, total int64)) error {
		return gen.Events(ctx, gen.EventsOptions{Rows: cfg.Rows, Files: cfg.Files, Out: out,
			ClusteredBy: "ts", Seed: 1, Progress: report})
	})
	if err != nil {
		return fmt.Errorf("cannot generate the events data: %w", err)
	}
	scratch, err := os.MkdirTemp("", "lore-coldstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	bin := cfg.Binary
	if bin == "" {
		if bin, err = buildLore(ctx, scratch); err != nil {
			return err
		}
	}
	home := filepath.Join(scratch, "home")
	setup := fmt.Sprintf("CREATE TABLE t WITH (location = '%s', format = 'parquet'); ANALYZE t", dir)
	if _, err := loreSQL(ctx, bin, home, setup, nil); err != nil {
		return fmt.Errorf("cannot set the table up: %w", err)
	}
	// The warm-up pages the binary in; every timed process then finds it in the
	// page cache, as a user's second command does.
	if _, err := loreSQL(ctx, bin, home, coldstartSQL, nil); err != nil {
		return err
	}
	runs := make([]coldRun, cfg.Runs)
	for i := range runs {
		if runs[i], err = loreSQL(ctx, bin, home, coldstartSQL, nil); err != nil {
			return err
		}
	}
	if err := recordElapsed(ctx, home, runs); err != nil {
		return err
	}
	traced := make([]coldRun, min(cfg.Runs, 11))
	for i := range traced {
		if traced[i], err = loreSQL(ctx, bin, home, coldstartSQL, []string{"GODEBUG=inittrace=1"}); err != nil {
			return err
		}
	}
	writeColdstart(stdout, cfg, bin, runs, traced)
	return nil
}

// buildLore builds cmd/lore of the Lore module this harness is built against into
// dir.
func buildLore(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/loredb/lore").Output()
	if err != nil {
		return "", fmt.Errorf("cannot find the lore module: %w", err)
	}
	bin := filepath.Join(dir, "lore")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/lore")
	cmd.Dir = strings.TrimSpace(string(out))
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("cannot build lore: %v\n%s", err, msg)
	}
	return bin, nil
}

// loreSQL runs "lore sql --home home -c text" as a fresh process and times it.
func loreSQL(ctx context.Context, bin, home, text string, env []string) (coldRun, error) {
	cmd := exec.CommandContext(ctx, bin, "sql", "--home", home, "--format", "csv", "-c", text)
	cmd.Env = append(os.Environ(), env...)
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errOut
	start := time.Now()
	err := cmd.Run()
	r := coldRun{wall: time.Since(start)}
	if err != nil {
		return r, fmt.Errorf("lore sql -c %q: %v\n%s", text, err, errOut.Bytes())
	}
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	r.initEnd = initEnd(errOut.Bytes())
	return r, nil
}

// initLine is one line of GODEBUG=inittrace=1: a package's init, when it started
// (ms since the process started) and how long it ran.
var initLine = regexp.MustCompile(`^init \S+ @([0-9.]+) ms, ([0-9.]+) ms clock`)

// initEnd is when the last package init of an inittrace output ended, in ms since
// the process started; 0 without trace lines.
func initEnd(trace []byte) float64 {
	end := 0.0
	sc := bufio.NewScanner(bytes.NewReader(trace))
	for sc.Scan() {
		m := initLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, _ := strconv.ParseFloat(m[1], 64)
		took, _ := strconv.ParseFloat(m[2], 64)
		end = max(end, at+took)
	}
	return end
}

// recordElapsed fills each run's elapsed_ms from the query log of home: the
// newest len(runs) records, which the timed processes wrote, each of which must
// have been answered from statistics. The catalog is read with plain SQL, read
// only, so that a binary given by --lore-bin with another catalog schema version
// is measured all the same (the query_log columns read here are those of schema
// version 1).
func recordElapsed(ctx context.Context, home string, runs []coldRun) error {
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(home, "catalog.db")+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT sql, mode, elapsed_ms FROM query_log ORDER BY seq DESC LIMIT ?`, len(runs))
	if err != nil {
		return fmt.Errorf("cannot read the query log: %w", err)
	}
	defer rows.Close()
	n := 0
	for ; rows.Next() && n < len(runs); n++ {
		var text, mode string
		if err := rows.Scan(&text, &mode, &runs[n].elapsedMS); err != nil {
			return fmt.Errorf("cannot read the query log: %w", err)
		}
		if text != coldstartSQL || mode != "context" {
			return fmt.Errorf("statement %q ran in mode %q, want context", text, mode)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("cannot read the query log: %w", err)
	}
	if n != len(runs) {
		return fmt.Errorf("the query log holds %d records, want %d", n, len(runs))
	}
	return nil
}

func writeColdstart(w io.Writer, cfg ColdstartConfig, bin string, runs, traced []coldRun) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	wall := medianOf(runs, func(r coldRun) float64 { return ms(r.wall) })
	cpu := medianOf(runs, func(r coldRun) float64 { return ms(r.cpu) })
	elapsed := medianOf(runs, func(r coldRun) float64 { return r.elapsedMS })
	beforeMain := medianOf(traced, func(r coldRun) float64 { return r.initEnd })
	fmt.Fprintf(w, "coldstart: %s over %d rows in %d files, %d processes (%s)\n", coldstartSQL, cfg.Rows, cfg.Files, len(runs), bin)
	fmt.Fprintf(w, "  process wall   median %7.2f ms  (min %.2f, max %.2f)\n", wall,
		slices.Min(values(runs, func(r coldRun) float64 { return ms(r.wall) })),
		slices.Max(values(runs, func(r coldRun) float64 { return ms(r.wall) })))
	fmt.Fprintf(w, "  process cpu    median %7.2f ms  (user + system)\n", cpu)
	fmt.Fprintf(w, "  elapsed_ms     median %7.2f ms  (the query record)\n", elapsed)
	fmt.Fprintf(w, "  before main    median %7.2f ms  (runtime and package init, %d GODEBUG=inittrace=1 runs)\n", beforeMain, len(traced))
	fmt.Fprintf(w, "  the rest       ~%6.2f ms  (flags, engine open, catalog, printing, exit)\n", wall-beforeMain-elapsed)
}

func values(runs []coldRun, f func(coldRun) float64) []float64 {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = f(r)
	}
	return v
}

func medianOf(runs []coldRun, f func(coldRun) float64) float64 {
	return median(values(runs, f))
}
