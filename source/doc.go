// Package source holds Lore's table sources. A Parquet listing resolves a location (a
// file, a glob or a directory) to its files, their Hive partition values and one schema;
// Plan prunes files by partition values and row groups by footer statistics and returns
// morsels (row groups); Read turns a morsel into batches of the requested columns.
//
// Invariants:
//   - Pruning only skips work that cannot produce a row satisfying the conjunction of
//     the filters under SQL three-valued logic; the caller still filters every row.
//   - Hidden entries (a name starting with '.' or '_' below the location) are never part
//     of a listing; files are in path order, and partition columns follow the file
//     columns in the order their keys appear in the first file's path.
//   - Footers are cached process-wide by file identity (path, size, modification time,
//     ETag and version); a cached footer is only used for a file whose identity matches.
//   - Every listing's schema, whatever its format, is made by Listing.SetSchema, so its
//     column names are distinct without regard to case (as names bind); files are read
//     by their own names or field ids (ColumnSource), nested fields too.
//   - Every layer counts what it skipped and read into Counters, atomically, so Read
//     can run on many morsels at once.
package source
