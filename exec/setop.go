package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/vector"
)

// setOp runs UNION [ALL], INTERSECT [ALL] and EXCEPT [ALL]. Rows compare as keys:
// NULL equals NULL, as set operations require.
type setOp struct {
	node        *plan.SetOp
	left, right Operator
	colTypes    []arrow.DataType
	// seen holds the distinct rows already returned (distinct forms).
	seen *kernels.KeyTable
	// rightKeys and counts hold the right input (INTERSECT, EXCEPT).
	rightKeys *kernels.KeyTable
	counts    []int64
	started   bool
	res       reservation
}

func (bd *builder) buildSetOp(x *plan.SetOp) (Operator, error) {
	var l, r Operator
	var err error
	if x.Kind == plan.Union && x.All {
		// UNION ALL reads its inputs in turn (a chain of them as one list), which
		// the workers of a join or aggregate above can do too (parallelSource).
		in := unionChain(x)
		if in == nil {
			in = []plan.Node{x.Left, x.Right}
		}
		return bd.buildUnionAll(in)
	}
	if in := unionChain(x); in != nil {
		// A chain of UNIONs reads its inputs in turn; the distinct one then drops
		// the rows seen before, once, above them all.
		if l, err = bd.buildUnionAll(in); err != nil {
			return nil, err
		}
	} else {
		if l, err = bd.build(x.Left); err != nil {
			return nil, err
		}
		if r, err = bd.build(x.Right); err != nil {
			l.Close()
			return nil, err
		}
	}
	s := &setOp{node: x, left: l, right: r, colTypes: columnTypes(x.Cols), res: reservation{budget: bd.env.Budget}}
	if !x.All {
		s.seen = kernels.NewKeyTable(s.colTypes)
	}
	return s, nil
}

// unionChain is the inputs of a chain of more than two UNIONs of one kind, else nil.
func unionChain(x *plan.SetOp) []plan.Node {
	if x.Kind != plan.Union {
		return nil
	}
	if in := plan.UnionInputs(x); len(in) > 2 {
		return in
	}
	return nil
}

func columnTypes(cols []plan.Column) []arrow.DataType {
	out := make([]arrow.DataType, len(cols))
	for i, c := range cols {
		out[i] = c.Type
	}
	return out
}

func (s *setOp) prepare(ctx context.Context) error {
	if s.node.Kind == plan.Union {
		return nil
	}
	s.rightKeys = kernels.NewKeyTable(s.colTypes)
	for {
		b, err := s.right.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		ids := make([]uint32, b.Len())
		s.rightKeys.Insert(b.Cols, b.Sel, ids)
		for len(s.counts) < s.rightKeys.Len() {
			s.counts = append(s.counts, 0)
		}
		for _, id := range ids {
			s.counts[id]++
		}
		if err := s.res.resize(s.rightKeys.MemoryUsage()); err != nil {
			return err
		}
	}
	s.right.Close()
	s.right = nil
	return nil
}

func (s *setOp) Next(ctx context.Context) (*vector.Batch, error) {
	if !s.started {
		s.started = true
		if err := s.prepare(ctx); err != nil {
			return nil, err
		}
	}
	for {
		var b *vector.Batch
		var err error
		if s.left != nil {
			if b, err = s.left.Next(ctx); err != nil {
				return nil, err
			}
			if b == nil {
				s.left.Close()
				s.left = nil
			}
		}
		if b == nil && s.node.Kind == plan.Union && s.right != nil {
			if b, err = s.right.Next(ctx); err != nil {
				return nil, err
			}
			if b == nil {
				s.right.Close()
				s.right = nil
			}
		}
		if b == nil {
			if s.left == nil && (s.right == nil || s.node.Kind != plan.Union) {
				return nil, nil
			}
			continue
		}
		if b.Len() == 0 {
			continue
		}
		out, err := s.filter(b)
		if err != nil {
			return nil, err
		}
		if out.Len() > 0 {
			return out, nil
		}
	}
}

// filter keeps the rows of b that the set operation returns.
func (s *setOp) filter(b *vector.Batch) (*vector.Batch, error) {
	sel := b.Selection()
	keep := make([]int32, 0, len(sel))
	var inRight []uint32
	if s.rightKeys != nil {
		inRight = make([]uint32, len(sel))
		s.rightKeys.Find(b.Cols, b.Sel, inRight)
	}
	var newIDs []uint32
	before := 0
	if s.seen != nil {
		before = s.seen.Len()
		newIDs = make([]uint32, len(sel))
		s.seen.Insert(b.Cols, b.Sel, newIDs)
	}
	for k, r := range sel {
		if s.seen != nil {
			// Only the first occurrence of a row, in this batch or before, is returned.
			if int(newIDs[k]) < before {
				continue
			}
			before = max(before, int(newIDs[k])+1)
		}
		switch s.node.Kind {
		case plan.Union:
			keep = append(keep, r)
		case plan.Intersect:
			id := inRight[k]
			if id == kernels.NotFound {
				continue
			}
			if s.node.All {
				if s.counts[id] == 0 {
					continue
				}
				s.counts[id]--
			}
			keep = append(keep, r)
		case plan.Except:
			id := inRight[k]
			if id != kernels.NotFound {
				if !s.node.All {
					continue
				}
				if s.counts[id] > 0 {
					s.counts[id]--
					continue
				}
			}
			keep = append(keep, r)
		}
	}
	if s.seen != nil {
		if err := s.res.resize(s.seen.MemoryUsage()); err != nil {
			return nil, err
		}
	}
	return &vector.Batch{Cols: b.Cols, Rows: b.Rows, Sel: keep}, nil
}

func (s *setOp) Close() {
	if s.left != nil {
		s.left.Close()
		s.left = nil
	}
	if s.right != nil {
		s.right.Close()
		s.right = nil
	}
	s.res.release()
}
