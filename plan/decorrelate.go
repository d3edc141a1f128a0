//go:build cgo

package plan

import (
	"fmt"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/types"
)

// General decorrelation, after Neumann and Kemper's "Unnesting Arbitrary Queries".
// A correlated subquery S is joined onto the rows L of the query it is nested in
// through the distinct outer values it reads, D: S is rewritten into S', which takes
// D as an input and yields, for every D row, what S yields with its outer references
// bound to that row (D's columns first). L is then joined with S' on the outer
// values, NULL matching NULL. Every rewrite below is an ordinary set-oriented
// operator, so S may have any shape: aggregates, limits, set operations, nested
// correlated subqueries of its own.

// refKey names one column of an outer scope.
type refKey struct {
	sc  *scope
	idx int
}

// outerMap gives, for a column of an outer scope, the expression over L that holds it.
type outerMap func(idx int) (Expr, error)

// forOuterRefs calls f on every outer reference of n, looking through shared plans
// and subquery plans, each plan once, until f returns false.
func forOuterRefs(n Node, f func(*OuterRef) bool) {
	stop := false
	visited := map[Node]bool{}
	var walk func(Node)
	walk = func(n Node) {
		if stop || visited[n] {
			return
		}
		visited[n] = true
		walkOwnExprs(n, func(e Expr) {
			WalkExpr(e, func(x Expr) {
				switch o := x.(type) {
				case *OuterRef:
					if !stop && !f(o) {
						stop = true
					}
				case *Subquery:
					walk(o.Plan)
				case *InSubquery:
					walk(o.Plan)
				}
			})
		})
		if s, ok := n.(*Shared); ok {
			walk(s.Input)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(n)
}

// corrRefs lists the distinct outer references of n to the scopes in maps, in
// order of appearance, looking through shared plans and subquery plans.
func corrRefs(n Node, maps map[*scope]outerMap) []refKey {
	var out []refKey
	seen := map[refKey]bool{}
	forOuterRefs(n, func(o *OuterRef) bool {
		k := refKey{o.scope, o.Idx}
		if _, ok := maps[o.scope]; ok && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
		return true
	})
	return out
}

// hasOuterRefs reports whether n refers to a column of any enclosing query.
func hasOuterRefs(n Node) bool {
	found := false
	forOuterRefs(n, func(*OuterRef) bool {
		found = true
		return false
	})
	return found
}

// onlyRefsTo reports whether every outer reference of n is to scope sc.
func onlyRefsTo(n Node, sc *scope) bool {
	return len(corrRefs(n, map[*scope]outerMap{sc: nil})) == len(allRefs(n))
}

// allRefs lists every distinct outer reference of n, whatever its scope.
func allRefs(n Node) []refKey {
	var out []refKey
	seen := map[refKey]bool{}
	forOuterRefs(n, func(o *OuterRef) bool {
		if k := (refKey{o.scope, o.Idx}); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
		return true
	})
	return out
}

// correlation is the outcome of joining a correlated subquery onto L.
type correlation struct {
	// node is L's columns, then the hidden columns of the subquery's rows.
	node Node
	// at is the position in node of the subquery's first own column.
	at int
}

// attachCorrelated joins the rows of sub, whose outer references to the scopes of
// maps name columns of input, onto input: a left join, every input row kept once
// per row sub gives for it (once with NULLs when none). Outer references to other
// scopes stay in the result, for an enclosing query to decorrelate.
func (b *binder) attachCorrelated(input Node, maps map[*scope]outerMap, sub Node, pos int) (*correlation, error) {
	dc, ls, keys, err := b.newDecorr(input, maps, sub, pos)
	if err != nil {
		return nil, err
	}
	r, err := dc.push(sub)
	if err != nil {
		return nil, err
	}
	j := &Join{Kind: LeftJoin, Left: ls, Right: r, NullEq: true, Cols: concatCols(ls.Columns(), hiddenCols(r.Columns()))}
	for i, k := range keys {
		j.LeftKeys = append(j.LeftKeys, k)
		j.RightKeys = append(j.RightKeys, &ColRef{Idx: i, T: k.Type(), Name: dc.dcols[i].Name})
	}
	return &correlation{node: j, at: len(input.Columns()) + dc.nd}, nil
}

// newDecorr makes the D side for sub's references to the scopes of maps over
// input: it returns the decorrelator, input as the join back should read it (shared
// with D when D reads it), and the key of each D column over input.
func (b *binder) newDecorr(input Node, maps map[*scope]outerMap, sub Node, pos int) (*decorr, Node, []Expr, error) {
	refs := corrRefs(sub, maps)
	dc := &decorr{b: b, pos: pos, index: map[refKey]int{}, memo: map[*Shared]*Shared{}, corr: map[Node]bool{}}
	for s := range maps {
		dc.scopes = append(dc.scopes, s)
	}
	if len(refs) == 0 {
		dc.d = &Values{Rows: [][]Expr{{}}}
		return dc, input, nil, nil
	}
	sh := &Shared{Input: input, Refs: 2}
	keys := make([]Expr, len(refs))
	cols := make([]Column, len(refs))
	for i, r := range refs {
		e, err := maps[r.sc](r.idx)
		if err != nil {
			return nil, nil, nil, err
		}
		keys[i] = e
		cols[i] = Column{Name: fmt.Sprintf("outer%d", i), Type: e.Type(), Hidden: true}
		dc.index[r] = i
	}
	dc.nd, dc.dcols = len(refs), cols
	dc.dShared = &Shared{Input: &Distinct{Input: &Project{Input: sh, Exprs: keys, Cols: cols}}}
	dc.d = dc.dShared
	return dc, sh, keys, nil
}

func hiddenCols(cols []Column) []Column {
	out := make([]Column, len(cols))
	for i, c := range cols {
		c.Hidden = true
		out[i] = c
	}
	return out
}

// decorr rewrites a correlated plan S into S': D's columns, then S's, for every row
// of D the rows S gives with its outer references bound to that row.
type decorr struct {
	b       *binder
	pos     int
	scopes  []*scope
	d       Node // the distinct outer values
	dShared *Shared
	nd      int
	dcols   []Column
	index   map[refKey]int // an outer column's position in D
	memo    map[*Shared]*Shared
	corr    map[Node]bool
}

// useD returns D for one more reader.
func (dc *decorr) useD() Node {
	if dc.dShared != nil {
		dc.dShared.Refs++
	}
	return dc.d
}

func (dc *decorr) mine(s *scope) bool {
	for _, x := range dc.scopes {
		if x == s {
			return true
		}
	}
	return false
}

// correlated reports whether n's subtree refers to D's scopes.
func (dc *decorr) correlated(n Node) bool {
	if v, ok := dc.corr[n]; ok {
		return v
	}
	found := false
	walkOwnExprs(n, func(e Expr) {
		if dc.exprCorrelated(e) {
			found = true
		}
	})
	if s, ok := n.(*Shared); ok && !found {
		found = dc.correlated(s.Input)
	}
	for _, in := range n.Inputs() {
		if !found && dc.correlated(in) {
			found = true
		}
	}
	dc.corr[n] = found
	return found
}

func (dc *decorr) exprCorrelated(e Expr) bool {
	found := false
	WalkExpr(e, func(x Expr) {
		switch o := x.(type) {
		case *OuterRef:
			if dc.mine(o.scope) {
				found = true
			}
		case *Subquery:
			if dc.correlated(o.Plan) {
				found = true
			}
		case *InSubquery:
			if dc.correlated(o.Plan) {
				found = true
			}
		}
	})
	return found
}

// dRefs are references to D's columns at the start of a row.
func (dc *decorr) dRefs(at int) []Expr {
	out := make([]Expr, dc.nd)
	for i, c := range dc.dcols {
		out[i] = &ColRef{Idx: at + i, T: c.Type, Name: c.Name}
	}
	return out
}

// expr rewrites e for a row where D's columns start at dAt: column i moves to
// shift(i), references to D's scopes read D.
func (dc *decorr) expr(e Expr, shift func(int) int, dAt int) (Expr, error) {
	if e == nil {
		return nil, nil
	}
	return MapExpr(e, func(x Expr) (Expr, error) {
		switch c := x.(type) {
		case *ColRef:
			return &ColRef{Idx: shift(c.Idx), T: c.T, Name: c.Name}, nil
		case *OuterRef:
			if !dc.mine(c.scope) {
				return x, nil
			}
			i := dc.index[refKey{c.scope, c.Idx}]
			return &ColRef{Idx: dAt + i, T: c.Col.Type, Name: c.Col.Name}, nil
		case *Subquery, *InSubquery:
			if dc.exprCorrelated(x) {
				return nil, dc.unsupported("a correlated subquery nested in an uncorrelated one")
			}
		}
		return x, nil
	})
}

func (dc *decorr) unsupported(what string) error {
	return errs.At(errs.Analysis, dc.pos, "this correlated subquery is not supported (%s)", what)
}

func (dc *decorr) exprs(es []Expr, shift func(int) int, dAt int) ([]Expr, error) {
	out := make([]Expr, len(es))
	for i, e := range es {
		var err error
		if out[i], err = dc.expr(e, shift, dAt); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (dc *decorr) after(i int) int { return i + dc.nd }

// push returns S' for n.
func (dc *decorr) push(n Node) (Node, error) {
	if err := dc.b.ctx.Err(); err != nil {
		return nil, err
	}
	if !dc.correlated(n) {
		d := dc.useD()
		return &Join{Kind: CrossJoin, Left: d, Right: n, Cols: concatCols(d.Columns(), n.Columns())}, nil
	}
	switch x := n.(type) {
	case *Filter:
		in, err := dc.push(x.Input)
		if err != nil {
			return nil, err
		}
		cond, err := dc.expr(x.Cond, dc.after, 0)
		if err != nil {
			return nil, err
		}
		return &Filter{Input: in, Cond: cond}, nil
	case *Project:
		in, err := dc.push(x.Input)
		if err != nil {
			return nil, err
		}
		es, err := dc.exprs(x.Exprs, dc.after, 0)
		if err != nil {
			return nil, err
		}
		return &Project{Input: in, Exprs: append(dc.dRefs(0), es...), Cols: concatCols(dc.dcols, x.Cols)}, nil
	case *Aggregate:
		return dc.pushAggregate(x)
	case *Unnest:
		return dc.pushUnnest(x)
	case *Join:
		return dc.pushJoin(x)
	case *Sort:
		in, err := dc.push(x.Input)
		if err != nil {
			return nil, err
		}
		keys, err := dc.sortKeys(x.Keys)
		if err != nil {
			return nil, err
		}
		return &Sort{Input: in, Keys: keys}, nil
	case *Limit:
		return dc.pushLimit(x)
	case *Distinct:
		in, err := dc.push(x.Input)
		if err != nil {
			return nil, err
		}
		return &Distinct{Input: in}, nil
	case *SetOp:
		l, err := dc.push(x.Left)
		if err != nil {
			return nil, err
		}
		r, err := dc.push(x.Right)
		if err != nil {
			return nil, err
		}
		return &SetOp{Kind: x.Kind, All: x.All, Left: l, Right: r, Cols: concatCols(dc.dcols, x.Cols)}, nil
	case *Window:
		in, err := dc.push(x.Input)
		if err != nil {
			return nil, err
		}
		funcs := make([]WindowCall, len(x.Funcs))
		for i, w := range x.Funcs {
			w2 := w
			if w2.Arg, err = dc.expr(w.Arg, dc.after, 0); err != nil {
				return nil, err
			}
			if w.Agg != nil {
				a := *w.Agg
				if a.Arg, err = dc.expr(a.Arg, dc.after, 0); err != nil {
					return nil, err
				}
				if a.Filter, err = dc.expr(a.Filter, dc.after, 0); err != nil {
					return nil, err
				}
				w2.Agg = &a
			}
			part, err := dc.exprs(w.Partition, dc.after, 0)
			if err != nil {
				return nil, err
			}
			w2.Partition = append(dc.dRefs(0), part...)
			if w2.Order, err = dc.sortKeys(w.Order); err != nil {
				return nil, err
			}
			funcs[i] = w2
		}
		return &Window{Input: in, Funcs: funcs, Cols: concatCols(dc.dcols, x.Cols)}, nil
	case *Values:
		// Each row is computed over D, the rows one after the other.
		var out Node
		for _, row := range x.Rows {
			es, err := dc.exprs(row, func(i int) int { return i }, 0)
			if err != nil {
				return nil, err
			}
			p := &Project{Input: dc.useD(), Exprs: append(dc.dRefs(0), es...), Cols: concatCols(dc.dcols, x.Cols)}
			if out == nil {
				out = p
			} else {
				out = &SetOp{Kind: Union, All: true, Left: out, Right: p, Cols: p.Cols}
			}
		}
		return out, nil
	case *Shared:
		if s, ok := dc.memo[x]; ok {
			s.Refs++
			return s, nil
		}
		in, err := dc.push(x.Input)
		if err != nil {
			return nil, err
		}
		s := &Shared{Input: in, Refs: 1}
		dc.memo[x] = s
		return s, nil
	}
	return nil, dc.unsupported(fmt.Sprintf("%T", n))
}

func (dc *decorr) sortKeys(keys []SortKey) ([]SortKey, error) {
	out := make([]SortKey, len(keys))
	for i, k := range keys {
		e, err := dc.expr(k.E, dc.after, 0)
		if err != nil {
			return nil, err
		}
		out[i] = SortKey{E: e, Desc: k.Desc, NullsFirst: k.NullsFirst}
	}
	return out, nil
}

// countLike reports the aggregates that are 0, not NULL, over no rows.
func countLike(fn string) bool {
	switch fn {
	case "count", "count_star", "count_distinct", "approx_count_distinct":
		return true
	}
	return false
}

// pushAggregate groups by D too. An aggregate without groups gives one row for
// every D row, also those no row of its input belongs to: it is left-joined onto D,
// its counts 0 where nothing matched.
func (dc *decorr) pushAggregate(x *Aggregate) (Node, error) {
	if len(x.Sets) > 0 {
		return dc.push(ExpandSets(x))
	}
	nd := dc.nd
	in, err := dc.push(x.Input)
	if err != nil {
		return nil, err
	}
	groups, err := dc.exprs(x.Groups, dc.after, 0)
	if err != nil {
		return nil, err
	}
	aggs := make([]AggCall, len(x.Aggs))
	for i, a := range x.Aggs {
		a2 := a
		if a2.Arg, err = dc.expr(a.Arg, dc.after, 0); err != nil {
			return nil, err
		}
		if a2.Filter, err = dc.expr(a.Filter, dc.after, 0); err != nil {
			return nil, err
		}
		aggs[i] = a2
	}
	if len(x.Seeds) > 0 {
		return nil, dc.unsupported("an aggregate answered from statistics")
	}
	ag := &Aggregate{Input: in, Groups: append(dc.dRefs(0), groups...), Aggs: aggs, Cols: concatCols(dc.dcols, x.Cols)}
	if len(x.Groups) > 0 {
		return ag, nil
	}
	d := dc.useD()
	j := &Join{Kind: LeftJoin, Left: d, Right: ag, NullEq: true, Cols: concatCols(d.Columns(), ag.Cols)}
	j.LeftKeys, j.RightKeys = dc.dRefs(0), dc.dRefs(0)
	exprs := dc.dRefs(0)
	for k, a := range x.Aggs {
		var e Expr = &ColRef{Idx: 2*nd + k, T: a.T, Name: x.Cols[k].Name}
		if countLike(a.Func) {
			if e, err = dc.b.call("coalesce", []Expr{e, &Literal{V: types.IntValue(0)}}, dc.pos); err != nil {
				return nil, err
			}
		}
		exprs = append(exprs, e)
	}
	return &Project{Input: j, Exprs: exprs, Cols: concatCols(dc.dcols, x.Cols)}, nil
}

// pushLimit limits each D row's rows: a row number within D's values, in the order
// of a sort right below, picks them.
func (dc *decorr) pushLimit(x *Limit) (Node, error) {
	in := x.Input
	var keys []SortKey
	if s, ok := in.(*Sort); ok {
		in, keys = s.Input, s.Keys
	}
	p, err := dc.push(in)
	if err != nil {
		return nil, err
	}
	order, err := dc.sortKeys(keys)
	if err != nil {
		return nil, err
	}
	cols := p.Columns()
	w := &Window{Input: p, Funcs: []WindowCall{{Func: "row_number", Partition: dc.dRefs(0), Order: order,
		Frame: Frame{Rows: true, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}, T: types.Int64}},
		Cols: concatCols(cols, []Column{{Name: "row_number", Type: types.Int64, Hidden: true}})}
	rn := &ColRef{Idx: len(cols), T: types.Int64, Name: "row_number"}
	var conds []Expr
	if x.Offset > 0 {
		c, err := dc.b.call(">", []Expr{rn, &Literal{V: types.IntValue(x.Offset)}}, dc.pos)
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	if x.Count >= 0 {
		c, err := dc.b.call("<=", []Expr{rn, &Literal{V: types.IntValue(x.Offset + x.Count)}}, dc.pos)
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	var out Node = w
	if len(conds) > 0 {
		out = &Filter{Input: w, Cond: AndAll(conds)}
	}
	var node Node = identityProject(out, cols)
	if len(keys) > 0 {
		// The rows keep the sort's order for a reader that needs it.
		node = &Sort{Input: node, Keys: order}
	}
	return node, nil
}

// identityProject keeps the first len(cols) columns of n.
func identityProject(n Node, cols []Column) *Project {
	exprs := make([]Expr, len(cols))
	for i, c := range cols {
		exprs[i] = &ColRef{Idx: i, T: c.Type, Name: c.Name}
	}
	return &Project{Input: n, Exprs: exprs, Cols: cols}
}

// pushJoin pushes D into the sides of a join that need it. A join with one
// correlated side reads D on that side only; with both, D on both sides is joined on
// its values (NULL matching NULL) and the join's own keys become its condition.
func (dc *decorr) pushJoin(x *Join) (Node, error) {
	nd := dc.nd
	nl := len(x.Left.Columns())
	lc, rc := dc.correlated(x.Left), dc.correlated(x.Right)
	switch x.Kind {
	case RightJoin, FullJoin:
		return nil, dc.unsupported("outer references under a right or full join")
	}
	if x.NullAwareAnti && rc {
		return nil, dc.unsupported("NOT IN over a correlated subquery nested in another")
	}
	for _, e := range x.RightKeys {
		if dc.exprCorrelated(e) {
			return nil, dc.unsupported("an outer reference in a join key")
		}
	}
	if !rc {
		// D on the left only: every column moves right by D's width.
		l, err := dc.push(x.Left)
		if err != nil {
			return nil, err
		}
		lk, err := dc.exprs(x.LeftKeys, dc.after, 0)
		if err != nil {
			return nil, err
		}
		rk, err := dc.exprs(x.RightKeys, func(i int) int { return i }, -1)
		if err != nil {
			return nil, err
		}
		res, err := dc.expr(x.Residual, dc.after, 0)
		if err != nil {
			return nil, err
		}
		cols := concatCols(dc.dcols, x.Cols)
		return &Join{Kind: x.Kind, Left: l, Right: x.Right, LeftKeys: lk, RightKeys: rk, Residual: res,
			NullAwareAnti: x.NullAwareAnti, NullEq: x.NullEq, Cols: cols}, nil
	}
	if !lc && (x.Kind == InnerJoin || x.Kind == CrossJoin) {
		// D on the right only, then D's columns moved to the front.
		r, err := dc.push(x.Right)
		if err != nil {
			return nil, err
		}
		shift := func(i int) int {
			if i < nl {
				return i
			}
			return i + nd
		}
		lk, err := dc.exprs(x.LeftKeys, func(i int) int { return i }, -1)
		if err != nil {
			return nil, err
		}
		rk, err := dc.exprs(x.RightKeys, dc.after, 0)
		if err != nil {
			return nil, err
		}
		res, err := dc.expr(x.Residual, shift, nl)
		if err != nil {
			return nil, err
		}
		kind := x.Kind
		j := &Join{Kind: kind, Left: x.Left, Right: r, LeftKeys: lk, RightKeys: rk, Residual: res,
			NullEq: x.NullEq, Cols: concatCols(x.Left.Columns(), r.Columns())}
		rc := r.Columns()
		exprs := dc.dRefs(nl)
		for i := 0; i < nl; i++ {
			exprs = append(exprs, &ColRef{Idx: i, T: j.Cols[i].Type, Name: j.Cols[i].Name})
		}
		for i := nd; i < len(rc); i++ {
			exprs = append(exprs, &ColRef{Idx: nl + i, T: rc[i].Type, Name: rc[i].Name})
		}
		return &Project{Input: j, Exprs: exprs, Cols: concatCols(dc.dcols, x.Cols)}, nil
	}
	return dc.pushBoth(x)
}

// pushBoth pushes D into both sides of a join and joins them on D's values.
func (dc *decorr) pushBoth(x *Join) (Node, error) {
	nd := dc.nd
	nl := len(x.Left.Columns())
	l, err := dc.push(x.Left)
	if err != nil {
		return nil, err
	}
	r, err := dc.push(x.Right)
	if err != nil {
		return nil, err
	}
	if x.NullEq {
		// Its keys already match NULLs: D's values are keys like them.
		lk, err := dc.exprs(x.LeftKeys, dc.after, 0)
		if err != nil {
			return nil, err
		}
		rk, err := dc.exprs(x.RightKeys, dc.after, 0)
		if err != nil {
			return nil, err
		}
		res, err := dc.expr(x.Residual, func(i int) int {
			if i < nl {
				return i + nd
			}
			return i + 2*nd
		}, 0)
		if err != nil {
			return nil, err
		}
		j := &Join{Kind: x.Kind, Left: l, Right: r, LeftKeys: append(dc.dRefs(0), lk...), RightKeys: append(dc.dRefs(0), rk...),
			Residual: res, NullEq: true}
		if x.Kind == SemiJoin || x.Kind == AntiJoin {
			j.Cols = l.Columns()
			return j, nil
		}
		j.Cols = concatCols(l.Columns(), r.Columns())
		exprs := make([]Expr, 0, nd+len(x.Cols))
		for i := 0; i < nd+nl; i++ {
			exprs = append(exprs, &ColRef{Idx: i, T: j.Cols[i].Type, Name: j.Cols[i].Name})
		}
		for i := 2*nd + nl; i < len(j.Cols); i++ {
			exprs = append(exprs, &ColRef{Idx: i, T: j.Cols[i].Type, Name: j.Cols[i].Name})
		}
		return &Project{Input: j, Exprs: exprs, Cols: concatCols(dc.dcols, x.Cols)}, nil
	}
	// Over D ++ left ++ D ++ right.
	shift := func(i int) int {
		if i < nl {
			return i + nd
		}
		return i + 2*nd
	}
	var conds []Expr
	for i := range x.LeftKeys {
		lk, err := dc.expr(x.LeftKeys[i], dc.after, 0)
		if err != nil {
			return nil, err
		}
		rk, err := dc.expr(x.RightKeys[i], func(i int) int { return i + 2*nd + nl }, nd+nl)
		if err != nil {
			return nil, err
		}
		eq, err := dc.b.call("=", []Expr{lk, rk}, dc.pos)
		if err != nil {
			return nil, err
		}
		conds = append(conds, eq)
	}
	if x.Residual != nil {
		res, err := dc.expr(x.Residual, shift, 0)
		if err != nil {
			return nil, err
		}
		conds = append(conds, res)
	}
	kind := x.Kind
	inner := kind == InnerJoin || kind == CrossJoin
	right := r
	if inner {
		// An inner join is the left join's matched rows: a column of TRUE marks them.
		rcols := r.Columns()
		exprs := make([]Expr, 0, len(rcols)+1)
		for i, c := range rcols {
			exprs = append(exprs, &ColRef{Idx: i, T: c.Type, Name: c.Name})
		}
		exprs = append(exprs, &Literal{V: types.BoolValue(true)})
		right = &Project{Input: r, Exprs: exprs, Cols: concatCols(rcols, []Column{{Name: "matched", Type: types.Boolean}})}
		kind = LeftJoin
	}
	lcols := l.Columns()
	j := &Join{Kind: kind, Left: l, Right: right, LeftKeys: dc.dRefs(0), RightKeys: dc.dRefs(0),
		Residual: AndAll(conds), NullEq: true}
	if kind == SemiJoin || kind == AntiJoin {
		j.Cols = lcols
		return j, nil
	}
	j.Cols = concatCols(lcols, right.Columns())
	var out Node = j
	if inner {
		m := len(j.Cols) - 1
		isMatched, err := dc.b.call("is_not_null", []Expr{&ColRef{Idx: m, T: types.Boolean, Name: "matched"}}, dc.pos)
		if err != nil {
			return nil, err
		}
		out = &Filter{Input: j, Cond: isMatched}
	}
	// D ++ left ++ right, without the right side's D.
	exprs := make([]Expr, 0, nd+len(x.Cols))
	for i := 0; i < nd+nl; i++ {
		exprs = append(exprs, &ColRef{Idx: i, T: j.Cols[i].Type, Name: j.Cols[i].Name})
	}
	for i := nd + nl + nd; i < nd+nl+nd+len(x.Cols)-nl; i++ {
		exprs = append(exprs, &ColRef{Idx: i, T: j.Cols[i].Type, Name: j.Cols[i].Name})
	}
	return &Project{Input: out, Exprs: exprs, Cols: concatCols(dc.dcols, x.Cols)}, nil
}

// atMostOneRow reports plans that cannot give more than one row.
func atMostOneRow(n Node) bool {
	switch x := n.(type) {
	case *Project:
		return atMostOneRow(x.Input)
	case *Filter:
		return atMostOneRow(x.Input)
	case *Sort:
		return atMostOneRow(x.Input)
	case *Aggregate:
		return len(x.Groups) == 0 && len(x.Sets) <= 1
	case *Limit:
		return x.Count >= 0 && x.Count <= 1 || atMostOneRow(x.Input)
	case *Values:
		return len(x.Rows) <= 1
	}
	return false
}

// singleRow makes a subquery's plan (one column) give at most one row per D row,
// failing for a D row with more: it counts each group's rows.
func (b *binder) singleRow(sub Node, pos int) (Node, error) {
	if atMostOneRow(sub) {
		return sub, nil
	}
	c := sub.Columns()[0]
	v := &ColRef{Idx: 0, T: c.Type, Name: c.Name}
	spec := AggCall{Func: "min", Arg: v, T: c.Type}
	if _, err := aggResultType(spec); err != nil {
		return nil, errs.At(errs.Analysis, pos, "a correlated scalar subquery of type %s that is not an aggregate is not supported", types.Name(c.Type))
	}
	ag := &Aggregate{Input: sub, Aggs: []AggCall{{Func: "count_star", T: types.Int64}, spec},
		Cols: []Column{{Name: "count_star", Type: types.Int64}, {Name: c.Name, Type: c.Type}}}
	val, err := b.call(kernels.SingleRowFunc, []Expr{&ColRef{Idx: 0, T: types.Int64, Name: "count_star"}, &ColRef{Idx: 1, T: c.Type, Name: c.Name}}, pos)
	if err != nil {
		return nil, err
	}
	// Once decorrelated, a D row no row matched counts 0 and its value is NULL.
	return &Project{Input: ag, Exprs: []Expr{val}, Cols: []Column{c}}, nil
}
