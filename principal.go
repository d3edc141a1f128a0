package lore

import (
	"context"
	"strings"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/sql"
	"github.com/loredb/lore/storage"
)

// Role is what a principal may do (SPEC §2). An admin may do anything; a reader runs
// queries over registered tables and reads what describes them, and reads a location
// named by path only under one of Options.AllowPaths.
type Role string

// The roles.
const (
	RoleAdmin  Role = "admin"
	RoleReader Role = "reader"
)

// Principal is who runs a statement: a name for the query log and a role.
type Principal struct {
	Name string
	Role Role
}

type principalKey struct{}

// WithPrincipal runs the statements of ctx as p. A context without a principal is
// the process's own (the command line, a program embedding Lore): an admin.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalOf is who ctx runs as, and whether a principal was set.
func PrincipalOf(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

func isAdmin(ctx context.Context) bool {
	p, ok := PrincipalOf(ctx)
	return !ok || p.Role == RoleAdmin
}

// authorize refuses a statement that only an admin may run (one that changes the
// catalog or what it has learnt) to any other principal.
func authorize(ctx context.Context, st sql.Statement) error {
	if isAdmin(ctx) {
		return nil
	}
	what := ""
	switch st.(type) {
	case *sql.CreateTable:
		what = "CREATE TABLE"
	case *sql.DropTable:
		what = "DROP TABLE"
	case *sql.AlterTable:
		what = "ALTER TABLE"
	case *sql.Analyze:
		what = "ANALYZE"
	case *sql.Optimize:
		what = "OPTIMIZE"
	default:
		return nil
	}
	start, _ := st.Span()
	p, _ := PrincipalOf(ctx)
	return errs.At(errs.Forbidden, start, "%s is for admins; %q is a %s", what, p.Name, p.Role)
}

// authorizePath refuses a location named by path to a principal that is no admin,
// unless it lies under one of allowed: a reader must not read the server's files by
// naming them.
func authorizePath(ctx context.Context, location string, allowed []string) error {
	if isAdmin(ctx) {
		return nil
	}
	loc := storage.Clean(location)
	for _, a := range allowed {
		a = storage.Clean(a)
		if loc == a || strings.HasPrefix(loc, strings.TrimSuffix(a, "/")+"/") {
			if !strings.Contains(location, "..") {
				return nil
			}
		}
	}
	p, _ := PrincipalOf(ctx)
	return errs.New(errs.Forbidden, "%q may not read %q by path: a reader reads registered tables, and paths under the server's allowed prefixes only", p.Name, location)
}
