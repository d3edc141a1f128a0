package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/internal/startup"
)

// generators are the table kinds "lore gen" knows, by name.
var generators = map[string]func(ctx context.Context, e *env, args []string) int{
	"events": runGenEvents,
	"tpch":   runGenTPCH,
}

func runGen(ctx context.Context, e *env, args []string) int {
	// No engine sets the collector's target for the generators: the default's.
	startup.Restore()
	fs := newFlags(e, "gen", "KIND [flags]   (kinds: events, tpch)")
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() == 0 {
		return usageError(e, fs, "which table? (kinds: events, tpch)")
	}
	run, ok := generators[fs.Arg(0)]
	if !ok {
		return usageError(e, fs, "unknown kind %q (kinds: events, tpch)", fs.Arg(0))
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	return run(ctx, e, fs.Args()[1:])
}

func runGenEvents(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "gen events", "--rows N --files F --out DIR|s3://… [--clustered-by ts] [--seed S] [--row-group-rows R] [--force]")
	rows := fs.Int64("rows", 1_000_000, "number of `rows`")
	files := fs.Int("files", 1, "number of `files`")
	out := fs.String("out", "", "output `directory` or s3://bucket/prefix (required)")
	clustered := fs.String("clustered-by", "", "sort rows by this `column` within and across files (only ts)")
	seed := fs.Int64("seed", 1, "random `seed`; the same seed gives the same files")
	rgRows := fs.Int("row-group-rows", 0, "`rows` per row group (default 1048576)")
	force := fs.Bool("force", false, "write into a non-empty output directory, replacing what is there")
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	switch {
	case fs.NArg() > 0:
		return usageError(e, fs, "unexpected argument %q", fs.Arg(0))
	case *out == "":
		return usageError(e, fs, "--out is required")
	case *rows <= 0:
		return usageError(e, fs, "--rows must be positive")
	case *files <= 0:
		return usageError(e, fs, "--files must be positive")
	case *clustered != "" && *clustered != "ts":
		return usageError(e, fs, "--clustered-by supports only ts")
	case *rgRows < 0:
		return usageError(e, fs, "--row-group-rows must be positive")
	}
	dst, err := openOut(ctx, *out, *force)
	if err != nil {
		return usageError(e, fs, "%v", err)
	}
	defer dst.close()
	opts := gen.EventsOptions{Rows: *rows, Files: *files, Out: dst.dir, ClusteredBy: *clustered,
		Seed: *seed, RowGroupRows: *rgRows}
	var bar *progressBar
	if isTerminal(e.stderr) {
		bar = newProgressBar(e.stderr, "events")
		opts.Progress = bar.update
	}
	start := time.Now()
	err = gen.Events(ctx, opts)
	if bar != nil {
		bar.finish()
	}
	if err == nil {
		err = dst.finish(ctx)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "lore gen events: %v\n", err)
		return exitError
	}
	fmt.Fprintf(e.stdout, "wrote %d rows in %d files to %s in %.1fs\n", *rows, *files, *out, time.Since(start).Seconds())
	return exitOK
}

func runGenTPCH(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "gen tpch", "--sf N --out DIR|s3://… [--files K] [--seed S] [--row-group-rows R] [--force]")
	sf := fs.Float64("sf", 1, "scale `factor` (1: about 6 million lineitem rows)")
	out := fs.String("out", "", "output `directory` or s3://bucket/prefix (required); one subdirectory per table")
	files := fs.Int("files", 1, "number of `files` orders and lineitem are each split into")
	seed := fs.Int64("seed", 0, "random `seed`; the same seed and scale factor give the same rows")
	rgRows := fs.Int("row-group-rows", 0, "`rows` per row group (default 1048576)")
	force := fs.Bool("force", false, "write into a non-empty output directory, replacing what is there")
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	switch {
	case fs.NArg() > 0:
		return usageError(e, fs, "unexpected argument %q", fs.Arg(0))
	case *out == "":
		return usageError(e, fs, "--out is required")
	case !(*sf > 0):
		return usageError(e, fs, "--sf must be positive")
	case *files <= 0:
		return usageError(e, fs, "--files must be positive")
	case *rgRows < 0:
		return usageError(e, fs, "--row-group-rows must be positive")
	}
	dst, err := openOut(ctx, *out, *force)
	if err != nil {
		return usageError(e, fs, "%v", err)
	}
	defer dst.close()
	opts := gen.TPCHOptions{SF: *sf, Out: dst.dir, Files: *files, Seed: *seed, RowGroupRows: *rgRows}
	var bar *progressBar
	if isTerminal(e.stderr) {
		bar = newProgressBar(e.stderr, "tpch")
		opts.Progress = bar.update
	}
	start := time.Now()
	err = gen.TPCH(ctx, opts)
	if bar != nil {
		bar.finish()
	}
	if err == nil {
		err = dst.finish(ctx)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "lore gen tpch: %v\n", err)
		return exitError
	}
	fmt.Fprintf(e.stdout, "wrote TPC-H at scale factor %g to %s in %.1fs\n", *sf, *out, time.Since(start).Seconds())
	return exitOK
}

// checkOut refuses to generate into a directory that already holds anything unless
// force is set: the generators replace the files they would write and remove stale
// parts of their own, so a mistyped --out could otherwise destroy a table. A path
// that exists and is not a directory is refused whatever force says.
func checkOut(dir string, force bool) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("cannot use output directory %q: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("output %q exists and is not a directory", dir)
	case force:
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("cannot read output directory %q: %w", dir, err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("output directory %q is not empty (%d entries); pass --force to write into it anyway", dir, len(entries))
	}
	return nil
}
