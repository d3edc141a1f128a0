package kernels

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// Decimals of up to 18 digits are 64-bit arrays (types.Decimal). Functions are
// resolved against the 128-bit types (canonical widens them), so every kernel that
// computes in 128 bits serves them: Eval widens a 64-bit argument to its kernel's
// type, and a result of up to 18 digits comes back narrowed to 64 bits. The kernels
// that matter for speed (arithmetic, comparison, casts, hashing) read and write the
// 64-bit arrays themselves.

// WidenDecimal returns a 64-bit decimal array (or a nested array holding them) as
// the 128-bit array of the same type parameters and values; any other array is
// returned as it is.
func WidenDecimal(arr arrow.Array) arrow.Array { return vector.WideArray(arr) }

// narrowDecimal returns a 128-bit decimal array as a 64-bit array of type to. A
// valid value that needs more than 64 bits is an error (the caller's precision
// says it cannot happen).
func narrowDecimal(arr arrow.Array, to *arrow.Decimal64Type) (arrow.Array, error) {
	a, ok := arr.(*array.Decimal128)
	if !ok {
		return nil, errs.New(errs.Internal, "BUG: narrowing %s to %s", arr.DataType(), to)
	}
	out, v, ok := vector.NarrowDecimal(a, to)
	if !ok {
		return nil, errs.New(errs.Internal, "BUG: DECIMAL value %s does not fit %s", v.ToString(to.Scale), types.Name(to))
	}
	return out, nil
}

// castDecimal64 casts from or to a 64-bit decimal type through the 128-bit type of
// the same parameters.
func castDecimal64(arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	wide, err := Cast(WidenDecimal(arr), types.Wide(to))
	if err != nil {
		return nil, err
	}
	if t, ok := to.(*arrow.Decimal64Type); ok {
		return narrowDecimal(wide, t)
	}
	return wide, nil
}

// narrowResult makes f, resolved against 128-bit decimal types, declare the 64-bit
// types of its arguments and result of at most 18 digits: Eval widens the
// arguments its kernel computes with in 128 bits and narrows its result.
func narrowResult(f *Function) *Function {
	// The kernel's closure may share the slice of f.Args: change a copy. The
	// arguments are declared in the types values are stored in; Eval widens them.
	f.Args = append([]arrow.DataType(nil), f.Args...)
	for i, a := range f.Args {
		f.Args[i] = types.Narrow(a)
	}
	to := types.Narrow(f.Result)
	if to == f.Result {
		return f
	}
	f.Result = to
	narrow := func(out arrow.Array, err error) (arrow.Array, error) {
		if err != nil || arrow.TypeEqual(types.Unwrap(out.DataType()), to) {
			return out, err
		}
		return Cast(out, to)
	}
	if eval := f.Eval; eval != nil {
		f.Eval = func(in []arrow.Array, n int) (arrow.Array, error) { return narrow(eval(in, n)) }
	}
	if sized := f.EvalSized; sized != nil {
		f.EvalSized = func(in []arrow.Array, n int, reserve func(int64) error) (arrow.Array, error) {
			return narrow(sized(in, n, reserve))
		}
	}
	return f
}

// decimalInt64s returns the values of a decimal array of precision p as int64s, and
// whether they all are: a 64-bit array's own values, or a 128-bit array's low words
// when its precision or this batch's values allow (else nil, false).
func decimalInt64s(arr arrow.Array, p int32, s *Scratch) ([]int64, bool) {
	switch a := arr.(type) {
	case *array.Decimal64:
		return int64sOf(a), true
	case *array.Decimal128:
		vals := a.Values()
		if p > 18 && !allInt64(vals) {
			return nil, false
		}
		out := scratchValues[int64](s, len(vals))
		for i, v := range vals {
			out[i] = int64(v.LowBits())
		}
		return out, true
	}
	return nil, false
}

// int64sOf is the values of a 64-bit decimal array as int64s, without a copy.
func int64sOf(a *array.Decimal64) []int64 {
	vals := a.Values()
	if len(vals) == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&vals[0])), len(vals))
}

// decimalAt is value i of a decimal array of either width.
func decimalAt(arr arrow.Array, i int) decimal128.Num {
	switch a := arr.(type) {
	case *array.Decimal64:
		return decimal128.FromI64(int64(a.Value(i)))
	case *array.Decimal128:
		return a.Value(i)
	}
	panic("BUG: decimalAt on " + arr.DataType().String())
}
