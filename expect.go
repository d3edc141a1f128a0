package lore

import (
	"context"
	"strings"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
)

// Expected source versions (a server's expect_source_version): a client that
// planned from a table's version — a dashboard that read the version endpoint, a
// pipeline that saw a file land — runs its statement only over that version, or
// learns that the source moved.

type expectedKey struct{}

// WithExpectedVersions makes the statements run with ctx expect each named table
// (registered name → identity digest, source.Version.IdentitySHA256, the ETag of a
// server's version endpoint) to be at that version. A table the statement reads is
// checked against the version the statement is pinned to, when it is bound, so no
// change can slip between the check and the read; a named table the statement does
// not read is checked against its current version. A differing version is
// SOURCE_CHANGED (409).
func WithExpectedVersions(ctx context.Context, versions map[string]string) context.Context {
	if len(versions) == 0 {
		return ctx
	}
	norm := make(map[string]string, len(versions))
	for name, v := range versions {
		norm[strings.ToLower(name)] = strings.Trim(strings.TrimSpace(v), `"`)
	}
	return context.WithValue(ctx, expectedKey{}, norm)
}

func expectedVersions(ctx context.Context) map[string]string {
	m, _ := ctx.Value(expectedKey{}).(map[string]string)
	return m
}

// checkExpected fails when table name is expected at another version than v, the
// version the statement reads it at.
func checkExpected(ctx context.Context, name string, v source.Version) error {
	want, ok := expectedVersions(ctx)[strings.ToLower(name)]
	if !ok {
		return nil
	}
	if v.IdentitySHA256 != want {
		got := v.IdentitySHA256
		if got == "" {
			got = "unknown (its version cannot be taken)"
		}
		return errs.New(errs.SourceChanged, "table %s is at version %s, not the expected %s", name, got, want)
	}
	return nil
}

// checkUnread checks the expected tables a statement did not bind (bound holds the
// names it did, lower case) against their current versions; an expected table that
// does not exist is TABLE_NOT_FOUND.
func (e *Engine) checkUnread(ctx context.Context, bound map[string]bool) error {
	for name := range expectedVersions(ctx) {
		if bound[name] {
			continue
		}
		t, err := e.catalog.Table(ctx, name)
		if err != nil {
			return err
		}
		v, err := e.currentVersion(ctx, t)
		if err != nil {
			return err
		}
		if err := checkExpected(ctx, name, v); err != nil {
			return err
		}
	}
	return nil
}

// boundLatest names (lower case) the tables the view bound at their latest version.
func (c *catalogView) boundLatest() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]bool, len(c.tables))
	for key, ref := range c.tables {
		if key == ref.Name {
			out[strings.ToLower(ref.Name)] = true
		}
	}
	return out
}
