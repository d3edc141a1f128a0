//go:build cgo

package plan

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/types"
)

// pendingSubs are the correlated subqueries of an aggregating SELECT's list, HAVING
// and ORDER BY: they read the aggregate's output, so they are joined onto it once it
// is built. post is the scope of the aggregate's output columns that an IN's left
// operand refers to from inside the subquery.
type pendingSubs struct {
	plans []Node
	post  *scope
}

// corrRef stands for the value of the k-th pending subquery until it is joined on.
type corrRef struct {
	k int
	t Expr
}

func (e *corrRef) Type() arrow.DataType { return e.t.Type() }
func (e *corrRef) Children() []Expr     { return nil }
func (e *corrRef) String() string       { return "correlated#" + string(rune('0'+e.k%10)) }

// correlatedValue returns the value of q, a one-column plan with outer references to
// the query being bound, in the clause ec binds: q is joined onto the SELECT's input
// (or, over an aggregate, onto its output) and the value read from the join.
func (b *binder) correlatedValue(ec *exprCtx, q Node, pos int) (Expr, error) {
	col := q.Columns()[0]
	switch {
	case ec.agg != nil:
		p := b.pendingOf(ec.agg)
		p.plans = append(p.plans, q)
		return &corrRef{k: len(p.plans) - 1, t: &ColRef{T: col.Type, Name: col.Name}}, nil
	case ec.sel != nil:
		sc := ec.sc
		c, err := b.attachCorrelated(ec.sel.input, map[*scope]outerMap{sc: columnsOf(sc)}, q, pos)
		if err != nil {
			return nil, err
		}
		ec.sel.setInput(c.node)
		return &ColRef{Idx: c.at, T: col.Type, Name: col.Name}, nil
	}
	clause := ec.clause
	if clause == "" {
		clause = "this clause"
	}
	return nil, errs.At(errs.Analysis, pos, "correlated subqueries are not supported in %s", clause)
}

// columnsOf maps a scope's columns to references to them.
func columnsOf(sc *scope) outerMap {
	return func(i int) (Expr, error) {
		c := sc.cols[i]
		return &ColRef{Idx: i, T: c.Type, Name: c.Name}, nil
	}
}

func (b *binder) pendingOf(a *aggState) *pendingSubs {
	if b.pending == nil {
		b.pending = map[*aggState]*pendingSubs{}
	}
	p := b.pending[a]
	if p == nil {
		p = &pendingSubs{post: &scope{}}
		b.pending[a] = p
	}
	return p
}

// attachPending joins the pending correlated subqueries of an aggregating SELECT
// onto its aggregate and replaces their stand-ins in exprs and having.
func (b *binder) attachPending(node Node, a *aggState, exprs []Expr, having *Expr) (Node, error) {
	p := b.pending[a]
	if p == nil {
		return node, nil
	}
	delete(b.pending, a)
	at := make([]int, len(p.plans))
	for k, q := range p.plans {
		out := node.Columns()
		maps := map[*scope]outerMap{
			a.pre: func(i int) (Expr, error) {
				c := a.pre.cols[i]
				return b.postExpr(&ColRef{Idx: i, T: c.Type, Name: c.Name}, a)
			},
			p.post: func(i int) (Expr, error) {
				return &ColRef{Idx: i, T: out[i].Type, Name: out[i].Name}, nil
			},
		}
		c, err := b.attachCorrelated(node, maps, q, errs.NoPosition)
		if err != nil {
			return nil, err
		}
		node, at[k] = c.node, c.at
	}
	replace := func(e Expr) (Expr, error) {
		return MapExpr(e, func(x Expr) (Expr, error) {
			if r, ok := x.(*corrRef); ok {
				return &ColRef{Idx: at[r.k], T: r.Type(), Name: "subquery"}, nil
			}
			return x, nil
		})
	}
	for i, e := range exprs {
		var err error
		if exprs[i], err = replace(e); err != nil {
			return nil, err
		}
	}
	if *having != nil {
		var err error
		if *having, err = replace(*having); err != nil {
			return nil, err
		}
	}
	return node, nil
}

// asOuter rewrites e, bound over the clause of ec, into the outer references a
// subquery of that clause would make for it.
func (b *binder) asOuter(e Expr, ec *exprCtx) Expr {
	sc := ec.sc
	if ec.agg != nil {
		sc = b.pendingOf(ec.agg).post
	}
	out, _ := MapExpr(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*ColRef); ok {
			return &OuterRef{Idx: c.Idx, Col: Column{Name: c.Name, Type: c.T}, scope: sc}, nil
		}
		return x, nil
	})
	return out
}

// existsPlan is EXISTS (sub) as a plan of one row: whether sub has rows.
func (b *binder) existsPlan(sub Node, pos int) (Node, error) {
	count := &Aggregate{Input: sub, Aggs: []AggCall{{Func: "count_star", T: types.Int64}},
		Cols: []Column{{Name: "count_star", Type: types.Int64}}}
	e, err := b.call(">", []Expr{&ColRef{Idx: 0, T: types.Int64, Name: "count_star"}, &Literal{V: types.IntValue(0)}}, pos)
	if err != nil {
		return nil, err
	}
	return &Project{Input: count, Exprs: []Expr{e}, Cols: []Column{{Name: "exists", Type: types.Boolean}}}, nil
}

// quantified is x op ANY (sub) or x op ALL (sub) as a plan of one row, with SQL's
// three-valued result: ANY is true when some comparison is true, else NULL when some
// is NULL, else false; ALL is false when some comparison is false, else NULL when
// some is NULL, else true. Over no rows ANY is false and ALL true.
func (b *binder) quantified(x Expr, sub Node, op string, all bool, pos int) (Node, error) {
	c := sub.Columns()[0]
	m, err := b.call(op, []Expr{x, &ColRef{Idx: 0, T: c.Type, Name: c.Name}}, pos)
	if err != nil {
		return nil, err
	}
	if m, err = b.boolean(m, "subquery comparison"); err != nil {
		return nil, err
	}
	p := &Project{Input: sub, Exprs: []Expr{m}, Cols: []Column{{Name: "cmp", Type: types.Boolean}}}
	mref := &ColRef{Idx: 0, T: types.Boolean, Name: "cmp"}
	trues, err := b.call("nullif", []Expr{mref, &Literal{V: types.BoolValue(false)}}, pos)
	if err != nil {
		return nil, err
	}
	ag := &Aggregate{Input: p,
		Aggs: []AggCall{{Func: "count", Arg: trues, T: types.Int64}, {Func: "count_star", T: types.Int64}, {Func: "count", Arg: mref, T: types.Int64}},
		Cols: []Column{{Name: "trues", Type: types.Int64}, {Name: "rows", Type: types.Int64}, {Name: "known", Type: types.Int64}}}
	t := &ColRef{Idx: 0, T: types.Int64, Name: "trues"}
	n := &ColRef{Idx: 1, T: types.Int64, Name: "rows"}
	known := &ColRef{Idx: 2, T: types.Int64, Name: "known"}
	unknown, err := b.call("<", []Expr{known, n}, pos)
	if err != nil {
		return nil, err
	}
	null := &Literal{V: types.NullOf(types.Boolean)}
	var e Expr
	if all {
		someFalse, err := b.call(">", []Expr{known, t}, pos)
		if err != nil {
			return nil, err
		}
		e = &Case{T: types.Boolean, Whens: []When{{Cond: someFalse, Then: &Literal{V: types.BoolValue(false)}}, {Cond: unknown, Then: null}},
			Else: &Literal{V: types.BoolValue(true)}}
	} else {
		someTrue, err := b.call(">", []Expr{t, &Literal{V: types.IntValue(0)}}, pos)
		if err != nil {
			return nil, err
		}
		e = &Case{T: types.Boolean, Whens: []When{{Cond: someTrue, Then: &Literal{V: types.BoolValue(true)}}, {Cond: unknown, Then: null}},
			Else: &Literal{V: types.BoolValue(false)}}
	}
	return &Project{Input: ag, Exprs: []Expr{e}, Cols: []Column{{Name: "quantified", Type: types.Boolean}}}, nil
}

// subLinkOp is the comparison of an ANY or ALL subquery: = for IN.
func subLinkOp(sl *pg.SubLink) string {
	if len(sl.OperName) == 0 {
		return "="
	}
	return sl.OperName[len(sl.OperName)-1].GetString_().GetSval()
}

// bindWhere binds WHERE's conjuncts onto st's input: those without subqueries first,
// as a filter right over the FROM rows, so that a decorrelated subquery runs only
// for the outer rows they keep (the rows it is joined back onto are shared, which no
// filter is pushed into); then those with subqueries, as semi and anti joins or as a
// filter over the joined values.
func (b *binder) bindWhere(st *selState, where *pg.Node) error {
	var plain, withSub []*pg.Node
	for _, c := range pgConjuncts(where) {
		if containsSubLink(c) {
			withSub = append(withSub, c)
		} else {
			plain = append(plain, c)
		}
	}
	for _, part := range [][]*pg.Node{plain, withSub} {
		var filters []Expr
		for _, c := range part {
			handled, err := b.whereSubquery(st, c)
			if err != nil {
				return err
			}
			if handled {
				continue
			}
			e, err := b.expr(c, &exprCtx{sc: st.sc, sel: st, clause: "WHERE"})
			if err != nil {
				return err
			}
			if e, err = b.boolean(e, "WHERE"); err != nil {
				return err
			}
			filters = append(filters, e)
		}
		if len(filters) > 0 {
			st.input = &Filter{Input: st.input, Cond: AndAll(filters)}
		}
	}
	return nil
}

// joinOnSubquery binds a join condition with subqueries. Its conjuncts without
// subqueries join as any condition does; for an inner join, the others filter the
// joined rows, the correlated ones joined onto them first (see correlatedValue). An
// outer join takes only uncorrelated subqueries, checked on each pair.
func (b *binder) joinOnSubquery(join *Join, quals *pg.Node, sc, outer *scope) (Node, error) {
	var withSub []*pg.Node
	for _, c := range pgConjuncts(quals) {
		if containsSubLink(c) {
			withSub = append(withSub, c)
			continue
		}
		e, err := b.expr(c, &exprCtx{sc: sc, noSubquery: true, clause: "JOIN condition"})
		if err != nil {
			return nil, err
		}
		if e, err = b.boolean(e, "JOIN condition"); err != nil {
			return nil, err
		}
		AddJoinCondition(join, e)
	}
	if join.Kind != InnerJoin && join.Kind != CrossJoin {
		for _, c := range withSub {
			e, err := b.expr(c, &exprCtx{sc: sc, clause: "an outer join's condition"})
			if err != nil && !strings.Contains(err.Error(), "ambiguous") {
				// A condition on the side whose rows may go unmatched alone
				// filters that side first.
				if ok, ferr := b.filterJoinSide(join, c, outer); ferr != nil || ok {
					if ferr != nil {
						return nil, ferr
					}
					continue
				}
			}
			if err != nil {
				return nil, err
			}
			if e, err = b.boolean(e, "JOIN condition"); err != nil {
				return nil, err
			}
			if join.Residual == nil {
				join.Residual = e
			} else {
				join.Residual = AndAll([]Expr{join.Residual, e})
			}
		}
		return join, nil
	}
	st := &selState{sc: &scope{outer: outer}}
	st.setInput(join)
	var filters []Expr
	for _, c := range withSub {
		e, err := b.expr(c, &exprCtx{sc: st.sc, sel: st, clause: "JOIN condition"})
		if err != nil {
			return nil, err
		}
		if e, err = b.boolean(e, "JOIN condition"); err != nil {
			return nil, err
		}
		filters = append(filters, e)
	}
	if join.Kind == CrossJoin {
		join.Kind = InnerJoin
	}
	return identityProject(&Filter{Input: st.input, Cond: AndAll(filters)}, join.Cols), nil
}

// filterJoinSide binds c, a condition of an outer join, over the input whose rows
// the join may leave unmatched (the right of a LEFT JOIN, the left of a RIGHT JOIN)
// and filters that input with it, correlated subqueries joined on first. It
// reports false when c does not bind over that input alone.
func (b *binder) filterJoinSide(join *Join, c *pg.Node, outer *scope) (bool, error) {
	side := &join.Right
	switch join.Kind {
	case LeftJoin:
	case RightJoin:
		side = &join.Left
	default:
		return false, nil
	}
	in := *side
	st := &selState{sc: &scope{outer: outer}}
	st.setInput(in)
	e, err := b.expr(c, &exprCtx{sc: st.sc, sel: st, clause: "JOIN condition"})
	if err != nil {
		return false, nil
	}
	if e, err = b.boolean(e, "JOIN condition"); err != nil {
		return false, err
	}
	*side = identityProject(&Filter{Input: st.input, Cond: e}, in.Columns())
	return true, nil
}

// extremeOf is the subquery value an ordering comparison with ANY or ALL turns on:
// x > ANY (s) holds when x > min(s), x > ALL (s) when x > max(s), and so on.
var extremeOf = map[string][2]string{ // op → {for ANY, for ALL}
	">": {"min", "max"}, ">=": {"min", "max"}, "<": {"max", "min"}, "<=": {"max", "min"},
}

// quantifiedByExtreme binds x op ANY/ALL (sub) for an uncorrelated sub and an
// ordering op through sub's minimum or maximum, its row count and its count of
// non-NULL values, computed once, instead of comparing every row of sub with every
// x. It reports false when sub's type has no minimum.
func (b *binder) quantifiedByExtreme(x Expr, sub Node, op string, all bool, pos int) (Expr, bool, error) {
	names, ok := extremeOf[op]
	if !ok {
		return nil, false, nil
	}
	fn := names[0]
	if all {
		fn = names[1]
	}
	c := sub.Columns()[0]
	s := &ColRef{Idx: 0, T: c.Type, Name: c.Name}
	ext := AggCall{Func: fn, Arg: s, T: c.Type}
	if _, err := aggResultType(ext); err != nil {
		return nil, false, nil
	}
	ag := &Shared{Input: &Aggregate{Input: sub,
		Aggs: []AggCall{ext, {Func: "count_star", T: types.Int64}, {Func: "count", Arg: s, T: types.Int64}},
		Cols: []Column{{Name: fn, Type: c.Type}, {Name: "rows", Type: types.Int64}, {Name: "known", Type: types.Int64}}}, Refs: 3}
	value := func(i int) Expr {
		col := ag.Columns()[i]
		return &Subquery{Plan: &Project{Input: ag, Exprs: []Expr{&ColRef{Idx: i, T: col.Type, Name: col.Name}}, Cols: []Column{col}}, T: col.Type}
	}
	extreme, rows, known := value(0), value(1), value(2)
	cmp, err := b.call(op, []Expr{x, extreme}, pos)
	if err != nil {
		return nil, true, err
	}
	none, err := b.call("=", []Expr{rows, &Literal{V: types.IntValue(0)}}, pos)
	if err != nil {
		return nil, true, err
	}
	xNull, err := b.call("is_null", []Expr{x}, pos)
	if err != nil {
		return nil, true, err
	}
	nulls, err := b.call("<", []Expr{known, rows}, pos)
	if err != nil {
		return nil, true, err
	}
	unknown, err := b.call("or", []Expr{xNull, nulls}, pos)
	if err != nil {
		return nil, true, err
	}
	yes, no := &Literal{V: types.BoolValue(true)}, &Literal{V: types.BoolValue(false)}
	null := &Literal{V: types.NullOf(types.Boolean)}
	if !all {
		// Some row is smaller (larger): true; else NULL when a comparison was unknown.
		return &Case{T: types.Boolean, Whens: []When{{Cond: none, Then: no}, {Cond: cmp, Then: yes}, {Cond: unknown, Then: null}}, Else: no}, true, nil
	}
	// The largest (smallest) row fails the comparison: false.
	fails, err := b.call("not", []Expr{cmp}, pos)
	if err != nil {
		return nil, true, err
	}
	return &Case{T: types.Boolean, Whens: []When{{Cond: none, Then: yes}, {Cond: xNull, Then: null}, {Cond: fails, Then: no}, {Cond: nulls, Then: null}}, Else: yes}, true, nil
}
