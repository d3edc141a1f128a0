package rules

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// ScanPredicates copies the conjuncts of a filter directly over a scan that have a
// storage form (column op literal, IN of literals, IS [NOT] NULL) into the scan's
// Filters, where they skip partitions and row groups. The filter stays: it remains
// the truth for the rows that are read.
func ScanPredicates(n plan.Node) plan.Node {
	if f, ok := n.(*plan.Filter); ok {
		if s, ok := f.Input.(*plan.Scan); ok {
			s.Filters = nil
			for _, c := range plan.Conjuncts(f.Cond) {
				if p, ok := predicate(s, c); ok {
					s.Filters = append(s.Filters, p)
				}
			}
			return f
		}
	}
	return mapInputs(n, ScanPredicates)
}

var flipped = map[string]string{"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

func predicate(s *plan.Scan, e plan.Expr) (source.Predicate, bool) {
	col := func(x plan.Expr) (string, bool) {
		c, ok := x.(*plan.ColRef)
		if !ok || !arrow.TypeEqual(types.Unwrap(c.T), types.Unwrap(s.Cols[c.Idx].Type)) || !types.IsOrderable(c.T) {
			return "", false
		}
		return s.Ref.Listing.Schema.Field(c.Idx).Name, true
	}
	lit := func(x plan.Expr) (types.Value, bool) {
		l, ok := x.(*plan.Literal)
		if !ok || l.V.Null {
			return types.Value{}, false
		}
		return l.V, true
	}
	switch x := e.(type) {
	case *plan.Call:
		name := x.Fn.Name
		if op, ok := flipped[name]; ok && len(x.Args) == 2 {
			if c, ok := col(x.Args[0]); ok {
				if v, ok := lit(x.Args[1]); ok {
					return source.Predicate{Column: c, Op: name, Values: []types.Value{v}}, true
				}
			}
			if c, ok := col(x.Args[1]); ok {
				if v, ok := lit(x.Args[0]); ok {
					return source.Predicate{Column: c, Op: op, Values: []types.Value{v}}, true
				}
			}
		}
		if (name == "is_null" || name == "is_not_null") && len(x.Args) == 1 {
			if c, ok := x.Args[0].(*plan.ColRef); ok {
				return source.Predicate{Column: s.Ref.Listing.Schema.Field(c.Idx).Name, Op: name}, true
			}
		}
	case *plan.InList:
		if x.Not {
			return source.Predicate{}, false
		}
		c, ok := col(x.E)
		if !ok {
			return source.Predicate{}, false
		}
		vals := make([]types.Value, 0, len(x.List))
		for _, it := range x.List {
			v, ok := lit(it)
			if !ok {
				return source.Predicate{}, false
			}
			vals = append(vals, v)
		}
		return source.Predicate{Column: c, Op: "in", Values: vals}, true
	}
	return source.Predicate{}, false
}
