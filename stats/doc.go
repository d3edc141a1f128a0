// Package stats holds the sketches behind Lore's statistics and approximate
// aggregates: a fixed hash of values (HashValue, HashColumn), a HyperLogLog sketch of
// distinct counts (HLL, p = 12) and a KLL sketch of quantiles (KLL, k = 200).
//
// APPROX_COUNT_DISTINCT and APPROX_PERCENTILE build these sketches over rows, and
// ANALYZE stores them in the statistics object; answers from either must agree, so
// everything that decides a sketch's contents is fixed and documented in
// docs/format/sketches.md:
//
//   - The hash is XXH3-64 with seed 0 over canonical bytes per type; it never changes
//     within a sketch format version, so sketches merge across files, runs and
//     versions.
//   - An HLL depends only on the set of hashes added: adding in any order, or merging
//     sketches of parts, gives byte-identical sketches.
//   - A KLL is deterministic: its coin flips come from a generator with a fixed seed
//     whose state travels with the sketch, so the same values in the same order (and
//     the same merges) give the same bytes. Different orders give different sketches,
//     each within the rank error.
//   - Both byte formats start with a version byte; a version this build does not know
//     is refused with errs.CorruptSource, never guessed at.
//
// Sketches are not safe for concurrent mutation; their query methods (Estimate,
// Quantile, Rank, MarshalBinary) only read and may run concurrently.
package stats
