package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
)

// OptimizeConfig is one run of the optimize suite.
type OptimizeConfig struct {
	Rows    int64
	Files   int
	Threads int
	// Memory is both engines' memory budget in bytes: Lore's memory limit and
	// DuckDB's memory_limit.
	Memory int64
	// Rounds is the timed runs of each lookup, after one warm-up.
	Rounds int
	// CPUProfile, when set, is the file Lore's rewrite is profiled into.
	CPUProfile string
}

// optimizeFigures are one engine's rewrite of the events table sorted by user_id.
type optimizeFigures struct {
	elapsed  time.Duration
	cpu      time.Duration // user and system time of the process: steadier than elapsed on a busy machine
	peakRSS  int64         // bytes: the process's resident peak during the rewrite
	baseRSS  int64         // bytes: resident before it
	outBytes int64
	note     string
}

// lookupUsers are the user_id values the point lookups ask for: users of the
// generator's Zipf tail, each with a handful of rows.
var lookupUsers = []int64{123_457, 456_790, 876_543}

// runOptimizeBench rewrites an events table in arrival order sorted by user_id: Lore's
// OPTIMIZE (the layout: bloom filters, page index, row groups of 2^20 rows) against
// DuckDB's COPY (SELECT * … ORDER BY user_id) TO … (FORMAT parquet), each on its own
// copy of the files, one after the other in this process, under the same memory
// budget. Peak resident memory is the kernel's high-water mark, reset before each
// run. Then point lookups on user_id — Lore on its rewritten table, DuckDB on the
// arrival-order files, as a user who had not rewritten them would run — and, after
// ANALYZE, a range aggregate answered from zones.
func runOptimizeBench(ctx context.Context, cfg OptimizeConfig, dataDir string, stdout, stderr io.Writer) int {
	src := filepath.Join(dataDir, fmt.Sprintf("events-arrival-%d-%d", cfg.Rows, cfg.Files))
	err := ensureData(src, stderr, func(out string, report func(done, total int64)) error {
		return gen.Events(ctx, gen.EventsOptions{Rows: cfg.Rows, Files: cfg.Files, Out: out, Seed: 1, Progress: report})
	})
	if err != nil {
		fmt.Fprintf(stderr, "bench: cannot generate the events data: %v\n", err)
		return 1
	}
	if err := optimizeBench(ctx, cfg, src, dataDir, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

func optimizeBench(ctx context.Context, cfg OptimizeConfig, src, dataDir string, stdout, stderr io.Writer) error {
	info, err := dataInfo(src)
	if err != nil {
		return err
	}
	scratch, err := os.MkdirTemp(dataDir, "optimize-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)

	loreDir := filepath.Join(scratch, "lore")
	if err := copyParquet(src, loreDir); err != nil {
		return err
	}
	eng, err := lore.Open(ctx, lore.Options{Home: filepath.Join(scratch, "home"), Threads: cfg.Threads, MemoryLimit: cfg.Memory})
	if err != nil {
		return err
	}
	defer eng.Close()
	fmt.Fprintln(stderr, "lore: OPTIMIZE …")
	lf, err := optimizeLore(ctx, eng, loreDir, cfg.CPUProfile)
	if err != nil {
		return fmt.Errorf("lore: %w", err)
	}
	debug.FreeOSMemory()
	duck, err := openDuckDB(ctx, cfg.Threads, []Table{{Name: "events", Dir: src}})
	if err != nil {
		return err
	}
	defer duck.close()
	for _, s := range []string{fmt.Sprintf("SET memory_limit = '%dMiB'", cfg.Memory>>20),
		"SET temp_directory = " + sqlString(filepath.Join(scratch, "duck-tmp"))} {
		if _, err := duck.db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("duckdb: %s: %w", s, err)
		}
	}
	fmt.Fprintln(stderr, "duckdb: COPY … ORDER BY user_id …")
	df, err := optimizeDuck(ctx, duck, filepath.Join(scratch, "duck.parquet"))
	if err != nil {
		return fmt.Errorf("duckdb: %w", err)
	}
	os.Remove(filepath.Join(scratch, "duck.parquet"))
	fmt.Fprintf(stdout, "optimize: %d events rows in %d files (%d bytes), sorted by user_id, %d threads, memory budget %d MiB\n",
		cfg.Rows, info.Files, info.Bytes, cfg.Threads, cfg.Memory>>20)
	fmt.Fprintf(stdout, "%-8s %10s %10s %14s %14s %14s  %s\n", "engine", "seconds", "cpu_s", "peak_rss_mib", "base_rss_mib", "out_bytes", "")
	for _, r := range []struct {
		name string
		f    optimizeFigures
	}{{"lore", lf}, {"duckdb", df}} {
		fmt.Fprintf(stdout, "%-8s %10.2f %10.2f %14.0f %14.0f %14d  %s\n", r.name, r.f.elapsed.Seconds(), r.f.cpu.Seconds(),
			float64(r.f.peakRSS)/(1<<20), float64(r.f.baseRSS)/(1<<20), r.f.outBytes, r.f.note)
	}
	fmt.Fprintf(stdout, "optimize ratio lore/duckdb: %.2f (seconds), %.2f (cpu)\n",
		lf.elapsed.Seconds()/df.elapsed.Seconds(), lf.cpu.Seconds()/df.cpu.Seconds())
	return lookupBench(ctx, cfg, &loreEngine{eng: eng, settings: map[string]string{"result_cache": "false"}}, duck, stdout)
}

// lookupBench times point lookups and, after ANALYZE, a range aggregate on user_id:
// Lore on the rewritten table, DuckDB on the arrival-order files. It prints the
// median of cfg.Rounds runs after a warm-up, the ratio, and what Lore read.
func lookupBench(ctx context.Context, cfg OptimizeConfig, l *loreEngine, d *duckEngine, stdout io.Writer) error {
	type query struct{ name, sql string }
	var qs []query
	for _, u := range lookupUsers {
		qs = append(qs,
			query{fmt.Sprintf("agg user_id=%d", u), fmt.Sprintf("SELECT count(*), sum(amount) FROM events WHERE user_id = %d", u)},
			query{fmt.Sprintf("rows user_id=%d", u), fmt.Sprintf("SELECT * FROM events WHERE user_id = %d ORDER BY ts", u)})
	}
	fmt.Fprintf(stdout, "\n%-28s %10s %10s %8s  %s\n", "lookup (after OPTIMIZE)", "lore_ms", "duckdb_ms", "ratio", "lore read")
	timeQ := func(e interface {
		run(context.Context, string, bool) ([][]string, int, error)
	}, q string) (float64, [][]string, error) {
		var ms []float64
		var rows [][]string
		for i := 0; i <= cfg.Rounds; i++ {
			start := time.Now()
			out, _, err := e.run(ctx, q, true)
			if err != nil {
				return 0, nil, err
			}
			if i > 0 {
				ms = append(ms, float64(time.Since(start).Microseconds())/1000)
			}
			rows = out
		}
		return median(ms), rows, nil
	}
	report := func(name, q string) error {
		lm, lrows, err := timeQ(l, q)
		if err != nil {
			return fmt.Errorf("lore: %s: %w", q, err)
		}
		read := describeRead(l.last)
		dm, drows, err := timeQ(d, q)
		if err != nil {
			return fmt.Errorf("duckdb: %s: %w", q, err)
		}
		if len(lrows) != len(drows) {
			read += fmt.Sprintf(" (ROW COUNTS DIFFER: lore %d, duckdb %d)", len(lrows), len(drows))
		}
		fmt.Fprintf(stdout, "%-28s %10.2f %10.2f %7.1fx  %s\n", name, lm, dm, dm/lm, read)
		return nil
	}
	for _, q := range qs {
		if err := report(q.name, q.sql); err != nil {
			return err
		}
	}
	if _, _, err := l.run(ctx, "ANALYZE events WITH (sketches = true)", false); err != nil {
		return fmt.Errorf("lore: ANALYZE: %w", err)
	}
	l.settings["use_statistics"] = "true"
	if err := report("narrow range agg (ANALYZEd)", "SELECT count(*), sum(amount) FROM events WHERE user_id BETWEEN 400000 AND 400999"); err != nil {
		return err
	}
	return report("wide range agg (ANALYZEd)", "SELECT count(*), sum(amount) FROM events WHERE user_id BETWEEN 1000 AND 500000")
}

// describeRead says how Lore answered its last statement and what its scans read.
func describeRead(r *lore.Record) string {
	if r == nil {
		return ""
	}
	var groups, files int64
	for _, s := range r.Scans {
		groups += s.RowGroupsRead
		files += s.FilesOpened
	}
	return fmt.Sprintf("mode=%s row_groups_read=%d files_opened=%d", r.Execution.Mode, groups, files)
}

func optimizeLore(ctx context.Context, e *lore.Engine, dir, cpuProfile string) (optimizeFigures, error) {
	var f optimizeFigures
	if _, err := e.Query(ctx, "CREATE TABLE events WITH (location = "+sqlString(dir)+", clustered_by = ARRAY['user_id'])", nil); err != nil {
		return f, err
	}
	if cpuProfile != "" {
		pf, err := os.Create(cpuProfile)
		if err != nil {
			return f, err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return f, err
		}
		defer pprof.StopCPUProfile()
	}
	f.baseRSS = resetPeakRSS()
	start, cpu0 := time.Now(), cpuTime()
	res, err := e.Query(ctx, "OPTIMIZE events", nil)
	f.elapsed, f.cpu = time.Since(start), cpuTime()-cpu0
	f.peakRSS = peakRSS()
	if err != nil {
		return f, err
	}
	for i, fld := range res.Schema.Fields() {
		if fld.Name == "bytes_after" {
			f.outBytes, _ = strconv.ParseInt(res.Batches[0].Column(i).ValueStr(0), 10, 64)
		}
		if fld.Name == "files_written" || fld.Name == "row_groups" {
			f.note += fld.Name + "=" + res.Batches[0].Column(i).ValueStr(0) + " "
		}
	}
	if ex := res.Record.Execution; ex.SpilledBytes > 0 {
		f.note += fmt.Sprintf("spilled=%dMiB ", ex.SpilledBytes>>20)
	}
	return f, nil
}

func optimizeDuck(ctx context.Context, d *duckEngine, out string) (optimizeFigures, error) {
	var f optimizeFigures
	f.baseRSS = resetPeakRSS()
	start, cpu0 := time.Now(), cpuTime()
	_, err := d.db.ExecContext(ctx, "COPY (SELECT * FROM events ORDER BY user_id) TO "+sqlString(out)+" (FORMAT parquet)")
	f.elapsed, f.cpu = time.Since(start), cpuTime()-cpu0
	f.peakRSS = peakRSS()
	if err != nil {
		return f, err
	}
	if st, err := os.Stat(out); err == nil {
		f.outBytes = st.Size()
	}
	f.note = "one file, DuckDB's defaults (no bloom filters, snappy)"
	return f, nil
}

// copyParquet copies the Parquet files of src (one level) into dst.
func copyParquet(src, dst string) error {
	files, err := parquetFiles(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(p)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS resets the kernel's resident high-water mark of this process and
// returns the resident set now.
func resetPeakRSS() int64 {
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	return procStatusBytes("VmRSS:")
}

// peakRSS is the resident high-water mark since the last reset.
func peakRSS() int64 { return procStatusBytes("VmHWM:") }

func procStatusBytes(key string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, key) {
			f := strings.Fields(line[len(key):])
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}
