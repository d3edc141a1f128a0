// Package startup sets the Go collector's target for the lore command before the
// other packages initialise.
//
// The packages the command links allocate about 3 MB while they initialise (arrow
// registers its compute kernels, pg_query and the AWS SDK build their tables), close
// to the runtime's first collection goal of 4 MB; with iceberg-go, which parsed its
// Avro schemas there, they took 4.5 MB, so every process, even one answering from
// statistics in a millisecond, ran a collection during init, stopping the world
// while it did.
// The engine runs the collector at a target of 400 anyway (lore.Options.GCPercent,
// set by lore.Open); this package sets that target before the allocations, and
// Restore puts the previous one back for commands that open no engine.
//
// Go initialises a package as soon as its dependencies are, taking the ready
// packages in import path order; this one depends on runtime/debug alone, so it
// runs before the packages whose allocations it is for. GOGC in the environment
// decides instead, as it does for the engine.
package startup

import (
	"os"
	"runtime/debug"
)

// initPercent is the collector's target while the command starts: the engine's
// default (lore.Options.GCPercent).
const initPercent = 400

// previous is the target before init changed it; -2 when init left it alone.
var previous = -2

func init() {
	if os.Getenv("GOGC") == "" {
		previous = debug.SetGCPercent(initPercent)
	}
}

// Restore sets the collector's target back to what it was before the package's
// init, for a command that opens no engine (which would set its own).
func Restore() {
	if previous != -2 {
		debug.SetGCPercent(previous)
	}
}
