package server

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/loredb/lore"
	"github.com/loredb/lore/source"
)

// metrics are the server's Prometheus metrics (GET /metrics), in a registry of
// their own so that an embedding program's global registry is neither read nor
// written. Statements are counted from their completed records in one place
// (observe); admission, refreshes and object-store requests are read from the
// engine when scraped.
type metrics struct {
	reg *prometheus.Registry

	statements *prometheus.CounterVec   // mode, status, code
	latency    *prometheus.HistogramVec // mode
	cacheHits  prometheus.Counter
	scan       []prometheus.Counter // as scanCounters
}

// latencyBuckets span 0.1 ms (a cache hit) to 60 s (a long scan), about three
// buckets a decade.
var latencyBuckets = prometheus.ExponentialBucketsRange(0.0001, 60, 18)

// scanCounters name the counters summed over a record's scans, with their help and
// where a scan's snapshot holds them.
var scanCounters = []struct {
	name, help string
	of         func(source.Snapshot) int64
}{
	{"files_pruned_by_partition", "Files pruned by partition values before any read.", func(s source.Snapshot) int64 { return s.FilesPrunedByPartition }},
	{"files_considered", "Files scans considered.", func(s source.Snapshot) int64 { return s.FilesConsidered }},
	{"files_skipped", "Files skipped by their statistics.", func(s source.Snapshot) int64 { return s.FilesSkipped }},
	{"files_opened", "Files scans opened.", func(s source.Snapshot) int64 { return s.FilesOpened }},
	{"row_groups_considered", "Row groups scans considered.", func(s source.Snapshot) int64 { return s.RowGroupsConsidered }},
	{"row_groups_pruned", "Row groups pruned by footers, zones or bloom filters.", func(s source.Snapshot) int64 { return s.RowGroupsPruned }},
	{"row_groups_answered", "Row groups answered from statistics without reading them.", func(s source.Snapshot) int64 { return s.RowGroupsAnswered }},
	{"row_groups_read", "Row groups read.", func(s source.Snapshot) int64 { return s.RowGroupsRead }},
	{"row_groups_pruned_by_bloom", "Row groups pruned by bloom filters (also counted in row_groups_pruned).", func(s source.Snapshot) int64 { return s.RowGroupsPrunedByBloom }},
	{"bloom_filters_read", "Bloom filters read.", func(s source.Snapshot) int64 { return s.BloomFiltersRead }},
	{"bloom_filter_bytes_read", "Bytes of bloom filters read.", func(s source.Snapshot) int64 { return s.BloomFilterBytesRead }},
	{"rows_scanned", "Rows scanned.", func(s source.Snapshot) int64 { return s.RowsScanned }},
	{"bytes_read", "Compressed bytes read by scans.", func(s source.Snapshot) int64 { return s.CompressedBytesRead }},
	{"pages_skipped", "Pages the page index ruled out.", func(s source.Snapshot) int64 { return s.PagesSkipped }},
	{"compressed_bytes_selected", "Compressed bytes of the pages the page index left to read.", func(s source.Snapshot) int64 { return s.CompressedBytesSelected }},
	{"row_filter_rows_examined", "Rows a row filter (late materialisation) examined.", func(s source.Snapshot) int64 { return s.RowFilterRowsExamined }},
	{"row_filter_rows_admitted", "Rows a row filter admitted, whose other columns were then decoded.", func(s source.Snapshot) int64 { return s.RowFilterRowsAdmitted }},
	{"row_groups_filter_proved", "Row groups whose statistics proved filter conjuncts true on every row, which then did not run there.", func(s source.Snapshot) int64 { return s.RowGroupsFilterProved }},
}

func newMetrics(e *lore.Engine) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.statements = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lore_statements_total",
		Help: "Statements that ended, by how they were answered (mode), status (finished or failed) and error code.",
	}, []string{"mode", "status", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "lore_statement_duration_seconds",
		Help:    "Elapsed time of statements that ended, admission wait included, by mode.",
		Buckets: latencyBuckets,
	}, []string{"mode"})
	m.cacheHits = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "lore_result_cache_hits_total", Help: "Statements answered from the result cache.",
	})
	m.reg.MustRegister(m.statements, m.latency, m.cacheHits)
	for _, c := range scanCounters {
		m.scan = append(m.scan, prometheus.NewCounter(prometheus.CounterOpts{Name: "lore_scan_" + c.name + "_total", Help: c.help}))
		m.reg.MustRegister(m.scan[len(m.scan)-1])
	}
	m.registerEngine(e)
	return m
}

// registerEngine adds the figures the engine keeps itself, read at each scrape.
func (m *metrics) registerEngine(e *lore.Engine) {
	gauge := func(name, help string, f func(lore.AdmissionStats) int) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help},
			func() float64 { return float64(f(e.Admission())) }))
	}
	gauge("lore_admission_running", "Statements admitted and running now.", func(a lore.AdmissionStats) int { return a.Running })
	gauge("lore_admission_queued", "Statements waiting for admission now.", func(a lore.AdmissionStats) int { return a.Queued })
	gauge("lore_admission_max_running", "The engine's limit of statements running at once.", func(a lore.AdmissionStats) int { return a.MaxRunning })
	gauge("lore_admission_max_queued", "The engine's limit of statements waiting.", func(a lore.AdmissionStats) int { return a.MaxQueued })
	counter := func(name, help string, labels prometheus.Labels, f func() int64) {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels},
			func() float64 { return float64(f()) }))
	}
	counter("lore_statistics_refreshes_total", "Background statistics refreshes that ended, by outcome.",
		prometheus.Labels{"outcome": "done"}, func() int64 { return e.Refreshes().Done })
	counter("lore_statistics_refreshes_total", "Background statistics refreshes that ended, by outcome.",
		prometheus.Labels{"outcome": "failed"}, func() int64 { return e.Refreshes().Failed })
	for kind, f := range map[string]func() int64{
		"list": func() int64 { return e.S3Requests().List }, "head": func() int64 { return e.S3Requests().Head },
		"get": func() int64 { return e.S3Requests().Get }, "put": func() int64 { return e.S3Requests().Put },
	} {
		counter("lore_s3_requests_total", "Object-store requests, by kind (put counts every write and delete).",
			prometheus.Labels{"kind": kind}, f)
	}
	counter("lore_s3_retries_total", "Object-store requests sent again after a failure.", nil, func() int64 { return e.S3Requests().Retries })
	counter("lore_s3_bytes_total", "Bytes read from object stores.", nil, func() int64 { return e.S3Requests().Bytes })
}

// observe counts one statement that ended: state is the server's final state, rec
// its record (nil when none was logged), eb its error, elapsed how long it took.
func (m *metrics) observe(rec *lore.Record, eb *errorBody, elapsed time.Duration) {
	mode := "none" // a statement refused before it was planned has no mode
	if rec != nil && rec.Execution.Mode != "" {
		mode = rec.Execution.Mode
	}
	status, code := "finished", ""
	if eb != nil {
		status, code = "failed", eb.Code
	}
	m.statements.WithLabelValues(mode, status, code).Inc()
	if rec != nil && rec.ElapsedMS > 0 {
		elapsed = time.Duration(rec.ElapsedMS * float64(time.Millisecond))
	}
	m.latency.WithLabelValues(mode).Observe(elapsed.Seconds())
	if rec == nil {
		return
	}
	if mode == "cache" {
		m.cacheHits.Inc()
	}
	for _, sc := range rec.Scans {
		for i, c := range scanCounters {
			if v := c.of(sc.Snapshot); v > 0 {
				m.scan[i].Add(float64(v))
			}
		}
	}
}

// serveMetrics answers GET /metrics in the Prometheus text format. Unless the server
// was started with MetricsOpen it needs an admin token: the figures say what the
// server is asked and how much it reads.
func (s *Server) serveMetrics() http.Handler {
	h := promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	if s.opts.MetricsOpen {
		return h
	}
	return s.auth(adminOnly(func(w http.ResponseWriter, r *http.Request, _ lore.Principal) { h.ServeHTTP(w, r) }))
}
