package errs

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// PanicError is the cause of the INTERNAL error a recovered panic becomes: the value
// the code panicked with and the stack of the goroutine that panicked, kept for the
// log (the message a client sees carries neither the stack nor file paths).
type PanicError struct {
	Value any
	Stack []byte
}

func (p *PanicError) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// FromPanic turns a value recovered from a panic, with the stack of the goroutine
// that raised it, into an INTERNAL error whose cause is a *PanicError. A panic with
// an error value keeps it in the chain, so errors.Is still reaches it.
func FromPanic(p any, stack []byte) *Error {
	return &Error{Code: Internal, Message: fmt.Sprintf("internal error (a bug): %v", p), Pos: NoPosition,
		Cause: &PanicError{Value: p, Stack: stack}}
}

// Unwrap reaches an error the code panicked with.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// Recover, deferred directly (defer errs.Recover(&err)), stops a panic of the calling
// goroutine and stores it in *err as FromPanic's INTERNAL error. A panic must never
// take the process down: every goroutine a statement starts defers it (or runs
// under Safe) and hands the error to the statement.
func Recover(err *error) {
	if p := recover(); p != nil {
		*err = FromPanic(p, debug.Stack())
	}
}

// Safe returns f made to return a panic as FromPanic's INTERNAL error, for
// goroutines started with go or errgroup.Group.Go.
func Safe(f func() error) func() error {
	return func() (err error) {
		defer Recover(&err)
		return f()
	}
}

// PanicOf returns the recovered panic in err's chain, or nil when err is not one.
func PanicOf(err error) *PanicError {
	var p *PanicError
	if errors.As(err, &p) {
		return p
	}
	return nil
}
