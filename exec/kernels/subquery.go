package kernels

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// SingleRowFunc is the function a decorrelated scalar subquery's value passes
// through: single_row(n, v) is v, or fails when n, the number of rows the subquery
// gave for the outer row, is more than one.
const SingleRowFunc = "subquery_single_row"

// MultipleRowsMessage is the failure of a scalar subquery that returns more than
// one row, worded as DuckDB words it.
const MultipleRowsMessage = "More than one row returned by a subquery used as an expression - scalar subqueries can only return a single row."

// The function table is filled by functions.go's init, which runs first (files
// initialize in name order).
func init() {
	registry[SingleRowFunc] = bindSingleRow
}

func bindSingleRow(c *call) (*Function, error) {
	if len(c.args) != 2 || !types.IsInteger(c.args[0]) {
		return nil, c.mismatch()
	}
	t := c.args[1]
	return newFunction(c, []arrow.DataType{types.Int64, t}, t, func(in []arrow.Array, n int) (arrow.Array, error) {
		counts := in[0].(*array.Int64)
		for i := 0; i < n; i++ {
			if counts.IsValid(i) && counts.Value(i) > 1 {
				return nil, errs.New(errs.Analysis, MultipleRowsMessage)
			}
		}
		in[1].Retain()
		return in[1], nil
	}, false), nil
}
