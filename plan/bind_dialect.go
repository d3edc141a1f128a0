//go:build cgo

package plan

import (
	"regexp"
	"strings"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/sql/pgtree"
	"github.com/loredb/lore/types"
)

// This file binds DuckDB's forms of SELECT that PostgreSQL's grammar does not read
// (the parser's dialect layer records them): * EXCLUDE / REPLACE, GROUP BY ALL,
// ORDER BY ALL, QUALIFY, UNION BY NAME; and DISTINCT ON, which it does read.

// expandStar expands a * or t.* select item over the SELECT's input, less the
// columns its EXCLUDE names and with those its REPLACE names computed instead.
func (b *binder) expandStar(cr *pg.ColumnRef, st *selState, fromless bool) ([]target, error) {
	qual := ""
	if len(cr.Fields) == 2 {
		qual = cr.Fields[0].GetString_().GetSval()
		if !st.sc.hasTable(qual) {
			return nil, errs.At(errs.Analysis, int(cr.Location), "table %q not found in FROM", qual)
		}
	}
	var items []target
	for i, c := range st.sc.cols {
		if st.sc.hidden[i] && !(qual != "" && c.Merged) || (qual != "" && !strings.EqualFold(c.Table, qual)) {
			continue
		}
		items = append(items, target{pre: &ColRef{Idx: i, T: c.Type, Name: c.Name}, name: c.Name})
	}
	out, err := b.starModifiers(cr, items)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 && fromless {
		return nil, errs.At(errs.Analysis, int(cr.Location), "SELECT * with no tables specified is not valid")
	}
	return out, nil
}

// starModifiers applies the EXCLUDE, REPLACE and RENAME written after the star cr
// to items, the columns (or a struct's fields) it stands for, by name.
func (b *binder) starModifiers(cr *pg.ColumnRef, items []target) ([]target, error) {
	exclude := b.dialect.Exclude(cr)
	replace := b.dialect.Replace(cr)
	rename := b.dialect.Rename(cr)
	used := make([]bool, len(exclude)+len(replace))
	out := make([]target, 0, len(items))
	for _, t := range items {
		skip := false
		for k, x := range exclude {
			if strings.EqualFold(x, t.name) {
				used[k], skip = true, true
			}
		}
		if skip {
			continue
		}
		for k, r := range replace {
			if strings.EqualFold(r.Name, t.name) {
				used[len(exclude)+k] = true
				t = target{node: r.Val, name: t.name}
			}
		}
		// A RENAME naming no column is let be, as in DuckDB.
		for _, r := range rename {
			if strings.EqualFold(r[0], t.name) {
				t.name = r[1]
			}
		}
		out = append(out, t)
	}
	for k, ok := range used {
		if ok {
			continue
		}
		if k < len(exclude) {
			return nil, errs.At(errs.Analysis, int(cr.Location), "column %q in EXCLUDE list not found in FROM clause", exclude[k])
		}
		r := replace[k-len(exclude)]
		return nil, errs.At(errs.Analysis, int(r.Location), "column %q in REPLACE list not found in FROM clause", r.Name)
	}
	if len(out) == 0 && len(exclude) > 0 {
		return nil, errs.At(errs.Analysis, int(cr.Location), "SELECT list is empty after resolving * EXCLUDE")
	}
	return out, nil
}

// ordinalNode is the constant k, as GROUP BY k and ORDER BY k read it.
func ordinalNode(k int, loc int32) *pg.Node {
	return &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{
		Val: &pg.A_Const_Ival{Ival: &pg.Integer{Ival: int32(k)}}, Location: loc}}}
}

// groupByAll turns GROUP BY ALL into GROUP BY the ordinals of the select items that
// hold no aggregate, as DuckDB does (one holding a window function is then refused
// by GROUP BY); other GROUP BY clauses are returned as they are.
func (b *binder) groupByAll(items []*pg.Node, targets []target) []*pg.Node {
	if len(items) != 1 || !b.dialect.IsAll(items[0]) {
		return items
	}
	loc := items[0].GetColumnRef().Location
	out := []*pg.Node{}
	for i, t := range targets {
		if t.node != nil && containsAggregate(t.node) {
			continue
		}
		out = append(out, ordinalNode(i+1, loc))
	}
	return out
}

// orderByAll turns ORDER BY ALL [ASC|DESC] [NULLS …] into ORDER BY every output
// column in turn with that direction; other ORDER BY clauses are returned as they are.
func (b *binder) orderByAll(items []*pg.Node, n int) ([]*pg.Node, error) {
	// The parser lets ALL through only as the one ORDER BY item.
	if len(items) != 1 || !b.dialect.IsAll(items[0].GetSortBy().Node) {
		return items, nil
	}
	sb := items[0].GetSortBy()
	out := make([]*pg.Node, n)
	for i := range out {
		c := pgtree.Clone(sb)
		c.Node = ordinalNode(i+1, sb.Node.GetColumnRef().Location)
		out[i] = &pg.Node{Node: &pg.Node_SortBy{SortBy: c}}
	}
	return out, nil
}

// qualifyNode returns sel's QUALIFY condition with each name that is not a column
// of the input but is the alias of a select item replaced by that item's expression:
// QUALIFY reads output aliases, as in DuckDB.
func (b *binder) qualifyNode(sel *pg.SelectStmt, targets []target, sc *scope) *pg.Node {
	q := b.dialect.Qualify(sel)
	if q == nil {
		return nil
	}
	return withOutputAliases(q, targets, sc)
}

// distinctOn returns the items of DISTINCT ON (…), or nil for another SELECT.
func distinctOn(sel *pg.SelectStmt) []*pg.Node {
	if len(sel.DistinctClause) == 0 || sel.DistinctClause[0] == nil || sel.DistinctClause[0].Node == nil {
		return nil
	}
	return sel.DistinctClause
}

// distinctOnKeys binds the items of DISTINCT ON as the select list's ordinals,
// output names or expressions; an expression not in the list is appended to exprs
// as a hidden column. It returns the index of each key among the output columns.
func (b *binder) distinctOnKeys(items []*pg.Node, targets []target, exprs *[]Expr, cols *[]Column, ec *exprCtx) ([]int, error) {
	var out []int
	for _, it := range items {
		idx := -1
		if k, ok, err := ordinal(it, len(targets)); err != nil {
			return nil, err
		} else if ok {
			idx = k
		} else if cr := it.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && cr.Fields[0].GetString_() != nil {
			for i, t := range targets {
				if t.name == cr.Fields[0].GetString_().Sval {
					idx = i
					break
				}
			}
		}
		if idx < 0 {
			dc := *ec
			dc.clause = "DISTINCT ON"
			e, err := b.expr(it, &dc)
			if err != nil {
				return nil, err
			}
			e = settle(e)
			for i, x := range *exprs {
				if x.String() == e.String() {
					idx = i
					break
				}
			}
			if idx < 0 {
				*exprs = append(*exprs, e)
				*cols = append(*cols, Column{Name: columnName(it), Type: e.Type(), Hidden: true})
				idx = len(*exprs) - 1
			}
		}
		out = append(out, idx)
	}
	return out, nil
}

// firstPerKey keeps, of the rows of n with equal values of the columns keys, the
// first in the order of sortKeys: row_number() over the keys' partitions, kept where
// it is 1. Its output has n's columns.
func (b *binder) firstPerKey(n Node, keys []int, sortKeys []SortKey) (Node, error) {
	cols := n.Columns()
	w := WindowCall{Func: "row_number", T: types.Int64, Order: sortKeys,
		Frame: Frame{Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: UnboundedFollowing}}}
	if len(sortKeys) > 0 {
		w.Frame.End.Kind = CurrentRow
	}
	for _, k := range keys {
		w.Partition = append(w.Partition, &ColRef{Idx: k, T: cols[k].Type, Name: cols[k].Name})
	}
	wcols := append(append([]Column(nil), cols...), Column{Name: "row_number", Type: types.Int64, Hidden: true})
	var out Node = &Window{Input: n, Funcs: []WindowCall{w}, Cols: wcols}
	first, err := b.call("=", []Expr{&ColRef{Idx: len(cols), T: types.Int64, Name: "row_number"},
		&Literal{V: types.Value{Type: types.Int64, I: 1}}}, errs.NoPosition)
	if err != nil {
		return nil, err
	}
	out = &Filter{Input: out, Cond: first}
	exprs := make([]Expr, len(cols))
	for i, c := range cols {
		exprs[i] = &ColRef{Idx: i, T: c.Type, Name: c.Name}
	}
	return &Project{Input: out, Exprs: exprs, Cols: cols}, nil
}

// byName lines up the inputs of UNION BY NAME: the output has the left input's
// columns, then the right input's columns that the left has not, matched by name
// whatever their case; an input lacking a column gives NULL for it.
func byName(left, right Node) (Node, Node, error) {
	lc, rc := left.Columns(), right.Columns()
	names := make([]string, 0, len(lc)+len(rc))
	seen := map[string]bool{}
	for _, cols := range [][]Column{lc, rc} {
		for _, c := range cols {
			if c.Hidden {
				continue
			}
			k := strings.ToLower(c.Name)
			if !seen[k] {
				seen[k] = true
				names = append(names, c.Name)
			}
		}
	}
	line := func(n Node, other []Column) (Node, error) {
		in := n.Columns()
		exprs := make([]Expr, len(names))
		cols := make([]Column, len(names))
		for i, name := range names {
			idx := -1
			for j, c := range in {
				if !c.Hidden && strings.EqualFold(c.Name, name) {
					if idx >= 0 {
						return nil, errs.New(errs.Analysis, "UNION BY NAME: column %q appears twice in one input", name)
					}
					idx = j
				}
			}
			if idx >= 0 {
				exprs[i] = &ColRef{Idx: idx, T: in[idx].Type, Name: in[idx].Name}
				cols[i] = Column{Name: name, Type: in[idx].Type}
				continue
			}
			t := types.Null
			for _, c := range other {
				if strings.EqualFold(c.Name, name) {
					t = c.Type
				}
			}
			exprs[i] = &Literal{V: types.NullOf(t)}
			cols[i] = Column{Name: name, Type: t}
		}
		return &Project{Input: n, Exprs: exprs, Cols: cols}, nil
	}
	l, err := line(left, rc)
	if err != nil {
		return nil, nil, err
	}
	r, err := line(right, lc)
	if err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

// expandColumns expands a select item that calls COLUMNS('regex') or COLUMNS(*):
// one item per column of the input whose name the regular expression matches
// anywhere (RE2, as DuckDB's), each with the call replaced by that column. It
// reports false for an item without COLUMNS.
// hasColumnsCall reports whether expression n holds a COLUMNS call outside a
// subquery: most select items have none, and are not copied to find out.
func hasColumnsCall(n *pg.Node) bool {
	found := false
	walkPG(n, func(x *pg.Node) bool {
		if found || x.GetSubLink() != nil {
			return false
		}
		if fc := x.GetFuncCall(); fc != nil && funcName(fc) == "columns" && len(fc.Funcname) == 1 {
			found = true
			return false
		}
		return true
	})
	return found
}

func (b *binder) expandColumns(rt *pg.ResTarget, st *selState) ([]target, bool, error) {
	if b.noColumnsCall || !hasColumnsCall(rt.Val) {
		return nil, false, nil
	}
	val := pgtree.Clone(rt.Val) // the calls are replaced in this copy
	var calls []*pg.Node
	walkPG(val, func(x *pg.Node) bool {
		if x.GetSubLink() != nil {
			return false
		}
		if fc := x.GetFuncCall(); fc != nil && funcName(fc) == "columns" && len(fc.Funcname) == 1 {
			calls = append(calls, x)
			return false
		}
		return true
	})
	if len(calls) == 0 {
		return nil, false, nil
	}
	pattern := func(n *pg.Node) (string, error) {
		fc := n.GetFuncCall()
		if fc.AggStar && len(fc.Args) == 0 {
			return "", nil
		}
		if len(fc.Args) == 1 {
			if c := fc.Args[0].GetAConst(); c != nil {
				if s, ok := c.Val.(*pg.A_Const_Sval); ok {
					return s.Sval.Sval, nil
				}
			}
		}
		return "", errs.At(errs.Analysis, int(fc.Location), "COLUMNS takes a string literal (a regular expression) or *")
	}
	re, err := pattern(calls[0])
	if err != nil {
		return nil, true, err
	}
	for _, c := range calls[1:] {
		other, err := pattern(c)
		if err != nil {
			return nil, true, err
		}
		if other != re {
			return nil, true, errs.At(errs.Analysis, int(c.GetFuncCall().Location), "several different COLUMNS in one expression are not supported")
		}
	}
	loc := int(calls[0].GetFuncCall().Location)
	rx, err := regexp.Compile(re)
	if err != nil {
		return nil, true, errs.At(errs.Analysis, loc, "cannot compile the regular expression %q of COLUMNS: %v", re, err)
	}
	var out []target
	for i, c := range st.sc.cols {
		if st.sc.hidden[i] || !rx.MatchString(c.Name) {
			continue
		}
		ref := &pg.ColumnRef{Location: int32(loc)}
		if c.Table != "" {
			ref.Fields = append(ref.Fields, pgString(c.Table))
		}
		ref.Fields = append(ref.Fields, pgString(c.Name))
		for _, call := range calls {
			call.Node = &pg.Node_ColumnRef{ColumnRef: ref}
		}
		node := pgtree.Clone(val)
		name := c.Name
		if rt.Val.GetFuncCall() == nil || funcName(rt.Val.GetFuncCall()) != "columns" {
			name = columnName(node)
		}
		out = append(out, target{node: node, name: name})
	}
	if len(out) == 0 {
		return nil, true, errs.At(errs.Analysis, loc, "no column matches the regular expression %q of COLUMNS", re)
	}
	return out, true, nil
}

func pgString(s string) *pg.Node {
	return &pg.Node{Node: &pg.Node_String_{String_: &pg.String{Sval: s}}}
}

// limitPercent binds LIMIT n% [OFFSET m]: n a constant from 0 to 100.
func (b *binder) limitPercent(n Node, sel *pg.SelectStmt) (Node, error) {
	e, err := b.expr(sel.LimitCount, &exprCtx{sc: newScope(nil)})
	if err != nil {
		return nil, err
	}
	l, ok := b.fold(castTo(e, types.Float64)).(*Literal)
	if !ok || l.V.Null || l.V.F < 0 || l.V.F > 100 {
		return nil, errs.At(errs.Analysis, location(sel.LimitCount), "LIMIT's percentage must be a constant from 0 to 100")
	}
	out := &LimitPercent{Input: n, Percent: l.V.F}
	if sel.LimitOffset != nil {
		if out.Offset, err = b.constInt(sel.LimitOffset, "OFFSET"); err != nil {
			return nil, err
		}
	}
	return out, nil
}
