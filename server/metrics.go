package server

import (
	"bufio"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/source"
)

// metrics are the server's metrics (GET /metrics), written in the Prometheus text
// exposition format (version 0.0.4) by the server itself: the handful of counters,
// gauges and one histogram it keeps need no client library, and the lore command
// then does not initialise one in every process. Statements are counted from their
// completed records in one place (observe); admission, refreshes and object-store
// requests are read from the engine when scraped.
type metrics struct {
	engine *lore.Engine

	mu         sync.Mutex
	statements map[statementKey]int64 // guarded by mu
	latency    map[string]*histogram  // by mode; guarded by mu

	cacheHits atomic.Int64
	scan      []atomic.Int64 // as scanCounters
}

// statementKey is the labels of lore_statements_total.
type statementKey struct{ mode, status, code string }

// histogram is one labelled series of a histogram: counts per bucket (not
// cumulative; the last is the +Inf bucket), the sum and the count of observations.
type histogram struct {
	counts []int64
	sum    float64
	count  int64
}

// latencyBuckets are the upper bounds of the latency histogram's buckets: from
// 0.1 ms (a cache hit) to 60 s (a long scan) in 18 steps of one factor, about three
// buckets a decade.
var latencyBuckets = geometricBounds(0.0001, 60, 18)

// geometricBounds returns n bounds from lo to hi, each the previous times one factor.
func geometricBounds(lo, hi float64, n int) []float64 {
	factor := math.Pow(hi/lo, 1/float64(n-1))
	out := make([]float64, n)
	for i := range out {
		out[i] = lo * math.Pow(factor, float64(i))
	}
	out[n-1] = hi // exactly, not as rounded by the powers
	return out
}

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
	return &metrics{
		engine:     e,
		statements: map[statementKey]int64{},
		latency:    map[string]*histogram{},
		scan:       make([]atomic.Int64, len(scanCounters)),
	}
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
	if rec != nil && rec.ElapsedMS > 0 {
		elapsed = time.Duration(rec.ElapsedMS * float64(time.Millisecond))
	}
	seconds := elapsed.Seconds()
	m.mu.Lock()
	m.statements[statementKey{mode, status, code}]++
	h := m.latency[mode]
	if h == nil {
		h = &histogram{counts: make([]int64, len(latencyBuckets)+1)}
		m.latency[mode] = h
	}
	h.counts[sort.SearchFloat64s(latencyBuckets, seconds)]++ // the first bound ≥ seconds
	h.sum += seconds
	h.count++
	m.mu.Unlock()
	if rec == nil {
		return
	}
	if mode == "cache" {
		m.cacheHits.Add(1)
	}
	for _, sc := range rec.Scans {
		for i, c := range scanCounters {
			if v := c.of(sc.Snapshot); v > 0 {
				m.scan[i].Add(v)
			}
		}
	}
}

// write renders every metric in the text exposition format, families in name order
// and each family's series in label order.
func (m *metrics) write(w *expositionWriter) {
	e := m.engine
	adm, ref, s3 := e.Admission(), e.Refreshes(), e.S3Requests()
	type family struct {
		name, help, kind string
		render           func()
	}
	fams := []family{
		{"lore_statements_total", "Statements that ended, by how they were answered (mode), status (finished or failed) and error code.", "counter", func() {
			m.mu.Lock()
			keys := make([]statementKey, 0, len(m.statements))
			for k := range m.statements {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool {
				a, b := keys[i], keys[j]
				if a.code != b.code {
					return a.code < b.code
				}
				if a.mode != b.mode {
					return a.mode < b.mode
				}
				return a.status < b.status
			})
			for _, k := range keys {
				w.sample("lore_statements_total", float64(m.statements[k]), "code", k.code, "mode", k.mode, "status", k.status)
			}
			m.mu.Unlock()
		}},
		{"lore_statement_duration_seconds", "Elapsed time of statements that ended, admission wait included, by mode.", "histogram", func() {
			m.mu.Lock()
			modes := make([]string, 0, len(m.latency))
			for mode := range m.latency {
				modes = append(modes, mode)
			}
			sort.Strings(modes)
			for _, mode := range modes {
				h := m.latency[mode]
				var cum int64
				for i, c := range h.counts {
					cum += c
					le := math.Inf(1)
					if i < len(latencyBuckets) {
						le = latencyBuckets[i]
					}
					w.sample("lore_statement_duration_seconds_bucket", float64(cum), "mode", mode, "le", formatFloat(le))
				}
				w.sample("lore_statement_duration_seconds_sum", h.sum, "mode", mode)
				w.sample("lore_statement_duration_seconds_count", float64(h.count), "mode", mode)
			}
			m.mu.Unlock()
		}},
		{"lore_result_cache_hits_total", "Statements answered from the result cache.", "counter", func() {
			w.sample("lore_result_cache_hits_total", float64(m.cacheHits.Load()))
		}},
		{"lore_admission_running", "Statements admitted and running now.", "gauge", func() {
			w.sample("lore_admission_running", float64(adm.Running))
		}},
		{"lore_admission_queued", "Statements waiting for admission now.", "gauge", func() {
			w.sample("lore_admission_queued", float64(adm.Queued))
		}},
		{"lore_admission_max_running", "The engine's limit of statements running at once.", "gauge", func() {
			w.sample("lore_admission_max_running", float64(adm.MaxRunning))
		}},
		{"lore_admission_max_queued", "The engine's limit of statements waiting.", "gauge", func() {
			w.sample("lore_admission_max_queued", float64(adm.MaxQueued))
		}},
		{"lore_statistics_refreshes_total", "Background statistics refreshes that ended, by outcome.", "counter", func() {
			w.sample("lore_statistics_refreshes_total", float64(ref.Done), "outcome", "done")
			w.sample("lore_statistics_refreshes_total", float64(ref.Failed), "outcome", "failed")
		}},
		{"lore_s3_requests_total", "Object-store requests, by kind (put counts every write and delete).", "counter", func() {
			w.sample("lore_s3_requests_total", float64(s3.Get), "kind", "get")
			w.sample("lore_s3_requests_total", float64(s3.Head), "kind", "head")
			w.sample("lore_s3_requests_total", float64(s3.List), "kind", "list")
			w.sample("lore_s3_requests_total", float64(s3.Put), "kind", "put")
		}},
		{"lore_s3_retries_total", "Object-store requests sent again after a failure.", "counter", func() {
			w.sample("lore_s3_retries_total", float64(s3.Retries))
		}},
		{"lore_s3_bytes_total", "Bytes read from object stores.", "counter", func() {
			w.sample("lore_s3_bytes_total", float64(s3.Bytes))
		}},
	}
	for i, c := range scanCounters {
		name := "lore_scan_" + c.name + "_total"
		fams = append(fams, family{name, c.help, "counter", func() { w.sample(name, float64(m.scan[i].Load())) }})
	}
	sort.Slice(fams, func(i, j int) bool { return fams[i].name < fams[j].name })
	for _, f := range fams {
		w.header(f.name, f.help, f.kind)
		f.render()
	}
}

// expositionWriter writes the lines of the text exposition format.
type expositionWriter struct{ *bufio.Writer }

// header writes a family's HELP and TYPE lines.
func (w *expositionWriter) header(name, help, kind string) {
	w.WriteString("# HELP " + name + " " + escapeHelp(help) + "\n# TYPE " + name + " " + kind + "\n")
}

// sample writes one series: its name, its labels given as name, value pairs, and
// its value.
func (w *expositionWriter) sample(name string, v float64, labels ...string) {
	w.WriteString(name)
	for i := 0; i+1 < len(labels); i += 2 {
		if i == 0 {
			w.WriteByte('{')
		} else {
			w.WriteByte(',')
		}
		w.WriteString(labels[i] + `="` + escapeLabel(labels[i+1]) + `"`)
	}
	if len(labels) > 0 {
		w.WriteByte('}')
	}
	w.WriteString(" " + formatFloat(v) + "\n")
}

// formatFloat writes a value as the format spells it: shortest decimal, and +Inf,
// -Inf and NaN by those names.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }

// serveMetrics answers GET /metrics in the Prometheus text format. Unless the server
// was started with MetricsOpen it needs an admin token: the figures say what the
// server is asked and how much it reads.
func (s *Server) serveMetrics() http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		bw := &expositionWriter{bufio.NewWriter(w)}
		s.metrics.write(bw)
		bw.Flush()
	})
	if s.opts.MetricsOpen {
		return h
	}
	return s.auth(adminOnly(func(w http.ResponseWriter, r *http.Request, _ lore.Principal) { h.ServeHTTP(w, r) }))
}
