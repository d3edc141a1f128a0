package plan

import (
	"fmt"
	"strings"

	"github.com/loredb/lore/types"
)

// Explain renders a plan as an indented tree, one node a line. annotations, when
// given, are appended in braces to the lines of the nodes they name (estimates,
// EXPLAIN ANALYZE counters).
func Explain(n Node, annotations map[Node]string) string {
	var b strings.Builder
	explain(&b, n, 0, annotations)
	return b.String()
}

func explain(b *strings.Builder, n Node, depth int, ann map[Node]string) {
	pad := strings.Repeat("  ", depth)
	cols := n.Columns()
	name := func(i int) string {
		if i < len(cols) {
			return cols[i].Name
		}
		return fmt.Sprintf("#%d", i)
	}
	in := func(k int) func(int) string {
		ic := n.Inputs()[k].Columns()
		return func(i int) string {
			if i < len(ic) {
				return ic[i].Name
			}
			return fmt.Sprintf("#%d", i)
		}
	}
	_ = name
	switch x := n.(type) {
	case *Scan:
		what := x.Ref.Location
		if x.Ref.Name != "" {
			what = x.Ref.Name + " (" + x.Ref.Location + ")"
		}
		var read []string
		for i, c := range x.Cols {
			if x.Required == nil || x.Required[i] {
				read = append(read, c.Name)
			}
		}
		fmt.Fprintf(b, "%sScan %s files=%d columns=[%s]", pad, what, len(x.Ref.Listing.Files), strings.Join(read, ", "))
		if len(x.Filters) > 0 {
			var fs []string
			for _, f := range x.Filters {
				vals := make([]string, len(f.Values))
				for i, v := range f.Values {
					vals[i] = v.String()
				}
				fs = append(fs, fmt.Sprintf("%s %s %s", f.Column, f.Op, strings.Join(vals, ",")))
			}
			fmt.Fprintf(b, " prune=[%s]", strings.Join(fs, "; "))
		}
		if len(x.Deferred) > 0 {
			fs := make([]string, len(x.Deferred))
			for i, f := range x.Deferred {
				fs[i] = fmt.Sprintf("%s %s %s", f.Column, f.Op, Render(f.Value, name))
			}
			fmt.Fprintf(b, " prune at run=[%s]", strings.Join(fs, "; "))
		}
		if x.Zones != nil {
			fmt.Fprintf(b, " zones: %s", x.Zones)
		}
	case *Values:
		fmt.Fprintf(b, "%sValues rows=%d", pad, len(x.Rows))
	case *LimitPercent:
		fmt.Fprintf(b, "%sLimit %g%% offset=%d", pad, x.Percent, x.Offset)
	case *Series:
		fmt.Fprintf(b, "%sSeries %s", pad, x.Col.Name)
	case *Stored:
		fmt.Fprintf(b, "%sStored rows=%d from %s", pad, x.Rows, x.Source)
		if x.Zones != nil {
			fmt.Fprintf(b, " zones: %s", x.Zones)
		}
	case *Filter:
		fmt.Fprintf(b, "%sFilter %s", pad, Render(x.Cond, in(0)))
	case *Project:
		items := make([]string, len(x.Exprs))
		for i, e := range x.Exprs {
			items[i] = Render(e, in(0)) + " AS " + x.Cols[i].Name
		}
		fmt.Fprintf(b, "%sProject %s", pad, strings.Join(items, ", "))
	case *Aggregate:
		var gs, as []string
		for _, g := range x.Groups {
			gs = append(gs, Render(g, in(0)))
		}
		for _, a := range x.Aggs {
			arg := "*"
			if a.Arg != nil {
				args := []string{Render(a.Arg, in(0))}
				for _, e := range a.Args {
					args = append(args, Render(e, in(0)))
				}
				arg = strings.Join(args, ", ")
				if a.Distinct {
					arg = "DISTINCT " + arg
				}
				var keys []string
				for _, k := range a.Order {
					key := Render(k.E, in(0))
					if k.Desc {
						key += " DESC"
					}
					keys = append(keys, key)
				}
				if len(keys) > 0 {
					arg += " ORDER BY " + strings.Join(keys, ", ")
				}
			}
			item := a.Func + "(" + arg + ")"
			if a.Filter != nil {
				item += " FILTER (WHERE " + Render(a.Filter, in(0)) + ")"
			}
			as = append(as, item)
		}
		fmt.Fprintf(b, "%sAggregate groups=[%s] aggregates=[%s]", pad, strings.Join(gs, ", "), strings.Join(as, ", "))
		if len(x.Sets) > 0 {
			sets := make([]string, len(x.Sets))
			for k, set := range x.Sets {
				names := make([]string, len(set))
				for i, g := range set {
					names[i] = gs[g]
				}
				sets[k] = "(" + strings.Join(names, ", ") + ")"
			}
			fmt.Fprintf(b, " sets=[%s]", strings.Join(sets, ", "))
		}
	case *Join:
		var ks []string
		eq := " = "
		if x.NullEq {
			eq = " IS NOT DISTINCT FROM "
		}
		for i := range x.LeftKeys {
			ks = append(ks, Render(x.LeftKeys[i], in(0))+eq+Render(x.RightKeys[i], in(1)))
		}
		fmt.Fprintf(b, "%sJoin %s keys=[%s]", pad, x.Kind, strings.Join(ks, ", "))
		if x.Residual != nil {
			both := append(append([]Column(nil), x.Left.Columns()...), x.Right.Columns()...)
			fmt.Fprintf(b, " condition=%s", Render(x.Residual, func(i int) string { return both[i].Name }))
		}
		if x.BuildLeft {
			b.WriteString(" build=left")
		}
	case *Sort:
		var ks []string
		for _, k := range x.Keys {
			s := Render(k.E, in(0))
			if k.Desc {
				s += " DESC"
			}
			if k.NullsFirst {
				s += " NULLS FIRST"
			}
			ks = append(ks, s)
		}
		fmt.Fprintf(b, "%sSort %s", pad, strings.Join(ks, ", "))
	case *Limit:
		fmt.Fprintf(b, "%sLimit %d offset %d", pad, x.Count, x.Offset)
	case *Distinct:
		fmt.Fprintf(b, "%sDistinct", pad)
	case *SetOp:
		all := ""
		if x.All {
			all = " all"
		}
		fmt.Fprintf(b, "%sSetOp %s%s", pad, x.Kind, all)
	case *Window:
		var fs []string
		for _, w := range x.Funcs {
			fs = append(fs, w.Func)
		}
		fmt.Fprintf(b, "%sWindow %s", pad, strings.Join(fs, ", "))
	case *Unnest:
		fmt.Fprintf(b, "%sUnnest %v", pad, x.Lists)
	case *Shared:
		fmt.Fprintf(b, "%sShared computed once, read %d times\n", pad, x.Refs)
		explain(b, x.Input, depth+1, ann)
		return
	case *RecursiveCTE:
		all := ""
		if x.All {
			all = " all"
		}
		fmt.Fprintf(b, "%sRecursive union%s until an iteration adds no row\n", pad, all)
		explain(b, x.Anchor, depth+1, ann)
		explain(b, x.Step, depth+1, ann)
		return
	case *WorkTable:
		fmt.Fprintf(b, "%sWorkTable %s (the rows the previous iteration added)", pad, x.Name)
	}
	if a, ok := ann[n]; ok {
		fmt.Fprintf(b, " {%s}", a)
	}
	b.WriteString("\n")
	inputs := n.Inputs()
	if x, ok := n.(*SetOp); ok {
		// A chain of UNIONs is shown as the one list it runs as: indenting each
		// branch one step deeper than the one before would make the text of n
		// branches grow as n².
		inputs = UnionInputs(x)
	}
	for _, c := range inputs {
		explain(b, c, depth+1, ann)
	}
}

// Render writes an expression with column names.
func Render(e Expr, name func(int) string) string {
	var b strings.Builder
	render(&b, e, name)
	return b.String()
}

// render writes e into b: one builder for the whole expression, so a chain of n
// calls is not copied once per level. With name, it is Render's text for people
// (column names, infix operators); without, the String form that tells every two
// expressions apart (column indexes, calls by name, each subquery by its plan).
func render(b *strings.Builder, e Expr, name func(int) string) {
	switch x := e.(type) {
	case *ColRef:
		if name == nil {
			b.WriteString(e.String())
			return
		}
		b.WriteString(name(x.Idx))
	case *Call:
		if name != nil && len(x.Args) == 2 && !isWord(x.Fn.Name) {
			b.WriteByte('(')
			render(b, x.Args[0], name)
			b.WriteString(" " + x.Fn.Name + " ")
			render(b, x.Args[1], name)
			b.WriteByte(')')
			return
		}
		b.WriteString(x.Fn.Name)
		b.WriteByte('(')
		for i, a := range x.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			render(b, a, name)
		}
		b.WriteByte(')')
	case *Cast:
		b.WriteString("CAST(")
		render(b, x.E, name)
		b.WriteString(" AS " + types.Name(x.To) + ")")
	case *InList:
		render(b, x.E, name)
		if x.Not {
			b.WriteString(" NOT IN (")
		} else {
			b.WriteString(" IN (")
		}
		for i, a := range x.List {
			if i > 0 {
				b.WriteString(", ")
			}
			render(b, a, name)
		}
		b.WriteByte(')')
	case *Case:
		b.WriteString("CASE")
		for _, w := range x.Whens {
			b.WriteString(" WHEN ")
			render(b, w.Cond, name)
			b.WriteString(" THEN ")
			render(b, w.Then, name)
		}
		b.WriteString(" ELSE ")
		render(b, x.Else, name)
		b.WriteString(" END")
	case *Subquery:
		if name == nil {
			b.WriteString(e.String())
			return
		}
		b.WriteString("(subquery)")
	default:
		b.WriteString(e.String())
	}
}

func isWord(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_') {
			return false
		}
	}
	return true
}
