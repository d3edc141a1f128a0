package rules

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
)

// UnwrapCasts rewrites a comparison of a decimal column widened by a cast with a
// literal (CAST(price AS DECIMAL(12,2)) >= 100.00, as the binder types price BETWEEN
// 100 AND 150 for a DECIMAL(7,2) price) into the comparison of the column itself with
// the literal in the column's type, when the literal has that scale and fits its
// precision: the two are equal for every row, and the second casts no row and has a
// storage form, so the scan prunes with it. An IN list of such literals is
// rewritten alike. Filters and join conditions are rewritten, in place.
func UnwrapCasts(n plan.Node) plan.Node {
	switch x := n.(type) {
	case *plan.Filter:
		x.Cond = unwrapCasts(x.Cond)
	case *plan.Join:
		if x.Residual != nil {
			x.Residual = unwrapCasts(x.Residual)
		}
	}
	return mapInputs(n, UnwrapCasts)
}

func unwrapCasts(e plan.Expr) plan.Expr {
	out, _ := plan.MapExpr(e, func(x plan.Expr) (plan.Expr, error) {
		switch c := x.(type) {
		case *plan.Call:
			if _, ok := flipped[c.Fn.Name]; !ok || len(c.Args) != 2 {
				return x, nil
			}
			for k := range 2 {
				inner, ok := widenedDecimal(c.Args[k])
				if !ok {
					continue
				}
				lit, ok := narrowed(c.Args[1-k], inner.Type())
				if !ok {
					continue
				}
				args := []plan.Expr{inner, lit}
				if k == 1 {
					args = []plan.Expr{lit, inner}
				}
				fn, err := kernels.Resolve(c.Fn.Name, []arrow.DataType{args[0].Type(), args[1].Type()})
				if err != nil {
					return x, nil
				}
				return &plan.Call{Fn: fn, Args: args}, nil
			}
		case *plan.InList:
			inner, ok := widenedDecimal(c.E)
			if !ok {
				return x, nil
			}
			list := make([]plan.Expr, len(c.List))
			for i, it := range c.List {
				if list[i], ok = narrowed(it, inner.Type()); !ok {
					return x, nil
				}
			}
			return &plan.InList{E: inner, List: list, Not: c.Not}, nil
		}
		return x, nil
	})
	return out
}

// widenedDecimal returns the expression under e when e casts a decimal to a decimal
// of the same scale and no less precision.
func widenedDecimal(e plan.Expr) (plan.Expr, bool) {
	c, ok := e.(*plan.Cast)
	if !ok {
		return nil, false
	}
	fp, fs, ok1 := types.DecimalParams(c.E.Type())
	tp, ts, ok2 := types.DecimalParams(c.To)
	if !ok1 || !ok2 || fs != ts || fp > tp {
		return nil, false
	}
	return c.E, true
}

// narrowed returns literal e as a value of decimal type dt, when e is a non-NULL
// decimal literal of dt's scale whose digits fit dt's precision.
func narrowed(e plan.Expr, dt arrow.DataType) (plan.Expr, bool) {
	l, ok := e.(*plan.Literal)
	if !ok || l.V.Null {
		return nil, false
	}
	_, fs, ok1 := types.DecimalParams(l.V.Type)
	tp, ts, ok2 := types.DecimalParams(dt)
	if !ok1 || !ok2 || fs != ts {
		return nil, false
	}
	if !l.V.D.FitsInPrecision(tp) {
		return nil, false
	}
	v := l.V
	v.Type = dt
	return &plan.Literal{V: v}, true
}
