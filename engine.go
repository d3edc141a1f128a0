package lore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec"
	"github.com/loredb/lore/internal/jsonwarm"
	"github.com/loredb/lore/sql"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/storage/s3"
)

// Engine runs statements. It is safe for concurrent use.
type Engine struct {
	opts    Options
	catalog *catalog.Catalog
	budget  *exec.Budget
	// spill is where statements spill what their memory budget cannot hold.
	spill *exec.SpillSpace
	store storage.Store
	// stores are the stores of tables registered with their own storage options,
	// by the options' key: one per distinct configuration, shared by its tables.
	storesMu sync.Mutex
	stores   map[string]storage.Store
	// remotes are the S3 stores within store and stores, the engine's own first:
	// S3Requests adds up what they asked.
	remotes []*s3.Store
	records recordCache
	results *resultCache
	// listings are the sources' listings, kept while nothing under them changed.
	listings listingCache
	// estimates are the footer records made for the planner (footerRecord).
	estimates estimateCache
	refresh   *refresher
	admit     *admission
}

// Open opens (creating if needed) the engine's home and its catalog.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	if err := opts.fromEnvironment(); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Home, 0o755); err != nil {
		return nil, errs.New(errs.Internal, "cannot create home %q: %w", opts.Home, err)
	}
	tuneCollector(opts)
	// Built on the other core while the catalog opens: encoding/json's tables for
	// the statistics record a statement decodes and the query record it logs.
	go jsonwarm.Types(stats.Record{}, Record{})
	cat, err := catalog.Open(ctx, filepath.Join(opts.Home, "catalog.db"))
	if err != nil {
		return nil, err
	}
	if cat.ReadOnly() {
		// Statements that read still run; nothing learnt can be kept, so the
		// background refresh would only fail.
		opts.Logger.Warn("the catalog cannot be written: statements that change it fail and the query log is not kept",
			"home", opts.Home)
		opts.NoAutoRefresh = true
	}
	store, remote, err := newStore(opts)
	if err != nil {
		cat.Close()
		return nil, err
	}
	return &Engine{
		opts:    opts,
		catalog: cat,
		budget:  exec.NewBudget(opts.MemoryLimit),
		spill:   exec.NewSpillSpace(opts.SpillDir, opts.SpillLimit),
		store:   store,
		stores:  map[string]storage.Store{},
		remotes: []*s3.Store{remote},
		results: newResultCache(opts.ResultCacheBytes),
		refresh: newRefresher(),
		admit:   newAdmission(opts.MaxRunning, opts.MaxQueued),
	}, nil
}

// newStore is the store every location is read through: local disk, and S3 for
// s3:// (s3a://, s3n://) locations as opts.S3 says, its reads cached on disk under
// Home/cache when opts.CacheBytes allows.
func newStore(opts Options) (storage.Store, *s3.Store, error) {
	return newRouter(baseS3(opts))
}

// baseS3 is the S3 configuration of the engine: opts.S3 with the disk cache.
func baseS3(opts Options) s3.Config {
	cfg := s3.Config{}
	if opts.S3 != nil {
		cfg = *opts.S3
	}
	if cfg.Cache == nil && opts.CacheBytes > 0 {
		cfg.Cache = s3.NewDiskCache(filepath.Join(opts.Home, "cache", "s3"), opts.CacheBytes)
	}
	return cfg
}

// newRouter routes local paths to local disk and s3:// (s3a://, s3n://) ones to an S3
// store of cfg.
func newRouter(cfg s3.Config) (storage.Store, *s3.Store, error) {
	remote, err := s3.New(cfg)
	if err != nil {
		return nil, nil, errs.New(errs.InvalidSetting, "%w", err)
	}
	schemes := map[string]storage.Store{}
	for _, sc := range s3.Schemes {
		schemes[sc] = remote
	}
	return storage.NewRouter(storage.Local{}, schemes), remote, nil
}

// tableS3 is how the objects of a table registered with storage options o are
// reached: the engine's configuration with the table's options over it.
func (e *Engine) tableS3(o catalog.StorageOptions) s3.Config {
	cfg := baseS3(e.opts)
	if o.S3Endpoint != "" {
		cfg.Endpoint = o.S3Endpoint
	}
	if o.S3Region != "" {
		cfg.Region = o.S3Region
	}
	if o.S3AllowHTTP != nil {
		cfg.AllowHTTP = *o.S3AllowHTTP
	}
	if o.S3PathStyle != nil {
		cfg.PathStyle = o.S3PathStyle
	}
	return cfg
}

// storeFor is the store a table registered with storage options o is read through:
// the engine's own when o says nothing, else one of the engine's S3 configuration
// with o's endpoint, region and addressing in place of its own (credentials, retries
// and the disk cache stay the engine's). Stores are made once per distinct o and kept.
func (e *Engine) storeFor(o catalog.StorageOptions) (storage.Store, error) {
	if o.IsZero() {
		return e.store, nil
	}
	key := o.Key()
	e.storesMu.Lock()
	defer e.storesMu.Unlock()
	if s, ok := e.stores[key]; ok {
		return s, nil
	}
	s, remote, err := newRouter(e.tableS3(o))
	if err != nil {
		return nil, err
	}
	e.stores[key] = s
	e.remotes = append(e.remotes, remote)
	return s, nil
}

// S3Requests is what the engine's statements have asked of object stores so far,
// over every store it reads through (its own and those of tables with storage
// options): a benchmark reports requests per statement from it.
func (e *Engine) S3Requests() s3.Requests {
	e.storesMu.Lock()
	defer e.storesMu.Unlock()
	var sum s3.Requests
	for _, r := range e.remotes {
		sum = sum.Add(r.Requests())
	}
	return sum
}

// tuneCollector applies Options.GCPercent and GCHeadroom, unless the environment
// already decides.
func tuneCollector(opts Options) {
	if opts.GCPercent < 0 {
		return
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(opts.GCPercent)
		if opts.GCHeadroom > 0 {
			pace(opts.GCPercent, uint64(opts.GCHeadroom))
		}
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// Seven eighths: what the runtime holds beyond the live heap (spans freed
		// but not yet returned, fragmentation, stacks) stays within the limit.
		debug.SetMemoryLimit(opts.MemoryLimit - opts.MemoryLimit/8)
	}
}

// Close stops background work and releases the engine's resources.
func (e *Engine) Close() error {
	e.refresh.close()
	return e.catalog.Close()
}

// Catalog returns the engine's catalog.
func (e *Engine) Catalog() *catalog.Catalog { return e.catalog }

// Query runs one request: optional leading SET SESSION statements, then one
// statement. settings are per-statement settings (SPEC §6); SET SESSION statements
// in the text override them. The returned error, when not nil, carries a code
// (errs.CodeOf) and, for errors in the text, a byte position (errs.PositionOf);
// the failed statement's record is still written to the query log.
func (e *Engine) Query(ctx context.Context, text string, settings map[string]string) (*Result, error) {
	var c collector
	rec, err := e.run(ctx, text, settings, &c)
	if err != nil {
		return nil, err
	}
	c.res.Record = rec
	return &c.res, nil
}

// ParseAhead has text parsed in the background, for a caller that will run it soon
// but cannot yet: a client opening the engine, say, parses its statement on a core
// the open leaves idle. Query and QueryStream of that text then find it parsed, or
// wait for the parse rather than repeat it. Anything wrong with text is reported by
// the statement that runs it, as ever.
func ParseAhead(text string) { sql.ParseAhead(text) }

// run is the one statement path of Query and QueryStream: it runs the request into
// sink, finishes its record and writes it to the query log.
func (e *Engine) run(ctx context.Context, text string, settings map[string]string, sink ResultSink) (*Record, error) {
	start := time.Now()
	rec := &Record{ID: recordID(ctx), SQL: text, Settings: map[string]string{}, State: "running",
		Execution: Execution{Mode: "scan"}, Scans: []ScanRecord{}}
	if p, ok := PrincipalOf(ctx); ok {
		rec.Subject = p.Name
	}
	rec.Endpoint = endpointOf(ctx)
	counted := &countingSink{sink: sink}
	err := e.contained(ctx, text, settings, rec, counted)
	rec.ElapsedMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		err = e.panicked(rec, err)
		err = normalizeError(ctx, err)
		rec.State = "failed"
		rec.Error = &RecordError{Code: string(errs.CodeOf(err)), Message: err.Error()}
		if p := errs.PositionOf(err); p != errs.NoPosition {
			rec.Error.Position = &p
		}
	} else {
		rec.State = "finished"
		rec.Rows = counted.rows
	}
	e.logQuery(rec, start)
	return rec, err
}

// contained runs the statement and turns a panic raised anywhere in it (binding,
// planning, its operators) into an INTERNAL error; the operators' deferred Close
// calls run as the panic unwinds, so what they held is given back.
func (e *Engine) contained(ctx context.Context, text string, settings map[string]string, rec *Record, sink ResultSink) (err error) {
	defer errs.Recover(&err)
	return e.query(ctx, text, settings, rec, sink)
}

// panicked logs the stack of a panic that failed statement rec, in this goroutine or
// one of the statement's workers, and names the statement in the error: the client
// learns that it hit a bug and which log entry tells more. Other errors pass through.
func (e *Engine) panicked(rec *Record, err error) error {
	p := errs.PanicOf(err)
	if p == nil {
		return err
	}
	e.opts.Logger.Error("statement panicked", "id", rec.ID, "sql", rec.SQL, "panic", fmt.Sprint(p.Value), "stack", string(p.Stack))
	return errs.New(errs.Internal, "internal error in statement %s (a bug in Lore; its stack is in the log): %w", rec.ID, p)
}

// normalizeError gives every error a code: context errors are CANCELED.
func normalizeError(ctx context.Context, err error) error {
	var le *errs.Error
	if errors.As(err, &le) {
		return err
	}
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errs.New(errs.Canceled, "statement canceled: %w", err)
	}
	return errs.New(errs.Internal, "%w", err)
}

func (e *Engine) logQuery(rec *Record, start time.Time) {
	doc, err := json.Marshal(rec)
	if err != nil {
		e.opts.Logger.Error("cannot encode query record", "id", rec.ID, "err", err)
		return
	}
	entry := catalog.QueryLogEntry{ID: rec.ID, SQL: rec.SQL, State: rec.State, Mode: rec.Execution.Mode,
		StartedAt: start, ElapsedMS: rec.ElapsedMS, Rows: rec.Rows, Record: doc}
	if rec.Error != nil {
		entry.ErrorCode = rec.Error.Code
	}
	if e.catalog.ReadOnly() {
		return
	}
	// The log is written even when the statement's context was canceled.
	if err := e.catalog.LogQuery(context.WithoutCancel(context.Background()), entry); err != nil {
		e.opts.Logger.Error("cannot write query log", "id", rec.ID, "err", err)
	}
	e.opts.Logger.Debug("statement", "id", rec.ID, "state", rec.State, "mode", rec.Execution.Mode, "elapsed_ms", rec.ElapsedMS)
}

func (e *Engine) query(ctx context.Context, text string, settings map[string]string, rec *Record, sink ResultSink) error {
	stmts, err := sql.Parse(text)
	if err != nil {
		return err
	}
	s, err := resolveSettings(settings)
	if err != nil {
		return err
	}
	var rest []sql.Statement
	for i, st := range stmts {
		set, ok := st.(*sql.SetSession)
		if !ok {
			rest = stmts[i:]
			break
		}
		if err := s.set(set.Key, set.Value, set.Value.Pos); err != nil {
			return err
		}
	}
	rec.Settings = s.asMap()
	if s.Limits, err = s.Limits.within(e.opts.Ceilings); err != nil {
		return err
	}
	switch {
	case len(stmts) == 0:
		return errs.New(errs.Syntax, "empty statement")
	case len(rest) == 0:
		return errs.New(errs.InvalidSetting, "a request of only SET SESSION statements does nothing; send them before a statement")
	case len(rest) > 1:
		start, _ := rest[1].Span()
		return errs.At(errs.Analysis, start, "one statement per request (after any SET SESSION statements)")
	}
	ctx, cancel := s.Limits.deadline(ctx)
	defer cancel()
	res, err := e.statement(ctx, rest[0], s, rec, sink)
	if err == nil && res != nil {
		// A result made whole (not streamed by its scan) is checked and handed over.
		if err = s.Limits.checkResult(res); err == nil {
			err = emit(res, sink)
		}
	}
	return guarded(ctx, err)
}

// statement runs st. A query's scan streams its result into sink and returns a nil
// Result; other statements return their result whole, for query to hand over.
func (e *Engine) statement(ctx context.Context, st sql.Statement, s *settingsValues, rec *Record, sink ResultSink) (*Result, error) {
	if err := authorize(ctx, st); err != nil {
		return nil, err
	}
	if _, ok := st.(*sql.Query); !ok && s.DryRun {
		return nil, errs.New(errs.InvalidSetting, "dry_run estimates a query (SELECT or EXPLAIN); this statement has no estimate")
	}
	switch st.(type) {
	case *sql.Analyze, *sql.Query, *sql.Optimize:
	default:
		if s.Execution == "beam" {
			return nil, errs.New(errs.InvalidSetting, "execution = 'beam' runs ANALYZE's full read (WITH (sketches = true)), queries' aggregates over a table and OPTIMIZE on Apache Beam; other statements run locally")
		}
	}
	if _, ok := st.(*sql.Query); !ok {
		// No view pins what other statements read: their expectations are
		// checked against the current versions before they run.
		if err := e.checkUnread(ctx, nil); err != nil {
			return nil, err
		}
	}
	switch st.(type) {
	case *sql.CreateTable, *sql.DropTable, *sql.AlterTable, *sql.Analyze, *sql.Optimize:
		// What a statement names may be another table, or be learnt anew, after it.
		defer e.results.catalogChanged()
	}
	switch x := st.(type) {
	case *sql.Query:
		return e.runQuery(ctx, x, s, rec, sink)
	case *sql.CreateTable:
		return e.createTable(ctx, x)
	case *sql.DropTable:
		return e.dropTable(ctx, x)
	case *sql.AlterTable:
		return e.alterTable(ctx, x)
	case *sql.ShowTables:
		return e.showTables(ctx)
	case *sql.Describe:
		return e.describe(ctx, x)
	case *sql.ShowCreateTable:
		return e.showCreateTable(ctx, x)
	case *sql.Analyze:
		// ANALYZE reads the table: it waits for admission like a scan.
		ctx, release, err := e.admitted(ctx, rec)
		if err != nil {
			return nil, err
		}
		defer release()
		return e.analyze(ctx, x, s, rec)
	case *sql.ShowStats:
		return e.showStats(ctx, x)
	case *sql.DescribeDetail:
		return e.describeDetail(ctx, x)
	case *sql.Optimize:
		// OPTIMIZE reads the whole table: it waits for admission like a scan.
		ctx, release, err := e.admitted(ctx, rec)
		if err != nil {
			return nil, err
		}
		defer release()
		return e.optimize(ctx, x, s, rec)
	}
	return nil, errs.New(errs.Analysis, "unsupported statement %T", st)
}

func notYet(pos int, what string) error {
	return errs.At(errs.Analysis, pos, "%s is not available in this version of Lore: statistics and layout statements are not implemented yet", what)
}

func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("BUG: no randomness: %v", err))
	}
	return hex.EncodeToString(b[:])
}

func scanRecords(env *exec.Env) []ScanRecord {
	out := make([]ScanRecord, 0, len(env.Scans))
	for _, s := range env.Scans {
		name := s.Node.Ref.Name
		out = append(out, ScanRecord{Table: name, Location: s.Node.Ref.Location, Snapshot: s.Counters.Snapshot()})
	}
	return out
}
