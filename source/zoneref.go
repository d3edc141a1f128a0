package source

import (
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/wire"
)

// TableRef names one version of a table for a process that has no catalog: how to
// read the table's source again (format, location, the lake version to travel to,
// the store's address) and the version it must find there. It carries no credential:
// a reader takes those from its own environment.
type TableRef struct {
	Format   string // "parquet", "delta" or "iceberg"
	Location string
	// Metadata is the Iceberg metadata file the version was read from (a table in a
	// catalog is read from it, the catalog being the planner's alone); "" otherwise.
	Metadata string
	// At is the lake version to read: the Delta version or the Iceberg snapshot. A
	// Parquet location has no other version than its latest.
	At AsOf
	// Version is the version the planner read: a reader that finds another fails
	// with SOURCE_CHANGED.
	Version Version
	// The S3-compatible store holding the table, when not AWS's defaults (see
	// storage/s3.Config).
	S3Endpoint  string
	S3Region    string
	S3AllowHTTP bool
	S3PathStyle *bool
}

// ZoneRef is one zone of a table's version for a process other than the one that
// planned it (a distributed run's worker): where it is, and what the file it is in
// must still be. A reader that finds the file changed fails rather than read another
// version of it.
type ZoneRef struct {
	Table    TableRef
	Path     string // the file
	Size     int64  // its size
	Marker   string // its change marker with its deletes' identity (FileRef.Marker)
	RowGroup int
	Zone     int      // the zone's index in the planner's record
	Columns  []string // the table columns to read; empty: every one
}

// zoneRefVersion is the version of the byte form below.
const zoneRefVersion = 1

var zoneRefForm = wire.Form{Magic: [3]byte{'L', 'Z', 'D'}, Version: zoneRefVersion, What: "a zone descriptor"}

// The byte form, lengths as uvarints, integers little-endian:
//
//	"LZD" zoneRefVersion                                   four bytes
//	format, location, metadata                             length-prefixed text each
//	at: has version (byte), version (8), metadata version, name format
//	version: identity, kind (text), files (uvarint), number, snapshot id (8 each)
//	S3 endpoint, region (text), allow HTTP (byte), path style (byte: 0 unset, 1 no, 2 yes)
//	path (text), size (8), marker (bytes), row group, zone (uvarint each)
//	columns: count (uvarint), then each name

// MarshalBinary returns the zone's byte form.
func (z *ZoneRef) MarshalBinary() ([]byte, error) {
	t := &z.Table
	if !t.At.Time.IsZero() {
		return nil, errs.New(errs.Internal, "BUG: a zone descriptor of a version named by time")
	}
	w := zoneRefForm.Writer()
	for _, s := range []string{t.Format, t.Location, t.Metadata} {
		w.Bytes([]byte(s))
	}
	w.Bool(t.At.HasVersion)
	w.I64(t.At.Version)
	w.Bytes([]byte(t.At.Metadata))
	w.Bytes([]byte(t.At.NameFormat))
	w.Bytes([]byte(t.Version.IdentitySHA256))
	w.Bytes([]byte(t.Version.Kind))
	w.Uvarint(uint64(t.Version.Files))
	w.I64(t.Version.Number)
	w.I64(t.Version.SnapshotID)
	w.Bytes([]byte(t.S3Endpoint))
	w.Bytes([]byte(t.S3Region))
	w.Bool(t.S3AllowHTTP)
	switch {
	case t.S3PathStyle == nil:
		w.B = append(w.B, 0)
	case !*t.S3PathStyle:
		w.B = append(w.B, 1)
	default:
		w.B = append(w.B, 2)
	}
	w.Bytes([]byte(z.Path))
	w.I64(z.Size)
	w.Bytes([]byte(z.Marker))
	w.Uvarint(uint64(z.RowGroup))
	w.Uvarint(uint64(z.Zone))
	w.Uvarint(uint64(len(z.Columns)))
	for _, c := range z.Columns {
		w.Bytes([]byte(c))
	}
	return w.B, nil
}

// UnmarshalZoneRef reads a zone's byte form. Bytes of another version, truncated, or
// with bytes left over are refused with CORRUPT_SOURCE.
func UnmarshalZoneRef(b []byte) (*ZoneRef, error) {
	r, err := zoneRefForm.Reader(b)
	if err != nil {
		return nil, err
	}
	text := func() string { return string(r.Bytes()) }
	z := &ZoneRef{}
	t := &z.Table
	t.Format, t.Location, t.Metadata = text(), text(), text()
	t.At.HasVersion = r.Bool()
	t.At.Version = r.I64()
	t.At.Metadata, t.At.NameFormat = text(), text()
	t.Version.IdentitySHA256, t.Version.Kind = text(), text()
	t.Version.Files = int(r.Uvarint())
	t.Version.Number, t.Version.SnapshotID = r.I64(), r.I64()
	t.S3Endpoint, t.S3Region = text(), text()
	t.S3AllowHTTP = r.Bool()
	var style byte
	if len(r.B) > 0 {
		style, r.B = r.B[0], r.B[1:]
	} else {
		r.Fail("it ends before its path style")
	}
	switch style {
	case 0:
	case 1, 2:
		v := style == 2
		t.S3PathStyle = &v
	default:
		r.Fail("a path style of %d", style)
	}
	z.Path = text()
	z.Size = r.I64()
	z.Marker = text()
	z.RowGroup, z.Zone = int(r.Uvarint()), int(r.Uvarint())
	z.Columns = make([]string, r.Count(1))
	for i := range z.Columns {
		z.Columns[i] = text()
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	if z.RowGroup < 0 || z.Zone < 0 || z.Size < 0 || t.Version.Files < 0 {
		return nil, errs.New(errs.CorruptSource, "cannot read a zone descriptor: a count out of range")
	}
	return z, nil
}
