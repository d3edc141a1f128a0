package kernels

import (
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// The function table: each name's binder inspects the argument types and picks
// the coercions, the result type and the kernel.

func init() {
	registry = map[string]binder{
		"+":   bindArith(opAdd),
		"-":   bindArith(opSub),
		"*":   bindArith(opMul),
		"/":   bindArith(opDiv),
		"//":  bindArith(opIntDiv),
		"%":   bindArith(opMod),
		"mod": bindArith(opMod),
		"neg": bindNeg,

		"=": bindCompare(opEq), "==": bindCompare(opEq), "<>": bindCompare(opNe), "!=": bindCompare(opNe),
		"<": bindCompare(opLt), "<=": bindCompare(opLe), ">": bindCompare(opGt), ">=": bindCompare(opGe),
		"is_distinct_from":     bindDistinct(true),
		"is_not_distinct_from": bindDistinct(false),

		"and":         bindLogic,
		"or":          bindLogic,
		"not":         bindLogic,
		"is_null":     bindIsNull(true),
		"is_not_null": bindIsNull(false),

		"like":           bindLike(false, false),
		"not_like":       bindLike(false, true),
		"ilike":          bindLike(true, false),
		"not_ilike":      bindLike(true, true),
		"regexp_matches": bindRegexpMatch(false),

		"regexp_full_match":     bindRegexpMatch(true),
		"regexp_replace":        bindRegexpReplace,
		"regexp_extract":        bindRegexpExtract,
		"regexp_extract_all":    bindRegexpExtractAll,
		"regexp_split_to_array": bindRegexpSplit,
		"string_split_regex":    bindRegexpSplit,
		"str_split_regex":       bindRegexpSplit,
		"regexp_escape":         bindStr1(types.String, func(x arrow.Array) arrow.Array { return mapStrings(x, regexpEscape) }),
		"string_split":          bindSig([]argClass{clsStr, clsStr}, StringList, stringSplit),
		"str_split":             bindSig([]argClass{clsStr, clsStr}, StringList, stringSplit),
		"string_to_array":       bindSig([]argClass{clsStr, clsStr}, StringList, stringSplit),

		"printf":                    bindFormat,
		"format":                    bindFormat,
		"concat_ws":                 bindConcatWS,
		"repeat":                    bindSized([]argClass{clsStr, clsInt}, types.String, repeatStrings),
		"ascii":                     bindSig([]argClass{clsStr}, types.Int32, firstCodePoint(0)),
		"unicode":                   bindSig([]argClass{clsStr}, types.Int32, firstCodePoint(-1)),
		"ord":                       bindSig([]argClass{clsStr}, types.Int32, firstCodePoint(-1)),
		"chr":                       bindSig([]argClass{clsInt}, types.String, chrKernel),
		"to_base":                   bindToBase,
		"hex":                       bindRadix(16),
		"to_hex":                    bindRadix(16),
		"bin":                       bindRadix(2),
		"to_binary":                 bindRadix(2),
		"unhex":                     bindSig([]argClass{clsStr}, types.Binary, fromDigits(16)),
		"from_hex":                  bindSig([]argClass{clsStr}, types.Binary, fromDigits(16)),
		"unbin":                     bindSig([]argClass{clsStr}, types.Binary, fromDigits(2)),
		"from_binary":               bindSig([]argClass{clsStr}, types.Binary, fromDigits(2)),
		"translate":                 bindSig([]argClass{clsStr, clsStr, clsStr}, types.String, translateKernel),
		"strlen":                    bindByteLength(false, true, false),
		"octet_length":              bindByteLength(false, false, true),
		"bit_length":                bindByteLength(true, true, false),
		"md5":                       bindDigest(md5Sum),
		"sha1":                      bindDigest(sha1Sum),
		"sha256":                    bindDigest(sha256Sum),
		"hash":                      bindHash,
		"encode":                    bindSig([]argClass{clsStr}, types.Binary, encodeKernel),
		"decode":                    bindBlob1(types.String, decodeKernel),
		"base64":                    bindBlob1(types.String, toBase64),
		"to_base64":                 bindBlob1(types.String, toBase64),
		"from_base64":               bindSig([]argClass{clsStr}, types.Binary, fromBase64),
		"url_encode":                bindStr1(types.String, func(x arrow.Array) arrow.Array { return mapStrings(x, urlEncode) }),
		"url_decode":                bindSig([]argClass{clsStr}, types.String, urlDecode),
		"format_bytes":              bindSig([]argClass{clsInt}, types.String, formatBytes(1024)),
		"formatreadablesize":        bindSig([]argClass{clsInt}, types.String, formatBytes(1024)),
		"formatreadabledecimalsize": bindSig([]argClass{clsInt}, types.String, formatBytes(1000)),
		"array_to_string":           bindArrayToString,

		"levenshtein":             bindDistance(levenshtein),
		"editdist3":               bindDistance(levenshtein),
		"damerau_levenshtein":     bindDistance(damerauLevenshtein),
		"hamming":                 bindDistance(hamming),
		"mismatches":              bindDistance(hamming),
		"jaccard":                 bindSimilarity(jaccard, false),
		"jaro_similarity":         bindSimilarity(jaro, true),
		"jaro_winkler_similarity": bindSimilarity(jaroWinkler, true),

		"try":              bindTry,
		"constant_or_null": bindConstantOrNull,
		"error":            bindError,

		"||":          bindConcatOp,
		"concat":      bindConcat,
		"lower":       bindStr1(types.String, func(x arrow.Array) arrow.Array { return caseMap(x, false) }),
		"lcase":       bindStr1(types.String, func(x arrow.Array) arrow.Array { return caseMap(x, false) }),
		"upper":       bindStr1(types.String, func(x arrow.Array) arrow.Array { return caseMap(x, true) }),
		"ucase":       bindStr1(types.String, func(x arrow.Array) arrow.Array { return caseMap(x, true) }),
		"reverse":     bindStr1(types.String, func(x arrow.Array) arrow.Array { return mapStrings(x, reverseString) }),
		"length":      bindStr1(types.Int64, strLength),
		"len":         bindStr1(types.Int64, strLength),
		"char_length": bindStr1(types.Int64, strLength),
		"substr":      bindSubstr,
		"substring":   bindSubstr,
		"trim":        bindTrim('b'),
		"ltrim":       bindTrim('l'),
		"rtrim":       bindTrim('r'),
		"replace":     bindSized([]argClass{clsStr, clsStr, clsStr}, types.String, replaceStrings),
		"starts_with": bindSig([]argClass{clsStr, clsStr}, types.Boolean, startsWith),
		"prefix":      bindSig([]argClass{clsStr, clsStr}, types.Boolean, startsWith),
		"suffix":      bindSig([]argClass{clsStr, clsStr}, types.Boolean, endsWith),
		"ends_with":   bindSig([]argClass{clsStr, clsStr}, types.Boolean, endsWith),
		"contains":    bindSig([]argClass{clsStr, clsStr}, types.Boolean, containsKernel),
		"strpos":      bindSig([]argClass{clsStr, clsStr}, types.Int64, strpos),
		"instr":       bindSig([]argClass{clsStr, clsStr}, types.Int64, strpos),
		"position":    bindSig([]argClass{clsStr, clsStr}, types.Int64, strpos),
		"left":        bindSig([]argClass{clsStr, clsInt}, types.String, leftRight(false)),
		"right":       bindSig([]argClass{clsStr, clsInt}, types.String, leftRight(true)),
		"lpad":        bindSized([]argClass{clsStr, clsInt, clsStr}, types.String, pad(true)),
		"rpad":        bindSized([]argClass{clsStr, clsInt, clsStr}, types.String, pad(false)),
		"split_part":  bindSig([]argClass{clsStr, clsStr, clsInt}, types.String, splitPart),

		"abs":      bindAbs,
		"round":    bindRound('r'),
		"floor":    bindRound('f'),
		"ceil":     bindRound('c'),
		"ceiling":  bindRound('c'),
		"sqrt":     bindDouble1(sqrtChecked),
		"ln":       bindDouble1(logChecked(math.Log)),
		"log10":    bindDouble1(logChecked(math.Log10)),
		"log":      bindLog,
		"log2":     bindDouble1(logChecked(math.Log2)),
		"exp":      bindDouble1(pure(math.Exp)),
		"power":    bindSig([]argClass{clsDouble, clsDouble}, types.Float64, powerKernel),
		"pow":      bindSig([]argClass{clsDouble, clsDouble}, types.Float64, powerKernel),
		"sign":     bindSign,
		"greatest": bindExtremum(opGt),
		"least":    bindExtremum(opLt),

		"coalesce": bindCoalesce,
		"ifnull":   bindCoalesce,
		"nullif":   bindNullIf,

		"date_trunc": bindDateTrunc,
		"datetrunc":  bindDateTrunc,
		"date_part":  bindDatePart,
		"datepart":   bindDatePart,
		"extract":    bindDatePart,
		"date_diff":  bindDateDiff,
		"datediff":   bindDateDiff,
		"make_date":  bindSig([]argClass{clsInt, clsInt, clsInt}, types.Date, makeDate),
		"strftime":   bindStrftime,

		"current_date":          bindNow(true),
		"today":                 bindNow(true),
		"now":                   bindNow(false),
		"current_timestamp":     bindNow(false),
		"get_current_timestamp": bindNow(false),
		"transaction_timestamp": bindNow(false),

		// Rounding beyond round/floor/ceil, and types.
		"trunc":        bindRound('t'),
		"round_even":   bindRoundEven,
		"roundbankers": bindRoundEven,
		"even":         bindDouble1(pure(evenKernel)),
		"typeof":       bindTypeof,
		"isnan":        bindFloatTest(isNaN),
		"isinf":        bindFloatTest(isInf),
		"isfinite":     bindFloatTest(isFinite),
		"gamma":        bindDouble1(gammaChecked),
		"lgamma":       bindDouble1(lgammaChecked),
		"factorial":    bindFactorial,
		"sin":          bindDouble1(pure(math.Sin)),
		"cos":          bindDouble1(pure(math.Cos)),
		"tan":          bindDouble1(pure(math.Tan)),
		"cot":          bindDouble1(pure(cot)),
		"asin":         bindDouble1(undefinedOutside("ASIN", -1, 1, math.Asin)),
		"acos":         bindDouble1(undefinedOutside("ACOS", -1, 1, math.Acos)),
		"atan":         bindDouble1(pure(math.Atan)),
		"atan2":        bindSig([]argClass{clsDouble, clsDouble}, types.Float64, atan2Kernel),
		"degrees":      bindDouble1(pure(func(v float64) float64 { return v * 180 / math.Pi })),
		"radians":      bindDouble1(pure(func(v float64) float64 { return v * math.Pi / 180 })),
		"pi":           bindPi,
		"cbrt":         bindDouble1(pure(math.Cbrt)),
		"&":            bindBitwise(bitAnd),
		"|":            bindBitwise(bitOr),
		"xor":          bindBitwise(bitXor),
		"<<":           bindBitwise(bitShl),
		">>":           bindBitwise(bitShr),
		"~":            bindBitNot,
		"bit_count":    bindBitCount,
	}
	for name, part := range map[string]string{
		"year": "year", "month": "month", "day": "day", "hour": "hour", "minute": "minute", "second": "second",
		"millisecond": "millisecond", "microsecond": "microsecond", "quarter": "quarter", "week": "week",
		"weekofyear": "week", "dayofweek": "dow", "dayofmonth": "day", "dayofyear": "doy", "isodow": "isodow",
		"isoyear": "isoyear", "yearweek": "yearweek", "decade": "decade", "century": "century",
		"millennium": "millennium", "epoch": "epoch",
	} {
		registry[name] = bindPartShorthand(part)
	}
	addListFunctions()
}

// --- arithmetic ---

func bindArith(op arithOp) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 2 {
			return nil, c.mismatch()
		}
		a, b := c.args[0], c.args[1]
		if f := bindTemporalArith(c, op, a, b); f != nil {
			return f, nil
		}
		if isNullType(a) && isNullType(b) {
			a, b = types.Int64, types.Int64
		} else if isNullType(a) {
			a = b
		} else if isNullType(b) {
			b = a
		}
		if !types.IsNumeric(a) || !types.IsNumeric(b) {
			return nil, c.mismatch()
		}
		switch {
		case types.IsFloat(a) || types.IsFloat(b):
			ft := types.Float64
			// FLOAT with an integer or a DECIMAL stays FLOAT, as in DuckDB.
			if a.ID() != arrow.FLOAT64 && b.ID() != arrow.FLOAT64 {
				ft = types.Float32
			}
			return newScratchFunction(c, []arrow.DataType{ft, ft}, ft, floatKernel(op, ft), true), nil
		case op == opDiv:
			return newScratchFunction(c, []arrow.DataType{types.Float64, types.Float64}, types.Float64, floatKernel(op, types.Float64), true), nil
		case types.IsDecimal(a) || types.IsDecimal(b):
			return bindDecimalArith(c, op, decimalOf(a), decimalOf(b))
		}
		ct := commonInteger(a, b)
		switch {
		case types.IsDecimal(ct): // UBIGINT with a signed type
			d := ct.(*arrow.Decimal128Type)
			return bindDecimalArith(c, op, d, d)
		case types.IsUnsigned(ct):
			return newFunction(c, []arrow.DataType{types.Uint64, types.Uint64}, types.Uint64,
				func(args []arrow.Array, n int) (arrow.Array, error) { return arithUint64(op, args[0], args[1]) }, true), nil
		}
		return newScratchFunction(c, []arrow.DataType{types.Int64, types.Int64}, types.Int64,
			func(args []arrow.Array, n int, s *Scratch) (arrow.Array, error) {
				return arithInt64(op, args[0], args[1], s)
			}, true), nil
	}
}

func floatKernel(op arithOp, ft arrow.DataType) scratchKernel {
	if ft.ID() == arrow.FLOAT32 {
		return func(args []arrow.Array, n int, s *Scratch) (arrow.Array, error) {
			return arithFloat(op, ft, args[0].(*array.Float32).Float32Values(), args[1].(*array.Float32).Float32Values(), args[0], args[1], s), nil
		}
	}
	return func(args []arrow.Array, n int, s *Scratch) (arrow.Array, error) {
		return arithFloat(op, ft, args[0].(*array.Float64).Float64Values(), args[1].(*array.Float64).Float64Values(), args[0], args[1], s), nil
	}
}

// bindDecimalArith types decimal arithmetic as DuckDB does: + and - keep the larger
// scale with one more integer digit, * adds scales and precisions, % uses the
// common type, // is done in DOUBLE; precision is capped at 38.
func bindDecimalArith(c *call, op arithOp, a, b *arrow.Decimal128Type) (*Function, error) {
	// The kernel reads and writes 64-bit decimals itself: its arguments and result
	// are the types of the values as they are stored.
	mk := func(args []arrow.DataType, res *arrow.Decimal128Type) *Function {
		for i := range args {
			args[i] = types.Narrow(args[i])
		}
		out := types.Narrow(res)
		return newScratchFunction(c, args, out, func(in []arrow.Array, n int, s *Scratch) (arrow.Array, error) {
			return arithDecimal(op, out, in[0], in[1], s)
		}, true)
	}
	switch op {
	case opAdd, opSub:
		s := max(a.Scale, b.Scale)
		ip := max(a.Precision-a.Scale, b.Precision-b.Scale)
		res := &arrow.Decimal128Type{Precision: min(38, ip+s+1), Scale: s}
		ta := &arrow.Decimal128Type{Precision: min(38, a.Precision-a.Scale+s), Scale: s}
		tb := &arrow.Decimal128Type{Precision: min(38, b.Precision-b.Scale+s), Scale: s}
		return mk([]arrow.DataType{ta, tb}, res), nil
	case opMul:
		if a.Scale+b.Scale > 38 {
			return nil, errs.New(errs.Analysis, "cannot multiply %s by %s: the result scale exceeds 38", types.Name(a), types.Name(b))
		}
		res := &arrow.Decimal128Type{Precision: min(38, a.Precision+b.Precision), Scale: a.Scale + b.Scale}
		return mk([]arrow.DataType{a, b}, res), nil
	case opMod:
		ct := commonDecimal(a, b).(*arrow.Decimal128Type)
		return mk([]arrow.DataType{ct, ct}, ct), nil
	}
	return newScratchFunction(c, []arrow.DataType{types.Float64, types.Float64}, types.Float64, floatKernel(op, types.Float64), true), nil
}

// bindTemporalArith handles + and - with dates, timestamps and intervals; nil when
// neither side is temporal.
func bindTemporalArith(c *call, op arithOp, a, b arrow.DataType) *Function {
	if f := bindTimeArith(c, op, a, b); f != nil {
		return f
	}
	if op == opMul || op == opDiv {
		return bindIntervalScale(c, op, a, b)
	}
	if op != opAdd && op != opSub {
		return nil
	}
	temporal := func(t arrow.DataType) bool { return isDateLike(t) || isInterval(t) }
	if !temporal(a) && !temporal(b) {
		return nil
	}
	// An untyped NULL takes the type that makes the other side meaningful.
	fill := func(other arrow.DataType) arrow.DataType {
		switch {
		case other.ID() == arrow.DATE32:
			return types.Int64
		default:
			return types.Interval
		}
	}
	if isNullType(a) {
		a = fill(b)
		if op == opAdd && b.ID() == arrow.DATE32 {
			a = types.Int64
		}
	}
	if isNullType(b) {
		b = fill(a)
	}
	date := func(t arrow.DataType) bool { return t.ID() == arrow.DATE32 }
	ts := func(t arrow.DataType) bool { return t.ID() == arrow.TIMESTAMP }
	sign := int64(1)
	if op == opSub {
		sign = -1
	}
	swap := func(k kernel) kernel {
		return func(args []arrow.Array, n int) (arrow.Array, error) { return k([]arrow.Array{args[1], args[0]}, n) }
	}
	switch {
	case date(a) && types.IsInteger(b):
		return newFunction(c, []arrow.DataType{types.Date, types.Int64}, types.Date, func(args []arrow.Array, n int) (arrow.Array, error) {
			return dateAddDays(args[0], args[1], sign)
		}, true)
	case op == opAdd && types.IsInteger(a) && date(b):
		return newFunction(c, []arrow.DataType{types.Int64, types.Date}, types.Date, swap(func(args []arrow.Array, n int) (arrow.Array, error) {
			return dateAddDays(args[0], args[1], 1)
		}), true)
	case op == opSub && date(a) && date(b):
		return newFunction(c, []arrow.DataType{types.Date, types.Date}, types.Int64, func(args []arrow.Array, n int) (arrow.Array, error) {
			return dateDiff(args[0], args[1])
		}, true)
	case (date(a) || ts(a)) && isInterval(b):
		t := microTimestamp(a)
		return newFunction(c, []arrow.DataType{t, types.Interval}, t, func(args []arrow.Array, n int) (arrow.Array, error) {
			return tsAddInterval(args[0], args[1], sign)
		}, true)
	case op == opAdd && isInterval(a) && (date(b) || ts(b)):
		t := microTimestamp(b)
		return newFunction(c, []arrow.DataType{types.Interval, t}, t, swap(func(args []arrow.Array, n int) (arrow.Array, error) {
			return tsAddInterval(args[0], args[1], 1)
		}), true)
	case op == opSub && isDateLike(a) && isDateLike(b) && (ts(a) || ts(b)):
		t := commonTemporal(a, b)
		return newFunction(c, []arrow.DataType{t, t}, types.Interval, func(args []arrow.Array, n int) (arrow.Array, error) {
			return tsDiff(args[0], args[1])
		}, true)
	case isInterval(a) && isInterval(b):
		return newFunction(c, []arrow.DataType{types.Interval, types.Interval}, types.Interval, func(args []arrow.Array, n int) (arrow.Array, error) {
			return intervalAdd(args[0], args[1], int32(sign))
		}, true)
	}
	return nil
}

func bindNeg(c *call) (*Function, error) {
	if len(c.args) != 1 {
		return nil, c.mismatch()
	}
	t := c.args[0]
	switch {
	case isNullType(t) || types.IsInteger(t):
		t = types.Int64
		if c.args[0].ID() == arrow.UINT64 {
			t = &arrow.Decimal128Type{Precision: 20, Scale: 0}
		}
	case types.IsFloat(t), types.IsDecimal(t), isInterval(t):
	default:
		return nil, c.mismatch()
	}
	return newFunction(c, []arrow.DataType{t}, t, func(args []arrow.Array, n int) (arrow.Array, error) { return negate(args[0]) }, true), nil
}

// --- comparison and logic ---

func orderable(t arrow.DataType) bool {
	return isNullType(t) || types.IsOrderable(t) || isInterval(t) || NestedOrderable(t)
}

func bindCompare(op cmpOp) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 2 {
			return nil, c.mismatch()
		}
		ct, ok := commonType(c.args[0], c.args[1])
		if !ok || !orderable(ct) {
			return nil, c.mismatch()
		}
		// Decimals compare as they are stored, in 64 bits up to 18 digits.
		ct = types.Narrow(ct)
		return newFunction(c, []arrow.DataType{ct, ct}, types.Boolean, func(args []arrow.Array, n int) (arrow.Array, error) {
			return compareArrays(op, args[0], args[1])
		}, true), nil
	}
}

func bindDistinct(want bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 2 {
			return nil, c.mismatch()
		}
		ct, ok := commonType(c.args[0], c.args[1])
		if !ok || !orderable(ct) {
			return nil, c.mismatch()
		}
		// Decimals compare as they are stored, in 64 bits up to 18 digits.
		ct = types.Narrow(ct)
		return newFunction(c, []arrow.DataType{ct, ct}, types.Boolean, func(args []arrow.Array, n int) (arrow.Array, error) {
			return distinctFrom(args[0], args[1], want)
		}, false), nil
	}
}

func bindLogic(c *call) (*Function, error) {
	want := 2
	if c.name == "not" {
		want = 1
	}
	if len(c.args) != want {
		return nil, c.mismatch()
	}
	for _, t := range c.args {
		if !isNullType(t) && t.ID() != arrow.BOOL {
			return nil, c.mismatch()
		}
	}
	args := repeatType(types.Boolean, want)
	var k kernel
	switch c.name {
	case "and":
		k = func(in []arrow.Array, n int) (arrow.Array, error) {
			return and3(in[0].(*array.Boolean), in[1].(*array.Boolean)), nil
		}
	case "or":
		k = func(in []arrow.Array, n int) (arrow.Array, error) {
			return or3(in[0].(*array.Boolean), in[1].(*array.Boolean)), nil
		}
	default:
		k = func(in []arrow.Array, n int) (arrow.Array, error) { return not3(in[0].(*array.Boolean)), nil }
	}
	return newFunction(c, args, types.Boolean, k, c.name == "not"), nil
}

func bindIsNull(want bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 1 {
			return nil, c.mismatch()
		}
		return newFunction(c, []arrow.DataType{c.args[0]}, types.Boolean, func(in []arrow.Array, n int) (arrow.Array, error) {
			return isNull(in[0], want), nil
		}, false), nil
	}
}

// --- strings ---

// argClass is what a fixed-signature function accepts at one position.
type argClass uint8

const (
	clsStr    argClass = iota // VARCHAR
	clsInt                    // any integer, passed as BIGINT
	clsDouble                 // any number, passed as DOUBLE
)

// bindSig binds a function with a fixed signature of argument classes.
func bindSig(sig []argClass, result arrow.DataType, k kernel) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != len(sig) {
			return nil, c.mismatch()
		}
		args := make([]arrow.DataType, len(sig))
		for i, cls := range sig {
			t := c.args[i]
			switch cls {
			case clsStr:
				if !stringish(t) {
					return nil, c.mismatch()
				}
				args[i] = types.String
			case clsInt:
				if !intish(t) {
					return nil, c.mismatch()
				}
				args[i] = types.Int64
			case clsDouble:
				if !numericish(t) {
					return nil, c.mismatch()
				}
				args[i] = types.Float64
			}
		}
		return newFunction(c, args, result, k, true), nil
	}
}

func bindStr1(result arrow.DataType, f func(arrow.Array) arrow.Array) binder {
	return bindSig([]argClass{clsStr}, result, func(in []arrow.Array, n int) (arrow.Array, error) { return f(in[0]), nil })
}

func bindDouble1(f func(float64) (float64, error)) binder {
	return bindSig([]argClass{clsDouble}, types.Float64, func(in []arrow.Array, n int) (arrow.Array, error) {
		return mapFloat(in[0], f)
	})
}

func bindSubstr(c *call) (*Function, error) {
	switch len(c.args) {
	case 2:
		return bindSig([]argClass{clsStr, clsInt}, types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
			s, st := str(in[0]), i64(in[1])
			return evalStrings(in, n, func(i int) (string, error) { return substring(s.Value(i), st.Value(i), math.MaxInt64), nil })
		})(c)
	case 3:
		return bindSig([]argClass{clsStr, clsInt, clsInt}, types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
			s, st, ln := str(in[0]), i64(in[1]), i64(in[2])
			return evalStrings(in, n, func(i int) (string, error) { return substring(s.Value(i), st.Value(i), ln.Value(i)), nil })
		})(c)
	}
	return nil, c.mismatch()
}

func bindTrim(kind byte) binder {
	return func(c *call) (*Function, error) {
		sig := []argClass{clsStr}
		if len(c.args) == 2 {
			sig = append(sig, clsStr)
		}
		return bindSig(sig, types.String, trimFunc(kind))(c)
	}
}

func startsWith(in []arrow.Array, n int) (arrow.Array, error) {
	s, p := str(in[0]), str(in[1])
	return evalBools(in, n, func(i int) bool { return hasPrefix(s.Value(i), p.Value(i)) }), nil
}

func endsWith(in []arrow.Array, n int) (arrow.Array, error) {
	s, p := str(in[0]), str(in[1])
	return evalBools(in, n, func(i int) bool { return hasSuffix(s.Value(i), p.Value(i)) }), nil
}

func containsKernel(in []arrow.Array, n int) (arrow.Array, error) {
	s, p := str(in[0]), str(in[1])
	return evalBools(in, n, func(i int) bool { return containsStr(s.Value(i), p.Value(i)) }), nil
}

func bindLike(fold, negate bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 2 || !stringish(c.args[0]) || !stringish(c.args[1]) {
			return nil, c.mismatch()
		}
		return newFunction(c, []arrow.DataType{types.String, types.String}, types.Boolean, likeKernel(fold, negate), true), nil
	}
}

func bindConcatOp(c *call) (*Function, error) {
	if len(c.args) != 2 {
		return nil, c.mismatch()
	}
	for _, t := range c.args {
		if !concatenable(t) {
			return nil, c.mismatch()
		}
	}
	return newFunction(c, []arrow.DataType{types.String, types.String}, types.String, concatOp, true), nil
}

// concatenable is a type whose values concatenate as text: not a nested one, whose
// concatenation in DuckDB is list_concat's.
func concatenable(t arrow.DataType) bool {
	return CanCast(t, types.String) && !types.IsNested(t)
}

func bindConcat(c *call) (*Function, error) {
	if len(c.args) == 0 {
		return nil, c.mismatch()
	}
	for _, t := range c.args {
		if !concatenable(t) {
			return nil, c.mismatch()
		}
	}
	return newFunction(c, repeatType(types.String, len(c.args)), types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
		return concatStrings(in, n), nil
	}, false), nil
}

// --- math ---

func bindAbs(c *call) (*Function, error) {
	if len(c.args) != 1 || !numericish(c.args[0]) {
		return nil, c.mismatch()
	}
	t := c.args[0]
	if isNullType(t) {
		t = types.Int64
	}
	return newFunction(c, []arrow.DataType{t}, t, absKernel, true), nil
}

func identity(in []arrow.Array, n int) (arrow.Array, error) { return in[0], nil }

func bindRound(mode byte) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) == 0 || len(c.args) > 2 || !numericish(c.args[0]) || (len(c.args) == 2 && (mode != 'r' && mode != 't' || !intish(c.args[1]))) {
			return nil, c.mismatch()
		}
		t := c.args[0]
		if isNullType(t) {
			t = types.Float64
		}
		if len(c.args) == 2 {
			switch {
			case types.IsDecimal(t):
				if f := bindDecimalRoundConst(c, t.(*arrow.Decimal128Type), mode); f != nil {
					return f, nil
				}
				if mode == 't' {
					return nil, errs.New(errs.Analysis, "trunc(DECIMAL, INTEGER) needs a constant number of digits")
				}
				return newFunction(c, []arrow.DataType{t, types.Int64}, t, decimalRoundDigits, true), nil
			case types.IsInteger(t) && mode == 't':
				return newFunction(c, []arrow.DataType{types.Int64, types.Int64}, t, keepType(t, intTruncDigits), true), nil
			case types.IsInteger(t):
				return newFunction(c, []arrow.DataType{types.Int64, types.Int64}, t, keepType(t, intRoundDigits), true), nil
			case mode == 't':
				return newFunction(c, []arrow.DataType{types.Float64, types.Int64}, t, keepType(t, truncFloat2), true), nil
			case t.ID() == arrow.FLOAT32:
				return newFunction(c, []arrow.DataType{types.Float64, types.Int64}, t, keepType(t, roundFloat2), true), nil
			}
			return newFunction(c, []arrow.DataType{types.Float64, types.Int64}, types.Float64, roundFloat2, true), nil
		}
		switch {
		case types.IsInteger(t) && (mode == 'r' || mode == 't'):
			return newFunction(c, []arrow.DataType{t}, t, identity, true), nil
		case types.IsInteger(t):
			// floor and ceil of an integer are DOUBLE, as in DuckDB.
			return newFunction(c, []arrow.DataType{types.Float64}, types.Float64, floatRound(mode), true), nil
		case types.IsDecimal(t):
			d := t.(*arrow.Decimal128Type)
			if d.Scale == 0 {
				return newFunction(c, []arrow.DataType{t}, t, identity, true), nil
			}
			// DuckDB keeps the precision: a carry (9.9 to 10) fits, as the integer
			// digits grow by at most one while the fraction's digits go.
			res := &arrow.Decimal128Type{Precision: d.Precision, Scale: 0}
			return newFunction(c, []arrow.DataType{t}, res, decimalRound(mode, res), true), nil
		}
		return newFunction(c, []arrow.DataType{t}, t, floatRound(mode), true), nil
	}
}

// intRoundDigits is round(integer, d): unchanged for d >= 0, else rounded half away
// from zero to a multiple of 10^-d.
func intRoundDigits(in []arrow.Array, n int) (arrow.Array, error) {
	x, d := i64(in[0]).Int64Values(), i64(in[1]).Int64Values()
	out := make([]int64, n)
	valid, nulls := andValidity(n, in...)
	for i, v := range x {
		switch {
		case d[i] >= 0:
			out[i] = v
		case d[i] < -18:
			out[i] = 0
		default:
			p := pow10[-d[i]]
			r := roundDivInt64(v, p)
			if mulOverflows(r, p) && isValid(valid, 0, i) {
				return nil, outOfRange("round("+strconv.FormatInt(v, 10)+", "+strconv.FormatInt(d[i], 10)+")", types.Int64)
			}
			out[i] = r * p
		}
	}
	return fixedArray(types.Int64, out, valid, nulls), nil
}

func bindSign(c *call) (*Function, error) {
	if len(c.args) != 1 || !numericish(c.args[0]) {
		return nil, c.mismatch()
	}
	t := c.args[0]
	switch {
	case isNullType(t), types.IsInteger(t):
		t = types.Int64
	case types.IsFloat(t):
		t = types.Float64
	}
	return newFunction(c, []arrow.DataType{t}, types.Int8, signKernel, true), nil
}

func bindExtremum(op cmpOp) binder {
	return func(c *call) (*Function, error) {
		ct, ok := commonOf(c.args)
		if len(c.args) == 0 || !ok || !orderable(ct) {
			return nil, c.mismatch()
		}
		if isNullType(ct) {
			return newFunction(c, c.args, ct, identity, false), nil
		}
		return newFunction(c, repeatType(ct, len(c.args)), ct, func(in []arrow.Array, n int) (arrow.Array, error) {
			return extremum(op, in)
		}, false), nil
	}
}

// --- conditional ---

func bindCoalesce(c *call) (*Function, error) {
	ct, ok := commonOf(c.args)
	if len(c.args) == 0 || !ok || (c.name == "ifnull" && len(c.args) != 2) {
		return nil, c.mismatch()
	}
	return newFunction(c, repeatType(ct, len(c.args)), ct, func(in []arrow.Array, n int) (arrow.Array, error) {
		return coalesce(in), nil
	}, false), nil
}

func bindNullIf(c *call) (*Function, error) {
	if len(c.args) != 2 {
		return nil, c.mismatch()
	}
	ct, ok := commonType(c.args[0], c.args[1])
	if !ok || !orderable(ct) {
		return nil, c.mismatch()
	}
	return newFunction(c, []arrow.DataType{ct, ct}, ct, func(in []arrow.Array, n int) (arrow.Array, error) {
		if isNullType(ct) {
			return in[0], nil
		}
		return nullIf(in[0], in[1])
	}, false), nil
}

// --- dates and times ---

func bindDateTrunc(c *call) (*Function, error) {
	if len(c.args) != 2 || !stringish(c.args[0]) || !temporalish(c.args[1]) {
		return nil, c.mismatch()
	}
	t := c.args[1]
	if isNullType(t) {
		t = types.Timestamp
	}
	if p, ok := c.constString(0); ok {
		if _, ok := normPart(p); !ok {
			return nil, badPart("date_trunc", p)
		}
	}
	// date_trunc of a DATE is a TIMESTAMP, whatever the part (DuckDB 1.5).
	if t.ID() == arrow.DATE32 {
		t = types.Timestamp
	}
	return newFunction(c, []arrow.DataType{types.String, t}, t, dateTrunc(t), true), nil
}

func bindDatePart(c *call) (*Function, error) {
	if len(c.args) != 2 || !stringish(c.args[0]) || !(temporalish(c.args[1]) || isInterval(c.args[1])) {
		return nil, c.mismatch()
	}
	t := c.args[1]
	if isNullType(t) {
		t = types.Timestamp
	}
	args := []arrow.DataType{types.String, t}
	if p, ok := c.constString(0); ok {
		norm, ok := normPart(p)
		if !ok {
			return nil, badPart(c.name, p)
		}
		if norm == "epoch" {
			return newFunction(c, args, types.Float64, datePartEpoch, true), nil
		}
		if norm == "julian" && !isInterval(t) {
			return newFunction(c, args, types.Float64, datePartJulian, true), nil
		}
	}
	return newFunction(c, args, types.Int64, datePart, true), nil
}

// bindPartShorthand binds year(x), month(x) … as date_part with a fixed part.
func bindPartShorthand(part string) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 1 || !(temporalish(c.args[0]) || isInterval(c.args[0])) {
			return nil, c.mismatch()
		}
		t := c.args[0]
		if isNullType(t) {
			t = types.Timestamp
		}
		if part == "epoch" {
			return newFunction(c, []arrow.DataType{t}, types.Float64, datePartEpoch, true), nil
		}
		partVal := types.StringValue(part)
		return newFunction(c, []arrow.DataType{t}, types.Int64, func(in []arrow.Array, n int) (arrow.Array, error) {
			return datePart([]arrow.Array{ConstArray(partVal, n), in[0]}, n)
		}, true), nil
	}
}

func bindDateDiff(c *call) (*Function, error) {
	if len(c.args) != 3 || !stringish(c.args[0]) || !temporalish(c.args[1]) || !temporalish(c.args[2]) {
		return nil, c.mismatch()
	}
	t, ok := commonType(c.args[1], c.args[2])
	if !ok {
		return nil, c.mismatch()
	}
	if isNullType(t) {
		t = types.Timestamp
	}
	return newFunction(c, []arrow.DataType{types.String, t, t}, types.Int64, dateDiffKernel, true), nil
}

// bindNow binds current_date (date) or now()/current_timestamp: the time is taken
// once, when the call is resolved, so every row and batch of a statement sees the
// same value.
func bindNow(date bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 0 {
			return nil, c.mismatch()
		}
		now := time.Now().UTC()
		v := types.Value{Type: types.TimestampTZ, I: now.UnixMicro()}
		if date {
			v = types.DateValue(int32(floorDiv(now.Unix(), 86400)))
		}
		return newFunction(c, nil, v.Type, func(in []arrow.Array, n int) (arrow.Array, error) {
			return ConstArray(v, n), nil
		}, false), nil
	}
}
