package iceberg

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
)

// maxMetadata bounds a metadata file, compressed or not.
const maxMetadata = 256 << 20

// Open reads the Iceberg table at location as of at. location is a metadata file
// (vN.metadata.json, NNNNN-uuid.metadata.json, gzip-compressed ones included), or the
// table's directory, whose metadata/version-hint.text names the version to read, else
// whose newest metadata file by version number is read. The snapshot is the current
// one, the one whose id at.Version gives, or the newest committed at or before at.Time;
// a table without one is an empty listing of its schema. Listings are cached by the
// metadata file, its change marker and the snapshot, so that a statement that finds
// the metadata unchanged reads no manifest.
//
// Invalid metadata, manifests or delete files are errs.CorruptSource errors naming the
// file; a missing table is errs.SourceUnavailable; a snapshot that does not exist is
// errs.Analysis.
func Open(ctx context.Context, store storage.Store, location string, at source.AsOf) (l *source.Listing, err error) {
	var mdInfo storage.ObjectInfo
	var dir string
	if at.Metadata != "" {
		mdInfo, dir, err = locateVersion(ctx, store, location, at.Metadata, at.NameFormat)
		at.Metadata, at.NameFormat = "", ""
	} else {
		mdInfo, dir, err = locate(ctx, store, location)
	}
	if err != nil {
		return nil, err
	}
	return open(ctx, store, location, mdInfo, dir, at)
}

// defaultNameFormat are the names a metadata version's file may have: v3.metadata.json
// as Hadoop tables name them, 00003-<uuid>.metadata.json given whole, each possibly
// gzip-compressed (.gz before .metadata.json).
const defaultNameFormat = "v%s%s.metadata.json,%s%s.metadata.json"

// locateVersion finds the metadata file of the table in directory location whose
// name carries version, by the comma-separated name formats (defaultNameFormat when
// empty): the first %s is the version, the second the compression's suffix ("" or
// ".gz").
func locateVersion(ctx context.Context, store storage.Store, location, version, formats string) (storage.ObjectInfo, string, error) {
	loc := strings.TrimSuffix(location, "/")
	if formats == "" {
		formats = defaultNameFormat
	}
	var tried []string
	for _, f := range strings.Split(formats, ",") {
		f = strings.TrimSpace(f)
		if err := source.CheckNameFormat(f); err != nil {
			return storage.ObjectInfo{}, "", err
		}
		for _, suffix := range []string{"", ".gz"} {
			name := fmt.Sprintf(f, version, suffix)
			if strings.Contains(name, "/") {
				return storage.ObjectInfo{}, "", errs.New(errs.Analysis, "Iceberg metadata version %q names no file in the metadata directory", version)
			}
			p := loc + "/metadata/" + name
			tried = append(tried, name)
			o, err := store.Stat(ctx, p)
			if err == nil {
				return o, loc, nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return o, "", err
			}
		}
	}
	return storage.ObjectInfo{}, "", errs.New(errs.Analysis, "Iceberg table %q has no metadata version %q (no %s in %s/metadata)", location, version, strings.Join(tried, ", "), loc)
}

// Pointer returns the metadata file a catalog currently names for a table (its
// metadata_location), as the catalog holds it: a path, a URI or a relative path.
type Pointer func(ctx context.Context) (metadataLocation string, err error)

// OpenPointer reads the Iceberg table whose current metadata file pointer names, as
// of at: a table in a catalog, which commits by swapping that pointer. The pointer is
// asked each time, so that the next statement after a commit reads the new snapshot;
// the source version's identity covers it, being the metadata file's path. A relative
// metadata location is taken relative to base (the catalog file's directory) as the
// paths of a table found in a directory are: where its leading segments overlap
// base's trailing ones, else under base. location names the table in errors.
func OpenPointer(ctx context.Context, store storage.Store, location, base string, pointer Pointer, at source.AsOf) (*source.Listing, error) {
	if at.Metadata != "" {
		return nil, errs.New(errs.Analysis, "Iceberg table %q is in a catalog, which names its metadata file: it has no metadata version to choose", location)
	}
	md, err := pointer(ctx)
	if err != nil {
		return nil, err
	}
	mdPath := newResolver(base, "").resolve(md)
	mdInfo, err := store.Stat(ctx, mdPath)
	if err != nil {
		code := errs.CodeOf(err)
		if code == errs.Internal {
			code = errs.SourceUnavailable
		}
		return nil, errs.New(code, "Iceberg table %q: the metadata file its catalog names cannot be read: %w", location, err)
	}
	dir := storage.Dir(mdPath)
	if path.Base(dir) == "metadata" {
		dir = storage.Dir(dir)
	}
	return open(ctx, store, location, mdInfo, dir, at)
}

// MetadataFile is the metadata file Open reads for location now.
func MetadataFile(ctx context.Context, store storage.Store, location string) (string, error) {
	o, _, err := locate(ctx, store, location)
	return o.Path, err
}

// open reads the table whose metadata file is mdInfo, in directory dir.
func open(ctx context.Context, store storage.Store, location string, mdInfo storage.ObjectInfo, dir string, at source.AsOf) (l *source.Listing, err error) {
	defer func() {
		// Hostile metadata must never crash a statement: should a reader of it
		// still panic, the table is corrupt.
		if r := recover(); r != nil {
			l, err = nil, errs.New(errs.CorruptSource, "Iceberg table %q cannot be read: %v", location, r)
		}
	}()
	marker, markerErr := source.ChangeMarker(mdInfo)
	mdKey := fmt.Sprintf("%s\x00%d\x00%s", mdInfo.Path, mdInfo.Size, marker)
	pm, _ := parsed.Get(mdKey)
	raw, md := pm.raw, pm.md
	if md == nil {
		if raw, err = readMetadata(ctx, store, mdInfo); err != nil {
			return nil, err
		}
		if md, err = parseMetadata(mdInfo.Path, raw); err != nil {
			return nil, err
		}
		if markerErr == nil && len(raw) <= cachedMetadataBytes {
			parsed.Put(mdKey, parsedMetadata{raw: raw, md: md})
		}
	}
	snap, err := choose(md, at, location)
	if err != nil {
		return nil, err
	}
	var snapID int64
	if snap != nil {
		snapID = snap.id()
	}
	key := fmt.Sprintf("%s\x00%d\x00%s\x00%d\x00%t", mdInfo.Path, mdInfo.Size, marker, snapID, at.Latest())
	if l, ok := snapshots.Get(key); ok {
		return l, nil
	}
	b := &builder{ctx: ctx, store: store, location: location, metaPath: mdInfo.Path, md: md, raw: raw, snap: snap, latest: at.Latest()}
	b.paths = newResolver(dir, md.Location)
	b.obj = &objects{ctx: ctx, store: store, paths: b.paths}
	if l, err = b.build(); err != nil {
		return nil, err
	}
	h := sha256.New()
	source.DigestField(h, []byte(mdInfo.Path))
	source.DigestField(h, []byte(marker))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(snapID))
	source.DigestField(h, n[:])
	l.Lake.Identity = h.Sum(nil)
	l.Lake.Metadata = mdInfo.Path
	snapshots.Put(key, l)
	return l, nil
}

// metadataName matches the names writers give metadata files, capturing the version:
// v12.metadata.json, v12.gz.metadata.json, 00012-<uuid>.metadata.json, and any of
// them with .gz after. It is compiled on first use, not when a process starts.
var metadataName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:v(\d+)|(\d+)-[^/]*?)(?:\.gz)?\.metadata\.json(?:\.gz)?$`)
})

// isMetadataFile reports a name that is an Iceberg metadata file.
func isMetadataFile(name string) bool {
	return strings.HasSuffix(name, ".metadata.json") || strings.HasSuffix(name, ".metadata.json.gz")
}

// NamesMetadata reports whether location names an Iceberg metadata file itself.
func NamesMetadata(location string) bool {
	return isMetadataFile(path.Base(strings.TrimSuffix(location, "/")))
}

// IsTable reports whether location names an Iceberg table: a metadata file, or a
// directory whose metadata/ folder holds a metadata file or a version hint. It lists
// nothing beyond that folder.
func IsTable(ctx context.Context, store storage.Store, location string) bool {
	loc := strings.TrimSuffix(location, "/")
	if strings.ContainsAny(loc, "*?[") {
		return false
	}
	if isMetadataFile(path.Base(loc)) {
		return true
	}
	// One listing of the folder shows both (an object store answers it in one
	// request, where asking for the hint first would be another).
	all, err := store.List(ctx, loc+"/metadata")
	if err != nil {
		return false
	}
	for _, o := range all {
		name := path.Base(o.Path)
		if storage.Dir(o.Path) == storage.Clean(loc+"/metadata") && (isMetadataFile(name) || name == "version-hint.text") {
			return true
		}
	}
	return false
}

// locate finds the metadata file of location and the directory the table is in: the
// file named, or in a table directory the version its hint names, else the highest
// version number among the metadata files' names, else (no name carries one) the
// metadata file modified last.
func locate(ctx context.Context, store storage.Store, location string) (storage.ObjectInfo, string, error) {
	loc := strings.TrimSuffix(location, "/")
	if loc == "" {
		loc = location
	}
	tableDir := func(file string) string {
		d := storage.Dir(file)
		if path.Base(d) == "metadata" {
			return storage.Dir(d)
		}
		return d
	}
	if isMetadataFile(path.Base(loc)) || strings.HasSuffix(loc, ".json") {
		o, err := store.Stat(ctx, loc)
		if err != nil {
			return o, "", err
		}
		return o, tableDir(loc), nil
	}
	mdir := loc + "/metadata"
	all, err := store.List(ctx, mdir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return storage.ObjectInfo{}, "", err
	}
	var files []storage.ObjectInfo
	for _, o := range all {
		if storage.Dir(o.Path) == storage.Clean(mdir) {
			files = append(files, o)
		}
	}
	byName := func(name string) (storage.ObjectInfo, bool) {
		for _, o := range files {
			if path.Base(o.Path) == name {
				return o, true
			}
		}
		return storage.ObjectInfo{}, false
	}
	if hint, ok := byName("version-hint.text"); ok {
		b, err := readSmall(ctx, store, hint, 1<<10)
		if err != nil {
			return storage.ObjectInfo{}, "", err
		}
		h := strings.TrimSpace(string(b))
		if n, err := strconv.ParseInt(h, 10, 64); err == nil {
			for _, o := range files {
				if v, ok := versionOf(path.Base(o.Path)); ok && v == n {
					return o, loc, nil
				}
			}
		}
		for _, name := range []string{h, h + ".metadata.json", "v" + h + ".metadata.json", h + ".gz.metadata.json"} {
			if o, ok := byName(name); ok && h != "" {
				return o, loc, nil
			}
		}
		return storage.ObjectInfo{}, "", errs.New(errs.CorruptSource, "Iceberg table %q: %s names version %q, which has no metadata file", location, hint.Path, h)
	}
	best, bestV := storage.ObjectInfo{}, int64(-1)
	for _, o := range files {
		if v, ok := versionOf(path.Base(o.Path)); ok && v > bestV {
			best, bestV = o, v
		}
	}
	if bestV < 0 {
		// Metadata files without a version in their names (vfinal.metadata.json):
		// the one written last.
		for _, o := range files {
			if isMetadataFile(path.Base(o.Path)) && (bestV < 0 || o.ModTime.After(best.ModTime)) {
				best, bestV = o, 0
			}
		}
	}
	if bestV < 0 {
		if len(all) == 0 {
			// Perhaps a metadata file by another name.
			if o, err := store.Stat(ctx, loc); err == nil {
				return o, tableDir(loc), nil
			}
		}
		return storage.ObjectInfo{}, "", errs.New(errs.SourceUnavailable, "no Iceberg table at %q: %s has no metadata file: %w", location, mdir, fs.ErrNotExist)
	}
	return best, loc, nil
}

// versionOf is the version number a metadata file's name carries.
func versionOf(name string) (int64, bool) {
	m := metadataName().FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	s := m[1]
	if s == "" {
		s = m[2]
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

func readSmall(ctx context.Context, store storage.Store, o storage.ObjectInfo, limit int64) ([]byte, error) {
	r, err := storage.OpenInfo(ctx, store, o)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.Size() > limit {
		return nil, corrupt(o.Path, "%d bytes is too large", r.Size())
	}
	b := make([]byte, r.Size())
	if _, err := r.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, errs.New(errs.SourceUnavailable, "cannot read %q: %w", o.Path, err)
	}
	return b, nil
}

// readMetadata reads a metadata file, decompressing it when it is gzip (by its
// magic, whatever its name says).
func readMetadata(ctx context.Context, store storage.Store, o storage.ObjectInfo) ([]byte, error) {
	b, err := readSmall(ctx, store, o, maxMetadata)
	if err != nil {
		return nil, err
	}
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, corrupt(o.Path, "bad gzip stream: %v", err)
		}
		out, err := io.ReadAll(io.LimitReader(zr, maxMetadata+1))
		if err != nil {
			return nil, corrupt(o.Path, "bad gzip stream: %v", err)
		}
		if len(out) > maxMetadata {
			return nil, corrupt(o.Path, "decompresses to more than %d bytes", maxMetadata)
		}
		b = out
	}
	return b, nil
}

// parseMetadata parses a metadata file; an invalid one is an errs.CorruptSource error
// naming it.
func parseMetadata(name string, b []byte) (*metadata, error) {
	md, err := parseMetadataJSON(b)
	if err != nil {
		return nil, corrupt(name, "%v", err)
	}
	return md, nil
}

// choose picks the snapshot at asks for; nil when the table has none.
func choose(md *metadata, at source.AsOf, location string) (*snapshot, error) {
	switch {
	case at.HasVersion:
		s := md.snapshotByID(at.Version)
		if s == nil {
			return nil, errs.New(errs.Analysis, "Iceberg table %q has no snapshot %d", location, at.Version)
		}
		return s, nil
	case !at.Time.IsZero():
		ms := at.Time.UnixMilli()
		var best *snapshot
		for i := range md.Snapshots {
			s := &md.Snapshots[i]
			if *s.TimestampMs > ms {
				continue
			}
			if best == nil || *s.TimestampMs > *best.TimestampMs || (*s.TimestampMs == *best.TimestampMs && s.Sequence > best.Sequence) {
				best = s
			}
		}
		if best == nil {
			return nil, errs.New(errs.Analysis, "Iceberg table %q has no snapshot committed at or before %s", location, at.Time.UTC().Format(time.RFC3339Nano))
		}
		return best, nil
	}
	if id := md.currentSnapshotID(); id != nil {
		return md.snapshotByID(*id), nil
	}
	return nil, nil
}

// corrupt is the error of a metadata, manifest or delete file that is not what the
// format says, naming it.
func corrupt(file string, format string, args ...any) error {
	return errs.New(errs.CorruptSource, "Iceberg file %q: %s", file, fmt.Sprintf(format, args...))
}

// snapshots are the snapshots read last.
var snapshots = source.NewSnapshotCache(64)

// parsed keeps the metadata files parsed last, by path, size and change marker: a
// statement that finds the metadata file unchanged neither reads nor parses it again
// (a table's JSON grows with its snapshots). Parsed metadata is never modified, so
// statements share it. Files above cachedMetadataBytes are not kept.
var parsed = source.NewCache[parsedMetadata](16)

type parsedMetadata struct {
	raw []byte
	md  *metadata
}

const cachedMetadataBytes = 4 << 20

// DropCachedSnapshots empties the snapshot and metadata caches (tests, benchmarks of
// cold reads).
func DropCachedSnapshots() {
	snapshots.Drop()
	parsed.Drop()
}

// sortFiles sorts a listing's files by path.
func sortFiles(files []source.FileRef) {
	sort.SliceStable(files, func(i, j int) bool { return files[i].Info.Path < files[j].Info.Path })
}
