package exec

import (
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
)

// Budget is a byte budget. The engine has one shared by its statements, and each
// statement runs under a child of it (Child) with the statement's own limit, so one
// statement cannot take more than its limit and all together not more than the
// engine's. Reservations are estimates of memory held by operators (hash tables,
// sort buffers, join builds, collected results).
type Budget struct {
	limit  int64
	used   atomic.Int64
	parent *Budget
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Child returns a budget of at most limit bytes whose reservations are also taken
// from b. A limit of zero or above b's is b's.
func (b *Budget) Child(limit int64) *Budget {
	if limit <= 0 || limit > b.limit {
		limit = b.limit
	}
	return &Budget{limit: limit, parent: b}
}

// Limit is the budget's size in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// Reserve takes n bytes, or fails with RESOURCE_EXHAUSTED leaving nothing taken.
func (b *Budget) Reserve(n int64) error {
	if b == nil || n <= 0 {
		return nil
	}
	if used := b.used.Add(n); used > b.limit {
		b.used.Add(-n)
		what := "the engine's memory limit (shared by running statements)"
		if b.parent != nil {
			what = "the statement's memory limit"
		}
		return errs.New(errs.ResourceExhausted,
			"statement needs more memory than %s allows (%d bytes in use, %d more asked, limit %d bytes)", what, used-n, n, b.limit)
	}
	if err := b.parent.Reserve(n); err != nil {
		b.used.Add(-n)
		return err
	}
	return nil
}

// Release returns n bytes.
func (b *Budget) Release(n int64) {
	if b != nil && n > 0 {
		b.used.Add(-n)
		b.parent.Release(n)
	}
}

// Free is the number of bytes not reserved now (0 for no budget: nothing is
// known to be free).
func (b *Budget) Free() int64 {
	if b == nil {
		return 0
	}
	return max(b.limit-b.used.Load(), 0)
}

// Used is the number of bytes reserved now.
func (b *Budget) Used() int64 { return b.used.Load() }

// Close gives back to the parent whatever is still reserved in a child budget, so
// that a statement that ends, however it ends, leaves the engine's budget as it
// found it.
func (b *Budget) Close() {
	if b != nil && b.parent != nil {
		b.parent.Release(b.used.Swap(0))
	}
}

// maxResultShare is the largest part of a statement's budget that one function's
// result for one batch may take. Such a result is reserved only while it is made;
// after that it is a batch in flight, which the budget does not count (the slack),
// so a function that would make more fails instead.
const maxResultShare = 8

// evalSized runs a function whose result can be far larger than its arguments,
// reserving the result's size from the budget before it is made and releasing it
// once made: a result larger than an eighth of the budget, or than what is left of
// it, fails with RESOURCE_EXHAUSTED.
func (bd *builder) evalSized(fn *kernels.Function, args []arrow.Array, rows int) (arrow.Array, error) {
	b := bd.env.Budget
	var held int64
	defer func() { b.Release(held) }()
	return fn.EvalSized(args, rows, func(n int64) error {
		if b != nil && n > b.Limit()/maxResultShare {
			return errs.New(errs.ResourceExhausted,
				"%s would make %d bytes for one batch of %d rows, more than an eighth of the memory limit of %d bytes", fn.Name, n, rows, b.Limit())
		}
		if err := b.Reserve(n); err != nil {
			return err
		}
		held = n
		return nil
	})
}

// reservation tracks what one operator holds so it can grow and release it.
type reservation struct {
	budget *Budget
	held   int64
}

// resize grows (or shrinks) the reservation to n bytes.
func (r *reservation) resize(n int64) error {
	if n > r.held {
		if err := r.budget.Reserve(n - r.held); err != nil {
			return err
		}
	} else {
		r.budget.Release(r.held - n)
	}
	r.held = n
	return nil
}

// grow adds n bytes to the reservation.
func (r *reservation) grow(n int64) error { return r.resize(r.held + n) }

func (r *reservation) release() {
	r.budget.Release(r.held)
	r.held = 0
}
