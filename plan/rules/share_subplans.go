package rules

import (
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
)

// shareRowsLimit is the most rows the planner expects of a subplan it shares: a
// shared plan's rows are held in memory until the statement ends, where each reader
// would otherwise have streamed them.
const shareRowsLimit = 1 << 20

// ShareSubplans computes once a join that an uncorrelated subquery repeats from the
// rest of the statement: TPC-H Q11's HAVING compares each part's total to a fraction
// of the total over the same join of partsupp, supplier and nation, which was read
// and joined twice. Both places then read one plan.Shared, computed by whichever
// reads first. Only subplans that join something are shared (a scan alone costs less
// to read again than to hold), and only when the planner expects at most
// shareRowsLimit rows of them; rows that do not fit the memory budget after all are
// computed by each reader (plan.Shared.Recompute).
//
// It runs on an optimized tree, where column pruning has narrowed each copy to the
// columns its own reader needs: two subplans are the same when they differ only in
// those marks (plan.Scan's Required, a plan.Project's Unused), and the shared one
// produces what either needs. It returns the shared plans it made, which are already
// optimized.
func ShareSubplans(root plan.Node) []*plan.Shared {
	var subs []plan.Node
	var collect func(plan.Node)
	collect = func(n plan.Node) {
		for _, in := range n.Inputs() {
			collect(in)
		}
		plan.ForEachSubquery(n, func(p plan.Node) {
			subs = append(subs, p)
			collect(p)
		})
	}
	collect(root)
	var made []*plan.Shared
	for _, sub := range subs {
		// A subquery inside a plan shared before is left as it is: the plan's other
		// readers read it too.
		if findNode(root, func(n plan.Node) bool { return n == sub }) == nil {
			continue
		}
		if s := shareWith(root, sub); s != nil {
			made = append(made, s)
		}
	}
	return made
}

// shareWith looks, from the largest down, for a subplan of sub that the statement
// also computes outside sub, and shares the first it finds.
func shareWith(root, sub plan.Node) *plan.Shared {
	var found *plan.Shared
	var try func(c plan.Node)
	try = func(c plan.Node) {
		if found != nil {
			return
		}
		if joins(c) {
			if o := findSame(root, sub, c); o != nil && Estimate(o) <= shareRowsLimit {
				widen(o, c)
				s := &plan.Shared{Input: o, Refs: 2, Recompute: true}
				replaceNode(root, o, s)
				replaceNode(root, c, s)
				found = s
				return
			}
		}
		for _, in := range c.Inputs() {
			try(in)
		}
	}
	try(sub)
	return found
}

// joins says n is a tree of scans, filters, projections and joins, with a join.
func joins(n plan.Node) bool {
	switch x := n.(type) {
	case *plan.Join:
		return true
	case *plan.Filter:
		return joins(x.Input)
	case *plan.Project:
		return joins(x.Input)
	}
	return false
}

// findSame returns a node of the tree under root, outside skip, that is the same
// subplan as c.
func findSame(root, skip, c plan.Node) plan.Node {
	return findNode(root, func(n plan.Node) bool {
		return n != skip && n != c && sameSubplan(n, c)
	}, skip)
}

// findNode returns the first node of the tree under root (its subqueries' plans
// included, shared plans' inputs and the skipped trees not) that is.
func findNode(root plan.Node, is func(plan.Node) bool, skip ...plan.Node) plan.Node {
	var out plan.Node
	var walk func(n plan.Node)
	walk = func(n plan.Node) {
		if out != nil {
			return
		}
		if is(n) {
			out = n
			return
		}
		for _, k := range skip {
			if n == k {
				return
			}
		}
		if _, ok := n.(*plan.Shared); ok {
			return // a shared plan's input is left as it is
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
		plan.ForEachSubquery(n, walk)
	}
	walk(root)
	return out
}

// sameSubplan says a and b compute the same rows, apart from the columns each was
// pruned to.
func sameSubplan(a, b plan.Node) bool {
	switch x := a.(type) {
	case *plan.Shared:
		return a == b // one WITH query read in both
	case *plan.Scan:
		y, ok := b.(*plan.Scan)
		return ok && sameTable(x.Ref, y.Ref) && x.Alias == y.Alias && x.Zones == nil && y.Zones == nil &&
			len(x.Deferred) == 0 && len(y.Deferred) == 0 &&
			same(x.Cols, y.Cols) && same(x.Filters, y.Filters)
	case *plan.Filter:
		y, ok := b.(*plan.Filter)
		return ok && same(x.Cond, y.Cond) && sameSubplan(x.Input, y.Input)
	case *plan.Project:
		y, ok := b.(*plan.Project)
		if !ok || len(x.Exprs) != len(y.Exprs) || !same(x.Cols, y.Cols) {
			return false
		}
		for i, e := range x.Exprs {
			_, unusedX := e.(*plan.Unused)
			_, unusedY := y.Exprs[i].(*plan.Unused)
			if !unusedX && !unusedY && !same(e, y.Exprs[i]) {
				return false
			}
		}
		return sameSubplan(x.Input, y.Input)
	case *plan.Join:
		y, ok := b.(*plan.Join)
		if !ok {
			return false
		}
		cx, cy := *x, *y
		cx.Left, cx.Right, cy.Left, cy.Right = nil, nil, nil, nil
		return same(cx, cy) && sameSubplan(x.Left, y.Left) && sameSubplan(x.Right, y.Right)
	}
	return false
}

// same says two parts of plans are equal, looking through pointers and interfaces:
// functions by name and types (a binding may make its own *kernels.Function, with
// its own closures), data types by arrow.TypeEqual; any other func is equal only to
// itself when nil.
func same(a, b any) bool {
	return sameValue(reflect.ValueOf(a), reflect.ValueOf(b), 0)
}

// sameDepth bounds how deep same looks: a structure deeper (or a cycle, as a
// recursive query's plan may hold) is taken as different.
const sameDepth = 2000

var (
	functionType = reflect.TypeFor[*kernels.Function]()
	dataType     = reflect.TypeFor[arrow.DataType]()
)

func sameValue(a, b reflect.Value, depth int) bool {
	if depth > sameDepth {
		return false
	}
	depth++
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	if a.Type() != b.Type() {
		return false
	}
	if a.Type() == functionType && a.CanInterface() {
		f, g := a.Interface().(*kernels.Function), b.Interface().(*kernels.Function)
		if f == g {
			return true
		}
		if f == nil || g == nil || f.Name != g.Name || !arrow.TypeEqual(f.Result, g.Result) || len(f.Args) != len(g.Args) {
			return false
		}
		for i := range f.Args {
			if !arrow.TypeEqual(f.Args[i], g.Args[i]) {
				return false
			}
		}
		return true
	}
	if a.Type().Implements(dataType) && a.Kind() == reflect.Pointer && a.CanInterface() {
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return arrow.TypeEqual(a.Interface().(arrow.DataType), b.Interface().(arrow.DataType))
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.Pointer() == b.Pointer() {
			return true
		}
		if a.IsNil() || b.IsNil() {
			return false
		}
		return sameValue(a.Elem(), b.Elem(), depth)
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem(), depth)
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameValue(a.Field(i), b.Field(i), depth) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Kind() == reflect.Slice && a.IsNil() != b.IsNil() && (a.Len() > 0 || b.Len() > 0) {
			return false
		}
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameValue(a.Index(i), b.Index(i), depth) {
				return false
			}
		}
		return true
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return a.IsNil() && b.IsNil()
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		if a.Pointer() == b.Pointer() {
			return true
		}
		it := a.MapRange()
		for it.Next() {
			v := b.MapIndex(it.Key())
			if !v.IsValid() || !sameValue(it.Value(), v, depth) {
				return false
			}
		}
		return true
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.Complex64, reflect.Complex128:
		return a.Complex() == b.Complex()
	case reflect.String:
		return a.String() == b.String()
	}
	return false
}

// sameTable says two references name one table at one version.
func sameTable(a, b *plan.TableRef) bool {
	if a == b {
		return true
	}
	return a.Name == b.Name && a.Location == b.Location && a.Store == b.Store &&
		a.Version.IdentitySHA256 != "" && a.Version == b.Version
}

// widen has a, the same subplan as b, produce the columns b's reader needs as well.
func widen(a, b plan.Node) {
	switch x := a.(type) {
	case *plan.Scan:
		y := b.(*plan.Scan)
		if x.Required == nil || y.Required == nil {
			x.Required = nil // everything
			return
		}
		for i, r := range y.Required {
			x.Required[i] = x.Required[i] || r
		}
	case *plan.Filter:
		widen(x.Input, b.(*plan.Filter).Input)
	case *plan.Project:
		y := b.(*plan.Project)
		for i, e := range x.Exprs {
			if _, unused := e.(*plan.Unused); unused {
				x.Exprs[i] = y.Exprs[i]
			}
		}
		widen(x.Input, y.Input)
	case *plan.Join:
		y := b.(*plan.Join)
		widen(x.Left, y.Left)
		widen(x.Right, y.Right)
	}
}

// replaceNode puts with where old is an input of a node under root (its subqueries'
// plans included) or a subquery's whole plan.
func replaceNode(root, old, with plan.Node) {
	var walk func(n plan.Node) plan.Node
	walk = func(n plan.Node) plan.Node {
		if n == old {
			return with
		}
		if _, ok := n.(*plan.Shared); ok {
			return n
		}
		return mapInputs(n, walk)
	}
	walk(root)
}
