//go:build cgo

package plan

import (
	"strings"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/types"
)

// selfReference reports whether q names the WITH query name in a FROM clause.
func selfReference(q *pg.Node, name string) bool {
	found := false
	walkPG(q, func(x *pg.Node) bool {
		if rv := x.GetRangeVar(); rv != nil && rv.Schemaname == "" && strings.EqualFold(rv.Relname, name) {
			found = true
		}
		return !found
	})
	return found
}

// bindRecursive binds a WITH RECURSIVE query that names itself: anchor UNION [ALL]
// step, where only step reads the query (as its work table). Its columns take the
// anchor's types; step's are cast to them.
func (b *binder) bindRecursive(d *cteDef) (Node, error) {
	sel := d.def.Ctequery.GetSelectStmt()
	pos := int(d.def.Location)
	if sel == nil || sel.Op != pg.SetOperation_SETOP_UNION {
		return nil, errs.At(errs.Analysis, pos, "recursive query %q must be of the form anchor UNION [ALL] recursive part", d.def.Ctename)
	}
	if len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil {
		return nil, errs.At(errs.Analysis, pos, "ORDER BY and LIMIT are not supported in a recursive query")
	}
	if selfReference(&pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel.Larg}}, d.def.Ctename) {
		return nil, errs.At(errs.Analysis, pos, "the anchor of recursive query %q must not refer to it", d.def.Ctename)
	}
	anchor, err := b.bindQuery(sel.Larg, nil)
	if err != nil {
		return nil, err
	}
	cols := make([]Column, len(anchor.Columns()))
	for i, c := range anchor.Columns() {
		cols[i] = Column{Name: c.Name, Type: c.Type}
	}
	if len(d.def.Aliascolnames) > 0 {
		if len(d.def.Aliascolnames) > len(cols) {
			return nil, errs.At(errs.Analysis, pos, "recursive query %q has %d columns available but %d columns specified",
				d.def.Ctename, len(cols), len(d.def.Aliascolnames))
		}
		for i, cn := range d.def.Aliascolnames {
			cols[i].Name = cn.GetString_().GetSval()
		}
	}
	work := &WorkTable{Name: d.def.Ctename, Cols: cols}
	d.work = work
	step, err := b.bindQuery(sel.Rarg, nil)
	d.work = nil
	if err != nil {
		return nil, err
	}
	sc := step.Columns()
	if len(sc) != len(cols) {
		return nil, errs.At(errs.Analysis, pos, "recursive query %q: the anchor has %d columns and the recursive part %d", d.def.Ctename, len(cols), len(sc))
	}
	exprs := make([]Expr, len(sc))
	cast := false
	for i, c := range sc {
		if _, ok := commonType(c.Type, cols[i].Type); !ok {
			return nil, errs.At(errs.Analysis, pos, "recursive query %q: column %d has types %s and %s with no common type",
				d.def.Ctename, i+1, types.Name(cols[i].Type), types.Name(c.Type))
		}
		exprs[i] = castTo(&ColRef{Idx: i, T: c.Type, Name: c.Name}, cols[i].Type)
		cast = cast || !sameType(c.Type, cols[i].Type)
	}
	if cast {
		step = &Project{Input: step, Exprs: exprs, Cols: cols}
	}
	return &RecursiveCTE{Anchor: anchor, Step: step, Work: work, All: sel.All, Cols: cols}, nil
}
