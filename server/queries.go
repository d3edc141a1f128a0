package server

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// Live states of a statement (GET /v1/queries/{id}).
const (
	StateQueued   = "QUEUED" // running, but waiting for the engine's admission
	StateRunning  = "RUNNING"
	StateFinished = "FINISHED"
	StateFailed   = "FAILED"
	StateCanceled = "CANCELED"
)

// keepDone is how many ended statements the registry remembers; older ones are
// answered from the query log.
const keepDone = 1024

// query is one statement the server runs or ran.
type query struct {
	id      string
	owner   lore.Principal
	sql     string
	started time.Time
	cancel  context.CancelFunc
	// progress is the engine's live state of the statement (lore.WithProgress).
	progress *lore.Progress

	// Guarded by registry.mu.
	state   string
	elapsed time.Duration
	record  *lore.Record
	err     *errorBody
}

// registry holds the live state of statements: running ones by id, and the most
// recently ended ones so that a client can read its outcome after the response.
type registry struct {
	mu      sync.Mutex
	byID    map[string]*query
	done    []string // ids of ended statements, oldest first
	running int

	// ended, when set, is told of every statement that ends (the metrics), once,
	// outside the lock.
	ended func(rec *lore.Record, eb *errorBody, elapsed time.Duration)
}

func newRegistry() *registry { return &registry{byID: map[string]*query{}} }

// start registers a running statement, or refuses an id that names one still running.
// An id of an ended statement is taken over: the client reuses its own name.
func (r *registry) start(q *query) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.byID[q.id]; ok && old.state == StateRunning {
		return errs.New(errs.QueryIDInUse, "query %q is running; a query id names one statement at a time", q.id)
	}
	q.state = StateRunning
	q.progress = lore.NewProgress()
	r.byID[q.id] = q
	r.running++
	return nil
}

// finish records how statement q ended.
// It is the one place every statement's end passes, so the metrics observe it here.
func (r *registry) finish(q *query, state string, rec *lore.Record, eb *errorBody) {
	elapsed := time.Since(q.started)
	if r.ended != nil {
		defer r.ended(rec, eb, elapsed)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	q.state, q.record, q.err, q.elapsed = state, rec, eb, elapsed
	r.running--
	r.done = append(r.done, q.id)
	for len(r.done) > keepDone {
		old := r.done[0]
		r.done = r.done[1:]
		if cur, ok := r.byID[old]; ok && cur.state != StateRunning {
			delete(r.byID, old)
		}
	}
}

// get returns a snapshot of statement id.
func (r *registry) get(id string) (queryInfo, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q, ok := r.byID[id]
	if !ok {
		return queryInfo{}, false
	}
	return q.info(), true
}

// list returns snapshots of the statements in state ("" for all), newest first,
// those of owner only unless owner is nil.
func (r *registry) list(state string, owner *lore.Principal) []queryInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []queryInfo{}
	for _, q := range r.byID {
		if owner != nil && q.owner.Name != owner.Name {
			continue
		}
		if info := q.info(); state == "" || info.State == state {
			out = append(out, info)
		}
	}
	sortNewestFirst(out)
	return out
}

// cancel cancels running statement id; it reports whether one was running.
func (r *registry) cancel(id string) bool {
	r.mu.Lock()
	q, ok := r.byID[id]
	running := ok && q.state == StateRunning
	r.mu.Unlock()
	if running {
		q.cancel()
	}
	return running
}

// cancelAll cancels every running statement (shutdown past its deadline).
func (r *registry) cancelAll() int {
	r.mu.Lock()
	var cancels []context.CancelFunc
	for _, q := range r.byID {
		if q.state == StateRunning {
			cancels = append(cancels, q.cancel)
		}
	}
	r.mu.Unlock()
	for _, c := range cancels {
		c()
	}
	return len(cancels)
}

// Running is the number of statements running now.
func (r *registry) Running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running
}

// queryInfo is the JSON of GET /v1/queries/{id}.
type queryInfo struct {
	QueryID   string     `json:"query_id"`
	State     string     `json:"state"`
	Subject   string     `json:"subject"`
	SQL       string     `json:"sql"`
	StartedAt time.Time  `json:"started_at"`
	ElapsedMS float64    `json:"elapsed_ms"`
	Error     *errorBody `json:"error,omitempty"`
	// Progress is a running statement's scans so far.
	Progress *lore.ProgressSnapshot `json:"progress,omitempty"`
	Record   *lore.Record           `json:"record,omitempty"`

	owner lore.Principal
}

func (q *query) info() queryInfo {
	el := q.elapsed
	if q.state == StateRunning {
		el = time.Since(q.started)
	}
	info := queryInfo{QueryID: q.id, State: q.state, Subject: q.owner.Name, SQL: q.sql,
		StartedAt: q.started.UTC(), ElapsedMS: float64(el.Microseconds()) / 1000,
		Error: q.err, Record: q.record, owner: q.owner}
	if q.state == StateRunning && q.progress != nil {
		p := q.progress.Snapshot()
		if p.State == lore.ProgressQueued {
			info.State = StateQueued
		}
		info.Progress = &p
	}
	return info
}

// track makes the engine report statement q's live state (QUEUED, progress) to the
// registry: the context to run q with, once start registered q.
func (q *query) track(ctx context.Context) context.Context {
	return lore.WithProgress(ctx, q.progress)
}

func sortNewestFirst(qs []queryInfo) {
	slices.SortFunc(qs, func(a, b queryInfo) int { return b.StartedAt.Compare(a.StartedAt) })
}

// Track registers a statement run outside the HTTP API — a Flight SQL call — as the
// HTTP API registers its own: GET /v1/queries lists it with its live state and
// progress, DELETE cancels it, and /metrics counts it. The statement runs with the
// returned context (canceled by DELETE, carrying the progress the engine reports) and
// calls end with its record and error when it is over. A running statement's id is
// refused (QUERY_ID_IN_USE).
func (s *Server) Track(ctx context.Context, id string, p lore.Principal, sql string) (context.Context, func(rec *lore.Record, err error), error) {
	ctx, cancel := context.WithCancel(ctx)
	q := &query{id: id, owner: p, sql: sql, started: time.Now(), cancel: cancel}
	if err := s.queries.start(q); err != nil {
		cancel()
		return nil, nil, err
	}
	end := func(rec *lore.Record, err error) {
		defer cancel()
		if err != nil && rec == nil {
			// A failed statement's record is in the query log.
			rec, _ = s.opts.Engine.LoggedRecord(context.WithoutCancel(ctx), id)
		}
		s.ended(q, rec, err)
	}
	return q.track(ctx), end, nil
}
