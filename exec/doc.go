// Package exec runs logical plans: it builds physical operators from plan nodes and
// pulls columnar batches through them.
//
// Operators are pulled by the root (Next returns nil at the end). A scan with the
// filters and projections above it forms a pipeline whose morsels (row groups) run on
// all workers; a hash aggregate over a pipeline keeps one partial state per worker and
// merges them with the aggregates' own Merge — the same merge that combines stored
// partials (DESIGN.md §3). Every operator honours its context, and operators that
// hold rows reserve memory from the statement's Budget, failing with
// RESOURCE_EXHAUSTED instead of exhausting the process.
//
// Invariants: a batch's columns that a plan's column pruning marked unneeded are nil
// and are never read; expressions evaluate over every physical row of a batch and
// filters narrow the selection.
package exec
