package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/loredb/lore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// settingsFlag collects repeated --lore-setting key=value flags.
type settingsFlag map[string]string

func (s settingsFlag) String() string { return fmt.Sprint(map[string]string(s)) }

func (s settingsFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	s[strings.TrimSpace(k)] = strings.TrimSpace(val)
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		suite      = fs.String("suite", "events", "suite to run: events, statistics, tpch, joins, ds, all, serve (the query server's load test, over the events data), coldstart (a fresh `lore sql -c` process answering from statistics, timed whole; --rows, --files, --rounds processes, --lore-bin), or optimize (OPTIMIZE of 10M events rows against DuckDB's sorted COPY, then point lookups; --rows, --files, --memory)")
		small      = fs.Bool("small", false, "events: the CI-sized data set (2M rows in 8 files) instead of 100M rows in 100 files")
		rows       = fs.Int64("rows", 0, "events: rows (overrides the size chosen by --small)")
		files      = fs.Int("files", 0, "events: files (overrides the size chosen by --small)")
		rowGroup   = fs.Int("row-group-rows", 0, "events: rows per row group (0: the generator's default)")
		sf         = fs.Float64("sf", 1, "tpch: scale factor")
		tpchFiles  = fs.Int("tpch-files", 4, "tpch: files per table")
		dsSF       = fs.Float64("ds-sf", 0.2, "ds: scale factor (store_sales holds 2.88M rows at 1)")
		threads    = fs.Int("threads", runtime.GOMAXPROCS(0), "worker threads of each engine")
		rounds     = fs.Int("rounds", 5, "timed runs per engine and query, after one warm-up")
		timeout    = fs.Duration("timeout", 5*time.Minute, "cancel a run after this long and report a timeout")
		jsonOut    = fs.String("json", "", "write every number to this JSON file")
		cpuProfile = fs.String("cpuprofile", "", "write a CPU profile of extra Lore-only runs of the queries to this file")
		queries    = fs.String("queries", "", "comma-separated query names to run (default: all of the suite)")
		dataDir    = fs.String("data", "", "directory of the cached data sets (default: the bench module's data/)")
		format     = fs.String("format", "parquet", "tpch: the format Lore reads, parquet, delta or iceberg (a Delta log or Iceberg metadata over the same files; DuckDB reads the Parquet files)")
		compareFmt = fs.Bool("compare-formats", false, "tpch: Lore on Parquet against Lore on the lake format --format names (Delta when it names parquet) over the same files, instead of Lore against DuckDB")
		store      = fs.String("store", "local", "tpch, events: local, or s3 to run Lore over the same files in an in-process S3 server on loopback against Lore on local disk, instead of Lore against DuckDB")
		s3Latency  = fs.Duration("s3-latency", 0, "store s3: delay every request this long (a real store's round trip)")
		s3MiBps    = fs.Float64("s3-bandwidth", 0, "store s3: deliver each response at no more than this many MiB/s (one connection's throughput; 0: unbounded)")
		s3Coalesce = fs.Int64("s3-coalesce", 0, "store s3: largest gap in bytes between two ranges read in one request (0: Lore's default; negative: none)")
		s3Part     = fs.Int64("s3-part", 0, "store s3: largest range in bytes one request reads (0: Lore's default)")
		s3Parallel = fs.Int("s3-parallel", 0, "store s3: requests one reader has in flight at once (0: Lore's default)")
		s3Cache    = fs.Int64("s3-cache-bytes", 8<<30, "store s3: the warm engine's disk cache (LORE_CACHE_BYTES)")
		s3Warm     = fs.Bool("s3-warm", true, "store s3: measure warm runs too (footers cached, disk cache filled), not only cold ones")
		clients    = fs.Int("clients", 64, "serve: concurrent clients")
		duration   = fs.Duration("duration", 60*time.Second, "serve: how long the clients send requests")
		requests   = fs.Int64("requests", 0, "serve: stop after this many requests (0: no bound)")
		rate       = fs.Float64("rate", 0, "serve: pace the clients to this many requests/s in all (0: closed loop, as fast as answers come)")
		serveMixF  = fs.String("serve-mix", "", "serve: request kinds and weights, e.g. context=100 (default "+defaultServeMix+")")
		maxRunning = fs.Int("max-running", 0, "serve: the server's limit on running statements (0: cores)")
		maxQueued  = fs.Int("max-queued", 0, "serve: the server's queue of waiting statements (0: Lore's default)")
		flavourF   = fs.String("flavour", "lore", "tpch: the files' flavour, "+strings.Join(Flavours, ", ")+", or all (each in turn, then a summary)")
		smallFiles = fs.Int("small-files", defaultSmallFiles, "tpch flavour small-files: the number of lineitem files (other tables in proportion)")
		processes  = fs.Bool("processes", false, "tpch: run each query in a fresh process per engine (the lore CLI, and this program as a DuckDB child) and report peak RSS and wall time")
		loreBin    = fs.String("lore-bin", "", "coldstart: the lore binary to time (default: build ./cmd/lore of the Lore module)")
		memory     = fs.String("memory", "4GiB", "optimize: the memory budget of both engines (Lore's memory limit, DuckDB's memory_limit)")
	)
	loreSettings := settingsFlag{"use_statistics": "false", "result_cache": "false"}
	fs.Var(loreSettings, "lore-setting", "a Lore setting key=value for every query (repeatable; default use_statistics=false result_cache=false)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *rounds < 1 || *threads < 1 || *timeout <= 0 {
		fmt.Fprintln(stderr, "bench: --rounds and --threads must be at least 1 and --timeout positive")
		return 2
	}
	if *format != "parquet" && *format != "delta" && *format != "iceberg" {
		fmt.Fprintf(stderr, "bench: unknown format %q (want parquet, delta or iceberg)\n", *format)
		return 2
	}
	if (*format != "parquet" || *compareFmt) && *suite != "tpch" {
		fmt.Fprintln(stderr, "bench: --format delta or iceberg and --compare-formats apply to --suite tpch only")
		return 2
	}
	if !validFlavour(*flavourF) {
		fmt.Fprintf(stderr, "bench: unknown flavour %q (want %s or all)\n", *flavourF, strings.Join(Flavours, ", "))
		return 2
	}
	if *smallFiles < 1 {
		fmt.Fprintln(stderr, "bench: --small-files must be at least 1")
		return 2
	}
	if *processes && (*suite != "tpch" || *compareFmt || *store != "local" || *format != "parquet") {
		fmt.Fprintln(stderr, "bench: --processes applies to --suite tpch on local Parquet files, without --compare-formats")
		return 2
	}
	if *store != "local" && *store != "s3" {
		fmt.Fprintf(stderr, "bench: unknown store %q (want local or s3)\n", *store)
		return 2
	}
	if *store == "s3" && (*suite != "tpch" && *suite != "events" || *format != "parquet" || *compareFmt) {
		fmt.Fprintln(stderr, "bench: --store s3 applies to --suite tpch or events, on Parquet, without --compare-formats")
		return 2
	}
	lake := *format // the format --compare-formats sets against Parquet
	if lake == "parquet" {
		lake = "delta"
	}
	if *suite == "optimize" {
		if *dataDir == "" {
			*dataDir = defaultDataDir()
		}
		n, k := int64(10_000_000), 10
		if *rows > 0 {
			n = *rows
		}
		if *files > 0 {
			k = *files
		}
		budget, err := lore.ParseMemoryLimit(*memory)
		if err != nil {
			fmt.Fprintf(stderr, "bench: --memory: %v\n", err)
			return 2
		}
		return runOptimizeBench(ctx, OptimizeConfig{Rows: n, Files: k, Threads: *threads, Memory: budget, Rounds: *rounds, CPUProfile: *cpuProfile},
			*dataDir, stdout, stderr)
	}
	if *suite == "coldstart" {
		cc := ColdstartConfig{Rows: 1_000_000, Files: 100, Runs: 31, Binary: *loreBin, DataDir: *dataDir}
		if cc.DataDir == "" {
			cc.DataDir = defaultDataDir()
		}
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "rows":
				cc.Rows = *rows
			case "files":
				cc.Files = *files
			case "rounds":
				cc.Runs = *rounds
			}
		})
		return runColdstart(ctx, cc, stdout, stderr)
	}
	if *suite == "serve" {
		return runServe(ctx, ServeConfig{Clients: *clients, Duration: *duration, Requests: *requests, Mix: *serveMixF, Rate: *rate,
			MaxRunning: *maxRunning, MaxQueued: *maxQueued, CPUProfile: *cpuProfile}, *dataDir, *small, *rows, *files, *jsonOut, stdout, stderr)
	}
	var suites []string
	switch *suite {
	case "events", "statistics", "tpch", "joins", "ds":
		suites = []string{*suite}
	case "all":
		suites = []string{"events", "statistics", "tpch", "joins", "ds"}
	default:
		fmt.Fprintf(stderr, "bench: unknown suite %q (want events, statistics, tpch, joins, ds or all)\n", *suite)
		return 2
	}
	// Each TPC-H flavour is a suite of its own: "tpch" names the one --flavour
	// chooses, "tpch:<flavour>" the others.
	flavours := []string{*flavourF}
	if *flavourF == "all" {
		flavours = Flavours
	}
	if i := slices.Index(suites, "tpch"); i >= 0 {
		var names []string
		for _, f := range flavours {
			names = append(names, "tpch:"+f)
		}
		suites = slices.Replace(suites, i, i+1, names...)
	}
	if *dataDir == "" {
		*dataDir = defaultDataDir()
	}
	abs, err := filepath.Abs(*dataDir)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	ev := EventsConfig{Rows: 100_000_000, Files: 100, RowGroupRows: *rowGroup, DataDir: abs}
	if *small {
		ev.Rows, ev.Files = 2_000_000, 8
	}
	if *rows > 0 {
		ev.Rows = *rows
	}
	if *files > 0 {
		ev.Files = *files
	}

	rep := &Report{
		Machine:        describeMachine(ctx),
		Threads:        *threads,
		Rounds:         *rounds,
		TimeoutSeconds: timeout.Seconds(),
		LoreSettings:   loreSettings,
		MemoryNote:     memoryNote,
	}
	rep.WriteHeader(stdout)
	cfg := Config{Threads: *threads, Rounds: *rounds, Timeout: *timeout, LoreSettings: loreSettings,
		CPUProfile: *cpuProfile, Progress: stderr}
	failed := false
	var flavourResults []*SuiteResult
	var processResults []*ProcessSuiteResult
	for _, name := range suites {
		var s *Suite
		var err error
		name, flavour, _ := strings.Cut(name, ":")
		switch name {
		case "events":
			s, err = EventsSuite(ctx, ev, stderr)
		case "statistics":
			s, err = StatisticsSuite(ctx, ev, stderr)
		case "tpch":
			cfg := TPCHConfig{SF: *sf, Files: *tpchFiles, DataDir: abs, Flavour: flavour, SmallFiles: *smallFiles, Threads: *threads}
			if *format != "parquet" || *compareFmt {
				cfg.Lake = lake
			}
			s, err = TPCHSuite(ctx, cfg, stderr)
		case "joins":
			s, err = JoinsSuite(ctx, JoinsConfig{DataDir: abs}, stderr)
		case "ds":
			s, err = DSSuite(ctx, DSConfig{SF: *dsSF, DataDir: abs}, stderr)
		}
		if err == nil && !filterQueries(s, *queries) {
			if len(suites) > 1 {
				continue
			}
			err = errors.New("none of the queries named by --queries is in this suite")
		}
		if err == nil && cfg.CPUProfile != "" && len(suites) > 1 {
			// One profile per suite.
			cfg.CPUProfile = profileName(*cpuProfile, s.Name)
		}
		if err == nil && *store == "s3" {
			sc := StoreConfig{Latency: *s3Latency, Bandwidth: int64(*s3MiBps * (1 << 20)), Coalesce: *s3Coalesce, Part: *s3Part, Parallel: *s3Parallel,
				CacheBytes: *s3Cache, Warm: *s3Warm}
			var srep *StoreReport
			if srep, err = CompareStore(ctx, cfg, s, sc, stdout); err == nil {
				if *jsonOut != "" {
					srep.Machine = rep.Machine
					if err := writeStoreJSON(*jsonOut, srep); err != nil {
						fmt.Fprintf(stderr, "bench: cannot write %s: %v\n", *jsonOut, err)
						return 1
					}
				}
				return 0
			}
		}
		if err == nil && *processes {
			var pr *ProcessSuiteResult
			if pr, err = RunProcesses(ctx, cfg, s); err == nil {
				processResults = append(processResults, pr)
				rep.Processes = append(rep.Processes, pr)
				WriteProcessTable(stdout, pr)
				continue
			}
		}
		if err == nil && *compareFmt {
			if _, _, err = CompareFormats(ctx, cfg, s, lake, stdout); err == nil {
				continue
			}
		}
		var res *SuiteResult
		if err == nil {
			res, err = RunSuite(ctx, cfg, s)
		}
		if err != nil {
			if rep.SuiteErrors == nil {
				rep.SuiteErrors = map[string]string{}
			}
			rep.SuiteErrors[name] = err.Error()
			fmt.Fprintf(stdout, "\nsuite %s: not run: %v\n", name, err)
			failed = true
			if ctx.Err() != nil {
				break
			}
			continue
		}
		for _, n := range res.Notes {
			if !slices.Contains(rep.Notes, n) {
				rep.Notes = append(rep.Notes, n)
				fmt.Fprintf(stdout, "note: %s\n", n)
			}
		}
		rep.Suites = append(rep.Suites, res)
		WriteTable(stdout, res)
		if name == "tpch" {
			flavourResults = append(flavourResults, res)
		}
	}
	if len(flavours) > 1 {
		WriteFlavourSummary(stdout, flavours, flavourResults, processResults)
	}
	fmt.Fprintf(stdout, "\nmemory: %s\n", memoryNote)
	if *jsonOut != "" {
		if err := rep.WriteJSON(*jsonOut); err != nil {
			fmt.Fprintf(stderr, "bench: cannot write %s: %v\n", *jsonOut, err)
			return 1
		}
	}
	if failed {
		return 1
	}
	return 0
}

// filterQueries keeps the named queries of s (an empty list keeps all) and reports
// whether any is left.
func filterQueries(s *Suite, list string) bool {
	if strings.TrimSpace(list) == "" {
		return true
	}
	var keep []Query
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(s.Queries, func(q Query) bool { return q.Name == name })
		if i < 0 {
			continue
		}
		keep = append(keep, s.Queries[i])
	}
	s.Queries = keep
	return len(keep) > 0
}

// profileName is p with the suite's name before its extension.
func profileName(p, suite string) string {
	ext := filepath.Ext(p)
	return strings.TrimSuffix(p, ext) + "-" + suite + ext
}

// defaultDataDir is data/ next to the bench module's go.mod, else ./data.
func defaultDataDir() string {
	return filepath.Join(benchModuleDir(), "data")
}

// benchModuleDir is the directory of the bench module's go.mod, found from the
// working directory (the module itself or the repository root), else ".".
func benchModuleDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := wd; ; d = filepath.Dir(d) {
		for _, cand := range []string{d, filepath.Join(d, "bench")} {
			if b, err := os.ReadFile(filepath.Join(cand, "go.mod")); err == nil &&
				strings.Contains(string(b), "module github.com/loredb/lore/bench\n") {
				return cand
			}
		}
		if filepath.Dir(d) == d {
			return "."
		}
	}
}

// runServe runs the query server's load test over the events data (--small: the CI
// size) and prints, or writes as JSON, its report.
func runServe(ctx context.Context, cfg ServeConfig, dataDir string, small bool, rows int64, files int, jsonOut string, stdout, stderr io.Writer) int {
	if cfg.Clients < 1 || cfg.Duration <= 0 || cfg.Requests < 0 || cfg.Rate < 0 {
		fmt.Fprintln(stderr, "bench: --clients must be at least 1, --duration positive, --requests and --rate not negative")
		return 2
	}
	if dataDir == "" {
		dataDir = defaultDataDir()
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	ev := EventsConfig{Rows: 10_000_000, Files: 40, DataDir: abs}
	if small {
		ev.Rows, ev.Files = 2_000_000, 8
	}
	if rows > 0 {
		ev.Rows = rows
	}
	if files > 0 {
		ev.Files = files
	}
	rep, err := RunServe(ctx, ev, cfg, describeMachine(ctx), stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bench: serve: %v\n", err)
		return 1
	}
	if jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "bench: cannot write %s: %v\n", jsonOut, err)
			return 1
		}
	}
	if rep.Lost > 0 || rep.MissingFromLog > 0 || !rep.CatalogOK {
		return 1
	}
	return 0
}
