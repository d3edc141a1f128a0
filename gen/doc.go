// Package gen writes synthetic lake tables for tests, demos and benchmarks.
//
// Invariants:
//   - Output is a pure function of the options: the same options (seed included)
//     produce byte-identical files, however many files are written in parallel. Each
//     file draws from its own random stream seeded from (seed, file index), and rows
//     are drawn in row order, so neither the worker count nor the batch size changes
//     a value.
//   - A file is never visible half-written: files are staged and renamed into place
//     (see parquet.WriteFile).
//   - Generators draw from realistic, skewed distributions (Zipf-like keys and
//     categories, log-normal amounts, a few NULLs) so that statistics, sketches and
//     pruning have something to find.
//
// TPCH writes the eight TPC-H tables following the specification's row counts,
// keys and value domains (not the reference generator's bytes). Its rows depend
// only on the scale factor and seed: every row draws from its own random stream,
// seeded from (seed, table, row number), so the split into files changes nothing.
package gen
