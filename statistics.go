package lore

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/stats"
)

// recordCache keeps decoded statistics records by table id, so that a statement
// answered from statistics does not decode the document again. An entry is valid
// while the catalog row has the same source identity and computation time.
type recordCache struct {
	mu   sync.Mutex
	byID map[int64]cachedRecord
}

type cachedRecord struct {
	identity   string
	computedAt int64
	rec        *stats.Record
}

// statistics returns the table's statistics record, or nil when it has none.
func (e *Engine) statistics(ctx context.Context, tableID int64) (*stats.Record, error) {
	// One read of the row, which leaves the document out while the cached record
	// is still the table's.
	e.records.mu.Lock()
	c, hit := e.records.byID[tableID]
	e.records.mu.Unlock()
	row, ok, err := e.catalog.StatisticsSince(ctx, tableID, c.identity, c.computedAt)
	if err != nil || !ok {
		return nil, err
	}
	if hit && c.identity == row.SourceIdentity && c.computedAt == row.ComputedAtMS {
		return c.rec, nil
	}
	// The head alone: a statement answered from the table-level partials never
	// needs the per-file list and the zones, whose size grows with the files.
	detail := func() ([]byte, error) {
		return e.catalog.StatisticsDetail(context.Background(), tableID, row.SourceIdentity, row.ComputedAtMS)
	}
	rec, err := stats.UnmarshalHead(row.Document, detail)
	if err != nil {
		// A document this build cannot read (another version, damage) is no record:
		// statements read the data, and the next ANALYZE writes a new one.
		e.opts.Logger.Warn("ignoring an unreadable statistics record", "table_id", tableID, "err", err)
		return nil, nil
	}
	e.records.mu.Lock()
	if e.records.byID == nil {
		e.records.byID = map[int64]cachedRecord{}
	}
	e.records.byID[tableID] = cachedRecord{row.SourceIdentity, row.ComputedAtMS, rec}
	e.records.mu.Unlock()
	return rec, nil
}

// putStatistics stores rec as the statistics record of table t.
func (e *Engine) putStatistics(ctx context.Context, t catalog.Table, rec *stats.Record) error {
	doc, detail, err := rec.MarshalParts()
	if err != nil {
		return err
	}
	row := catalog.Statistics{
		TableID:         t.ID,
		DocumentVersion: rec.DocumentVersion,
		SourceKind:      rec.SourceVersion.Kind,
		SourceIdentity:  rec.SourceVersion.IdentitySHA256,
		SourceLabel:     rec.SourceVersion.Label(),
		Depth:           rec.Depth,
		RowCount:        rec.Rows,
		ComputedAtMS:    rec.ComputedAtMS,
		Document:        doc,
		Detail:          detail,
	}
	for _, f := range rec.PerFile {
		sf := catalog.StatisticsFile{Path: f.Path, Rows: f.Rows, Bytes: f.Bytes, LastModifiedMS: f.LastModifiedMS}
		for i, c := range f.Columns {
			sf.Columns = append(sf.Columns, catalog.FileColumnStats{ColumnID: i, Min: c.Min, Max: c.Max,
				BoundsExact: c.BoundsExact, NullCount: c.NullCount, HasNaN: c.HasNaN})
		}
		row.Files = append(row.Files, sf)
	}
	return e.catalog.PutStatistics(ctx, t.Name, row)
}

// boundsIndexMinFiles is the fewest files for which a scan asks the catalog's bounds
// index which files can match (docs/pruning.md). The index's answer costs about
// 0.15 ms whatever the table, checking the record's bounds in memory about 0.25 µs a
// file: below about a thousand files the memory check is the cheaper. Tests lower it.
var boundsIndexMinFiles = func() *atomic.Int64 {
	var n atomic.Int64
	n.Store(1000)
	return &n
}()

// boundsIndex asks the catalog's bounds index which files of rec, the record of
// table tableID, can match: it answers only while the catalog holds that very record.
func (e *Engine) boundsIndex(tableID int64, rec *stats.Record) stats.BoundsIndex {
	identity, computedAt := rec.SourceVersion.IdentitySHA256, rec.ComputedAtMS
	return func(ctx context.Context, ranges []stats.ColumnRange) ([]int, bool, error) {
		cr := make([]catalog.ColumnRange, len(ranges))
		for i, r := range ranges {
			cr[i] = catalog.ColumnRange{ColumnID: r.Column, Lo: r.Lo, Hi: r.Hi}
		}
		return e.catalog.FileIDsMatching(ctx, tableID, identity, computedAt, cr)
	}
}
