//go:build cgo

package plan

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/types"
)

// aggAliases maps the other names of the aggregates bound by bindMoreAggCall to
// the name of their state machine.
var aggAliases = map[string]string{
	"stddev": "stddev_samp", "variance": "var_samp", "array_agg": "list", "listagg": "string_agg",
	"group_concat": "string_agg", "quantile": "quantile_disc", "min_by": "arg_min", "max_by": "arg_max",
	"argmin": "arg_min", "argmax": "arg_max", "kahan_sum": "fsum", "sumkahan": "fsum", "arbitrary": "first",
	"wavg": "weighted_avg",
}

// moreAggregateNames are the aggregates bound by bindMoreAggCall, under their own
// names.
var moreAggregateNames = map[string]bool{
	"stddev_samp": true, "stddev_pop": true, "var_samp": true, "var_pop": true, "corr": true,
	"covar_samp": true, "covar_pop": true, "regr_slope": true, "regr_intercept": true, "regr_r2": true,
	"regr_count": true, "regr_avgx": true, "regr_avgy": true, "regr_sxx": true, "regr_syy": true,
	"regr_sxy": true, "median": true, "quantile_cont": true, "quantile_disc": true, "mode": true,
	"string_agg": true, "list": true, "first": true, "last": true, "any_value": true, "arg_min": true,
	"arg_max": true, "bool_and": true, "bool_or": true, "bit_and": true, "bit_or": true, "bit_xor": true,
	"count_if": true, "product": true, "fsum": true, "skewness": true, "kurtosis": true, "kurtosis_pop": true,
	"sem": true, "weighted_avg": true, "histogram": true,
}

// moreAggregate reports whether name is one of the aggregates bound by
// bindMoreAggCall.
func moreAggregate(name string) bool {
	return moreAggregateNames[name] || aggAliases[name] != "" || withinGroup[name] != ""
}

// withinGroup maps the ordered-set aggregates, written f(p) WITHIN GROUP (ORDER BY
// x), to the aggregate of x they stand for.
var withinGroup = map[string]string{"percentile_cont": "quantile_cont", "percentile_disc": "quantile_disc"}

// bindWithinGroup binds percentile_cont(p), percentile_disc(p) and mode() WITHIN
// GROUP (ORDER BY x) as DuckDB does: as quantile_cont(x, p), quantile_disc(x, p)
// and mode(x), the quantiles counted from the greatest value when x is DESC.
func (b *binder) bindWithinGroup(fc *pg.FuncCall, ec *exprCtx) (AggCall, error) {
	name := funcName(fc)
	pos := int(fc.Location)
	call := AggCall{Func: withinGroup[name]}
	switch {
	case name == "mode":
		call.Func = "mode"
		if len(fc.Args) != 0 {
			return AggCall{}, errs.At(errs.Analysis, pos, "mode() WITHIN GROUP takes no arguments")
		}
	case call.Func == "":
		return AggCall{}, errs.At(errs.Analysis, pos, "%s is not an ordered-set aggregate: WITHIN GROUP is not valid", name)
	case len(fc.Args) != 1:
		return AggCall{}, errs.At(errs.Analysis, pos, "%s takes one fraction (or ARRAY of fractions)", name)
	}
	if len(fc.AggOrder) != 1 || fc.AggDistinct || fc.AggStar {
		return AggCall{}, errs.At(errs.Analysis, pos, "%s WITHIN GROUP takes one ORDER BY key", name)
	}
	sb := fc.AggOrder[0].GetSortBy()
	arg, err := b.expr(sb.Node, ec)
	if err != nil {
		return AggCall{}, err
	}
	if call.Arg, err = b.aggArgument(call.Func, arg); err != nil {
		return AggCall{}, err
	}
	if call.Func != "mode" {
		qs, list, err := b.fractions(fc.Args[0])
		if err != nil {
			return AggCall{}, err
		}
		// Counted from the top when DESC; DuckDB 1.5 does not for a single fraction
		// of 0.
		call.FromTop = sb.SortbyDir == pg.SortByDir_SORTBY_DESC && !(len(qs) == 1 && qs[0] == 0)
		call.Quantiles, call.List = qs, list
	}
	if err := b.aggFilter(fc, ec, false, &call); err != nil {
		return AggCall{}, err
	}
	t, err := agg.ResultType(call.Spec())
	if err != nil {
		if e, ok := err.(*errs.Error); ok && e.Pos == errs.NoPosition {
			e.Pos = pos
		}
		return AggCall{}, err
	}
	call.T = t
	return call, nil
}

// bindMoreAggCall binds a call of one of the aggregates beyond COUNT, SUM, AVG, MIN,
// MAX and the approximate ones: its arguments are cast as its state machine reads
// them (DOUBLE for the statistical ones, VARCHAR for string_agg), and its constant
// parameters (string_agg's separator, the quantiles' fractions) go to the call.
func (b *binder) bindMoreAggCall(fc *pg.FuncCall, ec *exprCtx, window bool) (AggCall, error) {
	name := funcName(fc)
	pos := int(fc.Location)
	if a := aggAliases[name]; a != "" {
		name = a
	}
	call := AggCall{Func: name}
	if fc.AggStar {
		return AggCall{}, errs.At(errs.Analysis, pos, "%s(*) is not valid", funcName(fc))
	}
	if withinGroup[name] != "" {
		return AggCall{}, errs.At(errs.Analysis, pos, "%s needs WITHIN GROUP (ORDER BY …)", name)
	}
	want := 1
	switch {
	case agg.TwoArguments(name):
		want = 2
	case name == "quantile_cont" || name == "quantile_disc":
		want = 2
	}
	nargs := len(fc.Args)
	if name == "string_agg" && nargs == 2 {
		want = 2
	}
	if nargs != want {
		return AggCall{}, errs.At(errs.Analysis, pos, "%s takes %s", funcName(fc), argCount(want))
	}
	// The constant parameters.
	nullSep := false
	switch name {
	case "quantile_cont", "quantile_disc":
		qs, list, err := b.fractions(fc.Args[1])
		if err != nil {
			return AggCall{}, err
		}
		call.Quantiles, call.List = qs, list
		nargs = 1
	case "string_agg":
		call.Sep = ","
		if nargs == 2 {
			e, err := b.expr(fc.Args[1], &exprCtx{sc: newScope(nil), clause: "string_agg"})
			if err != nil {
				return AggCall{}, err
			}
			v, ok := constString(e)
			if l, isLit := e.(*Literal); isLit && l.V.Null {
				nullSep, ok = true, true
			}
			if !ok {
				return AggCall{}, errs.At(errs.Analysis, location(fc.Args[1]), "string_agg's separator must be a constant string")
			}
			call.Sep = v
			nargs = 1
		}
	}
	args := make([]Expr, nargs)
	for i := range args {
		e, err := b.expr(fc.Args[i], ec)
		if err != nil {
			return AggCall{}, err
		}
		if args[i], err = b.aggArgument(name, e); err != nil {
			if le, ok := err.(*errs.Error); ok && le.Pos == errs.NoPosition {
				le.Pos = location(fc.Args[i])
			}
			return AggCall{}, err
		}
	}
	call.Arg, call.Args = args[0], args[1:]
	if fc.AggDistinct {
		call.Distinct = true
	}
	if err := b.aggFilter(fc, ec, window, &call); err != nil {
		return AggCall{}, err
	}
	if nullSep {
		// A NULL separator makes every group's result NULL, as if no row came.
		call.Filter = &Literal{V: types.BoolValue(false)}
	}
	t, err := agg.ResultType(call.Spec())
	if err != nil {
		if e, ok := err.(*errs.Error); ok && e.Pos == errs.NoPosition {
			e.Pos = pos
		}
		return AggCall{}, err
	}
	call.T = t
	return call, nil
}

func argCount(n int) string {
	if n == 1 {
		return "exactly one argument"
	}
	return "two arguments"
}

// constString is the value of a constant string expression.
func constString(e Expr) (string, bool) {
	switch x := e.(type) {
	case *untypedString:
		return x.V.S, true
	case *Literal:
		if !x.V.Null && types.IsString(x.V.Type) {
			return x.V.S, true
		}
	}
	return "", false
}

// aggArgument casts the argument e of aggregate name to the type its state machine
// reads; a type the function does not take is left for agg.ResultType to refuse.
func (b *binder) aggArgument(name string, e Expr) (Expr, error) {
	if u, ok := e.(*untypedString); ok {
		e = &u.Literal
	}
	t := e.Type()
	switch name {
	case "stddev_samp", "stddev_pop", "var_samp", "var_pop", "corr", "covar_samp", "covar_pop",
		"regr_slope", "regr_intercept", "regr_r2", "regr_count", "regr_avgx", "regr_avgy",
		"regr_sxx", "regr_syy", "regr_sxy", "product", "fsum", "skewness", "kurtosis", "kurtosis_pop",
		"sem", "weighted_avg":
		if t.ID() == arrow.NULL || types.IsNumeric(t) {
			return b.fold(castTo(e, types.Float64)), nil
		}
	case "bool_and", "bool_or", "count_if":
		return b.boolean(e, name)
	case "string_agg":
		if !types.IsString(t) {
			return b.fold(castTo(e, types.String)), nil
		}
	}
	if t.ID() == arrow.NULL {
		return &Literal{V: types.NullOf(types.Int32)}, nil
	}
	return e, nil
}

// aggFilter binds the FILTER (WHERE …) of an aggregate call into call.Filter.
func (b *binder) aggFilter(fc *pg.FuncCall, ec *exprCtx, window bool, call *AggCall) error {
	if fc.AggFilter == nil {
		return nil
	}
	fe := *ec
	fe.clause = "FILTER"
	f, err := b.expr(fc.AggFilter, &fe)
	if err != nil {
		return err
	}
	if f, err = b.boolean(f, "FILTER"); err != nil {
		return err
	}
	call.Filter = f
	return nil
}

// moreKey is the part of an aggregate call's key for what bindMoreAggCall and
// bindOrderedAggCall bind.
func (c *AggCall) moreKey() string {
	if len(c.Args) == 0 && c.Sep == "" && !c.Distinct && len(c.Order) == 0 && !c.FromTop {
		return ""
	}
	k := fmt.Sprintf(" sep(%s) distinct(%v) top(%v)", types.QuoteString(c.Sep), c.Distinct, c.FromTop)
	for _, a := range c.Args {
		k += " arg(" + exprKey(a) + ")"
	}
	for _, o := range c.Order {
		k += fmt.Sprintf(" order(%s %v %v)", exprKey(o.E), o.Desc, o.NullsFirst)
	}
	return k
}

// bindOrderedAggCall binds an aggregate call with ORDER BY inside it: the call
// without it, then its keys, which under DISTINCT must be among the arguments, as
// in DuckDB. COUNT(*) does not depend on the order and keeps none.
func (b *binder) bindOrderedAggCall(fc *pg.FuncCall, ec *exprCtx) (AggCall, error) {
	pos := int(fc.Location)
	plain := &pg.FuncCall{Funcname: fc.Funcname, Args: fc.Args, AggFilter: fc.AggFilter, AggStar: fc.AggStar,
		Location: fc.Location}
	call, err := b.bindAggCall(plain, ec, false)
	if err != nil {
		return AggCall{}, err
	}
	if call.Func == "count_star" {
		if fc.AggDistinct {
			return AggCall{}, errs.At(errs.Analysis, pos, "count(DISTINCT *) is not valid")
		}
		return call, nil
	}
	for _, o := range fc.AggOrder {
		sb := o.GetSortBy()
		e, err := b.expr(sb.Node, ec)
		if err != nil {
			return AggCall{}, err
		}
		if u, ok := e.(*untypedString); ok {
			e = &u.Literal
		}
		call.Order = append(call.Order, sortKey(e, sb))
	}
	if fc.AggDistinct {
		call.Distinct = true
		for _, k := range call.Order {
			if !amongArgs(k.E, append([]Expr{call.Arg}, call.Args...)) {
				return AggCall{}, errs.At(errs.Analysis, location(fc.AggOrder[0]),
					"in an aggregate with DISTINCT, ORDER BY expressions must appear in the argument list")
			}
		}
	}
	if _, err := agg.ResultType(call.Spec()); err != nil {
		if e, ok := err.(*errs.Error); ok && e.Pos == errs.NoPosition {
			e.Pos = pos
		}
		return AggCall{}, err
	}
	return call, nil
}

// amongArgs reports whether e is one of args, or what one of them casts.
func amongArgs(e Expr, args []Expr) bool {
	for _, a := range args {
		if c, ok := a.(*Cast); ok && c.E.String() == e.String() {
			return true
		}
		if a.String() == e.String() {
			return true
		}
	}
	return false
}
