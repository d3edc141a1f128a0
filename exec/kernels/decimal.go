package kernels

import (
	"math"
	"math/big"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// pow10 holds 10^0 … 10^18, the powers that fit in an int64.
var pow10 = func() [19]int64 {
	var p [19]int64
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// fitsInt64 reports whether a 128-bit decimal value is an int64, and returns it.
func fitsInt64(n decimal128.Num) (int64, bool) {
	lo := int64(n.LowBits())
	if (lo < 0 && n.HighBits() == -1) || (lo >= 0 && n.HighBits() == 0) {
		return lo, true
	}
	return 0, false
}

// decFits reports whether n has at most prec digits.
func decFits(n decimal128.Num, prec int32) bool { return n.FitsInPrecision(prec) }

// mulInt64 multiplies two int64 into a 128-bit value (never overflows): the
// unsigned product of their bits, with the high word corrected for each negative
// factor.
func mulInt64(a, b int64) decimal128.Num {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	hi -= uint64(a>>63)&uint64(b) + uint64(b>>63)&uint64(a)
	return decimal128.New(int64(hi), lo)
}

// addInt64 and subInt64 add and subtract two int64 into a 128-bit value (never
// overflow).
func addInt64(a, b int64) decimal128.Num {
	lo, c := bits.Add64(uint64(a), uint64(b), 0)
	return decimal128.New(a>>63+b>>63+int64(c), lo)
}

func subInt64(a, b int64) decimal128.Num {
	lo, c := bits.Sub64(uint64(a), uint64(b), 0)
	return decimal128.New(a>>63-b>>63-int64(c), lo)
}

// allInt64 reports whether every value in a is an int64 (its high word only repeats
// the sign of its low word).
func allInt64(a []decimal128.Num) bool {
	var wide int64
	for _, v := range a {
		wide |= v.HighBits() ^ int64(v.LowBits())>>63
	}
	return wide == 0
}

func absU(a int64) uint64 {
	if a < 0 {
		return uint64(-a)
	}
	return uint64(a)
}

// decMul multiplies two decimals exactly; ok is false when the product does not fit
// in 128 bits.
func decMul(a, b decimal128.Num) (decimal128.Num, bool) {
	if x, ok := fitsInt64(a); ok {
		if y, ok := fitsInt64(b); ok {
			return mulInt64(x, y), true
		}
	}
	p := new(big.Int).Mul(a.BigInt(), b.BigInt())
	if p.BitLen() > 127 {
		return decimal128.Num{}, false
	}
	return decimal128.FromBigInt(p), true
}

// decScaleUp multiplies by 10^k; ok is false on 128-bit overflow.
func decScaleUp(n decimal128.Num, k int32) (decimal128.Num, bool) {
	if k == 0 {
		return n, true
	}
	if k <= 18 {
		if x, ok := fitsInt64(n); ok {
			return mulInt64(x, pow10[k]), true
		}
	}
	return decMul(n, decimal128.GetScaleMultiplier(int(k)))
}

// decScaleDown divides by 10^k rounding half away from zero.
func decScaleDown(n decimal128.Num, k int32) decimal128.Num {
	if k == 0 {
		return n
	}
	if k <= 18 {
		if x, ok := fitsInt64(n); ok {
			return decimal128.FromI64(roundDivInt64(x, pow10[k]))
		}
	}
	return n.ReduceScaleBy(k, true)
}

// roundDivInt64 divides a by a positive d, rounding half away from zero.
func roundDivInt64(a, d int64) int64 {
	q, r := a/d, a%d
	if r < 0 {
		r = -r
	}
	if 2*r >= d {
		if a < 0 {
			q--
		} else {
			q++
		}
	}
	return q
}

// decRescale changes a decimal's scale from s to t, rounding half away from zero
// when the scale shrinks; ok is false on overflow of 128 bits.
func decRescale(n decimal128.Num, s, t int32) (decimal128.Num, bool) {
	if t >= s {
		return decScaleUp(n, t-s)
	}
	return decScaleDown(n, s-t), true
}

// decToFloat converts a scaled decimal to a float64.
func decToFloat(n decimal128.Num, scale int32) float64 {
	if x, ok := fitsInt64(n); ok && scale <= 18 {
		if x > -(1<<53) && x < 1<<53 {
			return float64(x) / float64(pow10[scale])
		}
	}
	f, _ := n.ToBigFloat(scale).Float64()
	return f
}

// floatToDec converts a float to a decimal of scale s rounding half away from zero;
// ok is false for NaN, infinities and values beyond 128 bits.
func floatToDec(f float64, s int32) (decimal128.Num, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return decimal128.Num{}, false
	}
	if s <= 18 {
		v := f * float64(pow10[s])
		if math.Abs(v) < 9e18 {
			return decimal128.FromI64(int64(math.Round(v))), true
		}
	}
	bf := new(big.Float).SetPrec(200).SetFloat64(f)
	bf.Mul(bf, new(big.Float).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s)), nil)))
	// Round half away from zero by adding ±0.5 and truncating.
	half := big.NewFloat(0.5)
	if f < 0 {
		half.Neg(half)
	}
	bf.Add(bf, half)
	i, _ := bf.Int(nil)
	if i.BitLen() > 127 {
		return decimal128.Num{}, false
	}
	return decimal128.FromBigInt(i), true
}

// decToInt converts a scaled decimal to an integer rounding half away from zero;
// ok is false when the result is not an int64.
func decToInt(n decimal128.Num, scale int32) (int64, bool) {
	r := decScaleDown(n, scale)
	return fitsInt64(r)
}
