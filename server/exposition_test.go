package server

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/loredb/lore"
)

// TestExpositionWriter checks that the writer's escaping parses back, with a
// reference parser, to the values written.
func TestExpositionWriter(t *testing.T) {
	var buf bytes.Buffer
	w := &expositionWriter{bufio.NewWriter(&buf)}
	w.header("x_total", "A help with a \\ and a\nnewline.", "counter")
	w.sample("x_total", 3, "a", "quote \" backslash \\ newline \n end", "b", "")
	w.Flush()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, buf.String())
	}
	x := fams["x_total"]
	if x.GetHelp() != "A help with a \\ and a\nnewline." {
		t.Errorf("help: %q", x.GetHelp())
	}
	l := x.Metric[0].Label
	if len(l) != 2 || l[0].GetValue() != "quote \" backslash \\ newline \n end" || x.Metric[0].Counter.GetValue() != 3 {
		t.Errorf("labels %v value %v", l, x.Metric[0].Counter.GetValue())
	}
}

// TestLatencyBuckets checks where observations land: a bound is inclusive, and past
// the last bound is the +Inf bucket.
func TestLatencyBuckets(t *testing.T) {
	m := newMetrics(nil)
	for _, ms := range []float64{0.05, 0.1, 0.11, 500, 100_000} {
		m.observe(&lore.Record{ElapsedMS: ms, Execution: lore.Execution{Mode: "scan"}}, nil, 0)
	}
	h := m.latency["scan"]
	last := len(latencyBuckets)
	if h.count != 5 || h.counts[0] != 2 || h.counts[1] != 1 || h.counts[last] != 1 || latencyBuckets[last-1] != 60 {
		t.Errorf("counts %v of bounds %v", h.counts, latencyBuckets)
	}
	if s := formatFloat(latencyBuckets[0]); s != "0.0001" {
		t.Errorf("first bound written %s", s)
	}
}
