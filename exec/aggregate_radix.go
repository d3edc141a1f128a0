package exec

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/vector"
)

// A parallel grouped aggregate with many groups keeps each worker's groups in
// radixParts partitions by the hash of their key (radix partitioning). Two costs of
// one table per worker go away: its key table outgrows the caches, so that every
// insert and every doubling misses them; and the workers' tables are merged one
// after another on one core at the end, while the others wait. With partitions,
// each table is a fraction of the groups, and partition p of every worker holds
// the same keys, so the partitions merge independently, on all workers at once,
// and their groups are emitted one partition after another with no merge between
// them.
//
// Whether an aggregate partitions is decided once, from the first batch a worker
// folds: partitioning a few groups would only add a pass over every row, so it is
// chosen when that batch alone holds radixMinGroups keys or more, or when at least
// a quarter of its rows are keys of their own and they are radixMinGroups/16 or
// more (a small batch, from a selective join or filter, of an input with many
// groups). Every worker then keeps the same kind of state. An aggregate that has to spill, or that grouping
// sets or zone partials read, keeps one table per worker (see canRadix and
// collapse).

const (
	radixBits  = 5
	radixParts = 1 << radixBits
	// radixMinGroups is how many keys a worker's first batch must hold for the
	// aggregate to partition.
	radixMinGroups = 1024
)

// Values of hashAggregate.radix.
const (
	radixUndecided int32 = iota
	radixFlat
	radixPartitioned
)

// radixState is one worker's partitioned partial aggregation.
type radixState struct {
	parts  [radixParts]*aggState
	filter *kernels.KeyTable // a reader of the aggregate's keyFilter
	kids   []uint32
	hashes []uint64
	rows   []int32 // the batch's rows, by partition
}

// canRadix reports whether the aggregate may partition its workers' groups.
func (h *hashAggregate) canRadix() bool {
	return h.bd.env.Threads > 1 && len(h.node.Groups) > 0 && len(h.node.Sets) == 0 && h.node.Seeds == nil
}

// partitioned decides, on the first batch any worker folds, whether the workers keep
// partitioned states, and reports the decision.
func (h *hashAggregate) partitioned(ctx context.Context, b *vector.Batch) bool {
	if d := h.radix.Load(); d != radixUndecided {
		return d == radixPartitioned
	}
	d := radixFlat
	if h.canRadix() && b.Len() >= radixMinGroups {
		// Keys that fail to evaluate here fail again where the batch is folded.
		if keys, err := h.keysOf(ctx, b); err == nil {
			t := kernels.NewKeyTable(h.keyTypes)
			t.Insert(keys, b.Sel, make([]uint32, b.Len()))
			if k := t.Len(); k >= radixMinGroups || (k >= radixMinGroups/16 && 4*k >= b.Len()) {
				d = radixPartitioned
			}
		}
	}
	h.radix.CompareAndSwap(radixUndecided, d)
	return h.radix.Load() == radixPartitioned
}

func (h *hashAggregate) newRadixState() *radixState {
	r := &radixState{}
	if h.keyFilter != nil {
		r.filter = h.keyFilter.Reader()
	}
	return r
}

// updateRadix folds one batch into the partitions of r.
func (h *hashAggregate) updateRadix(ctx context.Context, r *radixState, b *vector.Batch) error {
	b, keys, args, filters, err := h.prepare(ctx, r.filter, &r.kids, b)
	if b == nil || err != nil {
		return err
	}
	n := b.Len()
	r.hashes = grow(r.hashes, n)
	kernels.HashColumns(keys, b.Sel, r.hashes)
	// A counting sort of the rows by partition, the top bits of their hash (the key
	// tables place keys by the low bits).
	var at [radixParts + 1]int
	for _, x := range r.hashes {
		at[x>>(64-radixBits)+1]++
	}
	for p := 1; p <= radixParts; p++ {
		at[p] += at[p-1]
	}
	start := at
	r.rows = grow(r.rows, n)
	for k, x := range r.hashes {
		p := x >> (64 - radixBits)
		row := int32(k)
		if b.Sel != nil {
			row = b.Sel[k]
		}
		r.rows[at[p]] = row
		at[p]++
	}
	for p := range radixParts {
		if start[p] == start[p+1] {
			continue
		}
		if r.parts[p] == nil {
			s, err := h.newState()
			if err != nil {
				return err
			}
			// The partitions' slots together are what a single table's would be.
			s.keys.Dense()
			r.parts[p] = s
		}
		part := &vector.Batch{Cols: b.Cols, Rows: b.Rows, Sel: r.rows[start[p]:start[p+1]]}
		if err := h.foldState(r.parts[p], part, keys, args, filters); err != nil {
			return err
		}
	}
	return nil
}

// memory is the memory the partitions hold.
func (r *radixState) memory() int64 {
	var n int64
	for _, s := range r.parts {
		if s != nil {
			n += s.memory()
		}
	}
	return n
}

// groups is the number of groups of the partitions.
func (r *radixState) groups() int {
	n := 0
	for _, s := range r.parts {
		n += groupsOf(s)
	}
	return n
}

// mergeRadix merges partition p of every worker's state into one, the partitions
// on up to Threads goroutines at once, and returns the merged partitions (nil where
// no worker has a group).
func (h *hashAggregate) mergeRadix(ctx context.Context, states []*radixState) ([]*aggState, error) {
	out := make([]*aggState, radixParts)
	var next atomic.Int32
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range min(max(1, h.bd.env.Threads), radixParts) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := errs.Safe(func() error {
				for {
					p := int(next.Add(1)) - 1
					if p >= radixParts {
						return nil
					}
					if err := ctx.Err(); err != nil {
						return err
					}
					// The largest part takes the others in, so that its table grows
					// least, and each part is let go once merged: the partitions
					// merged so far and those still to merge are never all held
					// twice.
					base := -1
					for i, r := range states {
						if r != nil && r.parts[p] != nil && (base < 0 || r.parts[p].groups > states[base].parts[p].groups) {
							base = i
						}
					}
					if base < 0 {
						continue
					}
					out[p], states[base].parts[p] = states[base].parts[p], nil
					for _, r := range states {
						if r == nil || r.parts[p] == nil {
							continue
						}
						if err := h.merge(out[p], r.parts[p]); err != nil {
							return err
						}
						r.parts[p] = nil
					}
				}
			})()
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				next.Store(radixParts) // the others stop at their next partition
			}
		}()
	}
	wg.Wait()
	return out, first
}

// collapse merges disjoint partitions into one state, for what reads the groups as
// one state (a spill that begins with them frozen). It returns nil when every
// partition is nil.
func (h *hashAggregate) collapse(parts []*aggState) (*aggState, error) {
	var final *aggState
	for _, s := range parts {
		if s == nil {
			continue
		}
		if final == nil {
			final = s
			continue
		}
		if err := h.merge(final, s); err != nil {
			return nil, err
		}
	}
	return final, nil
}
