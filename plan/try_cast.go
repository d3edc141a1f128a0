//go:build cgo

package plan

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/types"
)

// tryCast binds TRY_CAST(arg AS to): a cast that gives NULL for a value that does not
// convert.
func (b *binder) tryCast(arg Expr, to arrow.DataType, pos int) (Expr, error) {
	if u, ok := arg.(*untypedString); ok {
		arg = &u.Literal
	}
	from := arg.Type()
	if sameType(from, to) {
		return arg, nil
	}
	if !kernels.CanCast(from, to) {
		// DuckDB's TRY_CAST between types that never convert (INTEGER to DATE) is NULL
		// on every row; nested types are still refused.
		if types.IsNested(from) || types.IsNested(to) {
			return nil, errs.At(errs.Analysis, pos, "cannot cast type %s to %s", types.Name(from), types.Name(to))
		}
		return &Literal{V: types.NullOf(to)}, nil
	}
	fn := &kernels.Function{Name: "try_cast", Args: []arrow.DataType{from}, Result: to,
		Eval: func(args []arrow.Array, n int) (arrow.Array, error) { return kernels.TryCast(args[0], to) }}
	return b.foldCall(&Call{Fn: fn, Args: []Expr{arg}}), nil
}
