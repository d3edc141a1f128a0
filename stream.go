package lore

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec"
)

// ResultSink receives a statement's result as QueryStream produces it: Schema once,
// before any batch, then Batch for each non-empty batch in order. The statement waits
// while a call runs, so a slow sink slows it rather than letting rows pile up in the
// engine. An error from either method stops the statement; it fails with that error.
//
// Batch owns the record it is given: the engine keeps no reference to it once Batch
// returns (except a copy of a small result the result cache keeps, which is
// immutable). Records are Go memory, collected when unreferenced, so Batch may keep
// one without Retain and need not Release it.
type ResultSink interface {
	Schema(s *arrow.Schema) error
	Batch(r arrow.Record) error
}

// QueryStream runs one request as Query does — optional leading SET SESSION
// statements, then one statement, through the same parsing, settings, authorization,
// admission, guardrails, deadline and query log — and hands the result to sink as it
// is produced, so that memory is bounded by a batch rather than by the result.
// max_result_rows and max_result_bytes still fail the statement mid-stream: sink has
// then received part of the result, and the error says the statement failed.
//
// The returned record is final: its rows, state, error and scans are what the query
// log holds, written once when QueryStream returns. On error the record is the failed
// statement's and the error carries a code (errs.CodeOf).
func (e *Engine) QueryStream(ctx context.Context, text string, settings map[string]string, sink ResultSink) (*Record, error) {
	return e.run(ctx, text, settings, sink)
}

// countingSink counts the rows that reach sink, for the record.
type countingSink struct {
	sink ResultSink
	rows int64
}

var _ ResultSink = (*countingSink)(nil)

func (c *countingSink) Schema(s *arrow.Schema) error { return c.sink.Schema(s) }

func (c *countingSink) keepsBatches() bool { return keepsBatches(c.sink) }

// keepsBatches reports whether sink keeps every batch until the statement ends (it
// collects the result), so that the batches stay reserved from the statement's
// memory budget while it runs.
func keepsBatches(sink ResultSink) bool {
	k, ok := sink.(interface{ keepsBatches() bool })
	return ok && k.keepsBatches()
}

func (c *countingSink) Batch(r arrow.Record) error {
	c.rows += r.NumRows()
	return c.sink.Batch(r)
}

// collector is the sink of Query: it keeps the whole result.
type collector struct{ res Result }

var _ ResultSink = (*collector)(nil)

func (c *collector) Schema(s *arrow.Schema) error { c.res.Schema = s; return nil }

func (c *collector) keepsBatches() bool { return true }

func (c *collector) Batch(r arrow.Record) error {
	c.res.Batches = append(c.res.Batches, r)
	return nil
}

// emit hands a result made whole (statements other than a query's scan, an EXPLAIN,
// a cache hit) to sink.
func emit(res *Result, sink ResultSink) error {
	if err := sink.Schema(res.Schema); err != nil {
		return err
	}
	for _, b := range res.Batches {
		if b.NumRows() == 0 {
			continue
		}
		if err := sink.Batch(b); err != nil {
			return err
		}
	}
	return nil
}

// cacheCopy keeps the batches of a streamed result while they stay within what the
// result cache would accept, so that the result can be kept once it is complete;
// past that bound it drops its copy and stops keeping. The copy is reserved from the
// statement's budget while the statement runs; when the budget has no room for it,
// the copy is dropped rather than the statement failed. budget is nil when the sink
// keeps the batches itself (Query), whose reservation then covers the copy too.
type cacheCopy struct {
	sink    ResultSink
	max     int64
	budget  *exec.Budget
	bytes   int64
	over    bool
	schema  *arrow.Schema
	batches []arrow.Record
}

var _ ResultSink = (*cacheCopy)(nil)

func (c *cacheCopy) Schema(s *arrow.Schema) error {
	c.schema = s
	return c.sink.Schema(s)
}

func (c *cacheCopy) Batch(r arrow.Record) error {
	if !c.over {
		var n int64
		for _, col := range r.Columns() {
			n += int64(arraySize(col.Data()))
		}
		if c.bytes+n > c.max || c.reserve(n) != nil {
			c.drop()
		} else {
			c.bytes += n
			c.batches = append(c.batches, r)
		}
	}
	return c.sink.Batch(r)
}

func (c *cacheCopy) reserve(n int64) error {
	if c.budget == nil {
		return nil
	}
	return c.budget.Reserve(n)
}

// drop gives up the copy: the result will not be cached.
func (c *cacheCopy) drop() {
	if c.budget != nil {
		c.budget.Release(c.bytes)
	}
	c.over, c.batches, c.bytes = true, nil, 0
}

// result is the kept copy, or nil when the result outgrew the bound.
func (c *cacheCopy) result() *Result {
	if c.over {
		return nil
	}
	return &Result{Schema: c.schema, Batches: c.batches}
}
