package lore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/loredb/lore/errs"
)

// ErrQueueFull is the cause of the RESOURCE_EXHAUSTED error of a statement refused
// admission because Options.MaxQueued statements already wait: unlike a guardrail
// (errs.LimitError) it may well succeed later, so a server answers it with 503 and
// Retry-After. Test with errors.Is.
var ErrQueueFull = errors.New("the admission queue is full")

// AdmissionStats are the engine's admission figures at one moment.
type AdmissionStats struct {
	// Running is how many admitted statements are running; Queued how many wait.
	Running, Queued int
	// MaxRunning and MaxQueued are the engine's limits (Options).
	MaxRunning, MaxQueued int
}

// Admission is how many statements run and wait for admission now (a server's
// metrics read it).
func (e *Engine) Admission() AdmissionStats {
	return e.admit.stats()
}

// admitted waits for the statement of rec to be admitted (admission.acquire) and
// records how long it waited in the queue.
func (e *Engine) admitted(ctx context.Context, rec *Record) (context.Context, func(), error) {
	return e.admit.acquire(ctx, func(waited time.Duration) {
		rec.QueuedMS = float64(waited.Microseconds()) / 1000
	})
}

// admission lets at most max statements that read data run at once and queues up to
// maxQueued more, first come first served. When one finishes, its slot passes
// straight to the head of the queue.
type admission struct {
	max, maxQueued int

	mu      sync.Mutex
	running int
	queue   []*waiter
}

// waiter is one queued statement; ready is closed when it is given a slot.
type waiter struct {
	ready   chan struct{}
	granted bool // under admission.mu
}

func newAdmission(max, maxQueued int) *admission {
	return &admission{max: max, maxQueued: max0(maxQueued)}
}

func max0(n int) int {
	if n < 0 {
		return 0
	}
	return n
}

// admittedKey marks the context of an admitted statement: statements it runs in
// turn (ANALYZE's queries) run in its slot, or they could wait for it forever.
type admittedKey struct{}

// acquire waits for a slot, in order of arrival, until ctx ends. It returns the
// context to run under and the release to call once done; a full queue is
// RESOURCE_EXHAUSTED wrapping ErrQueueFull. A statement that had to queue is told
// how long it waited (queued), whether it got a slot or not.
func (a *admission) acquire(ctx context.Context, queued func(time.Duration)) (context.Context, func(), error) {
	if ctx.Value(admittedKey{}) != nil {
		return ctx, func() {}, nil
	}
	admitted := context.WithValue(ctx, admittedKey{}, true)
	a.mu.Lock()
	if a.running < a.max && len(a.queue) == 0 {
		a.running++
		a.mu.Unlock()
		return admitted, a.onceRelease(), nil
	}
	if len(a.queue) >= a.maxQueued {
		running, queued := a.running, len(a.queue)
		a.mu.Unlock()
		return nil, nil, errs.New(errs.ResourceExhausted, "%d statements are running and %d waiting, the most the engine admits: try again shortly: %w",
			running, queued, ErrQueueFull)
	}
	w := &waiter{ready: make(chan struct{})}
	a.queue = append(a.queue, w)
	a.mu.Unlock()
	progress := progressOf(ctx)
	progress.setState(ProgressQueued)
	start := time.Now()
	defer func() { queued(time.Since(start)) }()
	select {
	case <-w.ready:
		progress.setState(ProgressRunning)
		return admitted, a.onceRelease(), nil
	case <-ctx.Done():
		a.mu.Lock()
		granted := w.granted
		if !granted {
			a.remove(w)
		}
		a.mu.Unlock()
		if granted {
			// The slot came as the statement gave up: pass it on.
			a.release()
		}
		return nil, nil, errs.New(errs.Canceled, "statement canceled while it waited for admission: %w", context.Cause(ctx))
	}
}

// remove takes w out of the queue; a.mu is held.
func (a *admission) remove(w *waiter) {
	for i, q := range a.queue {
		if q == w {
			a.queue = append(a.queue[:i], a.queue[i+1:]...)
			return
		}
	}
}

// onceRelease is a release that does nothing when called again.
func (a *admission) onceRelease() func() {
	var once sync.Once
	return func() { once.Do(a.release) }
}

// release gives a slot back: to the head of the queue, else to no one.
func (a *admission) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.queue) > 0 {
		w := a.queue[0]
		a.queue = a.queue[1:]
		w.granted = true
		close(w.ready)
		return
	}
	a.running--
}

func (a *admission) stats() AdmissionStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return AdmissionStats{Running: a.running, Queued: len(a.queue), MaxRunning: a.max, MaxQueued: a.maxQueued}
}
