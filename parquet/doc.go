// Package parquet is Lore's Parquet layer, the only package that imports the Parquet
// library (arrow-go). It opens a file's footer, maps its schema to Lore's types, turns
// row-group statistics into typed bounds, and reads a row group's chosen columns into
// batches.
//
// Invariants:
//   - Malformed input never panics and never returns a bare library error: every failure
//     to understand a file is an errs.CorruptSource error naming the file (and the row
//     group when reading data). Panics inside the library are recovered and converted.
//   - Columns come out in Lore's normalised types, the same in Schema and in batches:
//     timestamps in seconds or milliseconds become microseconds (the time zone "UTC" is
//     kept when the Parquet type is adjusted to UTC, but not for the legacy
//     TIMESTAMP_MILLIS/MICROS annotations, which DuckDB also reads as plain timestamps),
//     nanoseconds stay nanoseconds; INT96 timestamps become microseconds without a time
//     zone (as DuckDB reads them; values beyond int64 microseconds are an error); date64
//     becomes date32; float16 becomes float32; large and view strings become string;
//     a 16-byte fixed-size binary with the UUID logical type becomes types.UUID and a
//     12-byte one with the INTERVAL converted type becomes a month-day-nanosecond
//     interval (it has no bounds: Parquet defines no order for it); other large, view
//     and fixed-size binary become binary; decimal256 with
//     precision at most 38 becomes decimal128 and wider decimals become double (as in
//     DuckDB). A flat string or binary column chunk that is dictionary-encoded
//     throughout arrives as an Arrow dictionary (int32 indexes) of the column's type;
//     every other column arrives as plain values. TIME stays TIME whether or not it is
//     adjusted to UTC. Nested columns (lists, structs, maps) pass through as the library
//     maps them, unnormalised.
//   - Batches come from the first of three read paths that takes a column chunk (Lore's
//     page decoder, the library's typed column readers, the library's Arrow reader; see
//     decode.go). They deliver the same types and values, and the arrays they return
//     own their buffers: nothing is recycled under an array the engine may keep.
//   - Bounds (ColumnStats) are typed exactly like the normalised column, never NaN, and
//     carry whether they are exact; a bound that is not exact still bounds (a truncated
//     minimum is below every value, a truncated maximum above).
package parquet
