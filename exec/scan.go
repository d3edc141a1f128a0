package exec

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/vector"
)

// pipeline is a scan with the filters and projections above it: stateless stages
// run by every worker on the batches of the morsels it takes.
type pipeline struct {
	bd     *builder
	scan   *plan.Scan
	stats  *ScanStats
	stages []stage
}

// pipelineOf returns the pipeline n forms when n is a scan, or a filter or projection
// over one.
func (bd *builder) pipelineOf(n plan.Node) (*pipeline, bool, error) {
	switch x := n.(type) {
	case *plan.Scan:
		st := &ScanStats{Node: x}
		bd.env.Scans = append(bd.env.Scans, st)
		return &pipeline{bd: bd, scan: x, stats: st}, true, nil
	case *plan.Filter:
		p, ok, err := bd.pipelineOf(x.Input)
		if !ok || err != nil {
			return nil, false, err
		}
		st, err := bd.filterStage(x.Cond)
		if err != nil {
			return nil, false, err
		}
		p.stages = append(p.stages, st)
		return p, true, nil
	case *plan.Project:
		p, ok, err := bd.pipelineOf(x.Input)
		if !ok || err != nil {
			return nil, false, err
		}
		st, err := bd.projectStage(x.Exprs)
		if err != nil {
			return nil, false, err
		}
		p.stages = append(p.stages, st)
		return p, true, nil
	}
	return nil, false, nil
}

// run reads every morsel on the env's workers, applies the stages and hands each
// non-empty batch to sink with the worker's number. It returns the first error.
func (p *pipeline) run(ctx context.Context, sink func(worker int, b *vector.Batch) error) error {
	scan := p.scan
	var names []string
	var pos []int // scan column → position in the read batch, or -1
	pos = make([]int, len(scan.Cols))
	for i := range scan.Cols {
		pos[i] = -1
		if scan.Required == nil || scan.Required[i] {
			pos[i] = len(names)
			names = append(names, scan.Ref.Listing.Schema.Field(i).Name)
		}
	}
	sp, err := scan.Ref.Listing.Plan(ctx, p.bd.env.Store, source.ScanSpec{Columns: names, Filters: scan.Filters}, &p.stats.Counters)
	if err != nil {
		return err
	}
	if z := scan.Zones; z != nil {
		// Zones the planner settled from statistics are not read.
		kept := sp.Morsels[:0:0]
		for _, m := range sp.Morsels {
			id := plan.ZoneID{File: m.File, RowGroup: m.RowGroup}
			switch {
			case z.None[id]:
				p.stats.Counters.RowGroupsPruned.Add(1)
			case z.Answered[id]:
				p.stats.Counters.RowGroupsAnswered.Add(1)
			default:
				kept = append(kept, m)
			}
		}
		sp.Morsels = kept
	}
	workers := max(1, min(p.bd.env.Threads, len(sp.Morsels)))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	fail := func(err error) {
		once.Do(func() { firstErr = err; cancel() })
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(sp.Morsels) || ctx.Err() != nil {
					return
				}
				err := sp.Read(ctx, sp.Morsels[i], func(rb *vector.Batch) error {
					cols := make([]arrow.Array, len(pos))
					for c, k := range pos {
						if k >= 0 {
							cols[c] = rb.Cols[k]
						}
					}
					b, err := runStages(ctx, p.stages, &vector.Batch{Cols: cols, Rows: rb.Rows, Sel: rb.Sel})
					if err != nil || b == nil {
						return err
					}
					return sink(w, b)
				})
				if err != nil {
					fail(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// runStages applies stages to b in order; it returns nil when no row is left.
func runStages(ctx context.Context, stages []stage, b *vector.Batch) (*vector.Batch, error) {
	for _, st := range stages {
		var err error
		if b, err = st(ctx, b); err != nil {
			return nil, err
		}
		if b.Len() == 0 {
			return nil, nil
		}
	}
	return b, nil
}

// operator runs the pipeline in the background and returns its batches in the
// order the workers produce them.
func (p *pipeline) operator() Operator { return &pipelineOp{p: p} }

type pipelineOp struct {
	p       *pipeline
	started bool
	ch      chan *vector.Batch
	errc    chan error
	cancel  context.CancelFunc
	done    bool
}

func (o *pipelineOp) Next(ctx context.Context) (*vector.Batch, error) {
	if o.done {
		return nil, nil
	}
	if !o.started {
		o.started = true
		rctx, cancel := context.WithCancel(ctx)
		o.cancel = cancel
		o.ch = make(chan *vector.Batch, 2*max(1, o.p.bd.env.Threads))
		o.errc = make(chan error, 1)
		go func() {
			err := o.p.run(rctx, func(_ int, b *vector.Batch) error {
				select {
				case o.ch <- b:
					return nil
				case <-rctx.Done():
					return rctx.Err()
				}
			})
			o.errc <- err
			close(o.ch)
		}()
	}
	select {
	case b, ok := <-o.ch:
		if ok {
			return b, nil
		}
		o.done = true
		if err := <-o.errc; err != nil {
			return nil, err
		}
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (o *pipelineOp) Close() {
	if o.started && !o.done {
		o.cancel()
		for range o.ch {
		}
		<-o.errc
		o.done = true
	}
}
