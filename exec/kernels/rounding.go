package kernels

import (
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/loredb/lore/types"
)

// bindDecimalRoundConst binds round or trunc (mode 'r' or 't') of a DECIMAL(p,s) at
// a constant number of digits d with DuckDB's result types: DECIMAL(p,s) unchanged
// when d >= s, DECIMAL(p,d) when 0 <= d < s, DECIMAL(p,0) when d < 0. It returns nil
// when d is not a constant.
func bindDecimalRoundConst(c *call, t *arrow.Decimal128Type, mode byte) *Function {
	if len(c.consts) < 2 || c.consts[1] == nil || c.consts[1].Null {
		return nil
	}
	d := c.consts[1].I
	if types.IsUnsigned(c.consts[1].Type) {
		d = int64(min(c.consts[1].U, math.MaxInt64))
	}
	args := []arrow.DataType{t, types.Int64}
	switch {
	case d >= int64(t.Scale):
		return newFunction(c, args, t, identity, true)
	case d >= 0:
		res := &arrow.Decimal128Type{Precision: t.Precision, Scale: int32(d)}
		return newFunction(c, args, res, decimalRoundAt(t, res, d, mode), true)
	}
	res := &arrow.Decimal128Type{Precision: t.Precision, Scale: 0}
	return newFunction(c, args, res, decimalRoundAt(t, res, d, mode), true)
}

// decimalRoundAt rounds or truncates a decimal of type from at d digits (d < the
// scale of from) into type to, whose scale is max(d, 0).
func decimalRoundAt(from, to *arrow.Decimal128Type, d int64, mode byte) kernel {
	return func(args []arrow.Array, n int) (arrow.Array, error) {
		x := args[0].(*array.Decimal128)
		out := make([]decimal128.Num, n)
		vm, voff := validityOf(x)
		for i, v := range x.Values() {
			if d < int64(from.Scale)-38 {
				continue // rounding at more digits than exist gives 0
			}
			r := decRoundToScale(v, from.Scale, int32(d), mode)
			if d < 0 {
				var ok bool
				if r, ok = decScaleUp(r, int32(-d)); !ok || !decFits(r, to.Precision) {
					if isValid(vm, voff, i) {
						return nil, outOfRange(c2name(mode)+"("+types.FormatDecimal(v, from.Scale)+", "+strconv.FormatInt(d, 10)+")", to)
					}
					r = decimal128.Num{}
				}
			}
			out[i] = r
		}
		valid, nulls := copyValidity(x)
		return decimalArray(to, out, valid, nulls), nil
	}
}

func c2name(mode byte) string {
	if mode == 't' {
		return "trunc"
	}
	return "round"
}

// intTruncDigits is trunc(integer, d): unchanged for d >= 0, else truncated toward
// zero to a multiple of 10^-d.
func intTruncDigits(in []arrow.Array, n int) (arrow.Array, error) {
	x, d := i64(in[0]).Int64Values(), i64(in[1]).Int64Values()
	out := make([]int64, n)
	for i, v := range x {
		switch {
		case d[i] >= 0:
			out[i] = v
		case d[i] < -18:
			out[i] = 0
		default:
			p := pow10[-d[i]]
			out[i] = v / p * p
		}
	}
	valid, nulls := andValidity(n, in...)
	return fixedArray(types.Int64, out, valid, nulls), nil
}

// truncFloat2 is trunc(DOUBLE, d): truncated toward zero at d decimal digits.
func truncFloat2(args []arrow.Array, n int) (arrow.Array, error) {
	x, d := args[0].(*array.Float64).Float64Values(), i64(args[1]).Int64Values()
	out := make([]float64, n)
	for i, v := range x {
		out[i] = scaledAt(v, d[i], math.Trunc)
	}
	valid, nulls := andValidity(n, args...)
	return fixedArray(types.Float64, out, valid, nulls), nil
}

// scaledAt applies f (an integral rounding) to v at d decimal digits.
func scaledAt(v float64, d int64, f func(float64) float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || d > 308 {
		return v
	}
	if d < -308 {
		return 0
	}
	p := math.Pow(10, float64(d))
	r := f(v*p) / p
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return v
	}
	return r
}

// bindRoundEven binds round_even(x, d), rounding half to even at d digits: FLOAT
// stays FLOAT, every other number is computed as a DOUBLE, as in DuckDB.
func bindRoundEven(c *call) (*Function, error) {
	if len(c.args) != 2 || !numericish(c.args[0]) || !intish(c.args[1]) {
		return nil, c.mismatch()
	}
	if c.args[0].ID() == arrow.FLOAT32 {
		return newFunction(c, []arrow.DataType{types.Float32, types.Int64}, types.Float32, func(args []arrow.Array, n int) (arrow.Array, error) {
			x, d := args[0].(*array.Float32).Float32Values(), i64(args[1]).Int64Values()
			out := make([]float32, n)
			for i, v := range x {
				out[i] = float32(scaledAt(float64(v), d[i], math.RoundToEven))
			}
			valid, nulls := andValidity(n, args...)
			return fixedArray(types.Float32, out, valid, nulls), nil
		}, true), nil
	}
	return newFunction(c, []arrow.DataType{types.Float64, types.Int64}, types.Float64, func(args []arrow.Array, n int) (arrow.Array, error) {
		x, d := args[0].(*array.Float64).Float64Values(), i64(args[1]).Int64Values()
		out := make([]float64, n)
		for i, v := range x {
			out[i] = scaledAt(v, d[i], math.RoundToEven)
		}
		valid, nulls := andValidity(n, args...)
		return fixedArray(types.Float64, out, valid, nulls), nil
	}, true), nil
}

// evenKernel rounds away from zero to the nearest even integer.
func evenKernel(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	r := math.Ceil(math.Abs(v))
	if math.Mod(r, 2) != 0 {
		r++
	}
	return math.Copysign(r, v)
}

// keepType runs k, which computes in BIGINT or DOUBLE, and casts its result back to
// t, the argument's type, which DuckDB's round and trunc keep (an integer rounded
// past its type's range is an error).
func keepType(t arrow.DataType, k kernel) kernel {
	return func(args []arrow.Array, n int) (arrow.Array, error) {
		out, err := k(args, n)
		if err != nil || arrow.TypeEqual(out.DataType(), t) {
			return out, err
		}
		return Cast(out, t)
	}
}
