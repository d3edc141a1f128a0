package rules

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
)

// joinGraph is a join query as the binder gives it for comma joins: the inputs under
// cross joins in the order written, and a WHERE of equalities between inputs (the
// edges), ORs of per-input predicates across inputs, inequalities between inputs and
// filters of one input.
type joinGraph struct {
	name  string
	rows  []int    // per input
	edges [][2]int // equi-joins between inputs
	ors   [][]int  // ORs, each over the inputs listed
	less  [][2]int // inequalities between inputs
	local []int    // inputs with a filter of their own
}

// graphCols is the number of columns of every input: two keys and a value.
const graphCols = 3

func (g joinGraph) col(rel, c int) plan.Expr {
	return &plan.ColRef{Idx: rel*graphCols + c, T: types.Int64, Name: fmt.Sprintf("r%d.c%d", rel, c)}
}

// build returns the graph's plan and its inputs (each a Stored node, known by
// identity wherever the rules move it).
func (g joinGraph) build(t *testing.T) (plan.Node, []plan.Node) {
	var rels []plan.Node
	var tree plan.Node
	for r, n := range g.rows {
		cols := make([]plan.Column, graphCols)
		for c := range cols {
			cols[c] = plan.Column{Name: fmt.Sprintf("c%d", c), Type: types.Int64}
		}
		s := &plan.Stored{Cols: cols, Rows: n, Source: fmt.Sprintf("r%d", r)}
		rels = append(rels, s)
		if tree == nil {
			tree = s
			continue
		}
		tree = &plan.Join{Kind: plan.CrossJoin, Left: tree, Right: s,
			Cols: append(append([]plan.Column(nil), tree.Columns()...), cols...)}
	}
	var conds []plan.Expr
	for i, e := range g.edges {
		// Keys of either column, so that cycles and stars use several.
		conds = append(conds, call(t, "=", g.col(e[0], i%2), g.col(e[1], (i/2)%2)))
	}
	for k, o := range g.ors {
		var branches []plan.Expr
		for b := range 2 {
			var parts []plan.Expr
			for _, r := range o {
				parts = append(parts, call(t, "=", g.col(r, 2), lit(types.IntValue(int64(10*k+b+r)))))
			}
			branches = append(branches, plan.AndAll(parts))
		}
		conds = append(conds, plan.OrAll(branches))
	}
	for _, l := range g.less {
		conds = append(conds, call(t, "<", g.col(l[0], 2), g.col(l[1], 2)))
	}
	for _, r := range g.local {
		conds = append(conds, call(t, "=", g.col(r, 2), lit(types.IntValue(7))))
	}
	if len(conds) == 0 {
		return tree, rels
	}
	return &plan.Filter{Input: tree, Cond: plan.AndAll(conds)}, rels
}

// components numbers the inputs by the connected component of the equi-join graph
// they belong to.
func (g joinGraph) components() []int {
	comp := make([]int, len(g.rows))
	for i := range comp {
		comp[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		if comp[x] != x {
			comp[x] = find(comp[x])
		}
		return comp[x]
	}
	for _, e := range g.edges {
		comp[find(e[0])] = find(e[1])
	}
	for i := range comp {
		comp[i] = find(i)
	}
	return comp
}

// inputsUnder returns the inputs of rels found in n's subtree.
func inputsUnder(n plan.Node, rels []plan.Node) []int {
	var out []int
	var walk func(plan.Node)
	walk = func(n plan.Node) {
		for i, r := range rels {
			if n == r {
				out = append(out, i)
				return
			}
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(n)
	return out
}

// checkNoCrossProduct fails when a join of the optimized plan has no keys while the
// equi-join graph connects its two sides (directly or through other inputs); the
// join of two components that no equality connects may be a cross product.
func checkNoCrossProduct(t *testing.T, g joinGraph) {
	t.Helper()
	n, rels := g.build(t)
	before := plan.Explain(n, nil)
	n = Optimize(n)
	comp := g.components()
	joins := 0
	var walk func(plan.Node)
	walk = func(x plan.Node) {
		if j, ok := x.(*plan.Join); ok {
			joins++
			left, right := inputsUnder(j.Left, rels), inputsUnder(j.Right, rels)
			connected := false
			for _, a := range left {
				for _, b := range right {
					connected = connected || comp[a] == comp[b]
				}
			}
			if connected && len(j.LeftKeys) == 0 {
				t.Errorf("%s: a join of inputs %v and %v has no keys though equalities connect them:\n%s\nfrom\n%s",
					g.name, left, right, plan.Explain(n, nil), before)
			}
		}
		for _, in := range x.Inputs() {
			walk(in)
		}
	}
	walk(n)
	checkOrsAtLowestJoin(t, g, n, rels, before)
	if joins != len(g.rows)-1 {
		t.Errorf("%s: %d joins for %d inputs:\n%s", g.name, joins, len(g.rows), plan.Explain(n, nil))
	}
}

// Join enumeration never places a cross product (or a join without keys) while an
// equi-join path exists between its two sides, over chains, stars, cycles, snowflakes,
// cliques and disconnected graphs of 2–8 inputs, with ORs across inputs, inequalities
// and filters, in written orders that invite the mistake; and over random graphs from
// a fixed seed.
func TestJoinGraphsHaveNoAvoidableCrossProducts(t *testing.T) {
	var graphs []joinGraph
	// The example: sales, returns and demographics, the OR linking sales to the large
	// demographics table directly, which only returns joins by key.
	graphs = append(graphs, joinGraph{name: "sales-returns-demographics",
		rows: []int{720_000, 72_000, 1_900_000}, edges: [][2]int{{0, 1}, {0, 1}, {2, 1}},
		ors: [][]int{{2, 0}}})
	sizes := []int{1_000_000, 50, 20_000, 5, 300_000, 2_000, 10, 700_000}
	for n := 2; n <= 8; n++ {
		rows := sizes[:n]
		var chain, star, cycle, snow [][2]int
		for i := 1; i < n; i++ {
			chain = append(chain, [2]int{i - 1, i})
			star = append(star, [2]int{0, i})
			if i <= 2 || i%2 == 1 {
				snow = append(snow, [2]int{0, i}) // dimensions of the fact
			} else {
				snow = append(snow, [2]int{i - 2, i}) // a dimension's own dimension
			}
		}
		cycle = append(append(cycle, chain...), [2]int{n - 1, 0})
		var clique [][2]int
		for i := 0; i < n; i++ {
			for k := i + 1; k < n; k++ {
				clique = append(clique, [2]int{i, k})
			}
		}
		// ORs and inequalities between the ends of each shape, and filters on the
		// small inputs, which make them attractive to join first.
		ors := [][]int{{0, n - 1}}
		if n > 2 {
			ors = append(ors, []int{1, n - 1, 0})
		}
		less := [][2]int{{n - 1, 0}}
		local := []int{1}
		for name, edges := range map[string][][2]int{"chain": chain, "star": star, "cycle": cycle, "snowflake": snow, "clique": clique} {
			graphs = append(graphs,
				joinGraph{name: fmt.Sprintf("%s-%d", name, n), rows: rows, edges: edges},
				joinGraph{name: fmt.Sprintf("%s-%d-or", name, n), rows: rows, edges: edges, ors: ors, local: local},
				joinGraph{name: fmt.Sprintf("%s-%d-less", name, n), rows: rows, edges: edges, less: less, ors: ors},
			)
			// Written in reverse: the first input is another one.
			rev := make([]int, n)
			for i := range rev {
				rev[i] = rows[n-1-i]
			}
			var redges [][2]int
			for _, e := range edges {
				redges = append(redges, [2]int{n - 1 - e[0], n - 1 - e[1]})
			}
			graphs = append(graphs, joinGraph{name: fmt.Sprintf("%s-%d-reversed", name, n), rows: rev, edges: redges, ors: ors, local: local})
		}
		if n >= 4 {
			// Two chains that nothing but an OR and an inequality connect: one cross
			// product (or a join on those) is needed, and only one.
			h := n / 2
			var edges [][2]int
			for i := 1; i < n; i++ {
				if i != h {
					edges = append(edges, [2]int{i - 1, i})
				}
			}
			graphs = append(graphs,
				joinGraph{name: fmt.Sprintf("disconnected-%d", n), rows: rows, edges: edges},
				joinGraph{name: fmt.Sprintf("disconnected-%d-or", n), rows: rows, edges: edges, ors: [][]int{{0, n - 1}, {h - 1, h}}, less: [][2]int{{h, 0}}, local: []int{n - 1}})
		}
	}
	r := rand.New(rand.NewPCG(7, 11))
	for k := range 300 {
		n := 2 + r.IntN(7)
		g := joinGraph{name: fmt.Sprintf("random-%d", k)}
		for range n {
			g.rows = append(g.rows, []int{3, 40, 1_000, 60_000, 2_000_000}[r.IntN(5)])
		}
		// A random spanning tree (mostly) plus extra edges, ORs, inequalities and
		// filters.
		for i := 1; i < n; i++ {
			if r.IntN(8) > 0 {
				g.edges = append(g.edges, [2]int{r.IntN(i), i})
			}
		}
		for range r.IntN(3) {
			a, b := r.IntN(n), r.IntN(n)
			if a != b {
				g.edges = append(g.edges, [2]int{a, b})
			}
		}
		for range r.IntN(3) {
			a, b := r.IntN(n), r.IntN(n)
			if a != b {
				g.ors = append(g.ors, []int{a, b})
			}
		}
		if r.IntN(3) == 0 && n > 1 {
			g.less = append(g.less, [2]int{r.IntN(n), r.IntN(n)})
		}
		for i := range n {
			if r.IntN(3) == 0 {
				g.local = append(g.local, i)
			}
		}
		graphs = append(graphs, g)
	}
	for _, g := range graphs {
		checkNoCrossProduct(t, g)
	}
}

// isOr reports whether e is one of the graph's ORs (not a weaker one implied by
// it): it compares with every literal of one.
func (g joinGraph) isOr(e plan.Expr) bool {
	lits := map[int64]bool{}
	plan.WalkExpr(e, func(x plan.Expr) {
		if l, ok := x.(*plan.Literal); ok {
			lits[l.V.I] = true
		}
	})
	for k, o := range g.ors {
		want := map[int64]bool{}
		for b := range 2 {
			for _, r := range o {
				want[int64(10*k+b+r)] = true
			}
		}
		same := len(want) == len(lits)
		for v := range want {
			same = same && lits[v]
		}
		if same {
			return true
		}
	}
	return false
}

// relsOfColumns returns, for each output column of n, the input of rels it comes
// from (-1 when computed).
func relsOfColumns(n plan.Node, rels []plan.Node) []int {
	for i, r := range rels {
		if n == r {
			out := make([]int, len(r.Columns()))
			for k := range out {
				out[k] = i
			}
			return out
		}
	}
	switch x := n.(type) {
	case *plan.Filter:
		return relsOfColumns(x.Input, rels)
	case *plan.Join:
		return append(relsOfColumns(x.Left, rels), relsOfColumns(x.Right, rels)...)
	case *plan.Project:
		in := relsOfColumns(x.Input, rels)
		out := make([]int, len(x.Exprs))
		for k, e := range x.Exprs {
			out[k] = -1
			if c, ok := e.(*plan.ColRef); ok {
				out[k] = in[c.Idx]
			}
		}
		return out
	}
	out := make([]int, len(n.Columns()))
	for k := range out {
		out[k] = -1
	}
	return out
}

// checkOrsAtLowestJoin fails unless every OR across inputs of the graph is the
// residual of the lowest join that has all its inputs: neither side of that join
// has them all, and no filter above a join holds one.
func checkOrsAtLowestJoin(t *testing.T, g joinGraph, n plan.Node, rels []plan.Node, before string) {
	t.Helper()
	found := 0
	inputsOf := func(e plan.Expr, cols []int) map[int]bool {
		used := map[int]bool{}
		for c := range columnsOf(e) {
			used[cols[c]] = true
		}
		return used
	}
	within := func(set map[int]bool, side []int) bool {
		in := map[int]bool{}
		for _, r := range side {
			in[r] = true
		}
		for r := range set {
			if !in[r] {
				return false
			}
		}
		return true
	}
	var walk func(plan.Node)
	walk = func(x plan.Node) {
		switch y := x.(type) {
		case *plan.Join:
			if y.Residual != nil {
				cols := relsOfColumns(y, rels)
				for _, c := range plan.Conjuncts(y.Residual) {
					used := inputsOf(c, cols)
					if len(plan.Disjuncts(c)) < 2 || len(used) < 2 {
						continue
					}
					if g.isOr(c) {
						found++
					}
					if within(used, inputsUnder(y.Left, rels)) || within(used, inputsUnder(y.Right, rels)) {
						t.Errorf("%s: %s is checked above a join that has its inputs already:\n%s\nfrom\n%s",
							g.name, c, plan.Explain(n, nil), before)
					}
				}
			}
		case *plan.Filter:
			cols := relsOfColumns(y.Input, rels)
			for _, c := range plan.Conjuncts(y.Cond) {
				if len(plan.Disjuncts(c)) > 1 && len(inputsOf(c, cols)) > 1 {
					t.Errorf("%s: %s is a filter above a join, not the join's condition:\n%s", g.name, c, plan.Explain(n, nil))
				}
			}
		}
		for _, in := range x.Inputs() {
			walk(in)
		}
	}
	walk(n)
	if found != len(g.ors) {
		t.Errorf("%s: %d ORs across inputs at joins, want %d:\n%s\nfrom\n%s", g.name, found, len(g.ors), plan.Explain(n, nil), before)
	}
}
