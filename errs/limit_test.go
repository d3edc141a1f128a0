package errs

import (
	"errors"
	"strings"
	"testing"
)

func TestExceededNamesTheSettingAndIsAGuardrail(t *testing.T) {
	err := Exceeded("max_rows_scanned", 1000, "the scans read %d rows", 1200)
	var le *LimitError
	if CodeOf(err) != ResourceExhausted || Status(CodeOf(err)) != 503 || !errors.As(err, &le) ||
		le.Setting != "max_rows_scanned" || le.Limit != 1000 || !errors.Is(err, ErrResourceExhausted) {
		t.Fatalf("%#v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "the scans read 1200 rows") || !strings.Contains(msg, "max_rows_scanned = 1000") {
		t.Fatalf("message %q", msg)
	}
	// A budget run out is RESOURCE_EXHAUSTED too, and no guardrail.
	if errors.As(New(ResourceExhausted, "memory budget"), &le) {
		t.Fatal("a plain RESOURCE_EXHAUSTED error is a LimitError")
	}
}
