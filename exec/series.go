package exec

import (
	"context"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/vector"
)

// seriesOp produces the rows of range() and generate_series() a batch at a time,
// so a series of billions of rows costs one batch of memory.
type seriesOp struct {
	node *plan.Series
	cur  int64
	done bool
}

var _ Operator = (*seriesOp)(nil)

func newSeriesOp(x *plan.Series) *seriesOp {
	return &seriesOp{node: x, cur: x.Start, done: x.Empty}
}

// within reports whether v has not passed the series' end.
func (s *seriesOp) within(v int64) bool {
	n := s.node
	up := n.Step > 0
	switch {
	case up && n.Inclusive:
		return v <= n.Stop
	case up:
		return v < n.Stop
	case n.Inclusive:
		return v >= n.Stop
	default:
		return v > n.Stop
	}
}

// step is the value after v; ok is false when it is past BIGINT's or the
// timestamps' range, which ends the series.
func (s *seriesOp) step(v int64) (int64, bool) {
	if s.node.Temporal() {
		return kernels.AddIntervalMicros(v, s.node.Interval)
	}
	next := v + s.node.Step
	if (s.node.Step > 0 && next < v) || (s.node.Step < 0 && next > v) {
		return 0, false
	}
	return next, true
}

func (s *seriesOp) Next(ctx context.Context) (*vector.Batch, error) {
	if s.done {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	vals := make([]int64, 0, vector.BatchSize)
	for len(vals) < vector.BatchSize {
		if !s.within(s.cur) {
			s.done = true
			break
		}
		vals = append(vals, s.cur)
		next, ok := s.step(s.cur)
		if !ok {
			s.done = true
			break
		}
		s.cur = next
	}
	if len(vals) == 0 {
		return nil, nil
	}
	return &vector.Batch{Rows: len(vals), Cols: []arrow.Array{kernels.Int64Array(s.node.Col.Type, vals)}}, nil
}

func (s *seriesOp) Close() { s.done = true }

// limitPercentOp returns a share of its input's rows, which it must therefore hold
// until it has counted them all.
type limitPercentOp struct {
	node *plan.LimitPercent
	in   Operator
	out  *limitOp
	res  reservation
}

var _ Operator = (*limitPercentOp)(nil)

func (bd *builder) buildLimitPercent(x *plan.LimitPercent) (Operator, error) {
	in, err := bd.build(x.Input)
	if err != nil {
		return nil, err
	}
	return &limitPercentOp{node: x, in: in, res: reservation{budget: bd.env.Budget}}, nil
}

func (o *limitPercentOp) Next(ctx context.Context) (*vector.Batch, error) {
	if o.out == nil {
		all, err := drain(ctx, o.in, len(o.node.Columns()), &o.res)
		if err != nil {
			return nil, err
		}
		o.in.Close()
		count := int64(math.Floor(float64(all.Len()) * o.node.Percent / 100))
		o.out = &limitOp{in: &batchesOp{batches: []*vector.Batch{all}}, count: count, offset: o.node.Offset}
	}
	return o.out.Next(ctx)
}

func (o *limitPercentOp) Close() {
	if o.out != nil {
		o.out.Close()
	} else {
		o.in.Close()
	}
	o.res.release()
}
