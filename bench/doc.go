// Command bench measures Lore against DuckDB on the same Parquet files in one
// process: every query runs through Lore (in-process, a throwaway home) and through
// an in-memory DuckDB, once to warm up and then for a number of rounds, one engine's
// rounds after the other's (see measure for why not alternately).
// It reports median wall times, their ratio, whether both engines returned the same
// rows, and each engine's peak memory.
//
// Invariants:
//   - Both engines read the very same files: the harness lists each table's files
//     once and hands DuckDB that list, while Lore reads the directory.
//   - Results are compared from the warm-up run, rendered to text the way Lore
//     renders values (DuckDB's text forms); floats and decimals are equal within a
//     relative 1e-9. A query with ORDER BY is compared as a sequence of its sort
//     keys; rows whose keys tie are compared as a multiset, and under LIMIT the last
//     tie group only by its keys, since either engine may pick any of the tied rows.
//   - A failing or timed-out query is a result, not a crash: the run continues.
//
// DuckDB is linked into this module only; the lore module never imports it.
package main
