package errs

import "fmt"

// LimitError is the cause of a statement stopped by one of its guardrails (SPEC
// §13): a setting such as max_rows_scanned whose limit it went past. Its code is
// RESOURCE_EXHAUSTED, like a memory budget run out; a server tells the two apart with
// errors.As (a guardrail is the statement's own doing, and retrying it later does not
// help, where a full budget or queue may clear).
type LimitError struct {
	// Setting names the guardrail: max_execution_ms, max_rows_scanned,
	// max_result_rows or max_result_bytes.
	Setting string
	// Limit is the value the statement ran under, in the setting's unit.
	Limit int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s = %d exceeded", e.Setting, e.Limit)
}

// Exceeded is the RESOURCE_EXHAUSTED error of a statement that went past the limit
// of guardrail setting: the message names the setting and says what happened, and the
// cause is a *LimitError.
func Exceeded(setting string, limit int64, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Code: ResourceExhausted, Pos: NoPosition, Cause: &LimitError{Setting: setting, Limit: limit},
		Message: fmt.Sprintf("%s (%s = %d: narrow the statement, or raise the setting up to the engine's ceiling)", msg, setting, limit)}
}
