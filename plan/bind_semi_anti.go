//go:build cgo

package plan

import (
	"strings"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/sql"
	pg "github.com/loredb/lore/sql/pgast"
)

// bindSemiAntiJoin binds DuckDB's `l SEMI JOIN r ON …` and `l ANTI JOIN r ON …` (or
// USING, or NATURAL): the rows of l that have a match in r, or that have none, as
// EXISTS and NOT EXISTS would keep them. The result has l's columns only, so r's
// names are not in scope after the join; a NULL key matches nothing, so ANTI JOIN
// keeps its row.
func (b *binder) bindSemiAntiJoin(j *pg.JoinExpr, outer *scope) (Node, error) {
	kind, word := SemiJoin, "SEMI"
	if j.Rtindex == sql.AntiJoinMark {
		kind, word = AntiJoin, "ANTI"
	}
	if lateralOf(j.Rarg) != nil {
		return nil, errs.New(errs.Analysis, "a LATERAL subquery in a %s JOIN is not supported", word)
	}
	if j.Quals != nil && containsSubLink(j.Quals) {
		return nil, errs.New(errs.Analysis, "a subquery in a %s JOIN condition is not supported", word)
	}
	left, err := b.bindFromItem(j.Larg, outer)
	if err != nil {
		return nil, err
	}
	right, err := b.bindFromItem(j.Rarg, outer)
	if err != nil {
		return nil, err
	}
	lc, rc := left.Columns(), right.Columns()
	join := &Join{Kind: CrossJoin, Left: left, Right: right, Cols: lc}
	var using []string
	if j.IsNatural {
		for _, l := range lc {
			if l.Hidden {
				continue
			}
			for _, r := range rc {
				if !r.Hidden && strings.EqualFold(l.Name, r.Name) {
					using = append(using, l.Name)
				}
			}
		}
	}
	for _, u := range j.UsingClause {
		using = append(using, u.GetString_().GetSval())
	}
	switch {
	case len(using) > 0:
		ls, rs := newScope(lc), newScope(rc)
		for _, name := range using {
			eq, _, _, err := b.usingEquality(ls, rs, lc, rc, name)
			if err != nil {
				return nil, err
			}
			AddJoinCondition(join, eq)
		}
	case j.Quals != nil:
		sc := newScope(concatCols(lc, rc))
		sc.outer = outer
		cond, err := b.expr(j.Quals, &exprCtx{sc: sc, noSubquery: true})
		if err != nil {
			return nil, err
		}
		if cond, err = b.boolean(cond, word+" JOIN condition"); err != nil {
			return nil, err
		}
		splitJoinCondition(join, cond)
	}
	join.Kind = kind
	return join, nil
}
