//go:build cgo

package plan

import (
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/sql/pgtree"
)

// withOutputAliases returns a copy of n, an expression of QUALIFY or ORDER BY, with
// each name that is not a column of the input but is the alias of a select item
// replaced by that item's expression: DuckDB reads output aliases there, also inside
// an expression (ORDER BY CASE WHEN alias = 0 THEN … END). A name the input has keeps
// meaning the input's column; subqueries are left alone.
func withOutputAliases(n *pg.Node, targets []target, sc *scope) *pg.Node {
	n = pgtree.Clone(n)
	walkPG(n, func(x *pg.Node) bool {
		if x.GetSubLink() != nil {
			return false
		}
		cr := x.GetColumnRef()
		if cr == nil || len(cr.Fields) != 1 || cr.Fields[0].GetString_() == nil {
			return true
		}
		name := cr.Fields[0].GetString_().Sval
		if _, err := sc.resolve("", name, int(cr.Location)); err == nil {
			return false
		}
		for _, t := range targets {
			if t.node != nil && t.name == name {
				x.Node = pgtree.Clone(t.node).Node
				return false
			}
		}
		return false
	})
	return n
}
