package exec

import (
	"cmp"
	goslices "slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// setState is the aggregation of one grouping set: its groups (indexes into the
// aggregate's Groups, ascending), a key table over them (nil for the empty set,
// which has one group), the accumulators, and the key columns once read.
type setState struct {
	set    []int
	keys   *kernels.KeyTable
	accs   []agg.Accumulator
	groups int
	cols   []arrow.Array
	finals []arrow.Array
}

// keyCols returns the state's key columns, in its set's order.
func (st *setState) keyCols() []arrow.Array {
	if st.cols == nil && st.keys != nil {
		st.cols = st.keys.Keys()
	}
	return st.cols
}

// covers reports whether the state's set holds every group of set.
func (st *setState) covers(set []int) bool {
	for _, g := range set {
		if _, ok := goslices.BinarySearch(st.set, g); !ok {
			return false
		}
	}
	return true
}

// groupingSets makes the output of an aggregate with grouping sets from final, the
// partial states of its finest grouping (every group). Each set's states are merged
// from those of the smallest set already made that covers it, largest sets first,
// so a ROLLUP folds each level from the one below it; the input is read once, and
// each level reads the groups of the one below instead of rows. Merging leaves the
// states merged from intact (agg.Accumulator), so one set may feed several.
func (h *hashAggregate) groupingSets(final *aggState) ([]*vector.Batch, error) {
	x := h.node
	all := make([]int, len(x.Groups))
	for i := range all {
		all[i] = i
	}
	finest := &setState{set: all, keys: final.keys, accs: final.accs, groups: 1}
	if final.keys != nil {
		finest.groups = final.keys.Len()
	}
	made := []*setState{finest}
	stateOf := make([]*setState, len(x.Sets))
	order := make([]int, len(x.Sets))
	for k := range order {
		order[k] = k
	}
	goslices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(x.Sets[b]), len(x.Sets[a])) })
	for _, k := range order {
		set := goslices.Clone(x.Sets[k])
		goslices.Sort(set)
		set = goslices.Compact(set)
		var parent *setState
		for _, st := range made {
			if goslices.Equal(st.set, set) {
				parent = st
				break
			}
			if st.covers(set) && (parent == nil || st.groups < parent.groups) {
				parent = st
			}
		}
		if goslices.Equal(parent.set, set) {
			stateOf[k] = parent
			continue
		}
		st, err := h.deriveSet(parent, set)
		if err != nil {
			return nil, err
		}
		if err := h.res.resize(h.res.held + st.memory()); err != nil {
			return nil, err
		}
		made = append(made, st)
		stateOf[k] = st
	}
	var out []*vector.Batch
	for k, st := range stateOf {
		if st.finals == nil {
			for _, acc := range st.accs {
				a, err := acc.Final()
				if err != nil {
					return nil, err
				}
				st.finals = append(st.finals, a)
			}
		}
		if st.groups == 0 {
			continue
		}
		keys := st.keyCols()
		cols := make([]arrow.Array, 0, len(x.Cols))
		for g, t := range h.keyTypes {
			if i, ok := goslices.BinarySearch(st.set, g); ok {
				cols = append(cols, keys[i])
			} else {
				cols = append(cols, array.MakeArrayOfNull(vector.Allocator, t, st.groups))
			}
		}
		cols = append(cols, st.finals...)
		for _, args := range x.Groupings {
			v := types.Value{Type: types.Int64, I: plan.GroupingValue(x.Sets[k], args)}
			cols = append(cols, kernels.ConstArray(v, st.groups))
		}
		out = append(out, slices(&vector.Batch{Cols: cols, Rows: st.groups})...)
	}
	return out, nil
}

// deriveSet aggregates grouping set set (covered by parent's) from parent's states.
func (h *hashAggregate) deriveSet(parent *setState, set []int) (*setState, error) {
	st := &setState{set: set, groups: 1}
	mapping := make([]uint32, parent.groups) // the empty set's one group: all 0
	if len(set) > 0 {
		pcols := parent.keyCols()
		cols := make([]arrow.Array, len(set))
		ts := make([]arrow.DataType, len(set))
		for i, g := range set {
			at, _ := goslices.BinarySearch(parent.set, g)
			cols[i], ts[i] = pcols[at], h.keyTypes[g]
		}
		st.keys = kernels.NewKeyTable(ts)
		if parent.groups > 0 {
			st.keys.Insert(cols, nil, mapping)
		}
		st.groups = st.keys.Len()
	}
	for i, sp := range h.specs {
		acc, err := agg.New(sp)
		if err != nil {
			return nil, err
		}
		acc.Resize(st.groups)
		if parent.groups > 0 {
			if err := acc.Merge(parent.accs[i], mapping); err != nil {
				return nil, err
			}
		}
		st.accs = append(st.accs, acc)
	}
	return st, nil
}

func (st *setState) memory() int64 { return stateMemory(st.keys, st.accs) }
