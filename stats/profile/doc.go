// Package profile is the full read behind ANALYZE … WITH (sketches = true): it reads
// every column of a table once and upgrades a metadata-depth statistics record
// (stats.FromFooters) to depth full — exact bounds and null counts for every zone, file
// and the whole table, an exact SUM per zone of every numeric column, and per column a
// HyperLogLog sketch of its distinct values and a KLL sketch of its quantiles.
//
// Nothing here computes an aggregate of its own: MIN, MAX, COUNT and SUM are the
// engine's accumulators (package agg) and the sketches are the states of
// APPROX_COUNT_DISTINCT and APPROX_PERCENTILE (package stats), so what the record
// says and what a scan computes are the same code.
//
// Invariants:
//
//   - A zone (row group) is read by exactly one worker from its first row to its last,
//     so its partials are final when its read ends; they need no merging, and a failure
//     in one zone (a SUM past BIGINT) touches no other.
//   - The sketches of each zone are folded into the table's sketches in zone order,
//     whichever worker read them, so the record's bytes — KLL included, whose result
//     depends on the order of its input — do not depend on the number of threads or on
//     scheduling.
//   - Files and the table are merges of their zones' exact partials; a float zone that
//     holds NaN has no bounds (NaN is never a bound) and so neither has its file nor
//     the table, which say HasNaN instead.
//   - The record is changed only when the whole read succeeded; on any error (a
//     corrupt file, a canceled context, the memory limit) it is left as it was.
package profile
