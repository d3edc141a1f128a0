package server

import "time"

// workers runs functions on goroutines that outlive them. A statement goes deep
// (the binder, SQLite's reads of the catalog): on a new goroutine its stack grows by
// copying, again and again, which cost a twentieth of a warm answer from statistics;
// a goroutine that has run one keeps its grown stack for the next (until a
// collection finds it idle and shrinks it).
type workers struct {
	jobs chan func()
	idle time.Duration
}

func newWorkers(idle time.Duration) *workers {
	return &workers{jobs: make(chan func()), idle: idle}
}

// run runs f on an idle worker, or on a new one when none is idle.
func (w *workers) run(f func()) {
	select {
	case w.jobs <- f:
	default:
		go w.loop(f)
	}
}

// loop runs f, then what run hands it, until it has been idle for w.idle.
func (w *workers) loop(f func()) {
	t := time.NewTimer(w.idle)
	defer t.Stop()
	for {
		f()
		t.Reset(w.idle)
		select {
		case f = <-w.jobs:
		case <-t.C:
			return
		}
	}
}
