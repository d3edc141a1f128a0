package rules

import (
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
)

// ReorderJoins orders a tree of inner and cross joins (comma joins included) so that
// no cross product is formed while an equi-join connects another input: starting from
// the first input, it joins next, among the inputs that an equality connects to those
// already joined, the one with the fewest estimated rows of those reduced by filters
// (or joins) of their own, else the earliest in the order written. A filtered input
// thus cuts the rows early (supplier joins its one nation before lineitem), while
// unfiltered inputs keep the written order, the best guide without statistics to
// which joins shrink (estimates from file sizes cannot tell a many-to-many join on a
// low-cardinality key from a key join); the statistics will refine this. An input
// smaller than the tree joined so far takes along its satellites — filtered inputs
// connected to it alone, or else only to inputs already joined — joined to it first, so that their filters reach the tree in
// one join (Q11's nation under supplier, beside partsupp); an input's satellites
// count as its filters when the next input is chosen. Equalities between columns
// imply the ones they do not state (Q5's c_nationkey = s_nationkey = n_nationkey lets
// Asia's nations meet customer first). Other conditions between inputs (an OR of
// per-input predicates, an inequality) never choose the next input while an equality
// can: each becomes the residual of the lowest join that brings its inputs together,
// and only inputs that no equality reaches are joined through them, or else by a cross
// product. Conditions on one input become a filter on that input; equalities between
// inputs become join keys where both sides are present. A projection restores the
// original column order.
func ReorderJoins(n plan.Node) plan.Node {
	root := n
	var top []plan.Expr
	if f, ok := n.(*plan.Filter); ok && innerJoin(f.Input) {
		root = f.Input
		top = plan.Conjuncts(f.Cond)
	}
	if !innerJoin(root) {
		return mapInputs(n, ReorderJoins)
	}
	var rels []relation
	conds := top
	collect(root, 0, &rels, &conds)
	for i := range rels {
		rels[i].node = ReorderJoins(rels[i].node)
	}
	if len(rels) < 3 {
		// Two inputs need no order; their sides are chosen by ChooseBuildSides.
		return mapInputs(n, ReorderJoins)
	}
	return reorder(root.Columns(), rels, conds)
}

func innerJoin(n plan.Node) bool {
	j, ok := n.(*plan.Join)
	return ok && (j.Kind == plan.InnerJoin || j.Kind == plan.CrossJoin) && !j.NullAwareAnti
}

// relation is one input of a join tree: its node and where its columns sit in the
// tree's output.
type relation struct {
	node          plan.Node
	offset, width int
}

// collect gathers the inputs and conditions of the join tree n whose columns start
// at offset in the tree's output; conditions are rewritten over that output.
func collect(n plan.Node, offset int, rels *[]relation, conds *[]plan.Expr) {
	if !innerJoin(n) {
		*rels = append(*rels, relation{node: n, offset: offset, width: len(n.Columns())})
		return
	}
	j := n.(*plan.Join)
	nl := len(j.Left.Columns())
	collect(j.Left, offset, rels, conds)
	collect(j.Right, offset+nl, rels, conds)
	for i := range j.LeftKeys {
		l := plan.ShiftColumns(j.LeftKeys[i], offset)
		r := plan.ShiftColumns(j.RightKeys[i], offset+nl)
		fn, err := kernels.Resolve("=", []arrow.DataType{l.Type(), r.Type()})
		if err != nil {
			panic("BUG: join keys of different types: " + err.Error())
		}
		*conds = append(*conds, &plan.Call{Fn: fn, Args: []plan.Expr{l, r}})
	}
	if j.Residual != nil {
		*conds = append(*conds, plan.Conjuncts(plan.ShiftColumns(j.Residual, offset))...)
	}
}

func reorder(cols []plan.Column, rels []relation, conds []plan.Expr) plan.Node {
	relOf := func(g int) int {
		for i, r := range rels {
			if g >= r.offset && g < r.offset+r.width {
				return i
			}
		}
		panic("BUG: column outside the join tree")
	}
	// Which inputs each condition reads; conditions on one input filter it.
	var multi []cond
	var keep []plan.Expr // conditions with pinned subqueries stay above, in the original layout
	local := make([][]plan.Expr, len(rels))
	for _, c := range conds {
		if pinned(c) {
			keep = append(keep, c)
			continue
		}
		used := map[int]bool{}
		for g := range columnsOf(c) {
			used[relOf(g)] = true
		}
		if len(used) == 1 {
			for r := range used {
				local[r] = append(local[r], plan.ShiftColumns(c, -rels[r].offset))
			}
			continue
		}
		multi = append(multi, cond{e: c, rels: used, equi: equiJoin(c, relOf)})
	}
	for i := range rels {
		if len(local[i]) > 0 {
			rels[i].node = &plan.Filter{Input: rels[i].node, Cond: plan.AndAll(local[i])}
		}
	}
	multi = append(multi, impliedEqualities(multi, relOf)...)
	joined := map[int]bool{}
	applied := make([]bool, len(multi))
	// pos maps an original column to its position in tree's output.
	pos := map[int]int{}
	// equal holds the columns the equalities applied so far make equal (by class);
	// apply adds condition c to join j, over the columns at, unless it equates columns
	// already equal (the rows that reach j satisfy it: stated or implied, it is
	// redundant).
	equal := classes{}
	apply := func(j *plan.Join, c cond, at map[int]int) {
		if a, b, ok := columnEquality(c.e); ok {
			if equal.find(a.Idx) == equal.find(b.Idx) {
				return
			}
			equal.union(a.Idx, b.Idx)
		}
		plan.AddJoinCondition(j, remap(c.e, at))
	}
	// joinWith builds the join of tree with input i and the conditions it completes;
	// with trial it leaves pos, joined and applied as they were.
	joinWith := func(tree plan.Node, i int, trial bool) *plan.Join {
		r := rels[i]
		width := len(tree.Columns())
		j := &plan.Join{Kind: plan.CrossJoin, Left: tree, Right: r.node,
			Cols: append(append([]plan.Column(nil), tree.Columns()...), r.node.Columns()...)}
		for k := 0; k < r.width; k++ {
			pos[r.offset+k] = width + k
		}
		joined[i] = true
		for ci, c := range multi {
			if applied[ci] || !subset(c.rels, joined) {
				continue
			}
			if trial {
				plan.AddJoinCondition(j, remap(c.e, pos))
				continue
			}
			applied[ci] = true
			apply(j, c, pos)
		}
		if trial {
			delete(joined, i)
			for k := 0; k < r.width; k++ {
				delete(pos, r.offset+k)
			}
		}
		return j
	}
	// satellite reports whether input f hangs off input c alone, its own filters
	// reducing it: an equality joins f to c, and every other condition on f is
	// between f, c and inputs already joined (Q7's OR of the two nations, the first
	// joined with supplier: the second still goes along with customer, and the OR
	// becomes a condition of the join that brings them together).
	satellite := func(f, c int) bool {
		if joined[f] || f == c || estimate(rels[f].node).fraction() >= 1 {
			return false
		}
		found := false
		for _, cd := range multi {
			if !cd.rels[f] {
				continue
			}
			for r := range cd.rels {
				if r != f && r != c && !joined[r] {
					return false
				}
			}
			found = found || (cd.equi && cd.rels[c] && len(cd.rels) == 2)
		}
		return found
	}
	// satellites are the inputs that go along with input c when the tree joins it
	// (see below): none when c is not smaller than the tree.
	satellites := func(tree plan.Node, c int) []int {
		if estimate(rels[c].node).rows >= Estimate(tree) {
			return nil
		}
		var out []int
		for f := range rels {
			if satellite(f, c) {
				out = append(out, f)
			}
		}
		return out
	}
	// linked reports whether an equality joins input i to the tree: only such an input
	// is joined next, so that no join is a cross product (or a nested loop over an OR
	// or an inequality) while an equi-join leads elsewhere; conditions of other kinds
	// join once their inputs are all there, as a residual of that join.
	linked := func(i int) bool {
		for _, c := range multi {
			if c.equi && c.rels[i] && overlaps(c.rels, joined) {
				return true
			}
		}
		return false
	}
	pick := func(tree plan.Node) int {
		first, best, bestRows := -1, -1, 0.0
		for i := range rels {
			if joined[i] {
				continue
			}
			if tree == nil {
				return i
			}
			if !linked(i) {
				continue
			}
			if first < 0 {
				first = i
			}
			// An input reduced by its own filters, or by satellites that go along with
			// it, keeps a fraction of the tree's rows.
			own := estimate(rels[i].node).fraction()
			fraction := own
			for _, f := range satellites(tree, i) {
				fraction *= estimate(rels[f].node).fraction()
			}
			if fraction < 1 {
				rows := Estimate(joinWith(tree, i, true)) * fraction / own
				if best < 0 || rows < bestRows {
					best, bestRows = i, rows
				}
			}
		}
		if best >= 0 {
			return best
		}
		return first
	}
	first := pick(nil)
	joined[first] = true
	tree := rels[first].node
	for k := 0; k < rels[first].width; k++ {
		pos[rels[first].offset+k] = k
	}
	for len(joined) < len(rels) {
		next := pick(tree)
		if next < 0 {
			next = pickLinkedBy(rels, multi, joined) // no equality: another condition then
		}
		if next < 0 {
			next = pick(nil) // nothing connects: a cross product cannot be avoided
		}
		// Only an input smaller than the tree takes its satellites along (a dimension
		// the tree's facts look up); a bigger one is joined to the tree's few rows first.
		group := append([]int{next}, satellites(tree, next)...)
		if len(group) == 1 {
			tree = joinWith(tree, next, false)
			continue
		}
		// The input joins its filtered satellites first, and the tree the result: the
		// filters reach the tree's rows in one join (Q11's German suppliers, not all
		// of them, meet partsupp, and only their keys pass the scan's key filter).
		var right plan.Node
		rpos := map[int]int{}
		inGroup := map[int]bool{}
		for _, i := range group {
			r := rels[i]
			w := 0
			if right != nil {
				w = len(right.Columns())
			}
			for k := 0; k < r.width; k++ {
				rpos[r.offset+k] = w + k
			}
			inGroup[i] = true
			if right == nil {
				right = r.node
				continue
			}
			j := &plan.Join{Kind: plan.CrossJoin, Left: right, Right: r.node,
				Cols: append(append([]plan.Column(nil), right.Columns()...), r.node.Columns()...)}
			for ci, c := range multi {
				if !applied[ci] && subset(c.rels, inGroup) {
					applied[ci] = true
					apply(j, c, rpos)
				}
			}
			right = j
		}
		width := len(tree.Columns())
		j := &plan.Join{Kind: plan.CrossJoin, Left: tree, Right: right,
			Cols: append(append([]plan.Column(nil), tree.Columns()...), right.Columns()...)}
		for g, p := range rpos {
			pos[g] = width + p
		}
		for _, i := range group {
			joined[i] = true
		}
		for ci, c := range multi {
			if !applied[ci] && subset(c.rels, joined) {
				applied[ci] = true
				apply(j, c, pos)
			}
		}
		tree = j
	}
	// Back to the original column order.
	exprs := make([]plan.Expr, len(cols))
	for g, c := range cols {
		exprs[g] = &plan.ColRef{Idx: pos[g], T: c.Type, Name: c.Name}
	}
	var out plan.Node = &plan.Project{Input: tree, Exprs: exprs, Cols: cols}
	if len(keep) > 0 {
		out = &plan.Filter{Input: out, Cond: plan.AndAll(keep)}
	}
	return out
}

// cond is a condition between inputs of a join tree, over the tree's columns, and
// the inputs it reads; equi says it is an equality between an expression over one
// input and one over another, which a hash join takes as its key.
type cond struct {
	e    plan.Expr
	rels map[int]bool
	equi bool
}

// equiJoin reports whether e equates an expression over one input with an expression
// over another (relOf maps a column to its input).
func equiJoin(e plan.Expr, relOf func(int) int) bool {
	call, ok := e.(*plan.Call)
	if !ok || call.Fn.Name != "=" || len(call.Args) != 2 || HasSubquery(e) {
		return false
	}
	var sides [2]int
	for k, a := range call.Args {
		sides[k] = -1
		for g := range columnsOf(a) {
			switch r := relOf(g); {
			case sides[k] < 0:
				sides[k] = r
			case sides[k] != r:
				return false
			}
		}
		if sides[k] < 0 {
			return false
		}
	}
	return sides[0] != sides[1]
}

// pickLinkedBy returns the first input not joined that some condition (of any kind)
// joins to those joined, or -1: the choice when no equality leads further.
func pickLinkedBy(rels []relation, multi []cond, joined map[int]bool) int {
	for i := range rels {
		if joined[i] {
			continue
		}
		for _, c := range multi {
			if c.rels[i] && overlaps(c.rels, joined) {
				return i
			}
		}
	}
	return -1
}

// impliedEqualities returns the equalities between columns of different inputs
// that those in conds imply and do not state: c = s and s = n give c = n, which
// lets n (and the filters it carries) reach c without s.
func impliedEqualities(conds []cond, relOf func(int) int) []cond {
	equal := classes{}
	stated := map[[2]int]bool{} // pairs of inputs an equality already joins
	types := map[int]arrow.DataType{}
	for _, c := range conds {
		a, b, ok := columnEquality(c.e)
		if !ok {
			continue
		}
		types[a.Idx], types[b.Idx] = a.T, b.T
		equal.union(a.Idx, b.Idx)
		ra, rb := relOf(a.Idx), relOf(b.Idx)
		stated[[2]int{ra, rb}], stated[[2]int{rb, ra}] = true, true
	}
	all := make([]int, 0, len(equal))
	for c := range equal {
		all = append(all, c)
	}
	members := map[int][]int{}
	for _, c := range all {
		members[equal.find(c)] = append(members[equal.find(c)], c)
	}
	var out []cond
	for _, cols := range members {
		if len(cols) < 3 {
			continue
		}
		sort.Ints(cols)
		// One column of each input, in column order.
		first := map[int]int{}
		var inputs []int
		for _, c := range cols {
			if _, ok := first[relOf(c)]; !ok {
				first[relOf(c)] = c
				inputs = append(inputs, relOf(c))
			}
		}
		for x, ra := range inputs {
			for _, rb := range inputs[x+1:] {
				if stated[[2]int{ra, rb}] {
					continue
				}
				a, b := first[ra], first[rb]
				fn, err := kernels.Resolve("=", []arrow.DataType{types[a], types[b]})
				if err != nil {
					continue
				}
				e := &plan.Call{Fn: fn, Args: []plan.Expr{&plan.ColRef{Idx: a, T: types[a]}, &plan.ColRef{Idx: b, T: types[b]}}}
				out = append(out, cond{e: e, rels: map[int]bool{ra: true, rb: true}, equi: true})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].e.String() < out[j].e.String() })
	return out
}

// columnEquality returns the columns of e when e is column = column.
func columnEquality(e plan.Expr) (a, b *plan.ColRef, ok bool) {
	call, isCall := e.(*plan.Call)
	if !isCall || call.Fn.Name != "=" || len(call.Args) != 2 {
		return nil, nil, false
	}
	a, ok1 := call.Args[0].(*plan.ColRef)
	b, ok2 := call.Args[1].(*plan.ColRef)
	return a, b, ok1 && ok2
}

// classes are sets of columns known equal (union-find: each column maps to another
// of its class, a class's root to itself).
type classes map[int]int

func (c classes) find(x int) int {
	p, ok := c[x]
	if !ok || p == x {
		c[x] = x
		return x
	}
	r := c.find(p)
	c[x] = r
	return r
}

func (c classes) union(x, y int) { c[c.find(x)] = c.find(y) }

func columnsOf(e plan.Expr) map[int]bool {
	m := map[int]bool{}
	plan.ColumnsUsed(e, m)
	return m
}

func overlaps(a, b map[int]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}

func subset(a, b map[int]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func remap(e plan.Expr, pos map[int]int) plan.Expr {
	out, _ := plan.MapExpr(e, func(x plan.Expr) (plan.Expr, error) {
		if c, ok := x.(*plan.ColRef); ok {
			return &plan.ColRef{Idx: pos[c.Idx], T: c.T, Name: c.Name}, nil
		}
		return x, nil
	})
	return out
}
