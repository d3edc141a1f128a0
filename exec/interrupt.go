package exec

import "context"

// checkEvery is how many rows (or comparisons) a long loop goes between looks at
// its context: a few microseconds of work, so a canceled statement stops within
// milliseconds while the check costs nothing measurable. A power of two.
const checkEvery = 1 << 12

// interrupt stops a long computation that has no way out of its own — a library
// sort of millions of rows, a window partition — soon after its context is
// canceled: the computation calls tick on every step, and after ctx is canceled
// tick unwinds it with a panic that run turns back into ctx's error.
type interrupt struct {
	ctx context.Context
	n   int
	err error
}

// tick counts one step and looks at the context every checkEvery steps.
func (it *interrupt) tick() {
	it.n++
	if it.n&(checkEvery-1) == 0 {
		it.check()
	}
}

func (it *interrupt) check() {
	if err := it.ctx.Err(); err != nil {
		it.err = err
		panic(it)
	}
}

// run runs f, which calls tick, and returns ctx's error when tick stopped it. Any
// other panic goes on unwinding, with its own stack.
func (it *interrupt) run(f func()) (err error) {
	defer func() {
		if it.err != nil {
			recover()
			err = it.err
		}
	}()
	f()
	return nil
}
