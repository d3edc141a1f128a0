// Package iceberg reads Apache Iceberg tables into source listings: the metadata file
// of a table (named, or the newest in its metadata directory), one of its snapshots,
// and through the manifest list and manifests the snapshot's live data files with
// what the manifests state of them (rows, bounds, null counts, identity partition
// values), their position deletes, deletion vectors and equality deletes, and how
// each file names the table's columns (field ids, the name mapping, defaults).
//
// iceberg-go (its root package only) parses the schemas, partition specs, manifest
// lists and manifests; every byte it reads comes through Lore's storage.Store
// (fileIO). Manifests and lists whose writers strayed from what its typed decoder
// resolves (BigQuery's union-wrapped records, ids beyond a long) are read by a
// generic Avro reader of Lore's (avro.go) by field name. iceberg-go is confined to
// this package: what leaves it is a *source.Listing, and a panic inside it on hostile
// bytes is an errs.CorruptSource error.
//
// Paths in Iceberg metadata are absolute URIs in the normal case, but tables are
// copied and moved, and some writers leave them relative. One rule maps them onto
// where the table was found (resolver): paths under the table's declared location
// are moved under the directory the table was opened from, and relative paths are
// taken relative to the directory the declared location is relative to.
package iceberg
