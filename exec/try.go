package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// compileTry compiles TRY(e): e over the batch, and when that fails with an error
// of the data (a cast that does not parse, a value out of range), e once more on
// each row alone, a row that fails giving NULL. Errors that are not the data's —
// cancellation, memory, a bug — still fail the statement.
func (bd *builder) compileTry(x *plan.Call) (evaluator, error) {
	inner, err := bd.compile(x.Args[0])
	if err != nil {
		return nil, err
	}
	t := x.Fn.Result
	return func(ctx context.Context, b *vector.Batch) (arrow.Array, error) {
		b = b.Compact()
		out, err := inner(ctx, b)
		if err == nil || !tryCatches(err) {
			return out, err
		}
		parts := make([]arrow.Array, b.Rows)
		for i := range parts {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			one := (&vector.Batch{Cols: b.Cols, Rows: b.Rows, Sel: []int32{int32(i)}}).Compact()
			v, err := inner(ctx, one)
			switch {
			case err == nil:
				parts[i] = kernels.Decode(v)
			case tryCatches(err):
				parts[i] = kernels.ConstArray(types.NullOf(t), 1)
			default:
				return nil, err
			}
		}
		if len(parts) == 0 {
			return kernels.ConstArray(types.NullOf(t), 0), nil
		}
		all, err := array.Concatenate(parts, vector.Allocator)
		if err != nil {
			return nil, errs.New(errs.Internal, "cannot assemble TRY: %w", err)
		}
		return all, nil
	}, nil
}

// tryCatches reports whether TRY turns err into NULL: an error of the data, not of
// the statement's resources or of Lore.
func tryCatches(err error) bool { return errs.CodeOf(err) == errs.Analysis }
