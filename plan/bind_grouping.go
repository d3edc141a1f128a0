//go:build cgo

package plan

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/types"
)

// MaxGroupingSets bounds the grouping sets one GROUP BY expands to: each is an
// aggregation of its own over the shared input, and CUBE of n columns is 2^n of them.
const MaxGroupingSets = 4096

// groupingRef stands for the k-th GROUPING() call of a SELECT until the aggregate's
// columns are laid out (they follow the groups and the aggregates).
type groupingRef struct{ k int }

func (e *groupingRef) Type() arrow.DataType { return types.Int64 }
func (e *groupingRef) Children() []Expr     { return nil }
func (e *groupingRef) String() string       { return fmt.Sprintf("grouping#%d", e.k) }

// bindGroupClause binds the GROUP BY items into agg's groups. With GROUPING SETS,
// ROLLUP or CUBE among them, agg.sets becomes the grouping sets (indexes into
// agg.groups): the cross product of each item's sets, as in DuckDB.
func (b *binder) bindGroupClause(items []*pg.Node, targets []target, agg *aggState) error {
	sets := [][]int{{}}
	grouping := false
	for _, g := range items {
		s, err := b.groupSets(g, targets, agg, &grouping)
		if err != nil {
			return err
		}
		if len(sets)*len(s) > MaxGroupingSets {
			return errs.At(errs.Analysis, location(g), "GROUP BY expands to more than %d grouping sets", MaxGroupingSets)
		}
		next := make([][]int, 0, len(sets)*len(s))
		for _, a := range sets {
			for _, c := range s {
				next = append(next, union(a, c))
			}
		}
		sets = next
	}
	if grouping {
		agg.sets = sets
	}
	return nil
}

// union is the indexes of a then those of c not in a.
func union(a, c []int) []int {
	out := append([]int(nil), a...)
	for _, x := range c {
		if !containsInt(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func containsInt(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// groupSets binds one GROUP BY item and returns the grouping sets it stands for: one
// set of one group for an expression, several for GROUPING SETS, ROLLUP and CUBE.
func (b *binder) groupSets(g *pg.Node, targets []target, agg *aggState, grouping *bool) ([][]int, error) {
	gs := g.GetGroupingSet()
	if gs == nil {
		set, err := b.groupElement(g, targets, agg)
		if err != nil {
			return nil, err
		}
		return [][]int{set}, nil
	}
	*grouping = true
	switch gs.Kind {
	case pg.GroupingSetKind_GROUPING_SET_EMPTY:
		return [][]int{{}}, nil
	case pg.GroupingSetKind_GROUPING_SET_SETS:
		var out [][]int
		for _, c := range gs.Content {
			s, err := b.groupSets(c, targets, agg, grouping)
			if err != nil {
				return nil, err
			}
			if out = append(out, s...); len(out) > MaxGroupingSets {
				return nil, errs.At(errs.Analysis, int(gs.Location), "GROUP BY expands to more than %d grouping sets", MaxGroupingSets)
			}
		}
		return out, nil
	case pg.GroupingSetKind_GROUPING_SET_ROLLUP, pg.GroupingSetKind_GROUPING_SET_CUBE:
		elems := make([][]int, len(gs.Content))
		for i, c := range gs.Content {
			if c.GetGroupingSet() != nil {
				return nil, errs.At(errs.Analysis, location(c), "ROLLUP and CUBE take expressions and lists of expressions")
			}
			var err error
			if elems[i], err = b.groupElement(c, targets, agg); err != nil {
				return nil, err
			}
		}
		if gs.Kind == pg.GroupingSetKind_GROUPING_SET_ROLLUP {
			out := [][]int{{}}
			for i := range elems {
				out = append(out, union(out[i], elems[i]))
			}
			// DuckDB lists the finest set first; the order only shows in EXPLAIN.
			for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
				out[i], out[j] = out[j], out[i]
			}
			return out, nil
		}
		if len(elems) >= 31 || 1<<len(elems) > MaxGroupingSets {
			return nil, errs.At(errs.Analysis, int(gs.Location), "CUBE of %d items expands to more than %d grouping sets", len(elems), MaxGroupingSets)
		}
		out := make([][]int, 0, 1<<len(elems))
		for mask := (1 << len(elems)) - 1; mask >= 0; mask-- {
			var s []int
			for i := range elems {
				if mask&(1<<(len(elems)-1-i)) != 0 {
					s = union(s, elems[i])
				}
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, errs.At(errs.Analysis, int(gs.Location), "unsupported grouping set")
}

// groupElement binds an expression, or a parenthesized list of them, of a GROUP BY.
func (b *binder) groupElement(g *pg.Node, targets []target, agg *aggState) ([]int, error) {
	if row := g.GetRowExpr(); row != nil && row.RowFormat == pg.CoercionForm_COERCE_IMPLICIT_CAST {
		var out []int
		for _, a := range row.Args {
			i, err := b.bindGroupItem(a, targets, agg)
			if err != nil {
				return nil, err
			}
			out = union(out, []int{i})
		}
		return out, nil
	}
	i, err := b.bindGroupItem(g, targets, agg)
	if err != nil {
		return nil, err
	}
	return []int{i}, nil
}

// groupingCall binds GROUPING(a, …) (or GROUPING_ID): a bit per argument, the first
// argument's the most significant, set when the row's grouping set leaves that
// argument out.
func (b *binder) groupingCall(name string, args []*pg.Node, pos int, ec *exprCtx) (Expr, error) {
	if ec.agg == nil || ec.noAgg {
		return nil, errs.At(errs.Analysis, pos, "%s() is only allowed in the SELECT list, HAVING and ORDER BY of a grouped query", name)
	}
	if len(args) == 0 {
		return nil, errs.At(errs.Analysis, pos, "%s() takes at least one argument", name)
	}
	if len(args) > 62 {
		return nil, errs.At(errs.Analysis, pos, "%s() takes at most 62 arguments", name)
	}
	agg := ec.agg
	idxs := make([]int, len(args))
	for i, a := range args {
		e, err := b.expr(a, &exprCtx{sc: agg.pre, noSubquery: true, noAgg: true, clause: name + "()"})
		if err != nil {
			return nil, err
		}
		if idxs[i] = agg.findGroup(settle(e)); idxs[i] < 0 {
			return nil, errs.At(errs.Analysis, location(a), "arguments of %s() must be grouping columns", name)
		}
	}
	agg.groupings = append(agg.groupings, idxs)
	return &groupingRef{k: len(agg.groupings) - 1}, nil
}

// aggregateNode is the aggregation of input by agg: one Aggregate, with grouping
// sets (and GROUPING() calls) among its fields when the GROUP BY has them. Its
// columns are every group (NULL where a set leaves it out), the aggregates, then a
// BIGINT per GROUPING() call.
func (b *binder) aggregateNode(input Node, agg *aggState) Node {
	gcols := make([]Column, len(agg.groups))
	for i, g := range agg.groups {
		name := "group" + string(rune('0'+i%10))
		if c, ok := g.(*ColRef); ok {
			name = c.Name
		}
		gcols[i] = Column{Name: name, Type: g.Type()}
	}
	acols := make([]Column, len(agg.aggs))
	for i, a := range agg.aggs {
		acols[i] = Column{Name: a.Func, Type: a.T}
	}
	cols := concatCols(gcols, acols)
	sets := agg.sets
	if sets == nil {
		if len(agg.groupings) == 0 {
			return &Aggregate{Input: input, Groups: agg.groups, Aggs: agg.aggs, Cols: cols}
		}
		all := make([]int, len(agg.groups))
		for i := range all {
			all[i] = i
		}
		sets = [][]int{all}
	}
	for range agg.groupings {
		cols = append(cols, Column{Name: "grouping", Type: types.Int64})
	}
	return &Aggregate{Input: input, Groups: agg.groups, Aggs: agg.aggs, Sets: sets, Groupings: agg.groupings, Cols: cols}
}

// ExpandSets rewrites an aggregate with grouping sets into one aggregate per set
// over the shared input, each projected to the columns of x, under a UNION ALL: the
// same rows, for the rewrites that know plain aggregates only.
func ExpandSets(x *Aggregate) Node {
	if len(x.Sets) == 0 {
		return x
	}
	ng, na := len(x.Groups), len(x.Aggs)
	gcols, acols := x.Cols[:ng], x.Cols[ng:ng+na]
	input := x.Input
	if len(x.Sets) > 1 {
		input = &Shared{Input: input, Refs: len(x.Sets)}
	}
	var out Node
	for _, set := range x.Sets {
		groups := make([]Expr, len(set))
		setCols := make([]Column, len(set))
		for k, i := range set {
			groups[k], setCols[k] = x.Groups[i], gcols[i]
		}
		var n Node = &Aggregate{Input: input, Groups: groups, Aggs: x.Aggs, Cols: concatCols(setCols, acols)}
		exprs := make([]Expr, 0, len(x.Cols))
		for i, g := range x.Groups {
			if k := indexOf(set, i); k >= 0 {
				exprs = append(exprs, &ColRef{Idx: k, T: g.Type(), Name: gcols[i].Name})
			} else {
				exprs = append(exprs, &Literal{V: types.NullOf(g.Type())})
			}
		}
		for k, a := range x.Aggs {
			exprs = append(exprs, &ColRef{Idx: len(set) + k, T: a.T, Name: a.Func})
		}
		for _, args := range x.Groupings {
			exprs = append(exprs, &Literal{V: types.Value{Type: types.Int64, I: GroupingValue(set, args)}})
		}
		n = &Project{Input: n, Exprs: exprs, Cols: x.Cols}
		if out == nil {
			out = n
		} else {
			out = &SetOp{Kind: Union, All: true, Left: out, Right: n, Cols: x.Cols}
		}
	}
	return out
}

func indexOf(s []int, x int) int {
	for k, y := range s {
		if y == x {
			return k
		}
	}
	return -1
}

// resolveGroupings replaces the GROUPING() calls in e by the columns aggregateNode
// gives them.
func (a *aggState) resolveGroupings(e Expr) Expr {
	if e == nil || len(a.groupings) == 0 {
		return e
	}
	base := len(a.groups) + len(a.aggs)
	out, _ := MapExpr(e, func(x Expr) (Expr, error) {
		if g, ok := x.(*groupingRef); ok {
			return &ColRef{Idx: base + g.k, T: types.Int64, Name: "grouping"}, nil
		}
		return x, nil
	})
	return out
}

// resolveWindowGroupings replaces the GROUPING() calls in a window function's
// argument, partition and order (a window over a grouped SELECT reads its groups).
func (a *aggState) resolveWindowGroupings(w *WindowCall) {
	w.Arg = a.resolveGroupings(w.Arg)
	if w.Agg != nil {
		w.Agg.Arg = a.resolveGroupings(w.Agg.Arg)
	}
	for i := range w.Partition {
		w.Partition[i] = a.resolveGroupings(w.Partition[i])
	}
	for i := range w.Order {
		w.Order[i].E = a.resolveGroupings(w.Order[i].E)
	}
}
