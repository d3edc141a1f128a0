package agg

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// distinctOfName recognises "sum_distinct" and "avg_distinct" and returns the
// aggregate they apply to distinct values.
func distinctOfName(name string) (string, bool) {
	inner, ok := strings.CutSuffix(name, "_distinct")
	if !ok || (inner != "sum" && inner != "avg") {
		return "", false
	}
	return inner, true
}

// distinctOf is an aggregate over the distinct values of each group: its partial
// state is the set of (group, value) pairs seen, which merges by set union; Final
// feeds each pair once to the inner aggregate.
type distinctOf struct {
	inner  Spec
	pairs  *kernels.KeyTable // keyed by (group, value)
	groups int
	gbuf   []uint32
}

var _ Accumulator = (*distinctOf)(nil)

func newDistinctOf(inner Spec) *distinctOf {
	return &distinctOf{inner: inner, pairs: kernels.NewKeyTable([]arrow.DataType{types.Uint32, types.Unwrap(inner.ArgType)})}
}

func (a *distinctOf) Resize(n int) { a.groups = max(a.groups, n) }

func (a *distinctOf) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	if groups != nil && !ascending(sel) {
		// A row may come more than once, for several groups (a window's
		// overlapping frames): the values are gathered in the selection's order.
		arg, sel = vector.Take(arg, sel), nil
	}
	n := arg.Len()
	if groups == nil {
		ensureGroup0(a, a.groups, nil)
	}
	// A group column aligned with arg's rows.
	if cap(a.gbuf) < n {
		a.gbuf = make([]uint32, n)
	}
	g := a.gbuf[:n]
	clear(g)
	if groups != nil {
		if sel == nil {
			copy(g, groups)
		} else {
			for k, r := range sel {
				g[r] = groups[k]
			}
		}
	}
	gcol := uint32Array(g)
	rows := n
	if sel != nil {
		rows = len(sel)
	}
	ids := make([]uint32, rows)
	a.pairs.Insert([]arrow.Array{gcol, arg}, sel, ids)
	return nil
}

func (a *distinctOf) Merge(other Accumulator, mapping []uint32) error {
	o := other.(*distinctOf)
	keys := o.pairs.Keys()
	if len(keys) == 0 || keys[0].Len() == 0 {
		return nil
	}
	old := keys[0].(*array.Uint32).Uint32Values()
	remapped := make([]uint32, len(old))
	for i, g := range old {
		remapped[i] = mapping[g]
	}
	gcol := uint32Array(remapped)
	ids := make([]uint32, len(old))
	a.pairs.Insert([]arrow.Array{gcol, keys[1]}, nil, ids)
	return nil
}

func (a *distinctOf) Final() (arrow.Array, error) {
	acc, err := New(a.inner)
	if err != nil {
		return nil, err
	}
	acc.Resize(a.groups)
	if a.pairs.Len() > 0 {
		keys := a.pairs.Keys()
		groups := append([]uint32(nil), keys[0].(*array.Uint32).Uint32Values()...)
		if err := acc.Update(keys[1], nil, groups); err != nil {
			return nil, err
		}
	}
	return acc.Final()
}

func (a *distinctOf) MemoryUsage() int64 { return a.pairs.MemoryUsage() + int64(4*cap(a.gbuf)) }
