package lore

import (
	"context"
	"fmt"
	"os"

	"github.com/loredb/lore/errs"
)

// Engine runs statements. It is safe for concurrent use.
type Engine struct {
	opts Options
}

// Open opens (creating if needed) the engine's home and its catalog.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	opts.EnsureDefaults()
	if err := os.MkdirAll(opts.Home, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create home %q: %w", opts.Home, err)
	}
	return &Engine{opts: opts}, nil
}

// Close releases the engine's resources.
func (e *Engine) Close() error { return nil }

// Query runs one request: optional leading SET SESSION statements, then one
// statement. settings are per-statement settings (SPEC §6).
func (e *Engine) Query(ctx context.Context, sql string, settings map[string]string) (*Result, error) {
	return nil, errs.New(errs.Internal, "not implemented yet")
}
