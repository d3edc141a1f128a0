package source

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
)

// Version kinds (SPEC §3).
const (
	KindFile    = "file"
	KindListing = "listing"
	KindDelta   = "delta_version"
	KindIceberg = "iceberg_snapshot"
)

// AsOf chooses the version of a lake table a statement reads: the latest (the zero
// value), a version (a Delta version number, an Iceberg snapshot id), or the newest
// one committed at or before a time; for an Iceberg table in a directory, of the
// metadata file a metadata version names rather than the newest.
type AsOf struct {
	Version    int64
	HasVersion bool
	Time       time.Time
	// Metadata is an Iceberg metadata version: the name, or the number, its file's
	// name carries (v3.metadata.json, 00002-….metadata.json). NameFormat lists the
	// file names it may have, comma-separated, the first %s the version and the
	// second the compression's suffix (DuckDB's version_name_format); empty for
	// the usual ones.
	Metadata   string
	NameFormat string
}

// CheckNameFormat refuses a metadata file name format (one of AsOf.NameFormat's) that
// does not hold %s twice, the version then the compression's suffix, and nothing else
// a format would expand.
func CheckNameFormat(f string) error {
	if n := strings.Count(f, "%s"); n != 2 || strings.Contains(strings.ReplaceAll(f, "%s", ""), "%") {
		return errs.New(errs.Analysis, "version_name_format %q: a format holds %%s twice (the version, then the compression's suffix), and no other %%", f)
	}
	return nil
}

// Latest reports whether a reads the latest version.
func (a AsOf) Latest() bool { return !a.HasVersion && a.Time.IsZero() && a.Metadata == "" }

// Version identifies the exact state of a source that a statement reads and a
// statistics record describes. Two versions are the same source state exactly when
// their identity digests are equal.
type Version struct {
	IdentitySHA256 string `json:"identity_sha256"`
	Kind           string `json:"kind"`
	Files          int    `json:"files,omitempty"`       // listing: how many files
	Number         int64  `json:"version,omitempty"`     // delta_version: the table version
	SnapshotID     int64  `json:"snapshot_id,omitempty"` // iceberg_snapshot: the snapshot id
}

// Label names the version for people: the kind and the digest's first twelve hex
// characters, as in "listing of 3 files (9b1f2c0a4d7e)".
func (v Version) Label() string {
	short := v.IdentitySHA256
	if len(short) > 12 {
		short = short[:12]
	}
	switch v.Kind {
	case KindListing:
		unit := "files"
		if v.Files == 1 {
			unit = "file"
		}
		return fmt.Sprintf("listing of %d %s (%s)", v.Files, unit, short)
	case KindDelta:
		return fmt.Sprintf("delta v%d (%s)", v.Number, short)
	case KindIceberg:
		return fmt.Sprintf("iceberg snapshot %d (%s)", v.SnapshotID, short)
	default:
		return fmt.Sprintf("%s (%s)", v.Kind, short)
	}
}

// Same reports whether v and w identify the same source state.
func (v Version) Same(w Version) bool {
	return v.IdentitySHA256 != "" && v.IdentitySHA256 == w.IdentitySHA256 && v.Kind == w.Kind
}

// Version computes the listing's version from what listing it returned: no footer
// is read. A single named file digests its size and change marker; a glob or
// directory digests every file's path, size and change marker, in path order. The
// change marker is the object's version or ETag on object storage (a file with
// neither is refused: its changes could not be seen) and on local disk the
// modification time, inode change time and inode (ChangeMarker).
func (l *Listing) Version() (Version, error) {
	if lk := l.Lake; lk != nil {
		if len(l.Files) == 0 {
			return l.lakeVersion(), nil
		}
		lk.once.Do(func() { lk.version, lk.files, lk.count = l.lakeVersion(), &l.Files[0], len(l.Files) })
		if lk.files != &l.Files[0] || lk.count != len(l.Files) {
			return l.lakeVersion(), nil // a listing of some of the files
		}
		return lk.version, nil
	}
	if d := l.digest; d != nil && len(l.Files) == d.count && d.count > 0 && &l.Files[0] == d.of {
		return d.v, nil
	}
	h := sha256.New()
	kind := KindListing
	if l.Single {
		kind = KindFile
	}
	writeField(h, []byte(kind))
	for _, f := range l.Files {
		if !l.Single {
			writeField(h, []byte(f.Info.Path))
		}
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(f.Info.Size))
		writeField(h, n[:])
		marker, err := ChangeMarker(f.Info)
		if err != nil {
			return Version{}, err
		}
		writeField(h, []byte(marker))
	}
	v := Version{IdentitySHA256: hex.EncodeToString(h.Sum(nil)), Kind: kind}
	if !l.Single {
		v.Files = len(l.Files)
	}
	return v, nil
}

// lakeVersion is a lake table's version: its kind, the reader's identity of the
// snapshot and the files read, each with its size and deletes.
func (l *Listing) lakeVersion() Version {
	h := sha256.New()
	writeField(h, []byte(l.Lake.Kind))
	writeField(h, l.Lake.Identity)
	var n [16]byte
	for _, f := range l.Files {
		writeField(h, []byte(f.Info.Path))
		binary.BigEndian.PutUint64(n[:8], uint64(f.Info.Size))
		var deleted int64
		if f.Deleted != nil {
			deleted = f.Deleted.Len()
		}
		binary.BigEndian.PutUint64(n[8:], uint64(deleted))
		writeField(h, n[:])
		writeField(h, []byte(f.DeletesID))
	}
	v := Version{IdentitySHA256: hex.EncodeToString(h.Sum(nil)), Kind: l.Lake.Kind}
	switch l.Lake.Kind {
	case KindDelta:
		v.Number = l.Lake.Version
	case KindIceberg:
		v.SnapshotID = l.Lake.SnapshotID
	}
	return v
}

// ChangeMarker is what changes when an object is rewritten: its version or ETag on
// object storage ("v:…", "e:…"); on local disk its modification time, inode change
// time, device and inode number ("l:" and four 8-byte big-endian words, the times in
// Unix nanoseconds), since a modification time alone can be restored after a rewrite
// (cp -p, rsync -t, touch -d) and the other three cannot be set by a user; else, where
// the platform reports no inode, the modification time alone ("m:" and 8 bytes). An
// object with none of them is refused. docs/format/statistics.md says what a marker
// can and cannot detect.
func ChangeMarker(o storage.ObjectInfo) (string, error) {
	switch {
	case o.Version != "":
		return "v:" + o.Version, nil
	case o.ETag != "":
		return "e:" + o.ETag, nil
	case storage.Scheme(o.Path) != "":
		return "", errs.New(errs.SourceUnavailable, "object %q has no ETag or version; its changes cannot be tracked", o.Path)
	case o.ModTime.IsZero():
		return "", errs.New(errs.SourceUnavailable, "file %q has no version, ETag or modification time; its changes cannot be tracked", o.Path)
	case o.Inode != 0 || !o.ChangeTime.IsZero():
		var n [32]byte
		binary.BigEndian.PutUint64(n[0:], uint64(o.ModTime.UnixNano()))
		binary.BigEndian.PutUint64(n[8:], uint64(unixNano(o.ChangeTime)))
		binary.BigEndian.PutUint64(n[16:], o.Device)
		binary.BigEndian.PutUint64(n[24:], o.Inode)
		return "l:" + string(n[:]), nil
	}
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(o.ModTime.UnixNano()))
	return "m:" + string(n[:]), nil
}

// unixNano is t in Unix nanoseconds, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// writeField writes b length-prefixed, so that no two sequences of fields digest alike.
func writeField(h interface{ Write([]byte) (int, error) }, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}
