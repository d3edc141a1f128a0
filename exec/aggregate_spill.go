package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/vector"
)

// A grouped aggregate whose groups outgrow its share of the budget spills (hybrid
// hash aggregation). Its state at that moment is frozen: no new group joins it.
// Every later input row is written, as it came, to one of spillFanOut spill files
// chosen by the hash of its group key. Then each file is aggregated alone: its rows
// whose group a frozen state holds are folded into that state (so no group is ever
// split between two states, and no accumulator needs to be written to disk), the
// others into a fresh state for the file, which is emitted when the file is done. A
// file whose own state outgrows what is left of the budget freezes that state in
// turn and splits the rest of the file by further bits of the hash, down to
// maxSpillDepth levels; past that the statement fails with RESOURCE_EXHAUSTED.
// The frozen states are emitted last, each once nothing more can reach it.

// aggFreezeShare: a state is frozen when it holds more than this part of what the
// budget leaves it (the rest is for the partitions' states).
const aggFreezeShare = 4

// aggSpill is one level of partition files being written.
type aggSpill struct {
	h     *hashAggregate
	depth int
	parts partitionFiles
}

// aggTask is the next thing a spilling aggregate does: aggregate a partition file,
// or emit a frozen state once every partition that could reach it is done.
type aggTask struct {
	file  *spillFile
	depth int
	emit  *frozenState
}

// frozenState is a state that takes no new group, with the budget it holds.
type frozenState struct {
	s   *aggState
	res reservation
}

// canSpill reports whether the aggregate may spill: it groups, into one grouping,
// with a spill space, and nothing outside it reads its groups as they form.
func (h *hashAggregate) canSpill() bool {
	return h.bd.env.Spill != nil && h.res.budget != nil && len(h.node.Groups) > 0 && len(h.node.Sets) == 0 &&
		h.node.Seeds == nil && h.keyFilter == nil && !h.keep
}

// shouldFreeze reports whether a state of groups groups holding held bytes, of
// which reserved are reserved (whose reservation failed with err, or not), is to be
// frozen. A state of fewer than minFreezeGroups groups is mostly its scratch space,
// which a fresh state would take again: it is frozen only when the budget is out.
func (h *hashAggregate) shouldFreeze(held, reserved int64, groups int, err error) bool {
	if !h.canSpill() {
		return false
	}
	if err != nil {
		return errs.CodeOf(err) == errs.ResourceExhausted && held > 0
	}
	return held > h.freezeAt(reserved) && groups >= minFreezeGroups
}

// minFreezeGroups is the fewest groups a state must have to be frozen before the
// budget is out: below it, its size is mostly scratch space for a batch.
const minFreezeGroups = 256

// groupsOf is the number of groups of a state.
func groupsOf(s *aggState) int {
	if s == nil || s.keys == nil {
		return 0
	}
	return s.keys.Len()
}

// freezeAt is the size past which a state being built, holding reserved bytes of
// the budget, is frozen: a share of what it could have, the budget that the
// statement's other operators and the frozen states leave.
func (h *hashAggregate) freezeAt(reserved int64) int64 {
	return max((h.res.budget.Free()+reserved)/aggFreezeShare, 1<<16)
}

func (h *hashAggregate) newAggSpill(depth int) *aggSpill { return &aggSpill{h: h, depth: depth} }

// keysOf evaluates the group keys over b.
func (h *hashAggregate) keysOf(ctx context.Context, b *vector.Batch) ([]arrow.Array, error) {
	x, err := h.exprs.extend(ctx, b)
	if err != nil {
		return nil, err
	}
	keys := make([]arrow.Array, len(h.node.Groups))
	for i := range keys {
		if keys[i], err = h.exprs.exprs[i](ctx, x); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// add writes b's rows to the partitions their keys hash to. Workers add at once.
func (sp *aggSpill) add(ctx context.Context, b *vector.Batch) error {
	b = b.Compact()
	if b.Rows == 0 {
		return nil
	}
	keys, err := sp.h.keysOf(ctx, b)
	if err != nil {
		return err
	}
	return sp.parts.add(sp.h.bd.env.Spill, "aggregate", len(b.Cols), sp.depth, b, keys)
}

// finish ends the partition files and returns the tasks that aggregate them.
func (sp *aggSpill) finish() ([]aggTask, error) {
	var tasks []aggTask
	for _, f := range sp.parts.files {
		if f != nil {
			tasks = append(tasks, aggTask{file: f, depth: sp.depth})
		}
	}
	return tasks, sp.parts.finish()
}

// remove deletes the partition files.
func (sp *aggSpill) remove() { sp.parts.remove() }

// freeze makes s (held under res) a frozen state.
func (h *hashAggregate) freeze(s *aggState, res reservation) *frozenState {
	f := &frozenState{s: s, res: res}
	h.frozen = append(h.frozen, f)
	return f
}

// startSpill freezes final, the state the input was folded into until it grew too
// large, with sp the partitions of the rest of the input: the work left is to
// aggregate them, then emit final.
func (h *hashAggregate) startSpill(final *aggState, sp *aggSpill) error {
	// The workers' states were merged into final: what they held is given back
	// and final's size taken instead.
	h.res.release()
	res := reservation{budget: h.res.budget}
	err := res.resize(final.memory())
	f := h.freeze(final, res)
	tasks, ferr := sp.finish()
	h.tasks = append(tasks, aggTask{emit: f})
	if err != nil {
		return err
	}
	return ferr
}

// nextSpilled runs the spilling aggregate's tasks until one gives batches.
func (h *hashAggregate) nextSpilled(ctx context.Context) error {
	for len(h.out) == 0 && len(h.tasks) > 0 {
		t := h.tasks[0]
		h.tasks = h.tasks[1:]
		if t.emit != nil {
			out, err := h.output(t.emit.s)
			if err != nil {
				return err
			}
			h.out = out
			t.emit.res.release()
			for i, f := range h.frozen {
				if f == t.emit {
					h.frozen = append(h.frozen[:i], h.frozen[i+1:]...)
					break
				}
			}
			continue
		}
		if err := h.aggregatePartition(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// aggregatePartition folds one partition file: rows of frozen groups into their
// states, the rest into a state of its own, which is emitted (or, grown too large,
// frozen, and the rest of the file split further).
func (h *hashAggregate) aggregatePartition(ctx context.Context, t aggTask) error {
	defer t.file.remove()
	r, err := t.file.reader()
	if err != nil {
		return err
	}
	s, err := h.newState()
	if err != nil {
		return err
	}
	res := reservation{budget: h.res.budget}
	var sub *aggSpill
	var frozen *frozenState
	fail := func(err error) error {
		if sub != nil {
			sub.remove()
		}
		res.release()
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return fail(errs.New(errs.Canceled, "statement canceled: %w", err))
		}
		b, err := r.next()
		if err != nil {
			return fail(err)
		}
		if b == nil {
			break
		}
		if sub != nil {
			if err := sub.add(ctx, b); err != nil {
				return fail(err)
			}
			continue
		}
		reserveErr, err := h.updateRouted(ctx, s, &res, b)
		if err != nil {
			return fail(err)
		}
		if !h.shouldFreeze(s.memory(), res.held, groupsOf(s), reserveErr) {
			if reserveErr != nil {
				return fail(reserveErr)
			}
			continue
		}
		if t.depth+1 >= maxSpillDepth {
			if reserveErr == nil {
				continue // no deeper split: the state grows while the budget lasts
			}
			return fail(errs.New(errs.ResourceExhausted,
				"grouped aggregate does not fit the statement's memory limit of %d bytes even split %d ways", h.res.budget.Limit(), 1<<(spillFanBits*maxSpillDepth)))
		}
		frozen = h.freeze(s, res)
		res = reservation{}
		sub = h.newAggSpill(t.depth + 1)
	}
	if sub != nil {
		// The sub-partitions go first, then the state they may still reach.
		tasks, err := sub.finish()
		h.tasks = append(append(tasks, aggTask{emit: frozen}), h.tasks...)
		return err
	}
	out, err := h.output(s)
	res.release()
	if err != nil {
		return err
	}
	h.out = out
	return nil
}

// updateRouted folds b into the frozen state holding each row's group, and the
// other rows into s, reserved under res. reserveErr is a failure to reserve what
// the states hold once every row is folded; err any other failure.
func (h *hashAggregate) updateRouted(ctx context.Context, s *aggState, res *reservation, b *vector.Batch) (reserveErr, err error) {
	rest := b.Compact()
	var touched []*frozenState
	if len(h.frozen) > 0 {
		keys, err := h.keysOf(ctx, rest)
		if err != nil {
			return nil, err
		}
		ids := make([]uint32, rest.Rows)
		left := make([]bool, rest.Rows)
		for i := range left {
			left[i] = true
		}
		for _, f := range h.frozen {
			f.s.keys.Find(keys, nil, ids)
			var found []int32
			for i, id := range ids {
				if left[i] && id != kernels.NotFound {
					found = append(found, int32(i))
					left[i] = false
				}
			}
			if len(found) == 0 {
				continue
			}
			if err := h.update(ctx, f.s, &vector.Batch{Cols: rest.Cols, Rows: rest.Rows, Sel: found}); err != nil {
				return nil, err
			}
			touched = append(touched, f)
		}
		var sel []int32
		for i, l := range left {
			if l {
				sel = append(sel, int32(i))
			}
		}
		if sel == nil {
			sel = []int32{} // every row went to a frozen state (nil would select all)
		}
		rest = &vector.Batch{Cols: rest.Cols, Rows: rest.Rows, Sel: sel}
	}
	if rest.Len() > 0 {
		if err := h.update(ctx, s, rest); err != nil {
			return nil, err
		}
	}
	for _, f := range touched {
		if err := f.res.resize(f.s.memory()); err != nil && reserveErr == nil {
			reserveErr = err
		}
	}
	if err := res.resize(s.memory()); err != nil && reserveErr == nil {
		reserveErr = err
	}
	return reserveErr, nil
}

// output is the result batches of state s.
func (h *hashAggregate) output(s *aggState) ([]*vector.Batch, error) {
	cols := make([]arrow.Array, 0, len(h.node.Groups)+len(h.specs))
	cols = append(cols, s.keys.Keys()...)
	rows := s.keys.Len()
	for _, acc := range s.accs {
		a, err := acc.Final()
		if err != nil {
			return nil, err
		}
		cols = append(cols, a)
	}
	if rows == 0 {
		return nil, nil
	}
	return slices(&vector.Batch{Cols: cols, Rows: rows}), nil
}

// closeSpill removes what a spilling aggregate still has on disk and gives back
// what its frozen states hold.
func (h *hashAggregate) closeSpill() {
	for _, t := range h.tasks {
		if t.file != nil {
			t.file.remove()
		}
	}
	h.tasks = nil
	if sp := h.spilling.Load(); sp != nil {
		sp.remove()
	}
	for _, f := range h.frozen {
		f.res.release()
	}
	h.frozen = nil
}
