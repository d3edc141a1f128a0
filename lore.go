// Package lore is the embedding API of the Lore engine: Open an Engine over a home
// directory, run statements with Query, and read the Arrow result and its query
// record. The CLI and the HTTP server are thin layers over this package.
package lore

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/internal/home"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage/s3"
)

// Options configure an Engine. The zero value is valid: EnsureDefaults fills it.
type Options struct {
	// Home is the directory holding the catalog (catalog.db). Default: $LORE_HOME,
	// else ./.lore.
	Home string
	// MemoryLimit is the byte budget shared by running statements, and the Go
	// runtime's soft memory limit. Default: $LORE_MEMORY_LIMIT (ParseMemoryLimit),
	// else 80 % of the machine's memory or of the control group's limit, whichever
	// is lower.
	MemoryLimit int64
	// Threads is the number of workers a scan uses. Default: GOMAXPROCS.
	Threads int
	// Logger receives operational logs. Default: discard.
	Logger *slog.Logger
	// Progress, when set, is told how a long piece of work advances (ANALYZE's full
	// read: rows done of rows in all): what names the work. Calls never overlap.
	Progress func(what string, done, total int64)
	// GCPercent is the Go garbage collector's target (debug.SetGCPercent) set by Open
	// for the whole process, with 7/8 of the memory limit as the collector's soft limit:
	// scans allocate batch after batch over a small live heap, and the default of 100
	// collects far more often than memory requires. Default 400; negative leaves the
	// collector alone, as do the GOGC and GOMEMLIMIT environment variables when set.
	GCPercent int
	// GCHeadroom caps the collector's target for large live heaps: once GCPercent
	// would let the heap grow more than GCHeadroom bytes past what the last
	// collection left live, the target is lowered to allow GCHeadroom (never below
	// 35), and raised again as the live heap shrinks. The first engine opened in a
	// process sets it for the process. Default 24 MiB; negative: GCPercent alone.
	GCHeadroom int64
	// NoAutoRefresh turns off the background refresh of statistics records whose
	// source has moved (SPEC §4). Default: on, unless $LORE_STATISTICS_AUTO_REFRESH
	// is false.
	NoAutoRefresh bool
	// S3 says how s3:// locations are reached. Default: the environment
	// ($LORE_S3_ENDPOINT, $LORE_S3_REGION, $LORE_S3_ALLOW_HTTP, $LORE_S3_PATH_STYLE)
	// and the standard AWS credential chain.
	S3 *s3.Config
	// CacheBytes bounds the local disk cache of what is read from object stores, under
	// Home/cache. Default: $LORE_CACHE_BYTES (a size such as 10GiB), else no cache.
	CacheBytes int64
	// SpillDir is where statements larger than their memory budget spill (external
	// sorts). Default: $LORE_TMP, else Home/tmp.
	SpillDir string
	// SpillLimit bounds the bytes all statements' spill files may hold at once; a
	// statement that needs more fails with RESOURCE_EXHAUSTED. Default:
	// $LORE_SPILL_LIMIT (a size such as 64GiB), else 64 GiB.
	SpillLimit int64
	// ResultCacheBytes bounds the results kept to answer the same query over the same
	// source versions again (the result_cache setting). Default: an eighth of the
	// memory limit, at most 256 MiB; negative keeps none.
	ResultCacheBytes int64
	// AllowPaths are the locations (prefixes) a principal that is no admin may read by
	// path (FROM 'path', read_parquet, delta_scan, iceberg_scan). Default: none.
	AllowPaths []string
	// Ceilings are the highest guardrails a statement may run under (SPEC §13): a
	// request's settings may lower each, never raise it, and a request that sets
	// none runs under the ceiling. Default: none (zero fields).
	Ceilings Guardrails
	// MaxRunning is how many statements that read data run at once; the rest wait
	// in a first-come first-served queue. Answers from statistics, EXPLAIN, dry runs
	// and catalog statements read no data and are not queued. Default: GOMAXPROCS.
	MaxRunning int
	// Beam says how work run with execution = 'beam' reaches Apache Beam (see
	// BeamOptions; docs/distributed.md).
	Beam BeamOptions
	// MaxQueued is how many statements may wait for admission; one more is refused
	// with RESOURCE_EXHAUSTED (ErrQueueFull). Default 64; negative: no queue, a
	// statement that cannot run at once is refused.
	MaxQueued int
}

// EnsureDefaults fills unset options with their defaults.
func (o *Options) EnsureDefaults() {
	if o.Home == "" {
		o.Home = home.Dir("")
	}
	if o.MemoryLimit <= 0 {
		o.MemoryLimit = defaultMemoryLimit()
	}
	if o.SpillDir == "" {
		o.SpillDir = filepath.Join(o.Home, "tmp")
	}
	if o.SpillLimit <= 0 {
		o.SpillLimit = defaultSpillLimit
	}
	o.Beam.fromEnvironment(o.SpillDir)
	if o.Threads <= 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.ResultCacheBytes == 0 {
		o.ResultCacheBytes = min(o.MemoryLimit/8, 256<<20)
	}
	if o.MaxRunning <= 0 {
		o.MaxRunning = runtime.GOMAXPROCS(0)
	}
	if o.MaxQueued == 0 {
		o.MaxQueued = 64
	}
	if o.GCPercent == 0 {
		o.GCPercent = 400
	}
	if o.GCHeadroom == 0 {
		o.GCHeadroom = 24 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if v, err := strconv.ParseBool(os.Getenv("LORE_STATISTICS_AUTO_REFRESH")); err == nil && !v {
		o.NoAutoRefresh = true
	}
}

// Result is the outcome of a statement: its Arrow schema, its batches and its query
// record. Batches are owned by the Result.
type Result struct {
	Schema  *arrow.Schema
	Batches []arrow.Record
	Record  *Record
}

// NumRows is the number of result rows.
func (r *Result) NumRows() int64 {
	var n int64
	for _, b := range r.Batches {
		n += b.NumRows()
	}
	return n
}

// Record is the query record of SPEC §7: what ran, how it was answered, and what
// each scan read.
type Record struct {
	ID        string            `json:"id"`
	SQL       string            `json:"sql"`
	Settings  map[string]string `json:"settings"`
	State     string            `json:"state"`
	ElapsedMS float64           `json:"elapsed_ms"`
	// QueuedMS is how long of ElapsedMS the statement waited for admission.
	QueuedMS  float64      `json:"queued_ms,omitempty"`
	Rows      int64        `json:"rows"`
	Execution Execution    `json:"execution"`
	Scans     []ScanRecord `json:"scans"`
	Error     *RecordError `json:"error,omitempty"`
	// Subject names who ran the statement (WithPrincipal); empty for the process.
	Subject string `json:"subject,omitempty"`
	// Endpoint names what the statement came through (WithEndpoint: "http",
	// "flight"); empty for the embedding program and the command line.
	Endpoint string `json:"endpoint,omitempty"`
	// Estimate is what a dry run (dry_run = true, Engine.Estimate) found the
	// statement would read; its Execution.Mode is then "dry_run".
	Estimate *Estimate `json:"estimate,omitempty"`
}

// Execution says how a statement was answered.
type Execution struct {
	// Mode is "scan" (data read), "context" (answered from statistics), "cache", or
	// "dry_run" (nothing run: the record's Estimate says what would be read).
	Mode   string `json:"mode"`
	Detail string `json:"detail,omitempty"`
	// SourceVersion and CurrentSourceVersion are set when statistics took part.
	SourceVersion        json.RawMessage `json:"source_version,omitempty"`
	CurrentSourceVersion json.RawMessage `json:"current_source_version,omitempty"`
	Approximate          []Approximation `json:"approximate,omitempty"`
	// Distributed is the part of the statement that ran on Apache Beam
	// (execution = 'beam').
	Distributed *Distributed `json:"distributed,omitempty"`
	// CachedFrom is, for mode "cache", the id of the query that computed the result.
	CachedFrom string `json:"cached_from,omitempty"`
	// SpilledBytes and SpillFiles count what the statement wrote to spill files
	// because its memory budget could not hold it.
	SpilledBytes int64 `json:"spilled_bytes,omitempty"`
	SpillFiles   int64 `json:"spill_files,omitempty"`
}

// Approximation labels one estimated result.
type Approximation struct {
	Function  string  `json:"function"`
	Argument  string  `json:"argument"`
	Sketch    string  `json:"sketch"`
	Error     float64 `json:"error"`
	ErrorKind string  `json:"error_kind"`
}

// ScanRecord is one table scan's counters.
type ScanRecord struct {
	Table    string `json:"table"`
	Location string `json:"location"`
	source.Snapshot
}

// RecordError is the error of a failed statement.
type RecordError struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Position *int   `json:"position,omitempty"`
}
