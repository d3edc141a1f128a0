package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
)

// optimizeFigures are one engine's rewrite of the events table sorted by user_id.
type optimizeFigures struct {
	elapsed  time.Duration
	cpu      time.Duration // user and system time of the process: steadier than elapsed on a busy machine
	peakRSS  int64         // bytes: the process's resident peak during the rewrite
	baseRSS  int64         // bytes: resident before it
	outBytes int64
	note     string
}

// runOptimizeBench rewrites an events table in arrival order sorted by user_id: Lore's
// OPTIMIZE (the layout: bloom filters, page index, row groups of 2^20 rows) against
// DuckDB's COPY (SELECT * … ORDER BY user_id) TO … (FORMAT parquet), each on its own
// copy of the files, one after the other in this process. Peak resident memory is
// the kernel's high-water mark, reset before each run.
func runOptimizeBench(ctx context.Context, dataDir string, rows int64, files, threads int, stdout, stderr io.Writer) int {
	src := filepath.Join(dataDir, fmt.Sprintf("events-arrival-%d-%d", rows, files))
	err := ensureData(src, stderr, func(out string, report func(done, total int64)) error {
		return gen.Events(ctx, gen.EventsOptions{Rows: rows, Files: files, Out: out, Seed: 1, Progress: report})
	})
	if err != nil {
		fmt.Fprintf(stderr, "bench: cannot generate the events data: %v\n", err)
		return 1
	}
	info, err := dataInfo(src)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	scratch, err := os.MkdirTemp(dataDir, "optimize-")
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	defer os.RemoveAll(scratch)

	loreDir := filepath.Join(scratch, "lore")
	if err := copyParquet(src, loreDir); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	lf, err := optimizeLore(ctx, loreDir, filepath.Join(scratch, "home"), threads)
	if err != nil {
		fmt.Fprintf(stderr, "bench: lore: %v\n", err)
		return 1
	}
	os.RemoveAll(loreDir)
	debug.FreeOSMemory()
	df, err := optimizeDuck(ctx, src, filepath.Join(scratch, "duck.parquet"), threads)
	if err != nil {
		fmt.Fprintf(stderr, "bench: duckdb: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "optimize: %d events rows in %d files (%d bytes), sorted by user_id, %d threads\n",
		rows, info.Files, info.Bytes, threads)
	fmt.Fprintf(stdout, "%-8s %10s %10s %14s %14s %14s  %s\n", "engine", "seconds", "cpu_s", "peak_rss_mib", "base_rss_mib", "out_bytes", "")
	for _, r := range []struct {
		name string
		f    optimizeFigures
	}{{"lore", lf}, {"duckdb", df}} {
		fmt.Fprintf(stdout, "%-8s %10.2f %10.2f %14.0f %14.0f %14d  %s\n", r.name, r.f.elapsed.Seconds(), r.f.cpu.Seconds(),
			float64(r.f.peakRSS)/(1<<20), float64(r.f.baseRSS)/(1<<20), r.f.outBytes, r.f.note)
	}
	return 0
}

func optimizeLore(ctx context.Context, dir, home string, threads int) (optimizeFigures, error) {
	var f optimizeFigures
	e, err := lore.Open(ctx, lore.Options{Home: home, Threads: threads})
	if err != nil {
		return f, err
	}
	defer e.Close()
	if _, err := e.Query(ctx, "CREATE TABLE events WITH (location = "+sqlString(dir)+", clustered_by = ARRAY['user_id'])", nil); err != nil {
		return f, err
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
	return f, nil
}

func optimizeDuck(ctx context.Context, src, out string, threads int) (optimizeFigures, error) {
	var f optimizeFigures
	d, err := openDuckDB(ctx, threads, []Table{{Name: "events", Dir: src}})
	if err != nil {
		return f, err
	}
	defer d.close()
	f.baseRSS = resetPeakRSS()
	start, cpu0 := time.Now(), cpuTime()
	_, err = d.db.ExecContext(ctx, "COPY (SELECT * FROM events ORDER BY user_id) TO "+sqlString(out)+" (FORMAT parquet)")
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
