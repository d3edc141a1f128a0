//go:build cgo

package plan

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
)

// selState is the SELECT being bound: its current input, which WHERE subqueries
// extend with semi, anti and left joins, and the scope over that input.
type selState struct {
	input Node
	sc    *scope
}

func (st *selState) setInput(n Node) {
	st.input = n
	outer := st.sc.outer
	st.sc = newScope(n.Columns())
	st.sc.outer = outer
}

// aggState collects the groups and aggregates of an aggregating SELECT.
type aggState struct {
	pre *scope
	// sel is the SELECT whose input the aggregate reads: a correlated subquery in an
	// aggregate's argument is joined onto it.
	sel    *selState
	groups []Expr
	keys   []string
	aggs   []AggCall
	akeys  []string
	// sets are the grouping sets (indexes into groups) of GROUPING SETS, ROLLUP and
	// CUBE; nil for a plain GROUP BY. groupings are the GROUPING() calls' arguments.
	sets      [][]int
	groupings [][]int
}

func (a *aggState) findGroup(e Expr) int {
	k := e.String()
	for i, g := range a.keys {
		if g == k {
			return i
		}
	}
	return -1
}

// winRef stands for the k-th window function until the Window node exists.
type winRef struct {
	k int
	t arrow.DataType
}

func (e *winRef) Type() arrow.DataType { return e.t }
func (e *winRef) Children() []Expr     { return nil }
func (e *winRef) String() string       { return "window#" + string(rune('0'+e.k)) }

type target struct {
	node *pg.Node // nil when the item came from * expansion
	pre  Expr     // the expanded column, for * items
	name string
}

func (b *binder) bindSelect(sel *pg.SelectStmt, outer *scope) (Node, error) {
	restore, err := b.namedWindows(sel.WindowClause)
	if err != nil {
		return nil, err
	}
	defer restore()
	input, err := b.bindFrom(sel.FromClause, outer)
	if err != nil {
		return nil, err
	}
	st := &selState{sc: &scope{outer: outer}}
	st.setInput(input)

	if sel.WhereClause != nil {
		if err := b.bindWhere(st, sel.WhereClause); err != nil {
			return nil, err
		}
	}

	// The select list, with * expanded.
	var targets []target
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil {
			if _, star := cr.Fields[len(cr.Fields)-1].Node.(*pg.Node_AStar); star {
				if ts, ok, err := b.expandStructStar(cr, st); err != nil {
					return nil, err
				} else if ok {
					targets = append(targets, ts...)
					continue
				}
				ts, err := b.expandStar(cr, st, len(sel.FromClause) == 0)
				if err != nil {
					return nil, err
				}
				targets = append(targets, ts...)
				continue
			}
		}
		if ts, ok, err := b.expandColumns(rt, st); err != nil {
			return nil, err
		} else if ok {
			targets = append(targets, ts...)
			continue
		}
		name := rt.Name
		if name == "" {
			name = columnName(rt.Val)
		}
		targets = append(targets, target{node: rt.Val, name: name})
	}

	aggMode := len(sel.GroupClause) > 0 || sel.HavingClause != nil
	for _, t := range targets {
		if t.node != nil && containsAggregate(t.node) {
			aggMode = true
		}
	}
	for _, s := range sel.SortClause {
		if containsAggregate(s.GetSortBy().Node) {
			aggMode = true
		}
	}

	var agg *aggState
	var wins []WindowCall
	ec := &exprCtx{sc: st.sc, sel: st, clause: "SELECT"}
	if aggMode {
		agg = &aggState{pre: st.sc, sel: st}
		if err := b.bindGroupClause(b.groupByAll(sel.GroupClause, targets), targets, agg); err != nil {
			return nil, err
		}
		post := &scope{outer: st.sc.outer}
		ec = &exprCtx{sc: post, agg: agg, clause: "SELECT"}
	}
	ec.wins = &wins
	var unnests []unnestCall
	ec.unnests = &unnests

	exprs := make([]Expr, len(targets))
	cols := make([]Column, len(targets))
	for i, t := range targets {
		var e Expr
		if t.node != nil {
			if e, err = b.expr(t.node, ec); err != nil {
				return nil, err
			}
		} else if agg != nil {
			if e, err = b.postExpr(t.pre, agg); err != nil {
				return nil, err
			}
		} else {
			e = t.pre
		}
		exprs[i] = settle(e)
		cols[i] = Column{Name: t.name, Type: e.Type()}
	}
	if targets, exprs, cols, err = b.expandUnnestStructs(targets, exprs, cols); err != nil {
		return nil, err
	}

	var having Expr
	if sel.HavingClause != nil {
		hc := *ec
		hc.clause = "HAVING"
		if having, err = b.expr(sel.HavingClause, &hc); err != nil {
			return nil, err
		}
		if having, err = b.boolean(having, "HAVING"); err != nil {
			return nil, err
		}
	}

	qualifyNode := b.qualifyNode(sel, targets, st.sc)
	var qualify Expr
	if qualifyNode != nil {
		qc := *ec
		qc.clause = "QUALIFY"
		if qualify, err = b.expr(qualifyNode, &qc); err != nil {
			return nil, err
		}
		if qualify, err = b.boolean(qualify, "QUALIFY"); err != nil {
			return nil, err
		}
	}

	// ORDER BY: select items by ordinal or output name, or extra expressions.
	on := distinctOn(sel)
	distinct := len(sel.DistinctClause) > 0 && on == nil
	var keys []SortKey
	sortClause, err := b.orderByAll(sel.SortClause, len(targets))
	if err != nil {
		return nil, err
	}
	for _, s := range sortClause {
		sb := s.GetSortBy()
		idx := -1
		if k, ok, err := ordinal(sb.Node, len(targets)); err != nil {
			return nil, err
		} else if ok {
			idx = k
		} else if cr := sb.Node.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
			if f := cr.Fields[0].GetString_(); f != nil {
				for i, t := range targets {
					if t.name == f.Sval {
						idx = i
						break
					}
				}
			}
		}
		if idx < 0 {
			oc := *ec
			oc.clause = "ORDER BY"
			e, err := b.expr(withOutputAliases(sb.Node, targets, st.sc), &oc)
			if err != nil {
				return nil, err
			}
			e = settle(e)
			for i, x := range exprs {
				if x.String() == e.String() {
					idx = i
					break
				}
			}
			if idx < 0 {
				if distinct {
					return nil, errs.At(errs.Analysis, int(sb.Location), "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
				}
				exprs = append(exprs, e)
				cols = append(cols, Column{Name: columnName(sb.Node), Type: e.Type(), Hidden: true})
				idx = len(exprs) - 1
			}
		}
		keys = append(keys, sortKey(&ColRef{Idx: idx, T: exprs[idx].Type(), Name: cols[idx].Name}, sb))
	}

	var onKeys []int
	if on != nil {
		if onKeys, err = b.distinctOnKeys(on, targets, &exprs, &cols, ec); err != nil {
			return nil, err
		}
	}

	node := st.input
	if agg != nil {
		node = b.aggregateNode(node, agg)
		having, qualify = agg.resolveGroupings(having), agg.resolveGroupings(qualify)
		for i := range exprs {
			exprs[i] = agg.resolveGroupings(exprs[i])
		}
		for i := range wins {
			agg.resolveWindowGroupings(&wins[i])
		}
		if node, err = b.attachPending(node, agg, exprs, &having); err != nil {
			return nil, err
		}
		if having != nil {
			node = &Filter{Input: node, Cond: having}
		}
	}
	if len(wins) > 0 {
		base := len(node.Columns())
		wcols := append([]Column(nil), node.Columns()...)
		for _, w := range wins {
			wcols = append(wcols, Column{Name: w.Func, Type: w.T, Hidden: true})
		}
		node = &Window{Input: node, Funcs: wins, Cols: wcols}
		resolve := func(e Expr) Expr {
			e, _ = MapExpr(e, func(x Expr) (Expr, error) {
				if w, ok := x.(*winRef); ok {
					return &ColRef{Idx: base + w.k, T: w.t, Name: wins[w.k].Func}, nil
				}
				return x, nil
			})
			return e
		}
		for i := range exprs {
			exprs[i] = resolve(exprs[i])
		}
		if qualify != nil {
			qualify = resolve(qualify)
		}
	}
	if qualify != nil {
		if len(wins) == 0 {
			return nil, errs.At(errs.Analysis, location(qualifyNode), "QUALIFY needs a window function in the select list or in QUALIFY")
		}
		node = &Filter{Input: node, Cond: qualify}
	}
	if len(unnests) > 0 {
		node, exprs = planUnnests(node, unnests, exprs)
	}
	node = &Project{Input: node, Exprs: exprs, Cols: cols}
	if distinct {
		node = &Distinct{Input: node}
	}
	if on != nil {
		if node, err = b.firstPerKey(node, onKeys, keys); err != nil {
			return nil, err
		}
	}
	if len(keys) > 0 {
		node = &Sort{Input: node, Keys: keys}
	}
	if len(exprs) > len(targets) {
		n := len(targets)
		out := make([]Expr, n)
		for i := range out {
			out[i] = &ColRef{Idx: i, T: cols[i].Type, Name: cols[i].Name}
		}
		node = &Project{Input: node, Exprs: out, Cols: cols[:n]}
	}
	return b.applyLimit(node, sel)
}

// bindGroupItem binds one GROUP BY item: an ordinal or an output alias names a select
// item; anything else is an expression over the FROM columns.
func (b *binder) bindGroupItem(g *pg.Node, targets []target, agg *aggState) (int, error) {
	ec := &exprCtx{sc: agg.pre, clause: "GROUP BY", noAgg: true}
	var e Expr
	var err error
	if k, ok, oerr := ordinal(g, len(targets)); oerr != nil {
		return 0, oerr
	} else if ok {
		t := targets[k]
		if t.node == nil {
			e = t.pre
		} else if e, err = b.expr(t.node, ec); err != nil {
			return 0, err
		}
	} else {
		e, err = b.expr(g, ec)
		if err != nil && g.GetColumnRef() != nil && len(g.GetColumnRef().Fields) == 1 {
			name := g.GetColumnRef().Fields[0].GetString_().GetSval()
			for _, t := range targets {
				if t.name == name && t.node != nil {
					e, err = b.expr(t.node, ec)
					break
				}
			}
		}
		if err != nil {
			return 0, err
		}
	}
	e = settle(e)
	if i := agg.findGroup(e); i >= 0 {
		return i, nil
	}
	agg.groups = append(agg.groups, e)
	agg.keys = append(agg.keys, e.String())
	return len(agg.groups) - 1, nil
}

// postExpr maps an expression bound over the FROM columns to the aggregate's output:
// it must be a group expression (or be made of them and constants).
func (b *binder) postExpr(e Expr, agg *aggState) (Expr, error) {
	if i := agg.findGroup(e); i >= 0 {
		return &ColRef{Idx: i, T: e.Type(), Name: colRefName(e)}, nil
	}
	switch x := e.(type) {
	case *ColRef:
		return nil, errs.New(errs.Analysis, "column %q must appear in the GROUP BY clause or be used in an aggregate function", x.Name)
	case *Literal, *OuterRef:
		return e, nil
	}
	return MapExpr(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*ColRef); ok {
			if i := agg.findGroup(c); i >= 0 {
				return &ColRef{Idx: i, T: c.T, Name: c.Name}, nil
			}
			return nil, errs.New(errs.Analysis, "column %q must appear in the GROUP BY clause or be used in an aggregate function", c.Name)
		}
		return x, nil
	})
}

func colRefName(e Expr) string {
	if c, ok := e.(*ColRef); ok {
		return c.Name
	}
	return ""
}

// pgConjuncts splits a WHERE clause at its top-level ANDs.
func pgConjuncts(n *pg.Node) []*pg.Node {
	if be := n.GetBoolExpr(); be != nil && be.Boolop == pg.BoolExprType_AND_EXPR {
		var out []*pg.Node
		for _, a := range be.Args {
			out = append(out, pgConjuncts(a)...)
		}
		return out
	}
	return []*pg.Node{n}
}

var aggregateNames = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true, "mean": true,
	"approx_count_distinct": true, "approx_distinct": true, "approx_percentile": true,
}

func isAggregate(name string) bool { return aggregateNames[name] || moreAggregate(name) }

// containsAggregate reports an aggregate call outside subqueries and window calls.
func containsAggregate(n *pg.Node) bool {
	found := false
	walkPG(n, func(x *pg.Node) bool {
		if x.GetSubLink() != nil {
			return false
		}
		if fc := x.GetFuncCall(); fc != nil && isAggregate(funcName(fc)) && fc.Over == nil {
			found = true
			return false
		}
		return !found
	})
	return found
}

func funcName(fc *pg.FuncCall) string {
	name := fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval()
	return strings.ToLower(name)
}
