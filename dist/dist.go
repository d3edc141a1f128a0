// Package dist is Lore's side of running work on many machines: what the planning
// process (the coordinator) hands to the processes that read (workers), what
// workers hand back, and the reading itself. It links neither the SQL parser nor any
// distributed engine, and builds without cgo, so that a runner (dist/beam) can ship
// it to workers of any platform.
//
// A distributed full ANALYZE: the coordinator resolves the table, reads its footers
// into a record and describes each zone (Jobs); workers read zones (ReadZone), each
// resolving the table again at the pinned version and refusing a file that is not
// the one described; the runner merges the column profiles by column and writes them
// and the zones' results (WriteResults); the coordinator reads them back
// (ReadResults), applies them to the record (profile.Apply), checks that the source
// has not moved and writes the record, as a local ANALYZE does.
//
// A distributed aggregate ships a plan fragment (MarshalFragment) that workers run
// over zones into partials (RunZone) merged by the runner (MergeForms); a
// distributed OPTIMIZE ships a sort (SortSpec) whose steps — SampleZone, Splitters,
// RouteZone, WriteRange — cut the rows into key ranges, each written by one worker.
package dist

import (
	"context"
	"slices"
	"sync"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/source/delta"
	"github.com/loredb/lore/source/iceberg"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/stats/profile"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/storage/s3"
)

// ZoneRefs describes every zone of rec — the record of listing l that
// stats.FromFooters built at table's version — for workers, in zone order.
func ZoneRefs(l *source.Listing, rec *stats.Record, table source.TableRef) ([]source.ZoneRef, error) {
	zones, err := profile.Zones(l, rec)
	if err != nil {
		return nil, err
	}
	ids := make([]plan.ZoneID, len(zones))
	for i, z := range zones {
		ids[i] = plan.ZoneID{File: z.File, RowGroup: z.RowGroup}
	}
	out, err := ZoneRefsOf(l, ids, table)
	for i, z := range zones {
		if err == nil {
			out[i].Zone = z.Index
		}
	}
	return out, err
}

// ZoneRefsOf describes the zones ids of listing l, read at table's version, for
// workers; each is numbered by its place in ids.
func ZoneRefsOf(l *source.Listing, ids []plan.ZoneID, table source.TableRef) ([]source.ZoneRef, error) {
	out := make([]source.ZoneRef, len(ids))
	markers := make([]string, len(l.Files))
	for i, z := range ids {
		if z.File < 0 || z.File >= len(l.Files) {
			return nil, errs.New(errs.Internal, "BUG: zone of file %d in a listing of %d", z.File, len(l.Files))
		}
		f := &l.Files[z.File]
		if markers[z.File] == "" {
			var err error
			if markers[z.File], err = marker(l, f); err != nil {
				return nil, err
			}
		}
		out[i] = source.ZoneRef{Table: table, Path: f.Info.Path, Size: f.Info.Size, Marker: markers[z.File],
			RowGroup: z.RowGroup, Zone: i}
	}
	return out, nil
}

// opened is a table resolved by a worker, kept for the zones after the first.
type opened struct {
	once  sync.Once
	l     *source.Listing
	store storage.Store
	err   error
}

var (
	openMu sync.Mutex
	tables = map[string]*opened{}
)

// maxOpened bounds the tables a worker keeps resolved; past it, all are forgotten.
const maxOpened = 64

// Open resolves t again as a worker: its source at t's version, through a store
// addressed as t says. A source at any other version is SOURCE_CHANGED. Each table
// version is resolved once per process.
func Open(ctx context.Context, t source.TableRef) (*source.Listing, storage.Store, error) {
	key := refKey(t)
	openMu.Lock()
	o := tables[key]
	if o == nil {
		if len(tables) >= maxOpened {
			clear(tables)
		}
		o = &opened{}
		tables[key] = o
	}
	openMu.Unlock()
	o.once.Do(func() { o.l, o.store, o.err = resolve(ctx, t) })
	if o.err != nil {
		openMu.Lock()
		if tables[key] == o {
			delete(tables, key) // a failure is not kept: the next zone tries again
		}
		openMu.Unlock()
	}
	return o.l, o.store, o.err
}

func refKey(t source.TableRef) string {
	z := source.ZoneRef{Table: t}
	b, _ := z.MarshalBinary()
	return string(b)
}

func resolve(ctx context.Context, t source.TableRef) (*source.Listing, storage.Store, error) {
	store, err := Store(t)
	if err != nil {
		return nil, nil, err
	}
	var l *source.Listing
	switch t.Format {
	case "parquet":
		l, err = source.Resolve(ctx, store, t.Location)
	case "delta":
		l, err = delta.Open(ctx, store, t.Location, t.At)
	case "iceberg":
		loc := t.Location
		if t.Metadata != "" {
			loc = t.Metadata
		}
		l, err = iceberg.Open(ctx, store, loc, t.At)
	default:
		err = errs.New(errs.Analysis, "format %q cannot be read by this version of Lore", t.Format)
	}
	if err != nil {
		return nil, nil, err
	}
	v, err := l.Version()
	if err != nil {
		return nil, nil, err
	}
	if !v.Same(t.Version) {
		return nil, nil, errs.New(errs.SourceChanged, "the source of %q is at %s, not the %s the run was planned at", t.Location, v.Label(), t.Version.Label())
	}
	return l, store, nil
}

// Store is the store a worker reads t through: local disk, and S3 as t addresses it
// with credentials from the worker's environment.
func Store(t source.TableRef) (storage.Store, error) {
	cfg := s3.Config{Endpoint: t.S3Endpoint, Region: t.S3Region, AllowHTTP: t.S3AllowHTTP, PathStyle: t.S3PathStyle}
	remote, err := s3.New(cfg)
	if err != nil {
		return nil, errs.New(errs.InvalidSetting, "%w", err)
	}
	schemes := map[string]storage.Store{}
	for _, sc := range s3.Schemes {
		schemes[sc] = remote
	}
	return storage.NewRouter(storage.Local{}, schemes), nil
}

// ReadZone reads the zone z describes and returns what it learns of every table
// column (see readChecked for how the zone's file is held to its version).
func ReadZone(ctx context.Context, z *source.ZoneRef, opt profile.Options) (*profile.ZoneResult, error) {
	var res *profile.ZoneResult
	err := readChecked(ctx, z, func(l *source.Listing, store storage.Store, fi int) (err error) {
		res, err = profile.ReadZone(ctx, store, l, fi, z.RowGroup, opt)
		return err
	})
	return res, err
}

// readChecked calls read with the table z names, resolved at z's version (Open),
// and the index of z's file in it. A file that is not there, or whose size or
// change marker is not z's, is SOURCE_CHANGED: a worker never reads another version
// than the one planned.
func readChecked(ctx context.Context, z *source.ZoneRef, read func(l *source.Listing, store storage.Store, fi int) error) error {
	l, store, err := Open(ctx, z.Table)
	if err != nil {
		return err
	}
	fi, found := slices.BinarySearchFunc(l.Files, z.Path, func(f source.FileRef, p string) int {
		switch {
		case f.Info.Path < p:
			return -1
		case f.Info.Path > p:
			return 1
		}
		return 0
	})
	if !found {
		return errs.New(errs.SourceChanged, "%q is not in the source of %q at %s", z.Path, z.Table.Location, z.Table.Version.Label())
	}
	f := &l.Files[fi]
	m, err := marker(l, f)
	if err != nil {
		return err
	}
	if f.Info.Size != z.Size || m != z.Marker {
		return errs.New(errs.SourceChanged, "%q changed after the run was planned (%d bytes, planned at %d)", z.Path, f.Info.Size, z.Size)
	}
	// The table was resolved when this process read its first zone: the file is
	// asked again, before and after the read (an object store's reads are held to
	// the listed version besides).
	// A lake table's files are never rewritten in place (another version names
	// other files), and its metadata states their sizes — some writers wrongly —
	// rather than what the store reports: its version alone pins them.
	lake := l.Lake != nil
	if !lake {
		if err := unchanged(ctx, store, f.Info); err != nil {
			return err
		}
	}
	if err := read(l, store, fi); err != nil {
		return err
	}
	if !lake {
		return unchanged(ctx, store, f.Info)
	}
	return nil
}

// marker is file f's change marker in listing l. A lake table's metadata need not
// state one (a Delta log on object storage names no ETag): its files are pinned by
// the lake's version, and a file without a marker has the empty one.
func marker(l *source.Listing, f *source.FileRef) (string, error) {
	m, err := f.Marker()
	if err != nil && l.Lake != nil {
		return "", nil
	}
	return m, err
}

// unchanged fails with SOURCE_CHANGED when the object o describes is not that version
// of it any more.
func unchanged(ctx context.Context, store storage.Store, o storage.ObjectInfo) error {
	now, err := store.Stat(ctx, o.Path)
	if err != nil {
		return errs.New(errs.SourceChanged, "%q cannot be read as planned: %w", o.Path, err)
	}
	was, err1 := source.ChangeMarker(o)
	is, err2 := source.ChangeMarker(now)
	if err1 != nil || err2 != nil || was != is || now.Size != o.Size {
		return errs.New(errs.SourceChanged, "%q changed after the run was planned", o.Path)
	}
	return nil
}

// TableRefOf names version v of listing l — the table of format format at location,
// as the coordinator resolved it — for workers. A lake table is pinned to its
// version (Delta) or snapshot (Iceberg, read from the metadata file the coordinator
// read, so a table in a catalog needs no catalog on the workers).
func TableRefOf(format, location string, l *source.Listing, v source.Version) source.TableRef {
	t := source.TableRef{Format: format, Location: location, Version: v}
	if lk := l.Lake; lk != nil {
		switch lk.Kind {
		case source.KindDelta:
			t.At = source.AsOf{Version: lk.Version, HasVersion: true}
		case source.KindIceberg:
			t.Metadata = lk.Metadata
			if lk.SnapshotID != 0 {
				t.At = source.AsOf{Version: lk.SnapshotID, HasVersion: true}
			}
		}
	}
	return t
}
