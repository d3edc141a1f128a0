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
			s.Filters, s.Deferred = nil, nil
			for _, c := range plan.Conjuncts(f.Cond) {
				if p, ok := predicate(s, c); ok {
					s.Filters = append(s.Filters, p)
				} else if d, ok := deferredPredicate(s, c); ok {
					s.Deferred = append(s.Deferred, d)
				}
			}
			return f
		}
	}
	return mapInputs(n, ScanPredicates)
}

// deferredPredicate returns the storage form of a comparison of a column with an
// expression over no column that holds an uncorrelated scalar subquery
// (d_month_seq = (SELECT …), d_month_seq <= (SELECT …) + 11): its value is known when
// the statement runs, and the executor prunes with it then.
func deferredPredicate(s *plan.Scan, e plan.Expr) (plan.DeferredPredicate, bool) {
	x, ok := e.(*plan.Call)
	if !ok || len(x.Args) != 2 || pinned(e) {
		return plan.DeferredPredicate{}, false
	}
	op, ok := x.Fn.Name, false
	if _, ok = flipped[op]; !ok || op == "<>" {
		return plan.DeferredPredicate{}, false
	}
	c, v := x.Args[0], x.Args[1]
	if _, isCol := c.(*plan.ColRef); !isCol {
		c, v, op = x.Args[1], x.Args[0], flipped[op]
	}
	col, isCol := c.(*plan.ColRef)
	if !isCol || !arrow.TypeEqual(types.Unwrap(col.T), types.Unwrap(s.Cols[col.Idx].Type)) || !types.IsOrderable(col.T) ||
		!arrow.TypeEqual(types.Unwrap(v.Type()), types.Unwrap(col.T)) || len(columnsOf(v)) > 0 || !HasSubquery(v) {
		return plan.DeferredPredicate{}, false
	}
	return plan.DeferredPredicate{Column: s.Ref.Listing.Schema.Field(col.Idx).Name, Op: op, Value: v}, true
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
