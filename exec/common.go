package exec

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// exprList is a list of expressions evaluated on the same batches (a projection's
// outputs, an aggregate's keys and arguments), compiled so that a sub-expression
// they have in common is computed once per batch: the common ones are evaluated
// first, each appended to the batch as a column that the expressions after it
// read instead of computing it again.
//
// Only sub-expressions reached through calls and casts are shared: those are
// evaluated on every row wherever they appear. A CASE branch may be evaluated for
// the rows its condition selects only, so nothing under a CASE is taken out of it.
type exprList struct {
	width  int         // the input columns kept; common[j] is column width+j
	common []evaluator // in order: one may read those before it
	exprs  []evaluator
}

// compileList compiles exprs.
func (bd *builder) compileList(exprs []plan.Expr) (*exprList, error) {
	// The common columns go after every column the expressions read.
	width := 0
	for _, e := range exprs {
		plan.WalkExpr(e, func(x plan.Expr) {
			if c, ok := x.(*plan.ColRef); ok {
				width = max(width, c.Idx+1)
			}
		})
	}
	count := map[string]int{}
	var note func(e plan.Expr)
	note = func(e plan.Expr) {
		switch x := e.(type) {
		case *plan.Call:
			count[exprKey(e)]++
			for _, a := range x.Args {
				note(a)
			}
		case *plan.Cast:
			count[exprKey(e)]++
			note(x.E)
		}
	}
	for _, e := range exprs {
		note(e)
	}
	l := &exprList{width: width}
	slots := map[string]int{}
	var defs []plan.Expr
	// rewrite replaces each common sub-expression of e by a reference to its column,
	// defining the column on first sight (after those it reads).
	var rewrite func(e plan.Expr) plan.Expr
	rewrite = func(e plan.Expr) plan.Expr {
		var out plan.Expr
		switch x := e.(type) {
		case *plan.Call:
			args := make([]plan.Expr, len(x.Args))
			for i, a := range x.Args {
				args[i] = rewrite(a)
			}
			out = &plan.Call{Fn: x.Fn, Args: args}
		case *plan.Cast:
			out = &plan.Cast{E: rewrite(x.E), To: x.To}
		default:
			return e
		}
		k := exprKey(e)
		if count[k] < 2 {
			return out
		}
		slot, ok := slots[k]
		if !ok {
			slot = len(defs)
			slots[k] = slot
			defs = append(defs, out)
		}
		return &plan.ColRef{Idx: width + slot, T: e.Type(), Name: "common"}
	}
	rewritten := make([]plan.Expr, len(exprs))
	for i, e := range exprs {
		rewritten[i] = rewrite(e)
	}
	for _, d := range defs {
		ev, err := bd.compile(d)
		if err != nil {
			return nil, err
		}
		l.common = append(l.common, ev)
	}
	for _, e := range rewritten {
		ev, err := bd.compile(e)
		if err != nil {
			return nil, err
		}
		l.exprs = append(l.exprs, ev)
	}
	return l, nil
}

// extend returns b with the common sub-expressions appended as columns (b itself
// when there are none).
func (l *exprList) extend(ctx context.Context, b *vector.Batch) (*vector.Batch, error) {
	if len(l.common) == 0 {
		return b, nil
	}
	cols := make([]arrow.Array, l.width, l.width+len(l.common))
	copy(cols, b.Cols)
	eb := &vector.Batch{Cols: cols, Rows: b.Rows, Sel: b.Sel}
	for _, ev := range l.common {
		c, err := ev(ctx, eb)
		if err != nil {
			return nil, err
		}
		eb.Cols = append(eb.Cols, c)
	}
	return eb, nil
}

// exprKey identifies an expression up to the types of its parts: two expressions
// with one key compute the same values.
func exprKey(e plan.Expr) string {
	var b strings.Builder
	var walk func(e plan.Expr)
	walk = func(e plan.Expr) {
		switch x := e.(type) {
		case *plan.Call:
			b.WriteString(x.Fn.Name)
			b.WriteByte('(')
			for i, a := range x.Args {
				if i > 0 {
					b.WriteByte(',')
				}
				walk(a)
			}
			b.WriteByte(')')
		case *plan.Cast:
			b.WriteString("cast(")
			walk(x.E)
			b.WriteString(")")
		default:
			b.WriteString(e.String())
		}
		b.WriteString("::")
		b.WriteString(types.Name(e.Type()))
	}
	walk(e)
	return b.String()
}
