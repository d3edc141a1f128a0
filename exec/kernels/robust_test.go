package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/loredb/lore/types"
)

// Every registered signature below runs on empty input, on all-NULL input and on
// a dictionary-encoded string argument without panicking, and returns the
// declared type with the input's length.
func TestFunctionsOnEdgeInputs(t *testing.T) {
	S, I, F, D, TS, IV, B := types.String, types.Int64, types.Float64, types.Date, types.Timestamp, types.Interval, types.Boolean
	sigs := map[string][]arrow.DataType{
		"+": {I, I}, "-": {D, D}, "*": {F, F}, "/": {I, I}, "//": {I, I}, "%": {dec(9, 2), dec(9, 2)}, "neg": {I},
		"=": {S, S}, "<": {TS, D}, "is_distinct_from": {I, I}, "is_not_distinct_from": {S, S},
		"and": {B, B}, "or": {B, B}, "not": {B}, "is_null": {S}, "is_not_null": {I},
		"like": {S, S}, "not_like": {S, S}, "ilike": {S, S}, "not_ilike": {S, S}, "regexp_matches": {S, S},
		"||": {S, S}, "concat": {S, I, S}, "lower": {S}, "upper": {S}, "length": {S}, "reverse": {S},
		"substr": {S, I, I}, "substring": {S, I}, "trim": {S}, "ltrim": {S, S}, "rtrim": {S},
		"replace": {S, S, S}, "starts_with": {S, S}, "contains": {S, S}, "strpos": {S, S},
		"left": {S, I}, "right": {S, I}, "lpad": {S, I, S}, "rpad": {S, I, S}, "split_part": {S, S, I},
		"abs": {F}, "round": {dec(9, 2)}, "floor": {F}, "ceil": {I}, "sqrt": {F}, "power": {F, F},
		"ln": {F}, "log10": {F}, "exp": {F}, "sign": {I}, "mod": {I, I}, "greatest": {I, F}, "least": {S, S},
		"coalesce": {S, S}, "nullif": {I, I}, "date_trunc": {S, TS}, "date_part": {S, D}, "extract": {S, IV},
		"year": {D}, "month": {TS}, "epoch": {TS}, "date_diff": {S, D, D}, "make_date": {I, I, I},
	}
	for name, sig := range sigs {
		f, err := Resolve(name, sig)
		if err != nil {
			t.Errorf("Resolve(%s, %v): %v", name, sig, err)
			continue
		}
		for _, n := range []int{0, 3} {
			args := make([]arrow.Array, len(sig))
			for i, dt := range sig {
				args[i] = ConstArray(types.NullOf(dt), n)
			}
			out, err := f.Eval(args, n)
			if err != nil {
				t.Errorf("%s on %d NULL rows: %v", name, n, err)
				continue
			}
			if out.Len() != n || !arrow.TypeEqual(types.Unwrap(out.DataType()), f.Result) {
				t.Errorf("%s on %d NULL rows: %d rows of %s, want %s", name, n, out.Len(), out.DataType(), types.Name(f.Result))
			}
		}
		// The first string argument as a dictionary holding NULL and a value.
		for i, dt := range sig {
			if dt.ID() != arrow.STRING {
				continue
			}
			args := make([]arrow.Array, len(sig))
			for j, odt := range sig {
				args[j] = ConstArray(sample(odt), 4)
			}
			args[i] = dict(t, "2024-01-01", nil, "x", "2024-01-01")
			if name == "date_trunc" || name == "date_part" || name == "extract" || name == "date_diff" {
				args[i] = dict(t, "year", nil, "month", "year")
			}
			out, err := f.Eval(args, 4)
			if err != nil {
				t.Errorf("%s with a dictionary argument %d: %v", name, i, err)
				break
			}
			plain := append([]arrow.Array(nil), args...)
			plain[i] = Decode(args[i])
			want, err := f.Eval(plain, 4)
			if err != nil || joined(out) != joined(want) {
				t.Errorf("%s: dictionary %s, plain %s (%v)", name, joined(out), joined(want), err)
			}
			break
		}
	}
}

// sample is a non-NULL value of each type used above.
func sample(dt arrow.DataType) types.Value {
	switch dt.ID() {
	case arrow.STRING:
		return types.StringValue("%")
	case arrow.INT64:
		return types.IntValue(2)
	case arrow.FLOAT64:
		return types.FloatValue(2)
	case arrow.DATE32:
		return types.DateValue(19000)
	case arrow.TIMESTAMP:
		return types.Value{Type: dt, I: 1_700_000_000_000_000}
	case arrow.BOOL:
		return types.BoolValue(true)
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return types.Value{Type: dt, Iv: arrow.MonthDayNanoInterval{Months: 14}}
	case arrow.DECIMAL128:
		return types.Value{Type: dt, D: mustDec(nil, "1.50", 9, 2)}
	}
	return types.NullOf(dt)
}

// Integer arithmetic agrees with math/big on random operands near the limits:
// the same value when it fits in BIGINT, an error when it does not.
func TestInt64ArithmeticAgainstBig(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pick := func() int64 {
		switch r.IntN(4) {
		case 0:
			return r.Int64N(1000) - 500
		case 1:
			return math.MaxInt64 - r.Int64N(1000)
		case 2:
			return math.MinInt64 + r.Int64N(1000)
		}
		return int64(r.Uint64())
	}
	ops := map[string]func(a, b *big.Int) *big.Int{
		"+": func(a, b *big.Int) *big.Int { return new(big.Int).Add(a, b) },
		"-": func(a, b *big.Int) *big.Int { return new(big.Int).Sub(a, b) },
		"*": func(a, b *big.Int) *big.Int { return new(big.Int).Mul(a, b) },
		"//": func(a, b *big.Int) *big.Int {
			if b.Sign() == 0 {
				return nil
			}
			return new(big.Int).Quo(a, b)
		},
		"%": func(a, b *big.Int) *big.Int {
			if b.Sign() == 0 {
				return nil
			}
			return new(big.Int).Rem(a, b)
		},
	}
	minI, maxI := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	for op, ref := range ops {
		f, _ := Resolve(op, []arrow.DataType{types.Int64, types.Int64})
		for k := 0; k < 3000; k++ {
			a, b := pick(), pick()
			if k%50 == 0 {
				b = 0
			}
			out, err := f.Eval([]arrow.Array{mk(t, types.Int64, a), mk(t, types.Int64, b)}, 1)
			want := ref(big.NewInt(a), big.NewInt(b))
			switch {
			case want == nil:
				if err != nil || !out.IsNull(0) {
					t.Fatalf("%d %s %d: want NULL, got %v %v", a, op, b, joined(out), err)
				}
			case want.Cmp(minI) < 0 || want.Cmp(maxI) > 0:
				if err == nil {
					t.Fatalf("%d %s %d = %s, want out of range error", a, op, b, joined(out))
				}
			default:
				if err != nil || out.(*array.Int64).Value(0) != want.Int64() {
					t.Fatalf("%d %s %d = %v (%v), want %s", a, op, b, joined(out), err, want)
				}
			}
		}
	}
}

// Decimal + - * agree with math/big at 38 digits.
func TestDecimalArithmeticAgainstBig(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	digits := func(k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		if r.IntN(2) == 0 {
			return "-" + string(b)
		}
		return string(b)
	}
	ops := map[string]func(a, b *big.Int) *big.Int{
		"+": func(a, b *big.Int) *big.Int { return new(big.Int).Add(a, b) },
		"-": func(a, b *big.Int) *big.Int { return new(big.Int).Sub(a, b) },
		"*": func(a, b *big.Int) *big.Int { return new(big.Int).Mul(a, b) },
	}
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil)
	for op, ref := range ops {
		for k := 0; k < 500; k++ {
			pa, pb := int32(1+r.IntN(30)), int32(1+r.IntN(30))
			sa, sb := digits(int(pa)), digits(int(pb))
			a, b := mk(t, dec(pa, 0), sa), mk(t, dec(pb, 0), sb)
			out, f, err := evalCall(t, op, a, b)
			ba, _ := new(big.Int).SetString(sa, 10)
			bb, _ := new(big.Int).SetString(sb, 10)
			want := ref(ba, bb)
			if new(big.Int).Abs(want).Cmp(limit) >= 0 {
				if err == nil {
					t.Fatalf("%s %s %s = %s, want out of range", sa, op, sb, joined(out))
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s %s %s: %v (%v)", sa, op, sb, err, f)
			}
			if joined(out) != want.String() {
				t.Fatalf("%s %s %s = %s, want %s", sa, op, sb, joined(out), want)
			}
		}
	}
}

// Decimals of wide types whose values fit in 64 bits are computed in 64-bit words;
// near the int64 limits their results must still be exact, and a result beyond the
// result's precision still an error.
func TestWideDecimalsOfInt64Values(t *testing.T) {
	edges := []int64{0, 1, -1, 7, -9, 999_999_999_999_999_999, -999_999_999_999_999_999,
		math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 1 << 62, -(1 << 62), 3_037_000_499, -3_037_000_500}
	ops := map[arithOp]func(a, b *big.Int) *big.Int{
		opAdd: func(a, b *big.Int) *big.Int { return new(big.Int).Add(a, b) },
		opSub: func(a, b *big.Int) *big.Int { return new(big.Int).Sub(a, b) },
		opMul: func(a, b *big.Int) *big.Int { return new(big.Int).Mul(a, b) },
	}
	for _, res := range []int32{19, 20, 30, 37, 38} {
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(res)), nil)
		rt := &arrow.Decimal128Type{Precision: res}
		for op, ref := range ops {
			for _, p := range edges {
				for _, q := range edges {
					// Two rows, the second small, so that a batch is judged whole.
					x := mk(t, dec(30, 0), strconv.FormatInt(p, 10), "2")
					y := mk(t, dec(38, 0), strconv.FormatInt(q, 10), "3")
					out, err := arithDecimal(op, rt, x, y, nil)
					want := ref(big.NewInt(p), big.NewInt(q))
					if new(big.Int).Abs(want).Cmp(limit) >= 0 {
						if err == nil {
							t.Fatalf("%d %s %d in DECIMAL(%d) = %s, want out of range", p, op.symbol(), q, res, joined(out))
						}
						continue
					}
					if err != nil {
						t.Fatalf("%d %s %d in DECIMAL(%d): %v", p, op.symbol(), q, res, err)
					}
					if got := out.(*array.Decimal128).Value(0).BigInt(); got.Cmp(want) != 0 {
						t.Fatalf("%d %s %d = %s, want %s", p, op.symbol(), q, got, want)
					}
				}
			}
		}
	}
	if !allInt64([]decimal128.Num{decimal128.FromI64(math.MinInt64), decimal128.FromI64(-1), decimal128.FromI64(math.MaxInt64)}) {
		t.Error("allInt64 refused int64 values")
	}
	if allInt64([]decimal128.Num{decimal128.FromI64(1), decimal128.New(0, 1<<63)}) || allInt64([]decimal128.Num{decimal128.New(-1, 1)}) {
		t.Error("allInt64 took a value beyond int64")
	}
}
