// Package errs holds Lore's error codes: one stable code per kind of failure, one
// HTTP status per code, and one error type that carries the code, a message and,
// for errors in SQL text, the byte offset of the offending token.
//
// Every error that leaves the engine is an *Error or wraps one; CodeOf finds the code
// of any error (context cancellation is CANCELED, anything else unknown is INTERNAL).
package errs

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Code is a stable, documented error code (SPEC §10).
type Code string

// The codes. Each maps to exactly one HTTP status in Status.
const (
	Syntax                Code = "SYNTAX_ERROR"
	Analysis              Code = "ANALYSIS_ERROR"
	InvalidSetting        Code = "INVALID_SETTING"
	StatisticsUnavailable Code = "STATISTICS_UNAVAILABLE"
	DescribeFailed        Code = "DESCRIBE_FAILED"
	OptimizeInvalid       Code = "OPTIMIZE_INVALID"
	OptimizeUnsupported   Code = "OPTIMIZE_UNSUPPORTED"
	TableNotFound         Code = "TABLE_NOT_FOUND"
	Unauthenticated       Code = "UNAUTHENTICATED"
	Forbidden             Code = "FORBIDDEN"
	SourceChanged         Code = "SOURCE_CHANGED"
	OptimizeInProgress    Code = "OPTIMIZE_IN_PROGRESS"
	SourceUnavailable     Code = "SOURCE_UNAVAILABLE"
	CorruptSource         Code = "CORRUPT_SOURCE"
	ResourceExhausted     Code = "RESOURCE_EXHAUSTED"
	Canceled              Code = "CANCELED"
	Internal              Code = "INTERNAL"
	// The server's own codes: a request it cannot take, whatever its statement.
	InvalidRequest  Code = "INVALID_REQUEST"   // a body that is not the API's JSON, a statement too long
	RequestTooLarge Code = "REQUEST_TOO_LARGE" // a body over the server's limit
	NotFound        Code = "NOT_FOUND"         // no such endpoint, or no query of that id
	QueryIDInUse    Code = "QUERY_ID_IN_USE"   // a client query_id that names a running statement
	RateLimited     Code = "RATE_LIMITED"      // a token over the server's request rate
	ResultExpired   Code = "RESULT_EXPIRED"    // a paged result abandoned past the idle timeout
)

// Status is the HTTP status of a code; the server maps errors to statuses here only.
func Status(c Code) int {
	switch c {
	case Syntax, Analysis, InvalidSetting, StatisticsUnavailable, DescribeFailed,
		OptimizeInvalid, OptimizeUnsupported, InvalidRequest:
		return 400
	case Unauthenticated:
		return 401
	case Forbidden:
		return 403
	case TableNotFound, NotFound:
		return 404
	case SourceChanged, OptimizeInProgress, QueryIDInUse:
		return 409
	case RequestTooLarge:
		return 413
	case ResultExpired:
		return 410
	case RateLimited:
		return 429
	case CorruptSource:
		return 422
	case Canceled:
		return 499
	case SourceUnavailable:
		return 502
	case ResourceExhausted:
		return 503
	default:
		return 500
	}
}

// NoPosition marks an error that has no place in the statement text.
const NoPosition = -1

// Error is a Lore error: a code, a message, and optionally a byte offset into the
// statement text (Pos, 0-based; NoPosition when unknown) and a cause.
type Error struct {
	Code    Code
	Message string
	Pos     int
	Cause   error
}

func (e *Error) Error() string {
	if e.Cause != nil && e.Message == "" {
		return e.Cause.Error()
	}
	return e.Message
}

// Unwrap returns the cause, so errors.Is reaches wrapped standard errors.
func (e *Error) Unwrap() error { return e.Cause }

// Is reports whether target is an *Error with the same code and no message: the
// category sentinels below match every error of their code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Category sentinels, for errors.Is(err, errs.ErrSyntax).
var (
	ErrSyntax                = &Error{Code: Syntax, Pos: NoPosition}
	ErrAnalysis              = &Error{Code: Analysis, Pos: NoPosition}
	ErrInvalidSetting        = &Error{Code: InvalidSetting, Pos: NoPosition}
	ErrStatisticsUnavailable = &Error{Code: StatisticsUnavailable, Pos: NoPosition}
	ErrTableNotFound         = &Error{Code: TableNotFound, Pos: NoPosition}
	ErrSourceUnavailable     = &Error{Code: SourceUnavailable, Pos: NoPosition}
	ErrCorruptSource         = &Error{Code: CorruptSource, Pos: NoPosition}
	ErrResourceExhausted     = &Error{Code: ResourceExhausted, Pos: NoPosition}
	ErrCanceled              = &Error{Code: Canceled, Pos: NoPosition}
	ErrInternal              = &Error{Code: Internal, Pos: NoPosition}
)

// Known reports whether c is one of the codes above (one process reading another's
// report of a failure trusts no other).
func Known(c Code) bool { return c == Internal || Status(c) != 500 }

// New returns an error with a code and a formatted message. A %w verb in format
// records the cause.
func New(code Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), Pos: NoPosition, Cause: errors.Unwrap(err)}
}

// At returns an error with a code, a byte offset into the statement text, and a message.
func At(code Code, pos int, format string, args ...any) *Error {
	e := New(code, format, args...)
	e.Pos = pos
	return e
}

// CodeOf returns the code of err: the code of the first *Error in its chain,
// CANCELED for context cancellation or deadline, INTERNAL otherwise.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Canceled
	}
	return Internal
}

// PositionOf returns the byte offset recorded in err's chain, or NoPosition.
func PositionOf(err error) int {
	var e *Error
	for cur := err; cur != nil; {
		if !errors.As(cur, &e) {
			return NoPosition
		}
		if e.Pos != NoPosition {
			return e.Pos
		}
		cur = e.Cause
	}
	return NoPosition
}

// LineColumn converts a byte offset in text to a 1-based line and a 1-based column
// counted in bytes.
func LineColumn(text string, pos int) (line, col int) {
	if pos < 0 {
		return 0, 0
	}
	if pos > len(text) {
		pos = len(text)
	}
	line = 1 + strings.Count(text[:pos], "\n")
	start := strings.LastIndexByte(text[:pos], '\n') + 1
	return line, pos - start + 1
}

// Caret renders the line of text that holds pos with a caret under the character at pos,
// as "LINE 2: select x fro t\n                 ^". Tabs in the prefix are kept and
// every other character is one space, so the caret lines up under the user's own text.
func Caret(text string, pos int) string {
	if pos < 0 || pos > len(text) {
		return ""
	}
	line, _ := LineColumn(text, pos)
	start := strings.LastIndexByte(text[:pos], '\n') + 1
	end := strings.IndexByte(text[pos:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += pos
	}
	prefix := fmt.Sprintf("LINE %d: ", line)
	pad := make([]byte, 0, len(prefix)+pos-start)
	for range prefix {
		pad = append(pad, ' ')
	}
	for _, c := range text[start:pos] {
		if c == '\t' {
			pad = append(pad, '\t')
		} else {
			pad = append(pad, ' ')
		}
	}
	return prefix + text[start:end] + "\n" + string(pad) + "^"
}

// Describe renders err for a person: "CODE: message", and when the error has a
// position in text, the line and column and the caret under the offending text.
func Describe(err error, text string) string {
	code := CodeOf(err)
	msg := fmt.Sprintf("%s: %s", code, err.Error())
	if pos := PositionOf(err); pos != NoPosition {
		line, col := LineColumn(text, pos)
		msg += fmt.Sprintf(" (line %d, column %d)\n%s", line, col, Caret(text, pos))
	}
	return msg
}
