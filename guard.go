package lore

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec"
	"github.com/loredb/lore/source"
)

// Guardrails are limits on one statement (SPEC §13). A zero field is no limit. A
// statement that goes past one fails with RESOURCE_EXHAUSTED naming the setting
// (errs.Exceeded; the cause is an *errs.LimitError): it is stopped, never truncated.
type Guardrails struct {
	// MaxExecution (setting max_execution_ms) is the longest a statement may take,
	// counted from when the engine receives it, so time waiting for admission counts:
	// a client never waits longer.
	MaxExecution time.Duration
	// MaxRowsScanned (max_rows_scanned) bounds the rows the statement's scans read,
	// all its scans together; scans stop as soon as they pass it. Answers from
	// statistics read no rows.
	MaxRowsScanned int64
	// MaxResultRows (max_result_rows) bounds the rows of the result.
	MaxResultRows int64
	// MaxResultBytes (max_result_bytes) bounds the bytes the result holds in memory
	// (Arrow buffers, dictionaries expanded).
	MaxResultBytes int64
}

// ParseGuardrails reads guardrails written as settings — max_execution_ms,
// max_rows_scanned, max_result_rows, max_result_bytes, with the values those settings
// take ("30000", "1GiB") — as a server's flags or configuration give its ceilings
// (Options.Ceilings). Any other key or a bad value is INVALID_SETTING.
func ParseGuardrails(m map[string]string) (Guardrails, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := defaultSettings()
	for _, k := range keys {
		key := strings.ToLower(strings.TrimSpace(k))
		if !strings.HasPrefix(key, "max_") {
			return Guardrails{}, errs.New(errs.InvalidSetting,
				"%q is no guardrail (known: max_execution_ms, max_rows_scanned, max_result_rows, max_result_bytes)", k)
		}
		if err := s.apply(key, m[k], errs.NoPosition); err != nil {
			return Guardrails{}, err
		}
	}
	return s.Limits, nil
}

// within returns the limits a statement that asked for g runs under, given the
// engine's ceilings c: a request may lower a ceiling, never raise it, and where it
// asks nothing the ceiling applies. Asking more than a ceiling is INVALID_SETTING.
func (g Guardrails) within(c Guardrails) (Guardrails, error) {
	ms, err := lower("max_execution_ms", g.MaxExecution.Milliseconds(), c.MaxExecution.Milliseconds())
	if err != nil {
		return Guardrails{}, err
	}
	out := Guardrails{MaxExecution: g.MaxExecution}
	if g.MaxExecution == 0 {
		out.MaxExecution = time.Duration(ms) * time.Millisecond
	}
	if out.MaxRowsScanned, err = lower("max_rows_scanned", g.MaxRowsScanned, c.MaxRowsScanned); err != nil {
		return Guardrails{}, err
	}
	if out.MaxResultRows, err = lower("max_result_rows", g.MaxResultRows, c.MaxResultRows); err != nil {
		return Guardrails{}, err
	}
	if out.MaxResultBytes, err = lower("max_result_bytes", g.MaxResultBytes, c.MaxResultBytes); err != nil {
		return Guardrails{}, err
	}
	return out, nil
}

// lower is the limit of setting a statement runs under when it asked for asked (0:
// nothing) under ceiling ceil (0: none).
func lower(setting string, asked, ceil int64) (int64, error) {
	switch {
	case ceil <= 0:
		return asked, nil
	case asked == 0:
		return ceil, nil
	case asked > ceil:
		return 0, errs.New(errs.InvalidSetting,
			"%s = %d is above the server's ceiling of %d: a request may lower a ceiling, not raise it", setting, asked, ceil)
	}
	return asked, nil
}

// validate reports ceilings that cannot work.
func (g Guardrails) validate() error {
	if g.MaxExecution < 0 || g.MaxRowsScanned < 0 || g.MaxResultRows < 0 || g.MaxResultBytes < 0 {
		return errs.New(errs.InvalidSetting, "a guardrail ceiling is negative: %+v", g)
	}
	if g.MaxExecution > 0 && g.MaxExecution < time.Millisecond {
		return errs.New(errs.InvalidSetting, "the max_execution_ms ceiling %s is below a millisecond", g.MaxExecution)
	}
	return nil
}

// deadline bounds ctx by max_execution_ms: when it passes, ctx's cause is the
// guardrail's error (guarded finds it).
func (g Guardrails) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if g.MaxExecution <= 0 {
		return ctx, func() {}
	}
	ms := g.MaxExecution.Milliseconds()
	return context.WithTimeoutCause(ctx, g.MaxExecution,
		errs.Exceeded("max_execution_ms", ms, "the statement ran longer than %s", g.MaxExecution))
}

// rowBreaker returns a context that the max_rows_scanned breaker cancels when it
// trips, and the breaker for the statement's scans (nil with no limit).
func (g Guardrails) rowBreaker(ctx context.Context) (context.Context, *source.RowLimit, func()) {
	if g.MaxRowsScanned <= 0 {
		return ctx, nil, func() {}
	}
	ctx, stop := context.WithCancelCause(ctx)
	max := g.MaxRowsScanned
	l := &source.RowLimit{Max: max, Trip: func(n int64) error {
		err := errs.Exceeded("max_rows_scanned", max, "the statement's scans read %d rows, more than %d, and stopped there", n, max)
		stop(err)
		return err
	}}
	return ctx, l, func() { stop(nil) }
}

// checkResult fails a result past max_result_rows or max_result_bytes, for the
// statements whose result is not built by exec.Run (which checks as it goes).
func (g Guardrails) checkResult(res *Result) error {
	if res == nil {
		return nil
	}
	if g.MaxResultRows > 0 && res.NumRows() > g.MaxResultRows {
		return errs.Exceeded("max_result_rows", g.MaxResultRows, "the result has %d rows, more than %d", res.NumRows(), g.MaxResultRows)
	}
	if g.MaxResultBytes > 0 {
		if n := exec.ResultBytes(res.Batches); n > g.MaxResultBytes {
			return errs.Exceeded("max_result_bytes", g.MaxResultBytes, "the result holds %d bytes, more than %d", n, g.MaxResultBytes)
		}
	}
	return nil
}

// guarded returns the guardrail error that stopped ctx's statement in place of err,
// whatever the operators made of the cancellation, or err when no guardrail did.
func guarded(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	cause := context.Cause(ctx)
	var le *errs.LimitError
	if errors.As(cause, &le) {
		return cause
	}
	return err
}
