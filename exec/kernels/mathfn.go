package kernels

import (
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// Numeric functions. DOUBLE functions run over []float64; integer and decimal
// variants keep their argument's type, as DuckDB does.

// mapFloat applies f to every row of a DOUBLE array; f may reject a value.
func mapFloat(x arrow.Array, f func(float64) (float64, error)) (arrow.Array, error) {
	a := x.(*array.Float64)
	vals := a.Float64Values()
	out := make([]float64, len(vals))
	vm, voff := validityOf(x)
	for i, v := range vals {
		if !isValid(vm, voff, i) {
			continue
		}
		r, err := f(v)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	valid, nulls := copyValidity(x)
	return fixedArray(types.Float64, out, valid, nulls), nil
}

func pure(f func(float64) float64) func(float64) (float64, error) {
	return func(v float64) (float64, error) { return f(v), nil }
}

func sqrtChecked(v float64) (float64, error) {
	if v < 0 {
		return 0, errs.New(errs.Analysis, "cannot take square root of a negative number")
	}
	return math.Sqrt(v), nil
}

func logChecked(f func(float64) float64) func(float64) (float64, error) {
	return func(v float64) (float64, error) {
		switch {
		case v == 0:
			return 0, errs.New(errs.Analysis, "cannot take logarithm of zero")
		case v < 0:
			return 0, errs.New(errs.Analysis, "cannot take logarithm of a negative number")
		}
		return f(v), nil
	}
}

// roundDigits rounds half away from zero at d decimal digits (d may be negative).
func roundDigits(v float64, d int64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	if d > 308 || d < -308 {
		if d > 0 {
			return v
		}
		return 0
	}
	p := math.Pow(10, float64(d))
	r := math.Round(v*p) / p
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return v
	}
	return r
}

func roundFloat2(args []arrow.Array, n int) (arrow.Array, error) {
	x, d := args[0].(*array.Float64).Float64Values(), i64(args[1]).Int64Values()
	out := make([]float64, n)
	for i, v := range x {
		out[i] = roundDigits(v, d[i])
	}
	valid, nulls := andValidity(n, args...)
	return fixedArray(types.Float64, out, valid, nulls), nil
}

// absInt is abs over a signed integer type; abs(minimum) overflows.
func absInt[T int8 | int16 | int32 | int64](x arrow.Array, vals []T) (arrow.Array, error) {
	out := make([]T, len(vals))
	vm, voff := validityOf(x)
	for i, v := range vals {
		if v < 0 {
			v = -v
			if v < 0 && isValid(vm, voff, i) {
				return nil, outOfRange("abs("+strconv.FormatInt(int64(vals[i]), 10)+")", x.DataType())
			}
		}
		out[i] = v
	}
	valid, nulls := copyValidity(x)
	return fixedArray(x.DataType(), out, valid, nulls), nil
}

func absKernel(args []arrow.Array, n int) (arrow.Array, error) {
	x := args[0]
	switch a := x.(type) {
	case *array.Int8:
		return absInt(x, a.Int8Values())
	case *array.Int16:
		return absInt(x, a.Int16Values())
	case *array.Int32:
		return absInt(x, a.Int32Values())
	case *array.Int64:
		return absInt(x, a.Int64Values())
	case *array.Uint8, *array.Uint16, *array.Uint32, *array.Uint64:
		return x, nil
	case *array.Float32:
		out := make([]float32, n)
		for i, v := range a.Float32Values() {
			out[i] = float32(math.Abs(float64(v)))
		}
		valid, nulls := copyValidity(x)
		return fixedArray(x.DataType(), out, valid, nulls), nil
	case *array.Float64:
		return mapFloat(x, pure(math.Abs))
	case *array.Decimal128:
		out := make([]decimal128.Num, n)
		for i, v := range a.Values() {
			out[i] = v.Abs()
		}
		valid, nulls := copyValidity(x)
		return decimalArray(x.DataType(), out, valid, nulls), nil
	}
	return nil, errs.New(errs.Analysis, "no function matches abs(%s)", types.Name(x.DataType()))
}

// decimalRound rounds (mode 'r'), floors ('f') or ceils ('c') a decimal to
// integral values, returning DECIMAL(p', 0).
func decimalRound(mode byte, res arrow.DataType) func(args []arrow.Array, n int) (arrow.Array, error) {
	return func(args []arrow.Array, n int) (arrow.Array, error) {
		x := args[0].(*array.Decimal128)
		scale := x.DataType().(*arrow.Decimal128Type).Scale
		out := make([]decimal128.Num, n)
		for i, v := range x.Values() {
			out[i] = decRoundToScale(v, scale, 0, mode)
		}
		valid, nulls := copyValidity(x)
		return decimalArray(res, out, valid, nulls), nil
	}
}

// decRoundToScale rounds a scale-s decimal at digits d (< s) and returns the
// value at scale d.
func decRoundToScale(v decimal128.Num, s, d int32, mode byte) decimal128.Num {
	k := s - d
	if k <= 0 {
		return v
	}
	if mode == 'r' {
		return decScaleDown(v, k)
	}
	q, r := v.Div(decimal128.GetScaleMultiplier(int(k)))
	// Div truncates toward zero; floor moves negatives down, ceil positives up.
	if r.Sign() != 0 {
		if mode == 'f' && v.Sign() < 0 {
			q = q.Sub(decimal128.FromI64(1))
		} else if mode == 'c' && v.Sign() > 0 {
			q = q.Add(decimal128.FromI64(1))
		}
	}
	return q
}

// decimalRoundDigits is round(DECIMAL(p,s), d): rounds at d digits, keeping the type.
func decimalRoundDigits(args []arrow.Array, n int) (arrow.Array, error) {
	x := args[0].(*array.Decimal128)
	d := i64(args[1]).Int64Values()
	dt := x.DataType().(*arrow.Decimal128Type)
	out := make([]decimal128.Num, n)
	for i, v := range x.Values() {
		digits := d[i]
		if digits >= int64(dt.Scale) {
			out[i] = v
			continue
		}
		// Compared this way round, a digits as small as -9223372036854775808 does
		// not overflow into a small count.
		if digits < int64(dt.Scale)-38 {
			out[i] = decimal128.Num{} // rounding at more digits than exist gives 0
			continue
		}
		keep := int32(digits)
		// Round to scale keep, then scale back up to the type's scale.
		r, ok := decScaleUp(decRoundToScale(v, dt.Scale, keep, 'r'), dt.Scale-keep)
		if !ok || !decFits(r, dt.Precision) {
			return nil, outOfRange("round("+types.FormatDecimal(v, dt.Scale)+", "+strconv.FormatInt(digits, 10)+")", dt)
		}
		out[i] = r
	}
	valid, nulls := andValidity(n, args...)
	return decimalArray(dt, out, valid, nulls), nil
}

func floatRound(mode byte) func(args []arrow.Array, n int) (arrow.Array, error) {
	f := map[byte]func(float64) float64{'r': math.Round, 'f': math.Floor, 'c': math.Ceil, 't': math.Trunc}[mode]
	return func(args []arrow.Array, n int) (arrow.Array, error) {
		switch a := args[0].(type) {
		case *array.Float32:
			out := make([]float32, n)
			for i, v := range a.Float32Values() {
				out[i] = float32(f(float64(v)))
			}
			valid, nulls := copyValidity(a)
			return fixedArray(a.DataType(), out, valid, nulls), nil
		}
		return mapFloat(args[0], pure(f))
	}
}

func powerKernel(args []arrow.Array, n int) (arrow.Array, error) {
	x, y := args[0].(*array.Float64).Float64Values(), args[1].(*array.Float64).Float64Values()
	out := make([]float64, n)
	for i, v := range x {
		out[i] = math.Pow(v, y[i])
	}
	valid, nulls := andValidity(n, args...)
	return fixedArray(types.Float64, out, valid, nulls), nil
}

// signKernel is sign(x) as TINYINT: -1, 0 or 1 (0 for NaN's sign bit aside).
func signKernel(args []arrow.Array, n int) (arrow.Array, error) {
	out := make([]int8, n)
	switch a := args[0].(type) {
	case *array.Int64:
		for i, v := range a.Int64Values() {
			out[i] = int8(cmpI64(v, 0))
		}
	case *array.Float64:
		for i, v := range a.Float64Values() {
			switch {
			case v > 0:
				out[i] = 1
			case v < 0:
				out[i] = -1
			}
		}
	case *array.Decimal128:
		for i, v := range a.Values() {
			out[i] = int8(v.Sign())
		}
	}
	valid, nulls := copyValidity(args[0])
	return fixedArray(types.Int8, out, valid, nulls), nil
}
