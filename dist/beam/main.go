package lorebeam

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/loredb/lore/errs"
)

var (
	jobFile     = flag.String("job", "", "the job the lore engine wrote (required)")
	resultsFile = flag.String("results", "", "the file the results are written to (required)")
	memoryLimit = flag.Int64("memory_limit", 0, "bytes a worker may hold for one zone (0: no limit)")
)

// Main is the lore-beam command (see cmd/lore-beam) on args, its arguments after
// the program's name; it returns the process's exit status. It parses the process's
// flag set, where Beam's flags are too, and runs the job on the runner they name
// (prism when none is). An interrupt cancels the job. Started by a runner as one of
// its workers, it is the worker.
func Main(args []string, stderr io.Writer) int {
	var sub string
	if len(args) > 0 && (args[0] == "analyze" || args[0] == "aggregate" || args[0] == "optimize") {
		sub, args = args[0], args[1:]
	}
	if err := flag.CommandLine.Parse(args); err != nil {
		return 2
	}
	if f := flag.Lookup("runner"); f != nil && (f.Value.String() == "" || f.Value.String() == "direct") {
		f.Value.Set("prism")
	}
	// Started by a runner as a worker (--worker), the binary serves the runner
	// from here and never returns.
	beam.Init()
	if sub == "" {
		fmt.Fprintln(stderr, "usage: lore-beam analyze|aggregate|optimize --job FILE --results FILE [--memory_limit BYTES] [Beam's flags]")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, sub); err != nil {
		code := CodeOf(err)
		if code == "" {
			code = errs.CodeOf(err)
		}
		fmt.Fprintf(stderr, "lore-beam: %s: %s\n", code, reportOf(err))
		return 1
	}
	return 0
}

func run(ctx context.Context, sub string) error {
	if *jobFile == "" || *resultsFile == "" {
		return errs.New(errs.InvalidSetting, "--job and --results are required")
	}
	p, s := beam.NewPipelineWithRoot()
	build := Analyze
	switch sub {
	case "aggregate":
		build = Aggregate
	case "optimize":
		build = Optimize
	}
	if err := build(s, *jobFile, *resultsFile, *memoryLimit); err != nil {
		return err
	}
	return beamx.Run(ctx, p)
}

// reportOf is what a failed run's last line says of err: the message of the worker
// failure it carries (the runner wraps it in lines of its own), else err's message,
// on one line.
func reportOf(err error) string {
	msg := err.Error()
	if code := CodeOf(err); code != "" {
		mark := codeOpen + string(code) + codeClose
		if i := strings.Index(msg, mark); i >= 0 {
			msg = strings.TrimSpace(msg[i+len(mark):])
			if j := strings.IndexByte(msg, '\n'); j >= 0 {
				msg = msg[:j]
			}
		}
	}
	return strings.Join(strings.Fields(msg), " ")
}
