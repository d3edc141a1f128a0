package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// Paging of json results. A json statement runs on its own goroutine (QueryStream)
// whose sink hands batches through a channel of one; each page request takes rows
// from it until the page is full, so the execution waits while no page is asked for
// and the server holds about a page and a batch per open result, never the result.
// Every page of a result comes from that one execution.

// Paging defaults and ceilings (Options may change them).
const (
	defaultPageRows      = 10_000
	defaultPageBytes     = 4 << 20
	defaultMaxPageRows   = 1_000_000
	defaultMaxPageBytes  = 64 << 20
	defaultResultIdle    = 60 * time.Second
	defaultMaxOpenResult = 64
)

// pagingDefaults fills the paging options left zero.
func (o *Options) pagingDefaults() {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&o.MaxPageRows, defaultMaxPageRows)
	set(&o.MaxPageBytes, defaultMaxPageBytes)
	set(&o.PageRows, min(defaultPageRows, o.MaxPageRows))
	set(&o.PageBytes, min(defaultPageBytes, o.MaxPageBytes))
	set(&o.MaxOpenResults, defaultMaxOpenResult)
	if o.ResultIdleTimeout <= 0 {
		o.ResultIdleTimeout = defaultResultIdle
	}
}

// pageLimits is how large a page may grow: it is full at rows rows or once its rows
// take bytes bytes of JSON (a page holds at least one row).
type pageLimits struct{ rows, bytes int }

// pageItem is what the sink hands to the pages: the schema (with the first batch, if
// any), then batches; last marks the result's final item.
type pageItem struct {
	schema *arrow.Schema
	batch  arrow.Record
	last   bool
}

// chanSink is the ResultSink of a paged statement: it waits until a page takes each
// item, or until the statement is canceled. It holds one item back until the next
// comes or the statement ends, so that a small result — the schema, a batch, the end
// — crosses to the page in one hand-off rather than three: on a busy machine each
// hand-off waits for a processor.
type chanSink struct {
	ctx   context.Context
	items chan<- pageItem
	held  *pageItem
}

var _ lore.ResultSink = (*chanSink)(nil)

func (c *chanSink) Schema(s *arrow.Schema) error {
	c.held = &pageItem{schema: s}
	return nil
}

func (c *chanSink) Batch(b arrow.Record) error {
	if c.held != nil && c.held.batch == nil {
		c.held.batch = b // the first batch travels with the schema
		return nil
	}
	if c.held != nil {
		if err := c.send(*c.held); err != nil {
			return err
		}
	}
	c.held = &pageItem{batch: b}
	return nil
}

// end hands over the item held back, marked last, once the statement succeeded.
func (c *chanSink) end() {
	if c.held == nil {
		return
	}
	it := *c.held
	c.held, it.last = nil, true
	_ = c.send(it) // canceled: the pages learn it from the statement's end
}

func (c chanSink) send(it pageItem) error {
	select {
	case c.items <- it:
		return nil
	case <-c.ctx.Done():
		return errs.New(errs.Canceled, "statement canceled: %w", context.Cause(c.ctx))
	}
}

// paged is one json result being served a page at a time.
type paged struct {
	s      *Server
	q      *query
	limits pageLimits
	cancel context.CancelFunc
	items  chan pageItem
	done   chan struct{} // closed when the statement has ended; rec and err are then set
	rec    *lore.Record
	err    error

	expired  atomic.Bool
	finished sync.Once

	mu      sync.Mutex // held by the page request being built
	columns []column
	cur     arrow.Record // the batch the next page starts in, from row off
	off     int
	sawLast bool   // the item received last was the result's final one
	token   string // the next page's token; "" once none remains
	gen     int    // bumped at each page, so that a stale idle timer does nothing
	timer   *time.Timer
	closed  bool
}

// page is one page of rows, JSON-encoded, and whether it is the last.
type page struct {
	rows []byte
	last bool
}

// startPaged runs q's statement on its own goroutine and answers with its first
// page; the rest is asked for with next_uri. annotate gives the statement its
// principal, id, expected versions and progress.
func (s *Server) startPaged(w http.ResponseWriter, r *http.Request, q *query, annotate func(context.Context) context.Context, settings map[string]string, limits pageLimits) {
	// The statement outlives this request when its result pages: its context keeps the
	// request's values but not its end.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	p := &paged{s: s, q: q, limits: limits, cancel: cancel, items: make(chan pageItem, 1), done: make(chan struct{})}
	// DELETE /v1/queries/{id} and shutdown cancel the statement and close its result.
	q.cancel = func() { go p.abort() }
	if err := s.queries.start(q); err != nil {
		cancel()
		writeError(w, q.id, err)
		return
	}
	ctx = annotate(ctx)
	s.workers.run(func() { p.run(ctx, settings) })
	p.mu.Lock()
	defer p.mu.Unlock()
	pg, err := p.next(r.Context())
	if err != nil {
		p.fail(w, err)
		return
	}
	if !pg.last {
		if !s.pages.add(p) {
			err := errs.New(errs.ResourceExhausted, "the server holds %d open paged results, its limit: read or cancel one, or ask again", s.opts.MaxOpenResults)
			cancel()
			<-p.done
			p.finish(StateCanceled, p.rec, bodyOf(err))
			w.Header().Set("Retry-After", "1")
			writeError(w, q.id, err)
			return
		}
	}
	p.answer(w, pg)
}

// run is the statement's goroutine.
func (p *paged) run(ctx context.Context, settings map[string]string) {
	sink := &chanSink{ctx: ctx, items: p.items}
	rec, err := p.s.opts.Engine.QueryStream(ctx, p.q.sql, settings, sink)
	p.rec, p.err = rec, err
	if err == nil {
		sink.end()
	}
	close(p.items)
	close(p.done)
	if err != nil {
		// The statement has ended: the registry says how now, though a page request
		// learns it only when it comes.
		p.ended(err)
	}
}

// ended records a failed statement in the registry: an expired result as canceled
// with RESULT_EXPIRED, so that its next_uri is answered 410.
func (p *paged) ended(err error) {
	state, eb := StateFailed, bodyOf(err)
	if errs.CodeOf(err) == errs.Canceled {
		state = StateCanceled
	}
	if p.expired.Load() {
		state, eb = StateCanceled, bodyOf(expiredError(p.q.id))
	}
	p.finish(state, p.rec, eb)
}

func expiredError(id string) error {
	return errs.New(errs.ResultExpired, "the result of query %q expired: no page was asked for within the idle timeout, so its statement was canceled", id)
}

// finish records how the statement ended in the registry, once.
func (p *paged) finish(state string, rec *lore.Record, eb *errorBody) {
	p.finished.Do(func() { p.s.queries.finish(p.q, state, rec, eb) })
}

// recv is the next item from the statement, ok false once it has ended. A page
// request that goes away cancels the statement: the client has left.
func (p *paged) recv(ctx context.Context) (pageItem, bool, error) {
	select {
	case it, ok := <-p.items:
		return it, ok, nil
	case <-ctx.Done():
		p.cancel()
		<-p.done
		return pageItem{}, false, errs.New(errs.Canceled, "the client went away while a page was built")
	}
}

// next builds the next page. The caller holds p.mu.
func (p *paged) next(ctx context.Context) (page, error) {
	var pg page
	rows := 0
	for rows < p.limits.rows && len(pg.rows) < p.limits.bytes {
		if p.cur == nil {
			if p.sawLast {
				return p.end(pg)
			}
			it, ok, err := p.recv(ctx)
			if err != nil {
				return pg, err
			}
			if !ok {
				return p.end(pg)
			}
			if it.schema != nil {
				p.columns = columnsOf(it.schema)
			}
			p.sawLast = it.last
			if it.batch == nil {
				continue
			}
			p.cur, p.off = it.batch, 0
		}
		n := int(p.cur.NumRows())
		for ; p.off < n && rows < p.limits.rows && len(pg.rows) < p.limits.bytes; p.off++ {
			if rows > 0 {
				pg.rows = append(pg.rows, ',')
			}
			pg.rows = appendJSONRow(pg.rows, p.cur, p.off)
			rows++
		}
		if p.off == n {
			p.cur = nil
		}
	}
	if p.cur == nil {
		// The page is full at a batch's end: whether another page follows is known
		// once the next batch comes, or the statement ends.
		if p.sawLast {
			return p.end(pg)
		}
		it, ok, err := p.recv(ctx)
		if err != nil {
			return pg, err
		}
		if !ok {
			return p.end(pg)
		}
		p.sawLast = it.last
		p.cur, p.off = it.batch, 0
	}
	return pg, nil
}

// end is the last page, or the statement's error when it failed.
func (p *paged) end(pg page) (page, error) {
	if !p.sawLast {
		// The statement's end is known when it has ended; an item marked last was
		// sent after it had, without error.
		<-p.done
	}
	if p.err != nil {
		return pg, p.err
	}
	if p.columns == nil {
		p.columns = []column{}
	}
	pg.last = true
	return pg, nil
}

// answer writes pg: the last page carries the record and ends the result; another
// carries next_uri, the only way to the page after it.
func (p *paged) answer(w http.ResponseWriter, pg page) {
	out := struct {
		QueryID string          `json:"query_id"`
		Columns []column        `json:"columns"`
		Rows    json.RawMessage `json:"rows"`
		NextURI string          `json:"next_uri,omitempty"`
		Record  *lore.Record    `json:"record,omitempty"`
	}{QueryID: p.q.id, Columns: p.columns}
	out.Rows = append(append(append(make([]byte, 0, len(pg.rows)+2), '['), pg.rows...), ']')
	if pg.last {
		p.token = ""
		p.closed = true
		out.Record = p.rec
		p.finish(StateFinished, p.rec, nil)
		p.s.pages.remove(p)
	} else {
		p.token = newQueryID()
		out.NextURI = "/v1/statement/" + url.PathEscape(p.q.id) + "/" + p.token
		p.armTimer()
	}
	writeJSON(w, http.StatusOK, out)
}

// fail answers a page request with the statement's error and closes the result.
func (p *paged) fail(w http.ResponseWriter, err error) {
	p.closed = true
	p.token = ""
	p.cancel()
	<-p.done
	p.ended(err)
	p.s.pages.remove(p)
	writeErrorRecord(w, p.q.id, err, p.rec)
}

// armTimer (re)starts the idle timer: a result whose next page is not asked for
// within the timeout expires.
func (p *paged) armTimer() {
	p.gen++
	gen := p.gen
	if p.timer != nil {
		p.timer.Stop()
	}
	p.timer = time.AfterFunc(p.s.opts.ResultIdleTimeout, func() { p.expire(gen) })
}

// expire cancels an abandoned result's statement; its next_uri is then 410
// RESULT_EXPIRED.
func (p *paged) expire(gen int) {
	p.mu.Lock()
	if p.gen != gen || p.closed {
		p.mu.Unlock()
		return
	}
	p.closed, p.token = true, ""
	p.expired.Store(true)
	p.mu.Unlock()
	p.shut(bodyOf(expiredError(p.q.id)))
}

// abort closes the result on DELETE /v1/queries/{id} or shutdown: the statement's
// context is canceled at once, and the result is forgotten once a page being built
// (which then fails CANCELED) is done.
func (p *paged) abort() {
	p.cancel()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed, p.token = true, ""
	p.mu.Unlock()
	p.shut(bodyOf(errs.New(errs.Canceled, "the result of query %q was canceled before its last page was read", p.q.id)))
}

// shut cancels the statement, waits for it to end and forgets the result. The
// registry says CANCELED with eb even when the statement had produced every row, as
// the client did not get them all; the record is the engine's.
func (p *paged) shut(eb *errorBody) {
	p.cancel()
	<-p.done
	p.finish(StateCanceled, p.rec, eb)
	p.s.pages.remove(p)
}

// nextPage answers GET /v1/statement/{id}/{token}: the page after the one that gave
// the token. Tokens are single-use and ordered: a used or unknown one is 404; the
// token of an expired result is 410 RESULT_EXPIRED. Only the statement's owner or an
// admin may read it (another's is 404, as if absent).
func (s *Server) nextPage(w http.ResponseWriter, r *http.Request, pr lore.Principal) {
	id, token := r.PathValue("id"), r.PathValue("token")
	if l, ok := r.Context().Value(logKey{}).(*logFields); ok {
		l.queryID = id
	}
	p := s.pages.get(id)
	if p == nil || (pr.Role != lore.RoleAdmin && p.q.owner.Name != pr.Name) {
		// A result that ended in error (expired, canceled) says so; else it is absent.
		if info, ok := s.queries.get(id); ok && visible(info, pr) && info.Error != nil && info.State != StateRunning {
			writeError(w, id, errs.New(errs.Code(info.Error.Code), "%s", info.Error.Message))
			return
		}
		writeError(w, id, errs.New(errs.NotFound, "no open result of query %q", id))
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed && p.expired.Load() {
		writeError(w, id, expiredError(id))
		return
	}
	if p.closed || p.token == "" || token != p.token {
		writeError(w, id, errs.New(errs.NotFound, "no page %q of query %q: a page token is used once, in order", token, id))
		return
	}
	p.token = ""
	p.gen++ // the idle timer waits while the page is built
	pg, err := p.next(r.Context())
	if err != nil {
		p.fail(w, err)
		return
	}
	p.answer(w, pg)
}

// pageTable holds the open paged results by query id.
type pageTable struct {
	max  int
	mu   sync.Mutex
	byID map[string]*paged
}

func newPageTable(max int) *pageTable { return &pageTable{max: max, byID: map[string]*paged{}} }

// add holds p, unless max results are open.
func (t *pageTable) add(p *paged) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.byID) >= t.max {
		return false
	}
	t.byID[p.q.id] = p
	return true
}

func (t *pageTable) get(id string) *paged {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[id]
}

func (t *pageTable) remove(p *paged) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID[p.q.id] == p {
		delete(t.byID, p.q.id)
	}
}

// all is every open result.
func (t *pageTable) all() []*paged {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*paged, 0, len(t.byID))
	for _, p := range t.byID {
		out = append(out, p)
	}
	return out
}

// OpenResults is the number of paged results open now.
func (s *Server) OpenResults() int { return len(s.pages.all()) }

// CloseResults cancels every open paged result and waits for their statements to
// end: graceful shutdown calls it once requests in flight are done, since a result
// waiting for its next page holds no connection the HTTP server would wait for.
func (s *Server) CloseResults() int {
	ps := s.pages.all()
	for _, p := range ps {
		p.abort()
	}
	return len(ps)
}
