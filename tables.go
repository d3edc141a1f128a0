package lore

import (
	"context"
	"sync"

	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
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
}

var _ plan.Catalog = (*catalogView)(nil)

func newCatalogView(e *Engine) *catalogView {
	return &catalogView{e: e, tables: map[string]*plan.TableRef{}}
}

func (c *catalogView) Table(ctx context.Context, name string) (*plan.TableRef, error) {
	t, err := c.e.catalog.Lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ref, ok := c.tables[t.Name]; ok {
		return ref, nil
	}
	if t.Format != "parquet" {
		return nil, errs.New(errs.Analysis, "table %q has format %q, which this version of Lore cannot read yet", name, t.Format)
	}
	l, err := source.Resolve(ctx, c.e.store, t.Location)
	if err != nil {
		return nil, err
	}
	ref := &plan.TableRef{Name: t.Name, Location: t.Location, Listing: l, Rows: c.rows(ctx, l)}
	// A version that cannot be taken leaves the statement unpinned: it still reads,
	// and statistics do not answer.
	ref.Version, _ = l.Version()
	if ref.Stats, err = c.e.statistics(ctx, t.ID); err != nil {
		return nil, err
	}
	c.e.maybeRefresh(ctx, t, ref.Stats, ref.Version)
	c.tables[t.Name] = ref
	return ref, nil
}

func (c *catalogView) Path(ctx context.Context, location string) (*plan.TableRef, error) {
	l, err := source.Resolve(ctx, c.e.store, location)
	if err != nil {
		return nil, err
	}
	return &plan.TableRef{Location: location, Listing: l, Rows: c.rows(ctx, l)}, nil
}

// rows counts a listing's rows from its footers, or -1 when they cannot be read (the
// scan then reports the error).
func (c *catalogView) rows(ctx context.Context, l *source.Listing) int64 {
	n, err := l.Rows(ctx, c.e.store)
	if err != nil {
		return -1
	}
	return n
}

// tableColumns describes a listing's columns for the catalog.
func tableColumns(l *source.Listing) []catalog.Column {
	cols := make([]catalog.Column, 0, l.Schema.NumFields())
	for i, f := range l.Schema.Fields() {
		cols = append(cols, catalog.Column{Name: f.Name, Type: types.Name(f.Type), Partition: i >= l.FileColumns})
	}
	return cols
}
