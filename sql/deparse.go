package sql

import (
	"strings"
	"sync"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/sql/pgtree"
)

// Deparse renders an expression node back to SQL text in PostgreSQL's canonical
// spelling (keywords upper-case, operators spaced, e.g. "a + 1", "count(*)"). It is
// for naming result columns and for messages, not for re-parsing.
func Deparse(n *pg.Node) (string, error) {
	if n == nil {
		return "", errs.New(errs.Internal, "cannot deparse a nil expression")
	}
	const prefix = "SELECT "
	version, err := treeVersion()
	if err != nil {
		return "", err
	}
	tree := &pg.ParseResult{Version: version, Stmts: []*pg.RawStmt{{Stmt: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
		TargetList: []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: n}}}},
	}}}}}}
	s, err := pgtree.Deparse(tree)
	if err != nil {
		return "", errs.New(errs.Internal, "cannot render expression as SQL: %w", err)
	}
	if !strings.HasPrefix(s, prefix) {
		return "", errs.New(errs.Internal, "cannot render expression as SQL: unexpected rendering %q", s)
	}
	return s[len(prefix):], nil
}

// treeVersion is the parse-tree format version of the linked parser, which the
// deparser insists on; it is learnt once from the parser itself rather than copied.
var treeVersion = sync.OnceValues(func() (int32, error) {
	res, err := pgtree.Parse("SELECT 1")
	if err != nil {
		return 0, errs.New(errs.Internal, "cannot learn the parse tree version: %w", err)
	}
	return res.Version, nil
})
