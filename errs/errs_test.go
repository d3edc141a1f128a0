package errs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCodesAndStatuses(t *testing.T) {
	e := New(CorruptSource, "cannot read footer of %q: %w", "x.parquet", errors.New("truncated"))
	if CodeOf(e) != CorruptSource || Status(CodeOf(e)) != 422 {
		t.Fatalf("code %s status %d", CodeOf(e), Status(CodeOf(e)))
	}
	if !errors.Is(e, ErrCorruptSource) || errors.Is(e, ErrSyntax) {
		t.Fatal("category sentinels do not match by code")
	}
	wrapped := fmt.Errorf("scan: %w", e)
	if CodeOf(wrapped) != CorruptSource || e.Error() != `cannot read footer of "x.parquet": truncated` {
		t.Fatalf("wrapped: %s %q", CodeOf(wrapped), e.Error())
	}
	if CodeOf(context.Canceled) != Canceled || CodeOf(errors.New("x")) != Internal || CodeOf(nil) != "" {
		t.Fatal("codes of plain errors")
	}
	for code, status := range map[Code]int{Syntax: 400, TableNotFound: 404, SourceChanged: 409,
		ResourceExhausted: 503, Canceled: 499, SourceUnavailable: 502, Internal: 500, Forbidden: 403} {
		if Status(code) != status {
			t.Errorf("%s: status %d, want %d", code, Status(code), status)
		}
	}
}

func TestPositionsAndCaret(t *testing.T) {
	text := "SELECT 1,\n\t'ä€𝄞' + fro)"
	pos := len("SELECT 1,\n\t'ä€𝄞' + ")
	line, col := LineColumn(text, pos)
	if line != 2 || col != pos-len("SELECT 1,\n")+1 {
		t.Fatalf("line %d column %d", line, col)
	}
	err := fmt.Errorf("bind: %w", At(Analysis, pos, "column %q not found", "fro"))
	if PositionOf(err) != pos {
		t.Fatalf("position %d", PositionOf(err))
	}
	want := "LINE 2: \t'ä€𝄞' + fro)\n        \t        ^"
	if got := Caret(text, pos); got != want {
		t.Fatalf("caret:\n%s\nwant:\n%s", got, want)
	}
	if Caret(text, -1) != "" || PositionOf(New(Internal, "x")) != NoPosition {
		t.Fatal("no position")
	}
}

// A panic recovered by Safe is an INTERNAL error that keeps the panic's value, its
// stack, and an error value's chain.
func TestSafeRecoversPanics(t *testing.T) {
	err := Safe(func() error { panic(context.DeadlineExceeded) })()
	p := PanicOf(err)
	if CodeOf(err) != Internal || p == nil || len(p.Stack) == 0 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("recovered: %v (%#v)", err, p)
	}
	if err := Safe(func() error { return ErrSyntax })(); err != ErrSyntax || PanicOf(err) != nil {
		t.Fatalf("an error without a panic: %v", err)
	}
	done := make(chan error)
	go func() { done <- Safe(func() error { var m map[string]int; m["x"]++; return nil })() }()
	if err := <-done; CodeOf(err) != Internal || !strings.Contains(err.Error(), "nil map") {
		t.Fatalf("a runtime panic on another goroutine: %v", err)
	}
}
