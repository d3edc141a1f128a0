// Package iceberg reads Apache Iceberg tables into source listings: the metadata file
// of a table (named, or the newest in its metadata directory), one of its snapshots,
// and through the manifest list and manifests the snapshot's live data files with
// what the manifests state of them (rows, bounds, null counts, identity partition
// values), their position deletes, deletion vectors and equality deletes, and how
// each file names the table's columns (field ids, the name mapping, defaults).
//
// Everything is read by this package's own code, after the format's specification:
// the metadata file's JSON (metadata.go; schemas and types in types.go, partition
// specs and transforms in spec.go), and the manifest lists and manifests, Avro object
// container files, through a generic Avro reader (avro.go) whose records the
// decoders (manifestlist.go, manifest.go) take by the spec's field names. That reads
// v1 and v2 lists and manifests, data and delete manifests, and writers that wrap
// records and fields in nullable unions (BigQuery) alike. Every byte comes through
// Lore's storage.Store (fileio.go). What leaves the package is a *source.Listing;
// hostile bytes (corrupt Avro, wrong types, huge counts, deep nesting) are an
// errs.CorruptSource error naming the file, never a panic or a hang.
//
// Paths in Iceberg metadata are absolute URIs in the normal case, but tables are
// copied and moved, and some writers leave them relative. One rule maps them onto
// where the table was found (resolver): paths under the table's declared location
// are moved under the directory the table was opened from, and relative paths are
// taken relative to the directory the declared location is relative to.
package iceberg
