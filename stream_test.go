package lore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// batchSink records what QueryStream hands over; it fails once it holds failAfter
// rows, when failAfter is set.
type batchSink struct {
	schema    *arrow.Schema
	batches   int
	rows, sum int64
	failAfter int64
}

var errSinkFull = errors.New("the sink is full")

func (s *batchSink) Schema(sc *arrow.Schema) error {
	if s.batches > 0 {
		return errors.New("schema after a batch")
	}
	s.schema = sc
	return nil
}

func (s *batchSink) Batch(r arrow.Record) error {
	if s.schema == nil {
		return errors.New("a batch before the schema")
	}
	s.batches++
	s.rows += r.NumRows()
	for _, v := range r.Column(0).(*array.Int64).Int64Values() {
		s.sum += v
	}
	if s.failAfter > 0 && s.rows >= s.failAfter {
		return errSinkFull
	}
	return nil
}

// TestQueryStream: a streamed result arrives batch by batch with its schema first
// and the same rows as Query; its record is final and logged; a guardrail stops it
// mid-stream after some batches; a sink's error stops the statement; a cache hit
// streams the kept batches.
func TestQueryStream(t *testing.T) {
	ctx := context.Background()
	e := open(t, lore.Options{NoAutoRefresh: true})
	const n = 1_000_000
	q := "SELECT range AS v FROM range(1000000)"
	var s batchSink
	rec, err := e.QueryStream(ctx, q, map[string]string{"result_cache": "false"}, &s)
	if err != nil || s.rows != n || s.sum != n*(n-1)/2 || s.batches < 2 || rec.Rows != n || rec.State != "finished" {
		t.Fatalf("%v: %d rows in %d batches, sum %d, record %+v", err, s.rows, s.batches, s.sum, rec)
	}
	if logged, err := e.LoggedRecord(ctx, rec.ID); err != nil || logged == nil || logged.Rows != n {
		t.Fatalf("logged record %+v: %v", logged, err)
	}

	// Streamed, the result is held a batch at a time: 8 MB of rows pass through a
	// statement limited to 2 MiB (the cache's copy gives way), which Query, holding
	// the result, cannot return.
	lowMem := map[string]string{"memory_limit": "2MiB"}
	s = batchSink{}
	if rec, err := e.QueryStream(ctx, q, lowMem, &s); err != nil || s.rows != n {
		t.Fatalf("streamed under 2 MiB: %v, %d rows, record %+v", err, s.rows, rec)
	}
	if _, err := e.Query(ctx, q, map[string]string{"memory_limit": "2MiB", "result_cache": "false"}); !errors.Is(err, errs.ErrResourceExhausted) {
		t.Fatalf("collected under 2 MiB: %v", err)
	}

	// max_result_rows fails the statement after part of the result went out.
	s = batchSink{}
	rec, err = e.QueryStream(ctx, q, map[string]string{"max_result_rows": "300000"}, &s)
	if !errors.Is(err, errs.ErrResourceExhausted) || rec.State != "failed" || s.rows == 0 || s.rows > 300000 {
		t.Fatalf("guardrail: %v, %d rows handed over, record %+v", err, s.rows, rec)
	}

	// The sink's error is the statement's; the series stopped where the sink did.
	s = batchSink{failAfter: 1}
	rec, err = e.QueryStream(ctx, q, nil, &s)
	if !errors.Is(err, errSinkFull) || s.batches != 1 || rec.State != "failed" || rec.Error == nil {
		t.Fatalf("sink error: %v after %d batches, record %+v", err, s.batches, rec)
	}

	// A small result is kept while it streams and a repeat streams it from the cache.
	small := "SELECT range AS v FROM range(10000)"
	s = batchSink{}
	first, err := e.QueryStream(ctx, small, nil, &s)
	if err != nil {
		t.Fatal(err)
	}
	s = batchSink{}
	again, err := e.QueryStream(ctx, small, nil, &s)
	if err != nil || again.Execution.Mode != "cache" || again.Execution.CachedFrom != first.ID || s.rows != 10000 || s.sum != 10000*9999/2 || again.Rows != 10000 {
		t.Fatalf("repeat: %v, mode %s, %d rows, record rows %d", err, again.Execution.Mode, s.rows, again.Rows)
	}
	// A result past what the cache takes is not kept.
	huge := "SELECT range AS v FROM range(20000000)"
	for i := 0; i < 2; i++ {
		s = batchSink{}
		rec, err := e.QueryStream(ctx, huge, nil, &s)
		if err != nil || rec.Execution.Mode != "scan" {
			t.Fatalf("huge result, run %d: %v, mode %s", i, err, rec.Execution.Mode)
		}
	}
}
