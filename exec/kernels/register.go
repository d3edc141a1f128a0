package kernels

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Register adds a scalar function name (any case) taking arguments of the types args
// (an argument of another type is coerced where CommonType allows) and returning
// result, computed by eval over arrays of n rows. It is for tests that need a
// function of their own, one that fails in a chosen way. Call it before statements
// run: the registry is read without a lock.
func Register(name string, args []arrow.DataType, result arrow.DataType, eval func(args []arrow.Array, n int) (arrow.Array, error)) {
	registry[strings.ToLower(name)] = func(c *call) (*Function, error) {
		if len(c.args) != len(args) {
			return nil, c.mismatch()
		}
		for i, a := range c.args {
			if ct, ok := commonType(a, args[i]); !ok || !arrow.TypeEqual(ct, canonical(args[i])) {
				return nil, c.mismatch()
			}
		}
		return newFunction(c, args, result, eval, false), nil
	}
}
