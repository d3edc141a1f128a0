package kernels

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// ListAggregate is an aggregate function resolved for the elements of lists: Run
// folds element sel[k] of vals into group groups[k] (groups 0..n-1, one per row)
// and returns the n results, as a GROUP BY would.
type ListAggregate struct {
	Result arrow.DataType
	Run    func(vals arrow.Array, sel []int32, groups []uint32, n int) (arrow.Array, error)
}

// ResolveListAggregate finds the aggregate name (as SQL spells it, aliases
// included) over elements of type elem, with the constant extra arguments (the
// separator of string_agg). Package agg sets it: the aggregates live there and it
// imports this package.
var ResolveListAggregate func(name string, elem arrow.DataType, extra []*types.Value) (*ListAggregate, error)

// listAggregateNames are the aggregates DuckDB offers as list_<name>(list, …) that
// Lore has. list_approx_count_distinct is left out: Lore's sketch is not DuckDB's,
// so its estimates differ (list_aggregate(l, 'approx_count_distinct') runs it).
var listAggregateNames = []string{
	"sum", "avg", "min", "max", "count", "mode", "median", "first", "last", "product",
	"stddev_samp", "stddev_pop", "var_samp", "var_pop", "bool_and", "bool_or", "string_agg",
	"any_value", "bit_and", "bit_or", "bit_xor", "histogram", "skewness", "kurtosis", "kurtosis_pop",
	"sem",
}

// bindListAggregate binds list_aggregate(list, name, extra…) (named false) and
// list_<name>(list, extra…) (named true, the aggregate taken from the function's
// name): the aggregate run over each list's elements, NULL for a NULL list.
func bindListAggregate(fixed string) binder {
	return func(c *call) (*Function, error) {
		first := 1
		name := fixed
		if name == "" {
			if len(c.args) < 2 {
				return nil, c.mismatch()
			}
			s, ok := c.constString(1)
			if !ok {
				return nil, errs.New(errs.Analysis, "%s: the aggregate's name must be a constant string", c.name)
			}
			name, first = strings.ToLower(s), 2
		}
		if len(c.args) < 1 || !listish(c.args[0]) {
			return nil, c.mismatch()
		}
		for _, a := range c.args[1:] {
			if !stringish(a) {
				return nil, c.mismatch()
			}
		}
		if ResolveListAggregate == nil {
			return nil, errs.New(errs.Internal, "%s: no aggregates are linked in", c.name)
		}
		la, err := ResolveListAggregate(name, elemOf(c.args[0]), c.consts[first:])
		if err != nil {
			return nil, err
		}
		args := append([]arrow.DataType{c.args[0]}, repeatType(types.String, len(c.args)-1)...)
		return newFunction(c, args, la.Result, func(in []arrow.Array, n int) (arrow.Array, error) {
			x := listsOf(in[0])
			if x.l == nil {
				return ConstArray(types.NullOf(la.Result), n), nil
			}
			var sel []int32
			var groups []uint32
			rows := make([]int32, n)
			for i := 0; i < n; i++ {
				if x.null(i) {
					rows[i] = -1
					continue
				}
				rows[i] = int32(i)
				s, e := x.bounds(i)
				for j := s; j < e; j++ {
					sel = append(sel, int32(j))
					groups = append(groups, uint32(i))
				}
			}
			out, err := la.Run(x.vals, sel, groups, n)
			if err != nil {
				return nil, err
			}
			if x.l.NullN() == 0 {
				return out, nil
			}
			return vector.Take(out, rows), nil
		}, false), nil
	}
}

// addListAggregates enters list_aggregate and the list_<name> functions.
func addListAggregates() {
	for _, n := range []string{"list_aggregate", "list_aggr", "array_aggregate", "array_aggr", "aggregate"} {
		registry[n] = bindListAggregate("")
	}
	for _, a := range listAggregateNames {
		registry["list_"+a] = bindListAggregate(a)
	}
}
