package exec

import (
	"context"
	"strconv"
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
	// Each call and cast gets the number of its class of equal expressions, found
	// from its function and its arguments' numbers: a key of constant size per node
	// keeps this linear in the size of the expressions, where a key spelling out a
	// whole sub-tree would be quadratic in a long chain such as 1+1+…+1.
	var keys exprKeys
	count := map[int]int{}
	var note func(e plan.Expr)
	note = func(e plan.Expr) {
		switch x := e.(type) {
		case *plan.Call:
			count[keys.id(e)]++
			for _, a := range x.Args {
				note(a)
			}
		case *plan.Cast:
			count[keys.id(e)]++
			note(x.E)
		}
	}
	for _, e := range exprs {
		note(e)
	}
	l := &exprList{width: width}
	slots := map[int]int{}
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
		k := keys.id(e)
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

// exprKeys numbers expressions so that two expressions get one number when they
// compute the same values: the same function or cast over arguments of the same
// numbers, or leaves that print the same, with the same types.
type exprKeys struct {
	ids   map[string]int    // a node's key, made of its children's numbers → its number
	nodes map[plan.Expr]int // calls and casts already numbered
}

// id returns e's number. A node's key holds its children's numbers, not their
// text, so numbering a tree costs time linear in its size.
func (k *exprKeys) id(e plan.Expr) int {
	if k.ids == nil {
		k.ids, k.nodes = map[string]int{}, map[plan.Expr]int{}
	}
	_, isCall := e.(*plan.Call)
	_, isCast := e.(*plan.Cast)
	if isCall || isCast {
		if n, ok := k.nodes[e]; ok {
			return n
		}
	}
	var b strings.Builder
	switch x := e.(type) {
	case *plan.Call:
		b.WriteString(x.Fn.Name)
		b.WriteByte('(')
		for i, a := range x.Args {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(k.id(a)))
		}
		b.WriteByte(')')
	case *plan.Cast:
		b.WriteString("cast(")
		b.WriteString(strconv.Itoa(k.id(x.E)))
		b.WriteByte(')')
	default:
		// A column, a constant, or an expression such as CASE whose parts are not
		// shared: its text.
		b.WriteByte('=')
		b.WriteString(e.String())
	}
	b.WriteString("::")
	b.WriteString(types.Name(e.Type()))
	key := b.String()
	n, ok := k.ids[key]
	if !ok {
		n = len(k.ids)
		k.ids[key] = n
	}
	if isCall || isCast {
		k.nodes[e] = n
	}
	return n
}
