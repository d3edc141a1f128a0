package lore

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/publish"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/source/delta"
	"github.com/loredb/lore/source/iceberg"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// catalogView is the binder's view of the catalog and the sources for one statement.
// It pins the statement to one version of each table: every reference to a table
// in the statement sees the listing, version and statistics record taken the first
// time the table was named.
type catalogView struct {
	e      *Engine
	mu     sync.Mutex
	tables map[string]*plan.TableRef
	paths  []*plan.TableRef // the locations read by path, in the order named
}

var _ plan.Catalog = (*catalogView)(nil)

func newCatalogView(e *Engine) *catalogView {
	return &catalogView{e: e, tables: map[string]*plan.TableRef{}}
}

func (c *catalogView) Table(ctx context.Context, name string, at source.AsOf) (*plan.TableRef, error) {
	t, err := c.e.catalog.Lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := t.Name
	if !at.Latest() {
		key = fmt.Sprintf("%s@%d@%d@%d", t.Name, at.Version, boolInt(at.HasVersion), at.Time.UnixNano())
	}
	if ref, ok := c.tables[key]; ok {
		return ref, nil
	}
	// The table's record is read while its files are listed: a fresh process spends
	// a few tenths of a millisecond on each.
	var rec *stats.Record
	read := make(chan error, 1)
	go func() {
		read <- errs.Safe(func() (err error) {
			rec, err = c.e.statistics(ctx, t.ID)
			return err
		})()
		// The statement will log itself: the catalog's writer connects on this
		// core while the files are still being listed, not after the answer.
		c.e.catalog.ConnectWriter()
	}()
	l, store, err := c.e.resolveTable(ctx, t, at)
	if readErr := <-read; err == nil {
		err = readErr
	}
	if err != nil {
		return nil, err
	}
	ref := &plan.TableRef{Name: t.Name, Location: t.Location, Listing: l, Rows: c.rows(ctx, store, l), Store: store}
	// A version that cannot be taken leaves the statement unpinned: it still reads,
	// and statistics do not answer.
	ref.Version, _ = l.Version()
	if at.Latest() {
		// The expectation is checked against the very version the statement reads.
		if err := checkExpected(ctx, t.Name, ref.Version); err != nil {
			return nil, err
		}
	}
	ref.Stats = rec
	if ref.Stats == nil {
		ref.Footers = c.e.footerRecord(ctx, store, l, ref.Version)
	}
	if ref.Stats != nil && int64(len(l.Files)) >= boundsIndexMinFiles.Load() {
		ref.Bounds = c.e.boundsIndex(t.ID, ref.Stats)
	}
	if at.Latest() {
		// An older version never refreshes the record of the latest.
		c.e.maybeRefresh(ctx, t, ref.Stats, ref.Version)
	}
	c.tables[key] = ref
	return ref, nil
}

// footerRecord returns a function making, once, the metadata-depth record of
// listing l for the planner's estimates: the bounds of a column let a range on it be
// judged. It never answers a query. A Parquet listing's comes from its footers: those
// the footer cache holds (counting the rows or an earlier scan opened them), or, for
// a listing the scan will open whole anyway — no partition to prune by, at most
// footerEstimateFiles files — read here, once for planning and scan. A Delta table's
// comes from its log when every file carries statistics. Other tables get none (nil):
// planning never reads a large table's footers for an estimate. A record made for a
// version is kept (estimateCache), so that statements over an unchanged table build
// it once.
func (e *Engine) footerRecord(ctx context.Context, store storage.Store, l *source.Listing, v source.Version) func() *stats.Record {
	return sync.OnceValue(func() *stats.Record {
		key := estimateKey{format: l.Format, location: l.Location, v: v}
		if rec := e.estimates.get(key); rec != nil {
			return rec
		}
		var rec *stats.Record
		var err error
		switch {
		case l.Lake == nil:
			footers := l.CachedFooters()
			if footers == nil && len(l.Partitions) == 0 && len(l.Files) <= footerEstimateFiles {
				footers, _ = l.Footers(ctx, store)
			}
			if footers != nil {
				rec, err = stats.FromFooters(l, footers, v, time.Now())
			}
		case l.Lake.Kind == source.KindDelta && stats.LakeStatsComplete(l):
			rec, err = stats.FromLakeStats(l, v, time.Now())
		}
		if err != nil || rec == nil {
			return nil
		}
		e.estimates.put(key, rec)
		return rec
	})
}

// footerEstimateFiles is the most files whose footers planning reads for an estimate.
const footerEstimateFiles = 64

// estimateCache keeps the records footerRecord made, by the format, location and
// version of their listing (which decide its files and schema), so that statements
// over an unchanged table do not build one again: from the footers of a thousand
// files that takes 13–20 ms. A listing without a version is never kept; past
// maxEstimates records the cache starts over.
type estimateCache struct {
	mu    sync.Mutex
	byKey map[estimateKey]*stats.Record
}

type estimateKey struct {
	format, location string
	v                source.Version
}

// maxEstimates bounds the records kept.
const maxEstimates = 64

func (c *estimateCache) get(k estimateKey) *stats.Record {
	if k.v.IdentitySHA256 == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byKey[k]
}

func (c *estimateCache) put(k estimateKey, rec *stats.Record) {
	if k.v.IdentitySHA256 == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil || len(c.byKey) >= maxEstimates {
		c.byKey = map[estimateKey]*stats.Record{}
	}
	c.byKey[k] = rec
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (c *catalogView) Path(ctx context.Context, location, format string, at source.AsOf) (*plan.TableRef, error) {
	if err := authorizePath(ctx, location, c.e.opts.AllowPaths); err != nil {
		return nil, err
	}
	if format == "parquet" {
		_, inCatalog, _ := catalog.ParseIcebergLocation(location)
		switch {
		case inCatalog:
			// A table in an Iceberg catalog.
			format = "iceberg"
		default:
			// A Delta table's directory holds files its log removed: read it by its
			// log; likewise an Iceberg table's, read by its metadata; and a metadata
			// file is no Parquet file.
			format = c.e.sniff(ctx, location)
		}
	}
	l, err := c.e.resolve(ctx, format, location, at)
	if err != nil {
		return nil, err
	}
	ref := &plan.TableRef{Location: location, Listing: l, Rows: c.rows(ctx, c.e.store, l)}
	// Every source a statement reads is in the view, whether named or not: the result
	// cache keys on all of them.
	ref.Version, _ = l.Version()
	ref.Footers = c.e.footerRecord(ctx, c.e.store, l, ref.Version)
	c.mu.Lock()
	c.paths = append(c.paths, ref)
	c.mu.Unlock()
	return ref, nil
}

// resolveTable reads registered table t's source as of at, through the store its
// storage options name, and returns that store, which everything reading the
// listing must use.
func (e *Engine) resolveTable(ctx context.Context, t catalog.Table, at source.AsOf) (*source.Listing, storage.Store, error) {
	store, err := e.storeFor(t.Storage)
	if err != nil {
		return nil, nil, err
	}
	l, err := e.resolveIn(ctx, store, t.Format, t.Location, at)
	return l, store, err
}

// resolve reads a location's source through the engine's store (see resolveIn).
func (e *Engine) resolve(ctx context.Context, format, location string, at source.AsOf) (*source.Listing, error) {
	return e.resolveIn(ctx, e.store, format, location, at)
}

// resolveIn reads a table's source through store as its format defines it, as of at
// (the latest version when at is zero; Parquet has no other).
func (e *Engine) resolveIn(ctx context.Context, store storage.Store, format, location string, at source.AsOf) (*source.Listing, error) {
	read := func() (*source.Listing, error) { return e.read(ctx, store, format, location, at) }
	if _, inCatalog, _ := catalog.ParseIcebergLocation(location); !at.Latest() || inCatalog {
		// Time travel reads what it names; a catalog's pointer is a row, not a
		// file the kernel watches.
		return read()
	}
	return e.listings.resolve(store, format+"\x00"+location, location, read)
}

// read reads a table's source through store (see resolveIn), without the listing cache.
func (e *Engine) read(ctx context.Context, store storage.Store, format, location string, at source.AsOf) (*source.Listing, error) {
	switch format {
	case "parquet":
		if !at.Latest() {
			return nil, errs.New(errs.Analysis, "%q is a Parquet location, which has no versions to travel to", location)
		}
		// An OPTIMIZE killed while it published is finished (or undone) before
		// anything reads the files it was replacing.
		if err := e.recoverLocation(location); err != nil {
			return nil, err
		}
		facts := source.FactsDir(filepath.Join(e.opts.Home, "cache", "listings"))
		if storage.Scheme(location) != "" {
			return source.ResolveWith(ctx, store, location, facts)
		}
		// Every Lore process lists a local directory before or after each
		// publish of a rewrite into it, never between (internal/publish).
		dir, _ := storage.GlobBase(location)
		var l *source.Listing
		err := publish.View(ctx, dir, func() error { return e.recoverLocation(dir) }, func() error {
			var err error
			l, err = source.ResolveWith(ctx, store, location, facts)
			return err
		})
		return l, err
	case "delta":
		return delta.Open(ctx, store, location, at)
	case "iceberg":
		ref, ok, err := catalog.ParseIcebergLocation(location)
		if err != nil {
			return nil, err
		}
		if ok {
			return e.openIcebergCatalog(ctx, store, location, ref, at)
		}
		return iceberg.Open(ctx, store, location, at)
	}
	return nil, errs.New(errs.Analysis, "format %q cannot be read by this version of Lore", format)
}

// openIcebergCatalog reads the Iceberg table ref names in a SQLite Iceberg catalog: a
// catalog file, or Lore's own (ref.File empty). The catalog is asked for the table's
// metadata file on every call, so that each statement reads what was last committed.
func (e *Engine) openIcebergCatalog(ctx context.Context, store storage.Store, location string, ref catalog.IcebergRef, at source.AsOf) (*source.Listing, error) {
	pointer := func(ctx context.Context) (string, error) { return e.catalog.IcebergMetadataLocation(ctx, ref) }
	base := e.opts.Home
	if ref.File != "" {
		pointer = func(ctx context.Context) (string, error) { return catalog.IcebergMetadataLocation(ctx, ref) }
		abs, err := filepath.Abs(ref.File)
		if err != nil {
			return nil, errs.New(errs.SourceUnavailable, "cannot find Iceberg catalog %q: %w", ref.File, err)
		}
		base = filepath.Dir(abs)
	}
	return iceberg.OpenPointer(ctx, store, location, base, pointer, at)
}

// sniff is the format of a location named by path: "delta" for a directory with a
// Delta log, "iceberg" for an Iceberg table's directory or metadata file, else
// "parquet". A store that names a directory's subdirectories in one request
// (storage.SubdirLister) is asked that once; another is asked for the log and the
// metadata folder.
func (e *Engine) sniff(ctx context.Context, location string) string {
	if strings.ContainsAny(location, "*?[") {
		return "parquet"
	}
	if iceberg.NamesMetadata(location) {
		return "iceberg"
	}
	if sl, ok := storage.StoreFor(e.store, location).(storage.SubdirLister); ok {
		if names, complete, err := sl.Subdirs(ctx, location); err == nil {
			switch {
			case slices.Contains(names, "_delta_log"):
				return "delta"
			case slices.Contains(names, "metadata"):
				if iceberg.IsTable(ctx, e.store, location) {
					return "iceberg"
				}
				return "parquet"
			case complete:
				return "parquet"
			}
		}
	}
	switch {
	case e.isDelta(ctx, location):
		return "delta"
	case iceberg.IsTable(ctx, e.store, location):
		return "iceberg"
	}
	return "parquet"
}

// isDelta reports whether location is a directory with a Delta log.
func (e *Engine) isDelta(ctx context.Context, location string) bool {
	_, err := e.store.Stat(ctx, storage.Join(location, "_delta_log"))
	return err == nil
}

// rows counts a listing's rows from its footers, or -1 when they cannot be read (the
// scan then reports the error).
func (c *catalogView) rows(ctx context.Context, store storage.Store, l *source.Listing) int64 {
	n, err := l.Rows(ctx, store)
	if err != nil {
		return -1
	}
	return n
}

// tableColumns describes a listing's columns for the catalog.
func tableColumns(l *source.Listing) []catalog.Column {
	cols := make([]catalog.Column, 0, l.Schema.NumFields())
	for i, f := range l.Schema.Fields() {
		cols = append(cols, catalog.Column{Name: f.Name, Type: types.Name(f.Type), Partition: l.Partition(i) >= 0})
	}
	return cols
}
