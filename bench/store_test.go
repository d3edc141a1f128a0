package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestStoreSmoke runs the store comparison on tiny events data: every query answers
// the same from the loopback S3 server as from local disk, cold and warm; a cold S3
// run makes requests and a warm one no more than its listing per table, the chunks
// coming from the disk cache. One thread: with two, a MIN/MAX's dynamic bounds skip
// the row groups the other worker's values already rule out, so which of them a run
// reads (and fetches, in a warm run, for the first time) depends on the workers' timing.
func TestStoreSmoke(t *testing.T) {
	ctx := context.Background()
	s, err := EventsSuite(ctx, EventsConfig{Rows: 20_000, Files: 3, RowGroupRows: 4096, DataDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Threads: 1, Rounds: 1, Timeout: time.Minute,
		LoreSettings: map[string]string{"use_statistics": "false", "result_cache": "false"}}
	var out bytes.Buffer
	rep, err := CompareStore(ctx, cfg, s, StoreConfig{Warm: true, CacheBytes: 1 << 30, Latency: time.Millisecond}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Queries) != len(s.Queries) {
		t.Fatalf("%d results for %d queries", len(rep.Queries), len(s.Queries))
	}
	for _, q := range rep.Queries {
		for name, r := range map[string]*Run{"local cold": &q.LocalCold, "s3 cold": &q.S3Cold, "local warm": &q.LocalWarm, "s3 warm": &q.S3Warm} {
			if !r.OK() || r.MedianMS <= 0 {
				t.Errorf("%s %s: %+v", q.Name, name, r)
			}
		}
		if q.Equal == nil || !*q.Equal {
			t.Errorf("%s: S3 and local answers differ: %s", q.Name, q.Diff)
		}
		if q.ColdReqs.Get == 0 || q.ColdReqs.List == 0 {
			t.Errorf("%s: a cold S3 run made no reads: %+v", q.Name, q.ColdReqs)
		}
		if q.WarmReqs.Get != 0 || q.WarmReqs.List != int64(len(s.Tables)) {
			t.Errorf("%s: a warm S3 run made %+v, want the listing of its %d table(s) alone", q.Name, q.WarmReqs, len(s.Tables))
		}
	}
	if rep.ColdGeoMean <= 0 || rep.WarmGeoMean <= 0 {
		t.Errorf("geometric means: cold %v, warm %v", rep.ColdGeoMean, rep.WarmGeoMean)
	}
	if !strings.Contains(out.String(), "geometric mean of s3/local, cold:") {
		t.Errorf("no summary in the output:\n%s", out.String())
	}
}
