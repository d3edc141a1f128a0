package exec

import (
	"context"

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
