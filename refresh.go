package lore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/stats"
)

// refresher keeps statistics records current in the background (SPEC §4): when a
// statement finds a table's source at a version newer than its record's, one refresh
// of that table runs at a time, at the record's depth. A refresh that fails leaves the
// previous record; exact distinct counts do not survive one.
type refresher struct {
	mu      sync.Mutex
	running map[int64]bool
	ctx     context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup

	// done and failed count refreshes that ended, for a server's metrics.
	done, failed atomic.Int64
}

// RefreshStats count the background statistics refreshes the engine ran (SPEC §4).
type RefreshStats struct {
	// Done refreshed a record; Failed left the previous one (an error or a panic).
	Done, Failed int64
}

// Refreshes is how many background statistics refreshes have ended so far.
func (e *Engine) Refreshes() RefreshStats {
	return RefreshStats{Done: e.refresh.done.Load(), Failed: e.refresh.failed.Load()}
}

func newRefresher() *refresher {
	ctx, stop := context.WithCancel(context.Background())
	return &refresher{running: map[int64]bool{}, ctx: ctx, stop: stop}
}

// close cancels running refreshes and waits for them.
func (r *refresher) close() {
	r.stop()
	r.wg.Wait()
}

// wait blocks until no refresh is running.
func (r *refresher) wait() { r.wg.Wait() }

// noRefreshKey marks a context whose statements start no refresh: the statements
// ANALYZE runs itself, which would otherwise race it with a refresh of the table.
type noRefreshKey struct{}

// maybeRefresh starts a refresh of table t when its record describes another
// version than v and none is running for t.
func (e *Engine) maybeRefresh(ctx context.Context, t catalog.Table, rec *stats.Record, v source.Version) {
	if e.opts.NoAutoRefresh || ctx.Value(noRefreshKey{}) != nil || rec == nil || v.IdentitySHA256 == "" || rec.SourceVersion.Same(v) {
		return
	}
	r := e.refresh
	r.mu.Lock()
	if r.running[t.ID] || r.ctx.Err() != nil {
		r.mu.Unlock()
		return
	}
	r.running[t.ID] = true
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		defer func() {
			r.mu.Lock()
			delete(r.running, t.ID)
			r.mu.Unlock()
		}()
		start := time.Now()
		var label string
		// A refresh runs outside any statement: its panic is logged, never fatal.
		err := errs.Safe(func() (err error) {
			label, err = e.refreshTable(r.ctx, t, rec)
			return err
		})()
		if err != nil {
			r.failed.Add(1)
		} else {
			r.done.Add(1)
		}
		if p := errs.PanicOf(err); p != nil {
			e.opts.Logger.Error("statistics refresh panicked; the previous record stays", "table", t.Name,
				"panic", fmt.Sprint(p.Value), "stack", string(p.Stack))
			return
		}
		if err != nil {
			e.opts.Logger.Warn("statistics refresh failed; the previous record stays", "table", t.Name, "err", err)
			return
		}
		e.opts.Logger.Info("statistics refreshed", "table", t.Name, "source_version", label,
			"elapsed_ms", time.Since(start).Milliseconds())
	}()
}

// refreshTable brings table t's record to the source's version at the depth of old,
// its stale record: when files were only added, they alone are learnt and folded in
// (sketches merged); otherwise the whole table is learnt again.
func (e *Engine) refreshTable(ctx context.Context, t catalog.Table, old *stats.Record) (string, error) {
	l, store, err := e.resolveTable(ctx, t, source.AsOf{})
	if err != nil {
		return "", err
	}
	v, err := l.Version()
	if err != nil {
		return "", err
	}
	var full fullReader
	if old.Depth == stats.DepthFull {
		full = e.localFullRead(store, t)
	}
	var rec *stats.Record
	if added, ok := stats.Added(old, l); ok && len(added) > 0 {
		part := *l
		part.Files, part.Single = added, false
		learnt, err := e.learn(ctx, store, t, &part, v, full, nil, nil, nil)
		if err != nil {
			return "", err
		}
		if rec, err = stats.Fold(old, learnt, l, v, time.Now()); err != nil {
			return "", err
		}
	} else if rec, err = e.learn(ctx, store, t, l, v, full, nil, nil, nil); err != nil {
		return "", err
	}
	if err := e.checkUnmoved(ctx, t, v); err != nil {
		return "", err
	}
	return rec.SourceVersion.Label(), e.putStatistics(ctx, t, rec)
}
