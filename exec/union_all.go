package exec

import (
	"context"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/vector"
)

// unionAll returns the batches of its inputs one input after another. The grammar
// nests a UNION chain of n queries n deep; read as one list, a row passes through
// one operator instead of up to n, and a chain of thousands of branches costs time
// linear in its rows.
type unionAll struct {
	ins []Operator // ins[i:] are still open
	i   int
}

var _ Operator = (*unionAll)(nil)

// buildUnionAll builds the inputs of a UNION chain into one operator.
func (bd *builder) buildUnionAll(inputs []plan.Node) (Operator, error) {
	u := &unionAll{ins: make([]Operator, 0, len(inputs))}
	for _, in := range inputs {
		op, err := bd.build(in)
		if err != nil {
			u.Close()
			return nil, err
		}
		u.ins = append(u.ins, op)
	}
	return u, nil
}

func (u *unionAll) Next(ctx context.Context) (*vector.Batch, error) {
	for u.i < len(u.ins) {
		b, err := u.ins[u.i].Next(ctx)
		if err != nil {
			return nil, err
		}
		if b != nil {
			return b, nil
		}
		u.ins[u.i].Close()
		u.i++
	}
	return nil, nil
}

func (u *unionAll) Close() {
	for _, in := range u.ins[u.i:] {
		in.Close()
	}
	u.i = len(u.ins)
}
