//go:build cgo

package plan

import (
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/sql/pgtree"
)

// walkPG calls f on n and, while f returns true, on every node below it.
func walkPG(n *pg.Node, f func(*pg.Node) bool) {
	if n == nil {
		return
	}
	pgtree.Walk(n, func(m any) bool {
		if node, ok := m.(*pg.Node); ok {
			return f(node)
		}
		return true
	})
}
