package sql

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/loredb/lore/errs"
)

// Deparse renders an expression node back to SQL text in PostgreSQL's canonical
// spelling (keywords upper-case, operators spaced, e.g. "a + 1", "count(*)"). It is
// for naming result columns and for messages, not for re-parsing.
func Deparse(n *pg.Node) (string, error) {
	if n == nil {
		return "", errs.New(errs.Internal, "cannot deparse a nil expression")
	}
	const prefix = "SELECT "
	tree := &pg.ParseResult{Stmts: []*pg.RawStmt{{Stmt: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
		TargetList: []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: n}}}},
	}}}}}}
	s, err := pg.Deparse(tree)
	if err != nil {
		return "", errs.New(errs.Internal, "cannot render expression as SQL: %w", err)
	}
	if !strings.HasPrefix(s, prefix) {
		return "", errs.New(errs.Internal, "cannot render expression as SQL: unexpected rendering %q", s)
	}
	return s[len(prefix):], nil
}
