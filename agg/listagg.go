package agg

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/types"
)

// The aggregates over the elements of each list (list_aggregate, list_sum, …) are
// the accumulators of this package driven with one group per list: one Update of
// every element, each sent to its row's group, and one Final.

func init() { kernels.ResolveListAggregate = resolveListAggregate }

// listAggAliases are the other names list_aggregate accepts for an aggregate.
var listAggAliases = map[string]string{
	"stddev": "stddev_samp", "variance": "var_samp", "array_agg": "list", "listagg": "string_agg",
	"group_concat": "string_agg", "arbitrary": "first", "kahan_sum": "fsum", "sumkahan": "fsum",
	"mean": "avg",
}

// resolveListAggregate resolves the aggregate name over elements of type elem, the
// elements cast as the aggregate's binder casts its argument.
func resolveListAggregate(name string, elem arrow.DataType, extra []*types.Value) (*kernels.ListAggregate, error) {
	if a, ok := listAggAliases[name]; ok {
		name = a
	}
	if TwoArguments(name) || name == "count_star" || name == "quantile_cont" || name == "quantile_disc" ||
		name == "approx_percentile" {
		return nil, errs.New(errs.Analysis, "list_aggregate does not support %s", name)
	}
	s := Spec{Name: name, ArgType: elem}
	switch {
	case momentFuncs[name] || shapeFuncs[name] || name == "product" || name == "fsum":
		if types.IsNumeric(elem) || elem.ID() == arrow.NULL {
			s.ArgType = types.Float64
		}
	case name == "bool_and" || name == "bool_or" || name == "count_if":
		if elem.ID() == arrow.NULL {
			s.ArgType = types.Boolean
		}
	case name == "string_agg":
		if !types.IsString(elem) && kernels.CanCast(elem, types.String) {
			s.ArgType = types.String
		}
		s.Sep = ","
		if len(extra) > 0 && extra[0] != nil && !extra[0].Null {
			s.Sep = extra[0].S
		}
	}
	if len(extra) > 0 && name != "string_agg" {
		return nil, errs.New(errs.Analysis, "list_aggregate: %s takes no further arguments", name)
	}
	if s.ArgType.ID() == arrow.NULL {
		s.ArgType = types.Int32
	}
	result, err := ResultType(s)
	if err != nil {
		return nil, err
	}
	if _, err := New(s); err != nil {
		return nil, err
	}
	return &kernels.ListAggregate{Result: result, Run: func(vals arrow.Array, sel []int32, groups []uint32, n int) (arrow.Array, error) {
		acc, err := New(s)
		if err != nil {
			return nil, err
		}
		acc.Resize(n)
		if len(sel) > 0 {
			if !arrow.TypeEqual(vals.DataType(), s.ArgType) {
				if vals.DataType().ID() == arrow.NULL {
					vals = kernels.ConstArray(types.NullOf(s.ArgType), vals.Len())
				} else if vals, err = kernels.Cast(vals, s.ArgType); err != nil {
					return nil, err
				}
			}
			if err := acc.Update(vals, sel, groups); err != nil {
				return nil, err
			}
		}
		return acc.Final()
	}}, nil
}
