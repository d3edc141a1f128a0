package flight

import (
	"sync"
	"time"

	"github.com/loredb/lore"
)

// held keeps values for a while under random handles: results waiting for their
// DoGet, prepared statements waiting for their next execution. Every entry belongs to
// one principal and expires ttl after it was last used, so that a client that never
// comes back holds nothing for ever. It is safe for concurrent use.
type held[T any] struct {
	ttl time.Duration
	max int

	mu      sync.Mutex
	entries map[string]*heldEntry[T]
}

type heldEntry[T any] struct {
	owner lore.Principal
	value T
	timer *time.Timer
}

func newHeld[T any](ttl time.Duration, max int) *held[T] {
	return &held[T]{ttl: ttl, max: max, entries: map[string]*heldEntry[T]{}}
}

// put keeps v under handle for owner; false when max entries are held already.
func (h *held[T]) put(handle string, owner lore.Principal, v T) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.entries) >= h.max {
		return false
	}
	e := &heldEntry[T]{owner: owner, value: v}
	e.timer = time.AfterFunc(h.ttl, func() { h.expire(handle, e) })
	h.entries[handle] = e
	return true
}

// expire drops e if it is still the entry under handle.
func (h *held[T]) expire(handle string, e *heldEntry[T]) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur, ok := h.entries[handle]; ok && cur == e {
		delete(h.entries, handle)
	}
}

// lookup finds handle's entry for p: another principal's entry is not found, as if
// absent (a handle is a capability, but a leaked one still needs its owner's token).
func (h *held[T]) lookup(handle string, p lore.Principal) (*heldEntry[T], bool) {
	e, ok := h.entries[handle]
	if !ok || e.owner != p {
		return nil, false
	}
	return e, true
}

// take removes and returns handle's value: a result is fetched once.
func (h *held[T]) take(handle string, p lore.Principal) (T, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.lookup(handle, p)
	if !ok {
		var zero T
		return zero, false
	}
	e.timer.Stop()
	delete(h.entries, handle)
	return e.value, true
}

// get returns handle's value and restarts its time to live.
func (h *held[T]) get(handle string, p lore.Principal) (T, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.lookup(handle, p)
	if !ok {
		var zero T
		return zero, false
	}
	e.timer.Reset(h.ttl)
	return e.value, true
}

// len is the number of entries held.
func (h *held[T]) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.entries)
}

// clear drops every entry.
func (h *held[T]) clear() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.entries {
		e.timer.Stop()
	}
	h.entries = map[string]*heldEntry[T]{}
}
