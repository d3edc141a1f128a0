package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The processes mode measures each engine as a whole process, as a user runs it:
// Lore as the lore CLI (`lore sql -f q.sql`), DuckDB as this program re-executed in
// a hidden child mode that opens an in-memory DuckDB with the same views and runs
// the query. Both write every row as CSV to a pipe the harness reads.
//
// Peak RSS comes from the rusage of a launcher process (this program again, in a
// second hidden mode) that forks the engine's process and waits for it. The
// launcher exists because Go starts children with vfork: the kernel then counts
// the parent's high-water mark in the child's ru_maxrss, so the harness's own
// memory (a flavour it just wrote) would be reported as the engine's. The launcher
// is small, and its own high-water mark is reported beside the child's: a child's
// peak at or below it is shown with "≤".

// The hidden child modes, given as the first argument.
const (
	duckChildMode = "duckdb-child"
	launchMode    = "launch-child"
)

// ChildMain runs a hidden child mode when args (os.Args[1:]) name one, and
// reports whether it did and the exit status.
func ChildMain(args []string) (int, bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case duckChildMode:
		return duckChild(args[1:], os.Stdout, os.Stderr), true
	case launchMode:
		return launchChild(args[1:], os.Stderr), true
	}
	return 0, false
}

// childTable is a table as the DuckDB child receives it.
type childTable struct {
	Name string `json:"name"`
	Dir  string `json:"dir"`
}

// duckChild opens an in-memory DuckDB as the harness does (threads, UTC, no file
// cache, a view per table over its files), runs the query of one file and writes
// its rows as CSV to stdout.
func duckChild(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(duckChildMode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	threads := fs.Int("threads", 2, "DuckDB's threads")
	tablesFile := fs.String("tables", "", "JSON file of the tables: [{name, dir}]")
	queryFile := fs.String("f", "", "the query's file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "%s: %v\n", duckChildMode, err)
		return 1
	}
	var specs []childTable
	b, err := os.ReadFile(*tablesFile)
	if err != nil {
		return fail(err)
	}
	if err := json.Unmarshal(b, &specs); err != nil {
		return fail(fmt.Errorf("%s: %w", *tablesFile, err))
	}
	q, err := os.ReadFile(*queryFile)
	if err != nil {
		return fail(err)
	}
	tables := make([]Table, len(specs))
	for i, t := range specs {
		tables[i] = Table{Name: t.Name, Dir: t.Dir}
	}
	ctx := context.Background()
	d, err := openDuckDB(ctx, *threads, tables)
	if err != nil {
		return fail(err)
	}
	defer d.close()
	w := bufio.NewWriterSize(stdout, 1<<16)
	if err := d.writeCSV(ctx, strings.TrimSuffix(strings.TrimSpace(string(q)), ";"), w); err != nil {
		return fail(err)
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	return 0
}

// writeCSV runs q and writes a header and its rows as CSV, each value rendered as
// the in-process comparison renders it (NULL as an empty field, as Lore's CLI).
func (d *duckEngine) writeCSV(ctx context.Context, q string, w io.Writer) error {
	rows, err := d.db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	head := make([]string, len(cts))
	for i, ct := range cts {
		head[i] = ct.Name()
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	vals := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	rec := make([]string, len(cts))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			if v == nil {
				rec[i] = ""
				continue
			}
			s, err := renderDuck(v, cts[i].DatabaseTypeName())
			if err != nil {
				return fmt.Errorf("column %d: %w", i+1, err)
			}
			rec[i] = s
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// launchReport is what the launcher learnt about the process it ran.
type launchReport struct {
	// MaxRSSKiB is the child's ru_maxrss.
	MaxRSSKiB int64 `json:"max_rss_kib"`
	// LauncherHWMKiB is the launcher's own high-water mark when it started the
	// child, which the child's ru_maxrss cannot be below.
	LauncherHWMKiB int64   `json:"launcher_hwm_kib"`
	WallMS         float64 `json:"wall_ms"`
	ExitCode       int     `json:"exit_code"`
}

// launchChild runs the command after "--" with this process's standard streams,
// waits for it and writes a launchReport as JSON to the --report file.
func launchChild(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(launchMode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	report := fs.String("report", "", "file that receives the report")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	argv := fs.Args()
	if len(argv) == 0 || *report == "" {
		fmt.Fprintf(stderr, "%s: want --report FILE -- command...\n", launchMode)
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	hwm := selfHWMKiB()
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		fmt.Fprintf(stderr, "%s: %v\n", launchMode, err)
		return 1
	}
	rep := launchReport{LauncherHWMKiB: hwm, WallMS: float64(wall.Microseconds()) / 1000, ExitCode: cmd.ProcessState.ExitCode()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rep.MaxRSSKiB = int64(ru.Maxrss) // KiB on Linux
	}
	b, _ := json.Marshal(rep)
	if err := os.WriteFile(*report, b, 0o644); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", launchMode, err)
		return 1
	}
	return 0
}

// selfHWMKiB is this process's VmHWM from /proc/self/status (0 when unknown).
func selfHWMKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// ProcessRun is one engine's processes for one query.
type ProcessRun struct {
	// PeakRSSBytes is the largest peak resident set over the timed processes.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// AtMostLauncher is set when that peak was not above the launcher's own, so
	// the engine's peak is at most PeakRSSBytes rather than equal to it.
	AtMostLauncher bool      `json:"at_most_launcher,omitempty"`
	WallMS         []float64 `json:"wall_ms"`
	MedianMS       float64   `json:"median_ms"`
	Rows           int       `json:"rows"`
	Error          string    `json:"error,omitempty"`
}

// ProcessQueryResult is one query run as processes of both engines.
type ProcessQueryResult struct {
	Name      string     `json:"name"`
	Lore      ProcessRun `json:"lore"`
	DuckDB    ProcessRun `json:"duckdb"`
	RSSRatio  float64    `json:"rss_ratio,omitempty"`
	WallRatio float64    `json:"wall_ratio,omitempty"`
	// RowsEqual is nil when an engine failed.
	RowsEqual *bool `json:"rows_equal"`
}

// ProcessSuiteResult is a suite run in the processes mode.
type ProcessSuiteResult struct {
	Suite            string               `json:"suite"`
	Data             DataInfo             `json:"data"`
	Queries          []ProcessQueryResult `json:"queries"`
	GeoMeanRSSRatio  float64              `json:"geomean_rss_ratio"`
	GeoMeanWallRatio float64              `json:"geomean_wall_ratio"`
	GeoMeanLoreMiB   float64              `json:"geomean_lore_rss_mib"`
	GeoMeanDuckMiB   float64              `json:"geomean_duckdb_rss_mib"`
}

// procEnv is what RunProcesses prepares once for a suite.
type procEnv struct {
	dir      string // scratch directory
	lore     string // the built lore binary
	home     string // Lore's home with the tables created
	self     string // this program
	tables   string // the tables' JSON file for the DuckDB child
	settings []string
	threads  int
	timeout  time.Duration
}

// RunProcesses builds the lore CLI, creates the suite's tables in a home once, and
// runs every query as processes: one warm-up of each engine (its row counts are
// compared), then cfg.Rounds rounds of Lore then DuckDB.
func RunProcesses(ctx context.Context, cfg Config, s *Suite) (*ProcessSuiteResult, error) {
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	pe, err := prepareProcesses(ctx, cfg, s, progress)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(pe.dir)
	res := &ProcessSuiteResult{Suite: s.Name, Data: s.Data}
	for _, q := range s.Queries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "%s/%s (processes) ...", s.Name, q.Name)
		qr, err := pe.measure(ctx, q, cfg.Rounds)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, " lore %s, duckdb %s\n", procText(&qr.Lore), procText(&qr.DuckDB))
		res.Queries = append(res.Queries, qr)
	}
	res.summarise()
	return res, nil
}

func procText(r *ProcessRun) string {
	if r.Error != "" {
		return "failed"
	}
	return fmt.Sprintf("%s, %.0f ms", bytesText(r.PeakRSSBytes), r.MedianMS)
}

// prepareProcesses builds lore, creates the tables in a fresh home and writes the
// DuckDB child's table list.
func prepareProcesses(ctx context.Context, cfg Config, s *Suite, progress io.Writer) (*procEnv, error) {
	root := filepath.Dir(benchModuleDir())
	if _, err := os.Stat(filepath.Join(root, "cmd", "lore")); err != nil {
		return nil, fmt.Errorf("cannot find the repository's cmd/lore from %q: %w", root, err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "lore-bench-proc-")
	if err != nil {
		return nil, err
	}
	pe := &procEnv{dir: dir, lore: filepath.Join(dir, "lore"), home: filepath.Join(dir, "home"), self: self,
		tables: filepath.Join(dir, "tables.json"), threads: cfg.Threads, timeout: cfg.Timeout}
	fail := func(err error) (*procEnv, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	fmt.Fprintf(progress, "building lore from %s ...\n", root)
	build := exec.CommandContext(ctx, "go", "build", "-o", pe.lore, "./cmd/lore")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("cannot build lore: %v\n%s", err, out))
	}
	eng, err := openLore(ctx, pe.home, cfg.Threads, nil, s.Tables)
	if err != nil {
		return fail(err)
	}
	if err := eng.close(); err != nil {
		return fail(err)
	}
	var specs []childTable
	for _, t := range s.Tables {
		specs = append(specs, childTable{Name: t.Name, Dir: t.Dir})
	}
	b, _ := json.Marshal(specs)
	if err := os.WriteFile(pe.tables, b, 0o644); err != nil {
		return fail(err)
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.LoreSettings)) {
		pe.settings = append(pe.settings, "--set", k+"="+cfg.LoreSettings[k])
	}
	return pe, nil
}

// measure runs one query's processes.
func (pe *procEnv) measure(ctx context.Context, q Query, rounds int) (ProcessQueryResult, error) {
	qr := ProcessQueryResult{Name: q.Name}
	file := filepath.Join(pe.dir, q.Name+".sql")
	text := q.SQL
	if q.DuckSQL != "" {
		text = q.DuckSQL
	}
	if err := os.WriteFile(file, []byte(q.SQL+";\n"), 0o644); err != nil {
		return qr, err
	}
	duckFile := filepath.Join(pe.dir, q.Name+".duckdb.sql")
	if err := os.WriteFile(duckFile, []byte(text+";\n"), 0o644); err != nil {
		return qr, err
	}
	loreArgv := append([]string{pe.lore, "sql", "--home", pe.home, "--format", "csv", "-f", file}, pe.settings...)
	duckArgv := []string{pe.self, duckChildMode, "--threads", strconv.Itoa(pe.threads), "--tables", pe.tables, "-f", duckFile}
	for i := range rounds + 1 {
		for _, side := range []struct {
			argv []string
			run  *ProcessRun
		}{{loreArgv, &qr.Lore}, {duckArgv, &qr.DuckDB}} {
			if side.run.Error != "" {
				continue
			}
			rows, rep, err := pe.launch(ctx, side.argv)
			if err != nil {
				if ctx.Err() != nil {
					return qr, ctx.Err()
				}
				side.run.Error = oneLine(err.Error())
				continue
			}
			if i == 0 { // the warm-up: rows only
				side.run.Rows = rows
				continue
			}
			side.run.WallMS = append(side.run.WallMS, rep.WallMS)
			peak := rep.MaxRSSKiB << 10
			if peak > side.run.PeakRSSBytes {
				side.run.PeakRSSBytes = peak
				side.run.AtMostLauncher = rep.MaxRSSKiB <= rep.LauncherHWMKiB
			}
		}
	}
	for _, r := range []*ProcessRun{&qr.Lore, &qr.DuckDB} {
		if r.Error == "" {
			r.MedianMS = median(r.WallMS)
		}
	}
	if qr.Lore.Error == "" && qr.DuckDB.Error == "" {
		eq := qr.Lore.Rows == qr.DuckDB.Rows
		qr.RowsEqual = &eq
		if qr.DuckDB.PeakRSSBytes > 0 {
			qr.RSSRatio = float64(qr.Lore.PeakRSSBytes) / float64(qr.DuckDB.PeakRSSBytes)
		}
		if qr.DuckDB.MedianMS > 0 {
			qr.WallRatio = qr.Lore.MedianMS / qr.DuckDB.MedianMS
		}
	}
	return qr, nil
}

// launch runs argv under the launcher with the timeout and returns the number of
// CSV rows it wrote (the header not counted) and the launcher's report.
func (pe *procEnv) launch(ctx context.Context, argv []string) (int, launchReport, error) {
	var rep launchReport
	rctx, cancel := context.WithTimeout(ctx, pe.timeout)
	defer cancel()
	reportFile := filepath.Join(pe.dir, "launch.json")
	os.Remove(reportFile)
	cmd := exec.CommandContext(rctx, pe.self, append([]string{launchMode, "--report", reportFile, "--"}, argv...)...)
	// Lore's CLI runs GOMAXPROCS workers; DuckDB's child sets its threads itself.
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(pe.threads))
	// Killing the launcher must take the engine with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, rep, err
	}
	if err := cmd.Start(); err != nil {
		return 0, rep, err
	}
	rows, countErr := countCSV(out)
	io.Copy(io.Discard, out)
	waitErr := cmd.Wait()
	switch {
	case rctx.Err() != nil && ctx.Err() == nil:
		return 0, rep, fmt.Errorf("timeout after %s", pe.timeout)
	case waitErr != nil:
		return 0, rep, fmt.Errorf("launcher: %v: %s", waitErr, strings.TrimSpace(stderr.String()))
	}
	b, err := os.ReadFile(reportFile)
	if err != nil {
		return 0, rep, err
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return 0, rep, err
	}
	if rep.ExitCode != 0 {
		return 0, rep, fmt.Errorf("exit status %d: %s", rep.ExitCode, strings.TrimSpace(stderr.String()))
	}
	if countErr != nil {
		return 0, rep, fmt.Errorf("cannot read the CSV output: %w", countErr)
	}
	return rows, rep, nil
}

// countCSV counts the records after the header.
func countCSV(r io.Reader) (int, error) {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<16))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	n := -1
	for {
		_, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return max(n, 0), nil
		}
		if err != nil {
			return 0, err
		}
		n++
	}
}

func (s *ProcessSuiteResult) summarise() {
	var rss, wall, lm, dm float64
	n := 0
	for _, q := range s.Queries {
		if q.RSSRatio > 0 && q.WallRatio > 0 {
			rss += math.Log(q.RSSRatio)
			wall += math.Log(q.WallRatio)
			lm += math.Log(float64(q.Lore.PeakRSSBytes) / (1 << 20))
			dm += math.Log(float64(q.DuckDB.PeakRSSBytes) / (1 << 20))
			n++
		}
	}
	if n > 0 {
		s.GeoMeanRSSRatio, s.GeoMeanWallRatio = math.Exp(rss/float64(n)), math.Exp(wall/float64(n))
		s.GeoMeanLoreMiB, s.GeoMeanDuckMiB = math.Exp(lm/float64(n)), math.Exp(dm/float64(n))
	}
}

// WriteProcessTable writes the processes mode's table of one suite.
func WriteProcessTable(w io.Writer, s *ProcessSuiteResult) {
	d := s.Data
	fmt.Fprintf(w, "\nsuite %s, each query a fresh process per engine (lore sql -f; DuckDB in a child of this program): %s, %d files, %s (%s)\n\n",
		s.Suite, d.Description, d.Files, bytesText(d.Bytes), d.Dir)
	head := []string{"query", "lore peak RSS MiB", "duckdb peak RSS MiB", "lore/duckdb RSS", "lore wall ms", "duckdb wall ms", "lore/duckdb wall", "rows", "rows equal"}
	var body [][]string
	for _, q := range s.Queries {
		eq := "-"
		if q.RowsEqual != nil {
			eq = map[bool]string{true: "yes", false: "NO"}[*q.RowsEqual]
		}
		rows := "-"
		if q.Lore.Error == "" {
			rows = strconv.Itoa(q.Lore.Rows)
		}
		body = append(body, []string{q.Name, mibText(&q.Lore), mibText(&q.DuckDB), ratioOrDash(q.RSSRatio),
			wallText(&q.Lore), wallText(&q.DuckDB), ratioOrDash(q.WallRatio), rows, eq})
	}
	writeAligned(w, head, body)
	fmt.Fprintln(w)
	if s.GeoMeanRSSRatio > 0 {
		fmt.Fprintf(w, "geometric means: peak RSS lore %.1f MiB, duckdb %.1f MiB, lore/duckdb %.2f; wall lore/duckdb %.2f\n",
			s.GeoMeanLoreMiB, s.GeoMeanDuckMiB, s.GeoMeanRSSRatio, s.GeoMeanWallRatio)
	}
	fmt.Fprintln(w, "peak RSS = ru_maxrss of the engine's process, the largest over the timed runs; wall = the process from start to exit, median (it includes opening the engine and writing the rows as CSV to a pipe)")
	for _, q := range s.Queries {
		for _, r := range []struct {
			engine string
			run    *ProcessRun
		}{{"lore", &q.Lore}, {"duckdb", &q.DuckDB}} {
			if r.run.Error != "" {
				fmt.Fprintf(w, "  %s failed on %s: %s\n", q.Name, r.engine, r.run.Error)
			}
		}
	}
}

func mibText(r *ProcessRun) string {
	if r.Error != "" {
		return "failed"
	}
	s := fmt.Sprintf("%.1f", float64(r.PeakRSSBytes)/(1<<20))
	if r.AtMostLauncher {
		s = "≤ " + s
	}
	return s
}

func wallText(r *ProcessRun) string {
	if r.Error != "" {
		return "failed"
	}
	return fmt.Sprintf("%.0f", r.MedianMS)
}

func ratioOrDash(r float64) string {
	if r <= 0 {
		return "-"
	}
	return ratioText(r)
}

// WriteFlavourSummary closes a run over several flavours with one line per
// flavour: the geometric mean of Lore/DuckDB and the worst query (and, in the
// processes mode, the geometric means of the peak RSS and wall ratios).
func WriteFlavourSummary(w io.Writer, flavours []string, in []*SuiteResult, procs []*ProcessSuiteResult) {
	suiteName := func(f string) string {
		if f == "lore" {
			return "tpch"
		}
		return "tpch-" + f
	}
	fmt.Fprintln(w, "\nflavours:")
	fmt.Fprintln(w)
	if len(procs) > 0 {
		head := []string{"flavour", "geomean RSS lore/duckdb", "largest RSS ratio", "geomean wall lore/duckdb"}
		var body [][]string
		for _, f := range flavours {
			i := slices.IndexFunc(procs, func(p *ProcessSuiteResult) bool { return p.Suite == suiteName(f) })
			if i < 0 {
				body = append(body, []string{f, "not run", "-", "-"})
				continue
			}
			p := procs[i]
			worst, wr := "-", 0.0
			for _, q := range p.Queries {
				if q.RSSRatio > wr {
					worst, wr = q.Name, q.RSSRatio
				}
			}
			body = append(body, []string{f, ratioOrDash(p.GeoMeanRSSRatio), fmt.Sprintf("%s %s", worst, ratioOrDash(wr)), ratioOrDash(p.GeoMeanWallRatio)})
		}
		writeAligned(w, head, body)
		return
	}
	head := []string{"flavour", "geomean lore/duckdb", "worst query", "its ratio", "equal", "failed"}
	var body [][]string
	for _, f := range flavours {
		i := slices.IndexFunc(in, func(s *SuiteResult) bool { return s.Suite == suiteName(f) })
		if i < 0 {
			body = append(body, []string{f, "not run", "-", "-", "-", "-"})
			continue
		}
		s := in[i]
		worst, wr, failed := "-", 0.0, 0
		for _, q := range s.Queries {
			if q.Ratio > wr {
				worst, wr = q.Name, q.Ratio
			}
			if !q.Lore.OK() || !q.DuckDB.OK() {
				failed++
			}
		}
		body = append(body, []string{f, ratioOrDash(s.GeoMeanRatio), worst, ratioOrDash(wr),
			fmt.Sprintf("%d/%d", s.Compared-s.Unequal, s.Compared), strconv.Itoa(failed)})
	}
	writeAligned(w, head, body)
}
