package kernels

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/loredb/lore/types"
)

// bindTypeof binds typeof(x): the SQL name of x's type, the same on every row.
func bindTypeof(c *call) (*Function, error) {
	if len(c.args) != 1 {
		return nil, c.mismatch()
	}
	name := types.StringValue(types.Name(c.args[0]))
	return newFunction(c, []arrow.DataType{c.args[0]}, types.String, func(_ []arrow.Array, n int) (arrow.Array, error) {
		return ConstArray(name, n), nil
	}, false), nil
}
