//go:build cgo

package plan

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/types"
)

// namedWindows makes the WINDOW clause's definitions the ones OVER w and OVER (w …)
// name while a SELECT is bound; the returned function restores the enclosing
// SELECT's (a subquery does not see them: each SELECT sets its own).
func (b *binder) namedWindows(defs []*pg.Node) (func(), error) {
	saved := b.windows
	restore := func() { b.windows = saved }
	b.windows = map[string]*pg.WindowDef{}
	for _, d := range defs {
		w := d.GetWindowDef()
		if w == nil {
			continue
		}
		if _, dup := b.windows[w.Name]; dup {
			restore()
			return nil, errs.At(errs.Syntax, int(w.Location), "window %q is already defined", w.Name)
		}
		// A definition may refine an earlier one.
		if w.Refname != "" {
			r, err := b.refineWindow(w)
			if err != nil {
				restore()
				return nil, err
			}
			w = r
		}
		b.windows[w.Name] = w
	}
	return restore, nil
}

// resolveWindow returns the window an OVER clause stands for: itself, a named
// window (OVER w), or a named window refined (OVER (w ORDER BY …)).
func (b *binder) resolveWindow(w *pg.WindowDef) (*pg.WindowDef, error) {
	if w.Refname == "" && w.Name != "" {
		// OVER w
		d, ok := b.windows[w.Name]
		if !ok {
			return nil, errs.At(errs.Syntax, int(w.Location), "window %q does not exist", w.Name)
		}
		return d, nil
	}
	if w.Refname != "" {
		return b.refineWindow(w)
	}
	return w, nil
}

// refineWindow applies w to the named window it refers to, as DuckDB does: w may
// add PARTITION BY or ORDER BY only where the named window has none, and the named
// window may not have a frame.
func (b *binder) refineWindow(w *pg.WindowDef) (*pg.WindowDef, error) {
	ref, ok := b.windows[w.Refname]
	if !ok {
		return nil, errs.At(errs.Syntax, int(w.Location), "window %q does not exist", w.Refname)
	}
	if len(w.PartitionClause) > 0 && len(ref.PartitionClause) > 0 {
		return nil, errs.At(errs.Syntax, int(w.Location), "cannot override PARTITION BY clause of window %q", w.Refname)
	}
	if len(w.OrderClause) > 0 && len(ref.OrderClause) > 0 {
		return nil, errs.At(errs.Syntax, int(w.Location), "cannot override ORDER BY clause of window %q", w.Refname)
	}
	if ref.FrameOptions&frameNonDefault != 0 {
		return nil, errs.At(errs.Syntax, int(w.Location), "cannot copy window %q because it has a frame clause", w.Refname)
	}
	out := &pg.WindowDef{
		Name:            w.Name,
		PartitionClause: ref.PartitionClause,
		OrderClause:     ref.OrderClause,
		FrameOptions:    w.FrameOptions,
		StartOffset:     w.StartOffset,
		EndOffset:       w.EndOffset,
		Location:        w.Location,
	}
	if len(w.PartitionClause) > 0 {
		out.PartitionClause = w.PartitionClause
	}
	if len(w.OrderClause) > 0 {
		out.OrderClause = w.OrderClause
	}
	return out, nil
}

// windowArgs binds the arguments of a ranking or navigation function: its value
// (Arg) and its further arguments (Args), which take their defaults.
func (b *binder) windowArgs(fc *pg.FuncCall, ec *exprCtx, call *WindowCall) error {
	name, pos := call.Func, int(fc.Location)
	if fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 {
		return errs.At(errs.Analysis, pos, "%s is not an aggregate function", name)
	}
	if fc.AggFilter != nil {
		return errs.At(errs.Syntax, pos, "FILTER is not implemented for non-aggregate window functions")
	}
	lo, hi := 0, 0
	switch name {
	case "ntile":
		lo, hi = 1, 1
	case "lead", "lag":
		lo, hi = 1, 3
	case "first_value", "last_value":
		lo, hi = 1, 1
	case "nth_value":
		lo, hi = 2, 2
	}
	if len(fc.Args) < lo || len(fc.Args) > hi {
		switch {
		case hi == 0:
			return errs.At(errs.Analysis, pos, "%s takes no arguments", name)
		case lo == hi:
			return errs.At(errs.Analysis, pos, "%s takes %d argument(s)", name, lo)
		}
		return errs.At(errs.Analysis, pos, "%s takes %d to %d arguments", name, lo, hi)
	}
	args := make([]Expr, len(fc.Args))
	for i, a := range fc.Args {
		e, err := b.expr(a, ec)
		if err != nil {
			return err
		}
		if u, ok := e.(*untypedString); ok {
			e = &u.Literal
		}
		if e.Type().ID() == arrow.NULL {
			e = &Literal{V: types.NullOf(types.Int32)}
		}
		args[i] = e
	}
	// integer binds an argument that counts rows or buckets as BIGINT (a number or
	// a string is cast to it, as DuckDB does).
	integer := func(i int) (Expr, error) {
		t := types.Unwrap(args[i].Type())
		if !types.IsInteger(t) && !types.IsFloat(t) && !types.IsDecimal(t) && t.ID() != arrow.STRING {
			return nil, errs.At(errs.Analysis, location(fc.Args[i]), "argument %d of %s must be an integer, not %s", i+1, name, types.Name(args[i].Type()))
		}
		return castTo(args[i], types.Int64), nil
	}
	switch name {
	case "row_number", "rank", "dense_rank":
		call.T = types.Int64
	case "percent_rank", "cume_dist":
		call.T = types.Float64
	case "ntile":
		n, err := integer(0)
		if err != nil {
			return err
		}
		call.Args, call.T = []Expr{n}, types.Int64
	case "lead", "lag":
		call.Arg, call.T = args[0], args[0].Type()
		off := Expr(&Literal{V: types.IntValue(1)})
		if len(args) > 1 {
			var err error
			if off, err = integer(1); err != nil {
				return err
			}
		}
		call.Args = []Expr{off}
		if len(args) > 2 {
			call.Args = append(call.Args, castTo(args[2], call.T))
		}
	case "first_value", "last_value":
		call.Arg, call.T = args[0], args[0].Type()
	case "nth_value":
		n, err := integer(1)
		if err != nil {
			return err
		}
		call.Arg, call.T, call.Args = args[0], args[0].Type(), []Expr{n}
	}
	return nil
}

// rangeBounds binds a RANGE frame's offsets: the frame moves the one ORDER BY key
// by each offset, towards the start for PRECEDING and the end for FOLLOWING (which
// is down for an ascending key, up for a descending one). The key and the moved
// keys are cast to one type, that of the moved start (or end) key.
func (b *binder) rangeBounds(w *pg.WindowDef, f *Frame, order []SortKey) error {
	pos := int(w.Location)
	if len(order) != 1 {
		return errs.At(errs.Analysis, pos, "RANGE frames with an offset must have exactly one ORDER BY expression")
	}
	key := order[0]
	kt := types.Unwrap(key.E.Type())
	if !types.IsInteger(kt) && !types.IsFloat(kt) && !types.IsDecimal(kt) && kt.ID() != arrow.DATE32 && kt.ID() != arrow.TIMESTAMP {
		return errs.At(errs.Analysis, pos, "RANGE frames with an offset need a numeric, DATE or TIMESTAMP ORDER BY key, not %s", types.Name(kt))
	}
	move := func(off *pg.Node, b0 FrameBound) (Expr, error) {
		e, err := b.expr(off, &exprCtx{sc: newScope(nil), clause: "frame offset"})
		if err != nil {
			return nil, err
		}
		if u, ok := e.(*untypedString); ok {
			e = &u.Literal
		}
		lit, ok := b.fold(e).(*Literal)
		if !ok || lit.V.Null {
			return nil, errs.At(errs.Analysis, location(off), "a RANGE frame offset must be a constant")
		}
		if negative(lit.V) {
			return nil, errs.At(errs.Analysis, location(off), "a RANGE frame offset must not be negative")
		}
		op := "+"
		if (b0.Kind == Preceding) != key.Desc {
			op = "-"
		}
		return b.call(op, []Expr{key.E, lit}, location(off))
	}
	var t arrow.DataType
	if f.Start.Kind == Preceding || f.Start.Kind == Following {
		e, err := move(w.StartOffset, f.Start)
		if err != nil {
			return err
		}
		f.StartVal, t = e, e.Type()
	}
	if f.End.Kind == Preceding || f.End.Kind == Following {
		e, err := move(w.EndOffset, f.End)
		if err != nil {
			return err
		}
		if t == nil {
			t = e.Type()
		}
		f.EndVal = castTo(e, t)
	}
	f.Key = castTo(key.E, t)
	if f.StartVal != nil {
		f.StartVal = castTo(f.StartVal, t)
	}
	return nil
}

// negative reports whether a numeric or interval constant is below zero.
func negative(v types.Value) bool {
	dt := types.Unwrap(v.Type)
	switch {
	case types.IsSigned(dt):
		return v.I < 0
	case types.IsFloat(dt):
		return v.F < 0
	case types.IsDecimal(dt):
		return v.D.Sign() < 0
	case dt.ID() == arrow.INTERVAL_MONTH_DAY_NANO:
		return v.Iv.Months < 0 || v.Iv.Days < 0 || v.Iv.Nanoseconds < 0
	}
	return false
}

// nullTreatment takes the IGNORE NULLS written in fc's argument list, which only
// the navigation functions accept.
func (b *binder) nullTreatment(fc *pg.FuncCall, name string) (bool, error) {
	pos := int(fc.Location)
	if !b.ignoreNulls[pos] {
		return false, nil
	}
	delete(b.ignoreNulls, pos)
	switch name {
	case "lead", "lag", "first_value", "last_value", "nth_value":
		return true, nil
	}
	return false, errs.At(errs.Syntax, pos, "IGNORE NULLS is not supported for %s", name)
}

// unusedIgnoreNulls refuses an IGNORE NULLS written in a plain function call (one
// without OVER). Those of window functions no binding took (a WITH query nothing
// reads) pass.
func (b *binder) unusedIgnoreNulls(sel *pg.SelectStmt) error {
	if len(b.ignoreNulls) == 0 {
		return nil
	}
	var plain []int
	walkPG(&pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}}, func(n *pg.Node) bool {
		if fc := n.GetFuncCall(); fc != nil && fc.Over == nil && b.ignoreNulls[int(fc.Location)] {
			plain = append(plain, int(fc.Location))
		}
		return true
	})
	if len(plain) == 0 {
		return nil
	}
	return errs.At(errs.Syntax, slices.Min(plain), "IGNORE NULLS is only supported for window functions")
}
