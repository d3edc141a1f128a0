package kernels

import (
	"math"
	"math/big"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// More numeric functions, after DuckDB's: floating-point classification,
// trigonometry, gamma and factorial, logarithms to a base, and the bitwise operators
// on integers.

func undefinedOutside(name string, lo, hi float64, f func(float64) float64) func(float64) (float64, error) {
	return func(v float64) (float64, error) {
		if v < lo || v > hi {
			return 0, errs.New(errs.Analysis, "%s is undefined outside [%g,%g]", name, lo, hi)
		}
		return f(v), nil
	}
}

func gammaChecked(v float64) (float64, error) {
	if v == 0 {
		return 0, errs.New(errs.Analysis, "cannot take gamma of zero")
	}
	return math.Gamma(v), nil
}

func lgammaChecked(v float64) (float64, error) {
	if v == 0 {
		return 0, errs.New(errs.Analysis, "cannot take log gamma of zero")
	}
	r, _ := math.Lgamma(v)
	return r, nil
}

func cot(v float64) float64 { return 1 / math.Tan(v) }

// bindLog is log(x), the base-10 logarithm, or log(b, x), the logarithm of x to base b.
func bindLog(c *call) (*Function, error) {
	if len(c.args) == 1 {
		return bindDouble1(logChecked(math.Log10))(c)
	}
	return bindSig([]argClass{clsDouble, clsDouble}, types.Float64, func(args []arrow.Array, n int) (arrow.Array, error) {
		b, x := args[0].(*array.Float64).Float64Values(), args[1].(*array.Float64).Float64Values()
		out := make([]float64, n)
		valid, nulls := andValidity(n, args...)
		for i := range out {
			if !isValid(valid, 0, i) {
				continue
			}
			switch {
			case b[i] == 0 || x[i] == 0:
				return nil, errs.New(errs.Analysis, "cannot take logarithm of zero")
			case b[i] < 0 || x[i] < 0:
				return nil, errs.New(errs.Analysis, "cannot take logarithm of a negative number")
			case b[i] == 1:
				return nil, errs.New(errs.Analysis, "division by zero in based logarithm")
			}
			out[i] = math.Log10(x[i]) / math.Log10(b[i])
		}
		return fixedArray(types.Float64, out, valid, nulls), nil
	})(c)
}

// bindPi is pi(), a DOUBLE.
func bindPi(c *call) (*Function, error) {
	if len(c.args) != 0 {
		return nil, c.mismatch()
	}
	return newFunction(c, nil, types.Float64, func(_ []arrow.Array, n int) (arrow.Array, error) {
		return ConstArray(types.FloatValue(math.Pi), n), nil
	}, false), nil
}

// bindFloatTest binds isnan, isinf and isfinite: a test of a float; integers and
// decimals are always finite numbers.
func bindFloatTest(test func(float64) bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 1 || !numericish(c.args[0]) {
			return nil, c.mismatch()
		}
		return newFunction(c, []arrow.DataType{types.Float64}, types.Boolean, func(args []arrow.Array, n int) (arrow.Array, error) {
			out := make([]bool, n)
			for i, v := range args[0].(*array.Float64).Float64Values() {
				out[i] = test(v)
			}
			valid, nulls := copyValidity(args[0])
			return boolArray(packBools(out), n, valid, nulls), nil
		}, true), nil
	}
}

func isNaN(v float64) bool    { return math.IsNaN(v) }
func isInf(v float64) bool    { return math.IsInf(v, 0) }
func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// factorialType is the type of factorial's result: DuckDB's is a HUGEINT, which Lore
// has not; DECIMAL(38,0) holds every factorial up to 33!.
var factorialType = &arrow.Decimal128Type{Precision: 38, Scale: 0}

// bindFactorial is factorial(n) for an integer n: an error below 0 and past 33!.
func bindFactorial(c *call) (*Function, error) {
	return bindSig([]argClass{clsInt}, factorialType, func(args []arrow.Array, n int) (arrow.Array, error) {
		x := args[0].(*array.Int64).Int64Values()
		out := make([]decimal128.Num, n)
		valid, nulls := copyValidity(args[0])
		for i, v := range x {
			if !isValid(valid, 0, i) {
				continue
			}
			if v < 0 {
				return nil, errs.New(errs.Analysis, "factorial of a negative number is undefined")
			}
			if v > 33 {
				return nil, errs.New(errs.Analysis, "out of range: factorial(%d) does not fit in %s", v, types.Name(factorialType))
			}
			f := big.NewInt(1)
			for k := int64(2); k <= v; k++ {
				f.Mul(f, big.NewInt(k))
			}
			out[i] = decimal128.FromBigInt(f)
		}
		return decimalArray(factorialType, out, valid, nulls), nil
	})(c)
}

// Bitwise operators. Both sides take their common integer type, which is the
// result's; the work is done in 64 bits and checked against that type's width.

type bitOp byte

const (
	bitAnd bitOp = iota
	bitOr
	bitXor
	bitShl
	bitShr
)

func bindBitwise(op bitOp) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 2 || !intish(c.args[0]) || !intish(c.args[1]) {
			return nil, c.mismatch()
		}
		a, b := c.args[0], c.args[1]
		if isNullType(a) {
			a = b
		}
		if isNullType(b) {
			b = a
		}
		if isNullType(a) {
			a, b = types.Int32, types.Int32
		}
		ct := commonInteger(a, b)
		if !types.IsInteger(ct) {
			return nil, c.mismatch() // UBIGINT with a signed type
		}
		width := uint64(intWidth(ct) * 8)
		if types.IsUnsigned(ct) {
			return newFunction(c, []arrow.DataType{types.Uint64, types.Uint64}, ct, keepType(ct, func(args []arrow.Array, n int) (arrow.Array, error) {
				x, y := args[0].(*array.Uint64).Uint64Values(), args[1].(*array.Uint64).Uint64Values()
				out := make([]uint64, n)
				valid, nulls := andValidity(n, args...)
				limit := uint64(math.MaxUint64) >> (64 - width)
				for i := range out {
					if !isValid(valid, 0, i) {
						continue
					}
					r, err := bitsUnsigned(op, x[i], y[i], width, limit)
					if err != nil {
						return nil, err
					}
					out[i] = r
				}
				return fixedArray(types.Uint64, out, valid, nulls), nil
			}), true), nil
		}
		return newFunction(c, []arrow.DataType{types.Int64, types.Int64}, ct, keepType(ct, func(args []arrow.Array, n int) (arrow.Array, error) {
			x, y := args[0].(*array.Int64).Int64Values(), args[1].(*array.Int64).Int64Values()
			out := make([]int64, n)
			valid, nulls := andValidity(n, args...)
			limit := int64(math.MaxInt64 >> (64 - width))
			for i := range out {
				if !isValid(valid, 0, i) {
					continue
				}
				r, err := bitsSigned(op, x[i], y[i], width, limit)
				if err != nil {
					return nil, err
				}
				out[i] = r
			}
			return fixedArray(types.Int64, out, valid, nulls), nil
		}), true), nil
	}
}

func bitsSigned(op bitOp, x, y int64, width uint64, limit int64) (int64, error) {
	switch op {
	case bitAnd:
		return x & y, nil
	case bitOr:
		return x | y, nil
	case bitXor:
		return x ^ y, nil
	case bitShl:
		switch {
		case y < 0:
			return 0, errs.New(errs.Analysis, "cannot left-shift by negative number %d", y)
		case uint64(y) >= width:
			return 0, errs.New(errs.Analysis, "left-shift value %d is out of range", y)
		case x < 0:
			return 0, errs.New(errs.Analysis, "cannot left-shift negative number %d", x)
		case x > limit>>y:
			return 0, errs.New(errs.Analysis, "overflow in left shift (%d << %d)", x, y)
		}
		return x << y, nil
	}
	switch {
	case y < 0:
		return 0, errs.New(errs.Analysis, "cannot right-shift by negative number %d", y)
	case uint64(y) >= width:
		return 0, nil
	}
	return x >> y, nil
}

func bitsUnsigned(op bitOp, x, y uint64, width, limit uint64) (uint64, error) {
	switch op {
	case bitAnd:
		return x & y, nil
	case bitOr:
		return x | y, nil
	case bitXor:
		return x ^ y, nil
	case bitShl:
		switch {
		case y >= width:
			return 0, errs.New(errs.Analysis, "left-shift value %d is out of range", y)
		case x > limit>>y:
			return 0, errs.New(errs.Analysis, "overflow in left shift (%d << %d)", x, y)
		}
		return x << y, nil
	}
	if y >= width {
		return 0, nil
	}
	return x >> y, nil
}

// bindBitNot is ~x on an integer, of x's type.
func bindBitNot(c *call) (*Function, error) {
	if len(c.args) != 1 || !intish(c.args[0]) {
		return nil, c.mismatch()
	}
	t := c.args[0]
	if isNullType(t) {
		t = types.Int32
	}
	if types.IsUnsigned(t) {
		mask := uint64(math.MaxUint64) >> (64 - intWidth(t)*8)
		return newFunction(c, []arrow.DataType{types.Uint64}, t, keepType(t, func(args []arrow.Array, n int) (arrow.Array, error) {
			out := make([]uint64, n)
			for i, v := range args[0].(*array.Uint64).Uint64Values() {
				out[i] = ^v & mask
			}
			valid, nulls := copyValidity(args[0])
			return fixedArray(types.Uint64, out, valid, nulls), nil
		}), true), nil
	}
	return newFunction(c, []arrow.DataType{types.Int64}, t, keepType(t, func(args []arrow.Array, n int) (arrow.Array, error) {
		out := make([]int64, n)
		for i, v := range args[0].(*array.Int64).Int64Values() {
			out[i] = ^v
		}
		valid, nulls := copyValidity(args[0])
		return fixedArray(types.Int64, out, valid, nulls), nil
	}), true), nil
}

// bindBitCount is bit_count(x): the number of bits set in x's two's complement form
// at x's width, a TINYINT.
func bindBitCount(c *call) (*Function, error) {
	if len(c.args) != 1 || !intish(c.args[0]) {
		return nil, c.mismatch()
	}
	t := c.args[0]
	if isNullType(t) {
		t = types.Int32
	}
	mask := uint64(math.MaxUint64) >> (64 - intWidth(t)*8)
	src := types.Int64
	if types.IsUnsigned(t) {
		src = types.Uint64
	}
	return newFunction(c, []arrow.DataType{src}, types.Int8, func(args []arrow.Array, n int) (arrow.Array, error) {
		out := make([]int8, n)
		switch a := args[0].(type) {
		case *array.Int64:
			for i, v := range a.Int64Values() {
				out[i] = int8(bits.OnesCount64(uint64(v) & mask))
			}
		case *array.Uint64:
			for i, v := range a.Uint64Values() {
				out[i] = int8(bits.OnesCount64(v & mask))
			}
		}
		valid, nulls := copyValidity(args[0])
		return fixedArray(types.Int8, out, valid, nulls), nil
	}, true), nil
}

func atan2Kernel(args []arrow.Array, n int) (arrow.Array, error) {
	y, x := args[0].(*array.Float64).Float64Values(), args[1].(*array.Float64).Float64Values()
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Atan2(y[i], x[i])
	}
	valid, nulls := andValidity(n, args...)
	return fixedArray(types.Float64, out, valid, nulls), nil
}
