package server_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/loredb/lore/server"
)

// scrape reads /metrics as token and parses the text format into its families.
func (f *fixture) scrape(token string) map[string]float64 {
	f.t.Helper()
	r := f.do("GET", "/metrics", token, nil)
	if r.status != 200 {
		f.t.Fatalf("/metrics: %d %s", r.status, r.body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(r.body))
	if err != nil {
		f.t.Fatalf("/metrics does not parse: %v\n%s", err, r.body)
	}
	out := map[string]float64{}
	for name, fam := range fams {
		for _, m := range fam.Metric {
			key := name
			var labels []string
			for _, l := range m.Label {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			case m.Histogram != nil:
				out[key+"_count"] = float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return out
}

func TestMetrics(t *testing.T) {
	f := newFixture(t, fixtureOptions{maxRunning: 3, maxQueued: 5})
	f.ok(f.admin, "SELECT count(*) FROM ev WHERE user_id > 10")
	f.ok(f.admin, "SELECT count(*) FROM ev WHERE user_id > 10") // a result-cache hit
	f.ok(f.admin, "ANALYZE ev")
	f.ok(f.reader, "SELECT count(*) FROM ev")
	if r := f.stmt(f.reader, map[string]any{"sql": "SELEC 1"}); r.status != 400 {
		t.Fatalf("a syntax error: %d", r.status)
	}
	m := f.scrape(f.admin)
	for key, want := range map[string]float64{
		"lore_statements_total{code=,mode=cache,status=finished}":          1,
		"lore_statements_total{code=,mode=context,status=finished}":        1,
		"lore_statements_total{code=SYNTAX_ERROR,mode=scan,status=failed}": 1, // the record says scan until planned
		"lore_statement_duration_seconds{mode=cache}_count":                1,
		"lore_statement_duration_seconds{mode=context}_count":              1,
		"lore_result_cache_hits_total":                                     1,
		"lore_admission_max_running":                                       3,
		"lore_admission_max_queued":                                        5,
		"lore_admission_running":                                           0,
		"lore_admission_queued":                                            0,
		"lore_statistics_refreshes_total{outcome=done}":                    0,
		"lore_s3_requests_total{kind=get}":                                 0,
		"lore_scan_row_groups_pruned_total":                                0,
		"lore_scan_files_pruned_by_partition_total":                        0,
	} {
		if got, ok := m[key]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", key, got, ok, want)
		}
	}
	// The first SELECT and CREATE TABLE are scans (CREATE reads nothing); ANALYZE
	// read the table too: every row was scanned at least once by the first SELECT.
	if m["lore_statements_total{code=,mode=scan,status=finished}"] < 2 {
		t.Errorf("scan statements: %v", m["lore_statements_total{code=,mode=scan,status=finished}"])
	}
	if m["lore_scan_rows_scanned_total"] < 20_000 || m["lore_scan_bytes_read_total"] <= 0 || m["lore_scan_row_groups_read_total"] <= 0 ||
		m["lore_scan_files_opened_total"] < 2 {
		t.Errorf("scan counters: rows %v bytes %v row groups %v files %v", m["lore_scan_rows_scanned_total"],
			m["lore_scan_bytes_read_total"], m["lore_scan_row_groups_read_total"], m["lore_scan_files_opened_total"])
	}

	// Admin only by default.
	if r := f.do("GET", "/metrics", f.reader, nil); r.status != 403 || r.code(t) != "FORBIDDEN" {
		t.Errorf("reader: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/metrics", "", nil); r.status != 401 {
		t.Errorf("no token: %d %s", r.status, r.body)
	}
}

func TestMetricsOpen(t *testing.T) {
	f := newFixture(t, fixtureOptions{serverOpts: server.Options{MetricsOpen: true}})
	if m := f.scrape(""); m["lore_statements_total{code=,mode=scan,status=finished}"] != 1 {
		t.Errorf("the CREATE TABLE is not counted: %v", m)
	}
}
