package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
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
// Lore as the lore CLI (`lore sql -f q.sql`), DuckDB as internal/duckchild, a
// small program linking DuckDB alone that opens an in-memory DuckDB with the same
// views and runs the query (no DuckDB CLI is installed here; this harness's own
// binary would do, but it links Lore too, which would be charged to DuckDB). Both
// write every row as CSV to a pipe the harness reads.
//
// Peak RSS is the ru_maxrss of the engine's process as reported by a small
// launcher (internal/launch, built once) that starts it and waits for it. The
// launcher exists because Go starts children with vfork: the kernel then counts
// the parent's high-water mark in the child's ru_maxrss, so the harness's own
// memory (about 80 MiB resident at start, this binary linking DuckDB and Lore, and
// more after writing a flavour) would be charged to the engine. The launcher's
// own high-water mark (a few MiB) is reported beside the child's: a child's peak
// at or below it is shown with "≤".

// childTable is a table as the DuckDB child (internal/duckchild) receives it.
type childTable struct {
	Name  string   `json:"name"`
	Files []string `json:"files"`
}

// launchReport is what internal/launch writes about the process it ran.
type launchReport struct {
	MaxRSSKiB      int64   `json:"max_rss_kib"`
	LauncherHWMKiB int64   `json:"launcher_hwm_kib"`
	WallMS         float64 `json:"wall_ms"`
	ExitCode       int     `json:"exit_code"`
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
	launcher string // the built launcher (internal/launch)
	home     string // Lore's home with the tables created
	duck     string // the built DuckDB child (internal/duckchild)
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

// install copies a binary just built to where it is run from, with plain writes,
// and removes the built file. Both engines' processes then map a binary whose
// pages are in the page cache as any installed program's are. Run straight from
// the linker's output they are not: Go's own linker writes its output through a
// shared mapping, and the kernel then maps the file's text, read-only data and
// line tables whole into every process that runs it (a `lore version` process was
// 68 MiB resident run from the linker's file and 39 MiB from a copy), while the
// DuckDB child, linked by the system linker because of DuckDB's C++, differed by
// 3 MiB. A copy is what installing the binary does; the page cache of a program
// read back from disk after a restart is the same.
func install(built, to string) error {
	src, err := os.Open(built)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	// The wrapper hides *os.File's ReadFrom, so the copy is reads and writes rather
	// than copy_file_range, which may share the source's extents and page cache.
	if _, err := io.Copy(struct{ io.Writer }{dst}, src); err != nil {
		dst.Close()
		return fmt.Errorf("cannot install %s: %w", to, err)
	}
	if err := dst.Close(); err != nil {
		return err
	}
	return os.Remove(built)
}

// prepareProcesses builds lore, creates the tables in a fresh home and writes the
// DuckDB child's table list.
func prepareProcesses(ctx context.Context, cfg Config, s *Suite, progress io.Writer) (*procEnv, error) {
	root := filepath.Dir(benchModuleDir())
	if _, err := os.Stat(filepath.Join(root, "cmd", "lore")); err != nil {
		return nil, fmt.Errorf("cannot find the repository's cmd/lore from %q: %w", root, err)
	}
	dir, err := os.MkdirTemp("", "lore-bench-proc-")
	if err != nil {
		return nil, err
	}
	pe := &procEnv{dir: dir, lore: filepath.Join(dir, "lore"), launcher: filepath.Join(dir, "launch"), home: filepath.Join(dir, "home"), duck: filepath.Join(dir, "duckchild"),
		tables: filepath.Join(dir, "tables.json"), threads: cfg.Threads, timeout: cfg.Timeout}
	fail := func(err error) (*procEnv, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	fmt.Fprintf(progress, "building lore from %s ...\n", root)
	for _, b := range []struct{ out, dir, pkg string }{
		{pe.lore, root, "./cmd/lore"},
		{pe.launcher, filepath.Join(root, "bench"), "./internal/launch"},
		{pe.duck, filepath.Join(root, "bench"), "./internal/duckchild"},
	} {
		built := b.out + ".built"
		build := exec.CommandContext(ctx, "go", "build", "-o", built, b.pkg)
		build.Dir = b.dir
		if out, err := build.CombinedOutput(); err != nil {
			return fail(fmt.Errorf("cannot build %s: %v\n%s", b.pkg, err, out))
		}
		if err := install(built, b.out); err != nil {
			return fail(err)
		}
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
		files, err := parquetFiles(t.Dir)
		if err != nil {
			return fail(err)
		}
		specs = append(specs, childTable{Name: t.Name, Files: files})
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
	duckArgv := []string{pe.duck, "--threads", strconv.Itoa(pe.threads), "--tables", pe.tables, "-f", duckFile}
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
	cmd := exec.CommandContext(rctx, pe.launcher, append([]string{"--report", reportFile, "--"}, argv...)...)
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
	fmt.Fprintf(w, "\nsuite %s, each query a fresh process per engine (lore sql -f; DuckDB in internal/duckchild): %s, %d files, %s (%s)\n\n",
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
