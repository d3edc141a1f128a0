package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/loredb/lore"
)

// Query is one benchmark query.
type Query struct {
	Name string
	// SQL is the text both engines run.
	SQL string
	// Order says how to compare the results; the zero value compares them as
	// multisets.
	Order Order
	// DuckSQL is DuckDB's text when it spells the query differently (another name
	// for the same function); empty means SQL.
	DuckSQL string
	// Tolerance is the relative difference allowed between the engines' numbers,
	// for estimates (sketches differ between engines); 0 means exact comparison.
	Tolerance float64
	// Truth, when set, is an exact query DuckDB runs once (untimed) whose result
	// Lore's estimate is checked against within Tolerance, instead of DuckDB's own
	// estimate, whose error differs from Lore's.
	Truth string
	// Interval says Truth gives, for each of Lore's columns, two columns: the least
	// and greatest values Lore's estimate may take (a quantile's rank error as a
	// range of values). One row only.
	Interval bool
}

// Order describes a query's ORDER BY for result comparison.
type Order struct {
	// Keys are the 0-based output columns of the ORDER BY, in order. Empty means
	// the result is unordered.
	Keys []int
	// Limited is set when a LIMIT cuts the ordered result: the last group of rows
	// with equal keys may then hold different rows in each engine.
	Limited bool
}

// Table is one table of a suite: a name and the directory of its Parquet files.
type Table struct {
	Name string
	Dir  string
	// Lake, when set ("delta" or "iceberg"), is the format of the table at LakeDir
	// over the same files, which Lore reads instead of Dir (DuckDB always reads Dir's
	// Parquet files).
	Lake    string
	LakeDir string
}

// Suite is a set of queries over a set of tables.
type Suite struct {
	Name    string
	Tables  []Table
	Queries []Query
	// Data describes the data size for the report header.
	Data DataInfo
	// Setup are statements Lore runs once after defining the tables (ANALYZE);
	// their elapsed times are reported.
	Setup []string
	// LoreSettings override the run's Lore settings for this suite.
	LoreSettings map[string]string
}

// DataInfo describes a suite's data.
type DataInfo struct {
	Description string `json:"description"`
	Dir         string `json:"dir"`
	Files       int    `json:"files"`
	Bytes       int64  `json:"bytes"`
	Rows        int64  `json:"rows,omitempty"`
}

// Config are the measurement settings.
type Config struct {
	Threads int
	Rounds  int
	Timeout time.Duration
	// LoreSettings are the per-statement settings of Lore's runs.
	LoreSettings map[string]string
	// CPUProfile, when set, is the file that receives a CPU profile of extra Lore
	// runs made after the measurements, so that profiling never slows the timed
	// runs and DuckDB's work is never in the profile.
	CPUProfile string
	// Grace is how long past the timeout an engine may take to stop before the
	// harness gives up waiting. Default: 5 s.
	Grace time.Duration
	// Progress receives one line per step; nil discards.
	Progress io.Writer
}

func (c Config) grace() time.Duration {
	if c.Grace > 0 {
		return c.Grace
	}
	return 5 * time.Second
}

// Run is the outcome of one engine's runs of one query.
type Run struct {
	TimesMS  []float64 `json:"times_ms"`
	MedianMS float64   `json:"median_ms"`
	Rows     int       `json:"rows"`
	// Error and ErrorCode are set when the query failed; Timeout when it was
	// canceled after the timeout.
	Error     string `json:"error,omitempty"`
	ErrorCode string `json:"error_code,omitempty"`
	Timeout   bool   `json:"timeout,omitempty"`
	// NotStopped is set when the engine ignored the cancellation.
	NotStopped bool `json:"not_stopped,omitempty"`
	// PeakHeapBytes is the largest Go HeapInuse seen while the engine ran
	// (meaningful for Lore only: DuckDB allocates outside the Go heap).
	PeakHeapBytes uint64 `json:"peak_heap_bytes,omitempty"`
	// Record is Lore's query record of the warm-up run: how the query was
	// answered and what each scan read and pruned.
	Record *lore.Record `json:"record,omitempty"`
	// PeakRSSDeltaBytes is the largest growth of the process's resident set over
	// its size at the start of a run, across this engine's runs.
	PeakRSSDeltaBytes int64 `json:"peak_rss_delta_bytes"`
}

// OK reports whether every run succeeded.
func (r *Run) OK() bool { return r.Error == "" && !r.Timeout }

// Status is the short text of a failed run for the table.
func (r *Run) Status() string {
	switch {
	case r.NotStopped:
		return "timeout*"
	case r.Timeout:
		return "timeout"
	case r.ErrorCode != "":
		return r.ErrorCode
	case r.Error != "":
		return "error"
	}
	return ""
}

// QueryResult is the outcome of one query on both engines.
type QueryResult struct {
	Name   string  `json:"name"`
	SQL    string  `json:"sql"`
	Lore   Run     `json:"lore"`
	DuckDB Run     `json:"duckdb"`
	Ratio  float64 `json:"ratio,omitempty"`
	// Equal is nil when the results could not be compared (a run failed).
	Equal *bool  `json:"equal"`
	Diff  string `json:"diff,omitempty"`
}

// SuiteResult is the outcome of a suite.
type SuiteResult struct {
	Suite   string        `json:"suite"`
	Data    DataInfo      `json:"data"`
	Queries []QueryResult `json:"queries"`
	// GeoMeanRatio is the geometric mean of Lore/DuckDB over the queries both
	// engines ran; 0 when there are none.
	GeoMeanRatio float64 `json:"geomean_ratio"`
	Compared     int     `json:"compared"`
	Unequal      int     `json:"unequal"`
	// Notes are caveats of the run (a DuckDB setting this version lacks).
	Notes []string `json:"notes,omitempty"`
	// Setup are the suite's setup statements in Lore, with their times.
	Setup []SetupResult `json:"setup,omitempty"`
	// LoreSettings are the settings Lore's runs used.
	LoreSettings map[string]string `json:"lore_settings"`
}

// SetupResult is one setup statement and how long it took.
type SetupResult struct {
	SQL       string  `json:"sql"`
	ElapsedMS float64 `json:"elapsed_ms"`
}

// engine is one side of the comparison.
type engine interface {
	name() string
	// run executes a query; with keep it returns the rendered rows, else only
	// their number.
	run(ctx context.Context, sql string, keep bool) (rows [][]string, n int, err error)
	// errorCode classifies an error for the table ("" when it has no code).
	errorCode(err error) string
	close() error
}

// RunSuite opens both engines over the suite's tables and measures every query.
func RunSuite(ctx context.Context, cfg Config, s *Suite) (*SuiteResult, error) {
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	home, err := os.MkdirTemp("", "lore-bench-home-")
	if err != nil {
		return nil, fmt.Errorf("cannot create a home for Lore: %w", err)
	}
	defer os.RemoveAll(home)
	settings := maps.Clone(cfg.LoreSettings)
	maps.Copy(settings, s.LoreSettings)
	loreEng, err := openLore(ctx, home, cfg.Threads, settings, s.Tables)
	if err != nil {
		return nil, err
	}
	defer loreEng.close()
	var setup []SetupResult
	for _, stmt := range s.Setup {
		fmt.Fprintf(progress, "%s: %s ...", s.Name, stmt)
		start := time.Now()
		if _, _, err := loreEng.run(ctx, stmt, false); err != nil {
			return nil, fmt.Errorf("setup %q: %w", stmt, err)
		}
		ms := float64(time.Since(start).Microseconds()) / 1000
		fmt.Fprintf(progress, " %.1f ms\n", ms)
		setup = append(setup, SetupResult{SQL: stmt, ElapsedMS: ms})
	}
	duckEng, err := openDuckDB(ctx, cfg.Threads, s.Tables)
	if err != nil {
		return nil, err
	}
	defer duckEng.close()

	res := &SuiteResult{Suite: s.Name, Data: s.Data, Notes: duckEng.notes, Setup: setup, LoreSettings: settings}
	for _, q := range s.Queries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "%s/%s ...", s.Name, q.Name)
		qr := measure(ctx, cfg, loreEng, duckEng, q)
		fmt.Fprintf(progress, " lore %s, duckdb %s%s\n", fmtRun(&qr.Lore), fmtRun(&qr.DuckDB), eqNote(qr))
		res.Queries = append(res.Queries, qr)
	}
	res.summarise()
	if cfg.CPUProfile != "" {
		// Lore alone: each query that succeeded, as many times as there are rounds.
		err := profileRuns(cfg.CPUProfile, cfg.Rounds, s.Queries, func(i int) bool { return res.Queries[i].Lore.OK() }, func(q Query) error {
			rctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
			defer cancel()
			_, _, err := loreEng.run(rctx, q.SQL, false)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

func fmtRun(r *Run) string {
	if !r.OK() {
		return r.Status()
	}
	return fmt.Sprintf("%.1f ms", r.MedianMS)
}

func eqNote(qr QueryResult) string {
	if qr.Equal != nil && !*qr.Equal {
		return " (results differ)"
	}
	return ""
}

// measure runs one query: for each engine in turn a warm-up (whose rows are
// compared) and then its rounds. The engines take their rounds in a block rather
// than alternately: a user's process runs one engine, and after each of DuckDB's
// runs — one long call into C — the Go runtime's monitor thread is left polling
// every 20 µs, so that Lore's short calls into libzstd lose their processor to
// other goroutines, the two cores are time-sliced among three threads, and a Lore
// run that follows a DuckDB run takes up to a fifth longer than one that follows
// its own (Q10: 218 against 260–290 ms). DuckDB's runs take as long either way.
func measure(ctx context.Context, cfg Config, loreEng, duckEng engine, q Query) QueryResult {
	qr := QueryResult{Name: q.Name, SQL: q.SQL}
	// Only Lore allocates on the Go heap, so only its runs sample it.
	loreRows, loreErr := timedRun(ctx, cfg, loreEng, q.SQL, true, true, &qr.Lore)
	if le, ok := loreEng.(*loreEngine); ok && loreErr == nil {
		qr.Lore.Record = le.last
	}
	qr.Lore.TimesMS = nil // the warm-up is not a measurement
	for range cfg.Rounds {
		if qr.Lore.OK() {
			timedRun(ctx, cfg, loreEng, q.SQL, false, true, &qr.Lore)
		}
	}
	duckSQL := q.SQL
	if q.DuckSQL != "" {
		duckSQL = q.DuckSQL
	}
	duckRows, duckErr := timedRun(ctx, cfg, duckEng, duckSQL, true, false, &qr.DuckDB)
	qr.DuckDB.TimesMS = nil
	if q.Truth != "" && loreErr == nil && duckErr == nil {
		var truth Run
		duckRows, duckErr = timedRun(ctx, cfg, duckEng, q.Truth, true, false, &truth)
	}
	for range cfg.Rounds {
		if qr.DuckDB.OK() {
			timedRun(ctx, cfg, duckEng, duckSQL, false, false, &qr.DuckDB)
		}
	}
	if loreErr == nil && duckErr == nil {
		eq, diff := compareResults(loreRows, duckRows, q.Order, q.Tolerance)
		if q.Interval {
			eq, diff = withinIntervals(loreRows, duckRows)
		}
		qr.Equal, qr.Diff = &eq, diff
	}
	for _, r := range []*Run{&qr.Lore, &qr.DuckDB} {
		if r.OK() {
			r.MedianMS = median(r.TimesMS)
		}
	}
	if qr.Lore.OK() && qr.DuckDB.OK() && qr.DuckDB.MedianMS > 0 {
		qr.Ratio = qr.Lore.MedianMS / qr.DuckDB.MedianMS
	}
	return qr
}

// errNotStopped is the error of a run whose engine ignored the cancellation.
var errNotStopped = errors.New("the engine did not stop after the timeout")

// timedRun runs q once under the timeout with the memory sampler on, and records
// the time, the row count, the peaks and any failure in r. An engine that goes on
// past the timeout plus cfg.Grace is left running in the background and the run is
// reported as a timeout that did not stop.
func timedRun(ctx context.Context, cfg Config, e engine, q string, keep, heap bool, r *Run) ([][]string, error) {
	// Every run starts from a collected heap, so that the garbage of earlier runs
	// does not count against it in GC work. The memory the Go runtime keeps for reuse
	// stays with it, as DuckDB's allocator keeps the memory it freed: returning only
	// Go's to the operating system would make every Lore run fault its heap in afresh
	// while DuckDB's runs reuse theirs.
	runtime.GC()
	rctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	type outcome struct {
		rows [][]string
		n    int
		err  error
	}
	done := make(chan outcome, 1)
	s := startSampler(heap)
	start := time.Now()
	go func() {
		rows, n, err := e.run(rctx, q, keep)
		done <- outcome{rows, n, err}
	}()
	var o outcome
	stuck := time.NewTimer(cfg.Timeout + cfg.grace())
	defer stuck.Stop()
	select {
	case o = <-done:
	case <-stuck.C:
		o.err = errNotStopped
	}
	elapsed := time.Since(start)
	peakHeap, rssDelta := s.stop()
	r.PeakHeapBytes = max(r.PeakHeapBytes, peakHeap)
	r.PeakRSSDeltaBytes = max(r.PeakRSSDeltaBytes, rssDelta)
	switch {
	case o.err == errNotStopped:
		r.Timeout, r.NotStopped = true, true
		r.Error = fmt.Sprintf("canceled after %s but still running %s later; it went on in the background during the later runs", cfg.Timeout, cfg.grace())
		return nil, o.err
	case o.err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded):
		r.Timeout = true
		r.Error = fmt.Sprintf("canceled after %s", cfg.Timeout)
		return nil, o.err
	case o.err != nil:
		r.Error = oneLine(o.err.Error())
		r.ErrorCode = e.errorCode(o.err)
		return nil, o.err
	}
	r.TimesMS = append(r.TimesMS, float64(elapsed.Microseconds())/1000)
	r.Rows = o.n
	return o.rows, nil
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (s *SuiteResult) summarise() {
	var logSum float64
	n := 0
	for _, q := range s.Queries {
		if q.Ratio > 0 {
			logSum += math.Log(q.Ratio)
			n++
		}
		if q.Equal != nil {
			s.Compared++
			if !*q.Equal {
				s.Unequal++
			}
		}
	}
	if n > 0 {
		s.GeoMeanRatio = math.Exp(logSum / float64(n))
	}
}

// profileRuns runs each of the queries ok admits rounds times (at least once) under the
// CPU profiler, writing the profile to path and the allocations made meanwhile to
// path.allocs (with path.allocs-base as its base); a query's runs stop at its first
// error.
func profileRuns(path string, rounds int, qs []Query, ok func(i int) bool, run func(Query) error) (rerr error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot create the CPU profile: %w", err)
	}
	defer f.Close()
	// The allocation profile counts from the process's start; the one taken before
	// the runs is its base (go tool pprof -base path.allocs-base path.allocs).
	if err := writeAllocs(path + ".allocs-base"); err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return fmt.Errorf("cannot start the CPU profile: %w", err)
	}
	defer func() {
		pprof.StopCPUProfile()
		if err := writeAllocs(path + ".allocs"); err != nil && rerr == nil {
			rerr = err
		}
	}()
	for i, q := range qs {
		if !ok(i) {
			continue
		}
		for range max(rounds, 1) {
			if err := run(q); err != nil {
				break
			}
		}
	}
	return nil
}

// writeAllocs writes the allocation profile, everything allocated since the process
// started, to path.
func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot create the allocation profile: %w", err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("cannot write the allocation profile: %w", err)
	}
	return f.Close()
}
