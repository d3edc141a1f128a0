package agg

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/types"
)

// The aggregates of this file take their argument as the binder casts it: DOUBLE
// for the statistical ones (variance, covariance, regression, product, fsum),
// VARCHAR for string_agg.
var (
	momentFuncs = map[string]bool{"var_samp": true, "var_pop": true, "stddev_samp": true, "stddev_pop": true, "sem": true}
	comoment    = map[string]bool{
		"corr": true, "covar_samp": true, "covar_pop": true, "regr_slope": true, "regr_intercept": true,
		"regr_r2": true, "regr_count": true, "regr_avgx": true, "regr_avgy": true, "regr_sxx": true,
		"regr_syy": true, "regr_sxy": true,
	}
)

// TwoArguments reports whether the aggregate name takes two arguments.
func TwoArguments(name string) bool {
	return comoment[name] || name == "arg_min" || name == "arg_max" || name == "weighted_avg"
}

// valueType is a type whose values the row-keeping aggregates can hold: a nested
// value is held as a row of its own.
func valueType(dt arrow.DataType) bool {
	return minMaxType(dt) || dt.ID() == arrow.INTERVAL_MONTH_DAY_NANO || dt.ID() == arrow.FIXED_SIZE_BINARY ||
		types.IsNested(dt)
}

// moreResultType is ResultType of the aggregates of this file; ok is false for a
// name it does not know.
func moreResultType(s Spec, arg arrow.DataType) (dt arrow.DataType, ok bool, err error) {
	if t, ok, err := shapeResultType(s, arg); ok {
		return t, ok, err
	}
	numeric := types.IsNumeric(arg)
	name := s.Name
	switch {
	case momentFuncs[name] || name == "product" || name == "fsum":
		if numeric {
			return types.Float64, true, nil
		}
	case comoment[name]:
		if len(s.ArgTypes) != 1 {
			return nil, true, errs.New(errs.Analysis, "%s takes two arguments", name)
		}
		if !numeric || !types.IsNumeric(types.Unwrap(s.ArgTypes[0])) {
			return nil, true, errs.New(errs.Analysis, "%s is not supported", s)
		}
		if name == "regr_count" {
			return types.Uint32, true, nil
		}
		return types.Float64, true, nil
	case name == "bool_and" || name == "bool_or":
		if arg.ID() == arrow.BOOL {
			return types.Boolean, true, nil
		}
	case name == "count_if":
		if arg.ID() == arrow.BOOL {
			return types.Int64, true, nil
		}
	case name == "bit_and" || name == "bit_or" || name == "bit_xor":
		if types.IsInteger(arg) {
			return arg, true, nil
		}
	case name == "first" || name == "last" || name == "any_value":
		if valueType(arg) {
			return arg, true, nil
		}
	case name == "arg_min" || name == "arg_max":
		if len(s.ArgTypes) != 1 {
			return nil, true, errs.New(errs.Analysis, "%s takes two arguments", name)
		}
		if by := types.Unwrap(s.ArgTypes[0]); valueType(arg) && (minMaxType(by) || kernels.NestedOrderable(by)) {
			return arg, true, nil
		}
		return nil, true, errs.New(errs.Analysis, "%s is not supported", s)
	case name == "list":
		if valueType(arg) {
			return arrow.ListOf(arg), true, nil
		}
	case name == "string_agg":
		if types.IsString(arg) {
			return types.String, true, nil
		}
	case name == "mode":
		if minMaxType(arg) || kernels.NestedOrderable(arg) {
			return arg, true, nil
		}
	case name == "histogram":
		if minMaxType(arg) && kernels.ValidKeyType(arg) {
			return kernels.MapOf(arg, types.Uint64), true, nil
		}
	case name == "quantile_disc":
		if minMaxType(arg) {
			return listIf(s.List, arg), true, nil
		}
	case name == "quantile_cont" || name == "median":
		var t arrow.DataType
		switch {
		case types.IsInteger(arg) || types.IsFloat(arg):
			t = types.Float64
		case types.IsDecimal(arg) || arg.ID() == arrow.TIMESTAMP:
			t = arg
		case arg.ID() == arrow.DATE32:
			t = types.Timestamp
		case name == "median" && minMaxType(arg):
			// A median of values that cannot be interpolated is the lower middle
			// one, as in DuckDB.
			t = arg
		default:
			return nil, true, unsupported(s)
		}
		return listIf(s.List, t), true, nil
	default:
		return nil, false, nil
	}
	return nil, true, unsupported(s)
}

func listIf(list bool, t arrow.DataType) arrow.DataType {
	if list {
		return arrow.ListOf(t)
	}
	return t
}

// newMore is New for the aggregates of this file; nil for a name it does not know.
func newMore(s Spec, arg, result arrow.DataType) Accumulator {
	switch name := s.Name; {
	case momentFuncs[name]:
		return &momentAcc{spec: s}
	case comoment[name]:
		return &comomentAcc{spec: s}
	case shapeFuncs[name]:
		return &shapeAcc{spec: s}
	case name == "weighted_avg":
		return &weightedAvgAcc{spec: s}
	case name == "product" || name == "fsum":
		return &floatFoldAcc{spec: s}
	case name == "bool_and" || name == "bool_or" || name == "count_if":
		return &boolAcc{spec: s}
	case name == "bit_and" || name == "bit_or" || name == "bit_xor":
		return &bitAcc{spec: s, t: arg}
	case name == "first" || name == "last" || name == "any_value" || name == "arg_min" || name == "arg_max":
		return &pickAcc{spec: s, t: arg}
	case name == "histogram":
		return newHistogram(s, arg)
	case name == "list" || name == "string_agg" || name == "mode" || name == "quantile_disc" ||
		name == "quantile_cont" || name == "median":
		return newCollect(s, result)
	}
	return nil
}
