package exec

import (
	"sync/atomic"

	"github.com/loredb/lore/errs"
)

// Budget is a byte budget shared by the statements of an engine. Reservations are
// estimates of memory held by operators (hash tables, sort buffers, join builds).
type Budget struct {
	limit int64
	used  atomic.Int64
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Reserve takes n bytes, or fails with RESOURCE_EXHAUSTED leaving nothing taken.
func (b *Budget) Reserve(n int64) error {
	if b == nil || n <= 0 {
		return nil
	}
	if used := b.used.Add(n); used > b.limit {
		b.used.Add(-n)
		return errs.New(errs.ResourceExhausted,
			"statement needs more memory than the budget allows (%d bytes in use, limit %d bytes)", used-n, b.limit)
	}
	return nil
}

// Release returns n bytes.
func (b *Budget) Release(n int64) {
	if b != nil && n > 0 {
		b.used.Add(-n)
	}
}

// Used is the number of bytes reserved now.
func (b *Budget) Used() int64 { return b.used.Load() }

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

func (r *reservation) release() {
	r.budget.Release(r.held)
	r.held = 0
}
