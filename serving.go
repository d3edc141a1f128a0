package lore

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
)

// What a server asks of the engine beyond Query: a statement id it chooses, the
// record of a statement that failed, and the freshness of a table (SPEC §9).

type queryIDKey struct{}

// WithQueryID makes id the record id of the statements run with ctx, in place of a
// random one, so that a server can name a statement (GET /v1/queries/{id}, cancel it)
// before it ends. Ids must be unique: the query log keeps one entry per id.
func WithQueryID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, queryIDKey{}, id)
}

// recordID is the id a statement run with ctx records: WithQueryID's, else a new one.
func recordID(ctx context.Context) string {
	if id, ok := ctx.Value(queryIDKey{}).(string); ok && id != "" {
		return id
	}
	return newID()
}

type endpointKey struct{}

// WithEndpoint names what the statements run with ctx came through ("http",
// "flight"), for their records and the query log.
func WithEndpoint(ctx context.Context, endpoint string) context.Context {
	return context.WithValue(ctx, endpointKey{}, endpoint)
}

func endpointOf(ctx context.Context) string {
	e, _ := ctx.Value(endpointKey{}).(string)
	return e
}

// LoggedRecord is the record statement id left in the query log, or nil when the log
// does not hold it (a read-only catalog keeps no log). Query returns no record with
// an error; a server reads the failed statement's record here.
func (e *Engine) LoggedRecord(ctx context.Context, id string) (*Record, error) {
	entry, err := e.catalog.Query(ctx, id)
	if errors.Is(err, catalog.ErrQueryNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(entry.Record, &rec); err != nil {
		return nil, errs.New(errs.Internal, "the logged record of query %q does not read: %w", id, err)
	}
	return &rec, nil
}

// TableVersion is the current source version of a registered table (SPEC §9's
// version endpoint): what the least metadata of its source establishes now.
type TableVersion struct {
	TableID       int64          `json:"table_id"`
	Table         string         `json:"table"`
	SourceVersion source.Version `json:"source_version"`
	ObservedAtMS  int64          `json:"observed_at_ms"`
}

// CurrentVersion reads the current source version of table name: its listing, Delta
// log or Iceberg metadata, no data and no footer. A source that cannot be read is
// SOURCE_UNAVAILABLE (or the source's own code, e.g. CORRUPT_SOURCE).
func (e *Engine) CurrentVersion(ctx context.Context, name string) (TableVersion, error) {
	t, err := e.catalog.Table(ctx, name)
	if err != nil {
		return TableVersion{}, err
	}
	v, err := e.currentVersion(ctx, t)
	if err != nil {
		return TableVersion{}, err
	}
	return TableVersion{TableID: t.ID, Table: t.Name, SourceVersion: v, ObservedAtMS: time.Now().UnixMilli()}, nil
}

func (e *Engine) currentVersion(ctx context.Context, t catalog.Table) (source.Version, error) {
	l, _, err := e.resolveTable(ctx, t, source.AsOf{})
	if err != nil {
		return source.Version{}, unavailable(t.Name, err)
	}
	v, err := l.Version()
	if err != nil {
		return source.Version{}, unavailable(t.Name, err)
	}
	return v, nil
}

// unavailable gives a source error that has no code of its own SOURCE_UNAVAILABLE.
func unavailable(table string, err error) error {
	if code := errs.CodeOf(err); code != errs.Internal {
		return err
	}
	return errs.New(errs.SourceUnavailable, "cannot read the source of %s: %w", table, err)
}

// TableStatistics is a registered table's statistics record with its freshness
// (SPEC §9's statistics endpoint).
type TableStatistics struct {
	TableID              int64          `json:"table_id"`
	Table                string         `json:"table"`
	SourceVersion        source.Version `json:"source_version"`
	CurrentSourceVersion source.Version `json:"current_source_version"`
	ObservedAtMS         int64          `json:"observed_at_ms"`
	// Stale is true when the record describes another version than the current one:
	// it may cost plans, it answers nothing.
	Stale      bool            `json:"stale"`
	Statistics json.RawMessage `json:"statistics"`
}

// Statistics returns table name's statistics record and whether it is stale.
// No record is STATISTICS_UNAVAILABLE; a source that cannot be read to tell the
// current version is SOURCE_UNAVAILABLE.
func (e *Engine) Statistics(ctx context.Context, name string) (TableStatistics, error) {
	t, err := e.catalog.Table(ctx, name)
	if err != nil {
		return TableStatistics{}, err
	}
	rec, err := e.statistics(ctx, t.ID)
	if err != nil {
		return TableStatistics{}, err
	}
	if rec == nil {
		return TableStatistics{}, errs.New(errs.StatisticsUnavailable, "no statistics for %s; run ANALYZE %s", t.Name, t.Name)
	}
	doc, err := rec.Marshal()
	if err != nil {
		return TableStatistics{}, err
	}
	v, err := e.currentVersion(ctx, t)
	if err != nil {
		return TableStatistics{}, err
	}
	return TableStatistics{TableID: t.ID, Table: t.Name, SourceVersion: rec.SourceVersion,
		CurrentSourceVersion: v, ObservedAtMS: time.Now().UnixMilli(),
		Stale: !rec.SourceVersion.Same(v), Statistics: doc}, nil
}
