// Command lore-beam runs Lore's distributed work on Apache Beam. The lore engine
// plans a run and writes its job; lore-beam submits the pipeline to a runner and
// waits for it:
//
//	lore-beam analyze|aggregate|optimize --job FILE --results FILE [--memory_limit BYTES] [Beam's flags]
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
	"os"

	lorebeam "github.com/loredb/lore/dist/beam"
)

func main() { os.Exit(lorebeam.Main(os.Args[1:], os.Stderr)) }
