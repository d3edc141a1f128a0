// Command lore-beam runs Lore's distributed work on Apache Beam. The lore engine
// plans a run and writes its job; lore-beam submits the pipeline to a runner and
// waits for it:
//
//	lore-beam analyze --job FILE --results FILE [--memory_limit BYTES] [Beam's flags]
//
// Beam's flags choose the runner: --runner=prism (the default: Beam's local runner,
// in this process), --runner=universal --endpoint=HOST:PORT for a job server that
// speaks the portable Job API (a standalone prism, Flink's or Spark's job server),
// --runner=dataflow with its project, region and staging flags. On failure the
// last line on standard error is "lore-beam: CODE: message", CODE being the Lore
// error code a worker failed with (SOURCE_CHANGED: a file changed after planning),
// or INTERNAL.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/loredb/lore/dist/beam"
	"github.com/loredb/lore/errs"
)

var (
	jobFile     = flag.String("job", "", "the job the lore engine wrote (required)")
	results     = flag.String("results", "", "the file the results are written to (required)")
	memoryLimit = flag.Int64("memory_limit", 0, "bytes a worker may hold for one zone (0: no limit)")
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "analyze" {
		fmt.Fprintln(os.Stderr, "usage: lore-beam analyze --job FILE --results FILE [--memory_limit BYTES] [Beam's flags]")
		os.Exit(2)
	}
	os.Args = append(os.Args[:1], os.Args[2:]...)
	flag.Parse()
	if f := flag.Lookup("runner"); f != nil && (f.Value.String() == "" || f.Value.String() == "direct") {
		f.Value.Set("prism")
	}
	beam.Init()
	if err := run(context.Background()); err != nil {
		code := lorebeam.CodeOf(err)
		if code == "" {
			code = errs.CodeOf(err)
		}
		fmt.Fprintf(os.Stderr, "lore-beam: %s: %v\n", code, err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	if *jobFile == "" || *results == "" {
		return errs.New(errs.InvalidSetting, "--job and --results are required")
	}
	job, err := os.ReadFile(*jobFile)
	if err != nil {
		return errs.New(errs.SourceUnavailable, "cannot read the job: %w", err)
	}
	p, s := beam.NewPipelineWithRoot()
	if err := lorebeam.Analyze(s, job, *results, *memoryLimit); err != nil {
		return err
	}
	return beamx.Run(ctx, p)
}
