package kernels

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/rivo/uniseg"
)

// Text functions and operators DuckDB has beside the PostgreSQL ones: bar charts,
// byte sizes, grapheme-wise length and substring, and the ^@, ~ and !~ operators.
// They are added to the registry here, after functions.go has made it.

func init() {
	registry["bar"] = bindBar
	registry["parse_formatted_bytes"] = bindSig([]argClass{clsStr}, types.Uint64, parseFormattedBytes)
	registry["length_grapheme"] = bindStr1(types.Int64, graphemeLength)
	registry["substring_grapheme"] = bindSubstrGrapheme
	registry["^@"] = registry["starts_with"]
	registry["nextafter"] = bindNextAfter

	// ~ is bitwise NOT of one integer, and with two strings DuckDB's regular
	// expression full match; !~ is its negation.
	bitNot, fullMatch := registry["~"], bindRegexpMatch(true)
	registry["~"] = func(c *call) (*Function, error) {
		if len(c.args) == 2 {
			return fullMatch(c)
		}
		return bitNot(c)
	}
	registry["!~"] = func(c *call) (*Function, error) {
		if len(c.args) != 2 {
			return nil, c.mismatch()
		}
		f, err := fullMatch(c)
		if err != nil {
			return nil, err
		}
		return negated(f), nil
	}
}

// negated is f, a function of BOOLEAN result, with its non-NULL results inverted.
func negated(f *Function) *Function {
	eval := f.Eval
	g := *f
	g.Eval = func(in []arrow.Array, n int) (arrow.Array, error) {
		out, err := eval(in, n)
		if err != nil {
			return nil, err
		}
		b := Decode(out).(*array.Boolean)
		return evalBools([]arrow.Array{b}, n, func(i int) bool { return !b.Value(i) }), nil
	}
	return &g
}

// Block characters of bar: a full block and the partial ones of 1/8 … 7/8 of its
// width.
const barFull = "█"

var barPartial = [...]string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// bindBar is bar(x, min, max [, width]): a bar of block characters, width (80 by
// default) long at max, in eighths, padded with spaces to the whole width.
func bindBar(c *call) (*Function, error) {
	if len(c.args) != 3 && len(c.args) != 4 {
		return nil, c.mismatch()
	}
	sig := []argClass{clsDouble, clsDouble, clsDouble, clsDouble}[:len(c.args)]
	return bindSig(sig, types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
		x, lo, hi := in[0].(*array.Float64), in[1].(*array.Float64), in[2].(*array.Float64)
		var w *array.Float64
		if len(in) == 4 {
			w = in[3].(*array.Float64)
		}
		return evalStrings(in, n, func(i int) (string, error) {
			width := 80.0
			if w != nil {
				width = w.Value(i)
			}
			return barOf(x.Value(i), lo.Value(i), hi.Value(i), width)
		})
	})(c)
}

func barOf(x, lo, hi, maxWidth float64) (string, error) {
	switch {
	case math.IsNaN(maxWidth) || math.IsInf(maxWidth, 0):
		return "", errs.New(errs.Analysis, "bar: the maximum width must not be NaN or infinite")
	case maxWidth < 1:
		return "", errs.New(errs.Analysis, "bar: the maximum width must be at least 1, not %g", maxWidth)
	case maxWidth > 1000:
		return "", errs.New(errs.Analysis, "bar: the maximum width must be at most 1000, not %g", maxWidth)
	}
	var width float64
	switch {
	case math.IsNaN(x) || math.IsNaN(lo) || math.IsNaN(hi) || x <= lo:
		width = 0
	case x >= hi:
		width = maxWidth
	default:
		width = maxWidth * (x - lo) / (hi - lo)
	}
	if math.IsNaN(width) || math.IsInf(width, 0) {
		return "", errs.New(errs.Analysis, "bar: the width of %g between %g and %g is not finite", x, lo, hi)
	}
	eighths := int(width * 8)
	var b strings.Builder
	chars := eighths / 8
	b.WriteString(strings.Repeat(barFull, chars))
	if r := eighths % 8; r != 0 {
		b.WriteString(barPartial[r])
		chars++
	}
	if pad := int(maxWidth) - chars; pad > 0 {
		b.WriteString(strings.Repeat(" ", pad))
	}
	return b.String(), nil
}

// parseFormattedBytes is parse_formatted_bytes(s): a size such as '1.5 GiB' or
// '10MB' in bytes, as DuckDB reads its memory settings: a number (with a fraction
// or an exponent), then a unit of 1000^i (KB … TB, also K, kilobyte(s) …) or
// 1024^i (KiB … TiB), any case; the bytes are truncated to a whole number.
func parseFormattedBytes(in []arrow.Array, n int) (arrow.Array, error) {
	s := str(in[0])
	out := make([]uint64, n)
	valid, nulls := copyValidity(in[0])
	for i := 0; i < n; i++ {
		if !isValid(valid, 0, i) {
			continue
		}
		v, err := parseBytes(s.Value(i))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return fixedArray(types.Uint64, out, valid, nulls), nil
}

var byteUnits = map[string]float64{
	"b": 1, "byte": 1, "bytes": 1,
	"k": 1e3, "kb": 1e3, "kilobyte": 1e3, "kilobytes": 1e3,
	"m": 1e6, "mb": 1e6, "megabyte": 1e6, "megabytes": 1e6,
	"g": 1e9, "gb": 1e9, "gigabyte": 1e9, "gigabytes": 1e9,
	"t": 1e12, "tb": 1e12, "terabyte": 1e12, "terabytes": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

func parseBytes(text string) (uint64, error) {
	isSpace := func(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }
	i := 0
	for i < len(text) && isSpace(text[i]) {
		i++
	}
	start := i
	for i < len(text) && (text[i] >= '0' && text[i] <= '9' || strings.IndexByte(".eE-", text[i]) >= 0) {
		i++
	}
	if i == start {
		return 0, errs.New(errs.Analysis, "parse_formatted_bytes: %s has no number (such as 1GB)", types.QuoteString(text))
	}
	num, err := strconv.ParseFloat(text[start:i], 64)
	if err != nil {
		return 0, errs.New(errs.Analysis, "parse_formatted_bytes: %s is not a number", types.QuoteString(text[start:i]))
	}
	for i < len(text) && isSpace(text[i]) {
		i++
	}
	start = i
	for i < len(text) && !isSpace(text[i]) {
		i++
	}
	if num < 0 {
		return 0, errs.New(errs.Analysis, "parse_formatted_bytes: a size cannot be negative: %s", types.QuoteString(text))
	}
	unit := strings.ToLower(text[start:i])
	scale, ok := byteUnits[unit]
	if !ok {
		return 0, errs.New(errs.Analysis, "parse_formatted_bytes: unknown unit %s (KB, MB, GB, TB are powers of 1000, KiB, MiB, GiB, TiB of 1024)", types.QuoteString(unit))
	}
	bytes := num * scale
	if bytes >= 1<<64 {
		return 0, errs.New(errs.Analysis, "parse_formatted_bytes: %s is more bytes than UBIGINT holds", types.QuoteString(text))
	}
	return uint64(bytes), nil
}

// graphemeLength is length_grapheme(s): the number of extended grapheme clusters.
func graphemeLength(x arrow.Array) arrow.Array {
	a := str(x)
	out := make([]int64, a.Len())
	for i := range out {
		if a.IsValid(i) {
			out[i] = int64(graphemeCount(a.Value(i)))
		}
	}
	valid, nulls := copyValidity(x)
	return fixedArray(types.Int64, out, valid, nulls)
}

func graphemeCount(s string) int {
	if isASCII(s) && !strings.Contains(s, "\r\n") {
		return len(s)
	}
	return uniseg.GraphemeClusterCount(s)
}

// graphemeBounds is the byte offset of every grapheme cluster's start in s, and
// len(s) last.
func graphemeBounds(s string) []int {
	var out []int
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		from, _ := g.Positions()
		out = append(out, from)
	}
	return append(out, len(s))
}

// bindSubstrGrapheme is substring_grapheme(s, start [, length]): substring counted
// in grapheme clusters rather than characters.
func bindSubstrGrapheme(c *call) (*Function, error) {
	if len(c.args) != 2 && len(c.args) != 3 {
		return nil, c.mismatch()
	}
	sig := []argClass{clsStr, clsInt, clsInt}[:len(c.args)]
	return bindSig(sig, types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
		s, st := str(in[0]), i64(in[1])
		var ln *array.Int64
		if len(in) == 3 {
			ln = i64(in[2])
		}
		return evalStrings(in, n, func(i int) (string, error) {
			length := int64(math.MaxInt64)
			if ln != nil {
				length = ln.Value(i)
			}
			v := s.Value(i)
			bounds := graphemeBounds(v)
			from, to := substringRange(int64(len(bounds)-1), st.Value(i), length)
			if from >= to {
				return "", nil
			}
			return v[bounds[from]:bounds[to]], nil
		})
	})(c)
}

// bindNextAfter is nextafter(x, y): the next floating-point number after x towards
// y, in FLOAT when both are FLOAT and in DOUBLE otherwise.
func bindNextAfter(c *call) (*Function, error) {
	if len(c.args) != 2 || !numericish(c.args[0]) || !numericish(c.args[1]) {
		return nil, c.mismatch()
	}
	if c.args[0].ID() == arrow.FLOAT32 && c.args[1].ID() == arrow.FLOAT32 {
		ft := types.Float32
		return newFunction(c, []arrow.DataType{ft, ft}, ft, func(in []arrow.Array, n int) (arrow.Array, error) {
			x, y := in[0].(*array.Float32).Float32Values(), in[1].(*array.Float32).Float32Values()
			out := make([]float32, n)
			for i := range out {
				out[i] = math.Nextafter32(x[i], y[i])
			}
			valid, nulls := andValidity(n, in...)
			return fixedArray(ft, out, valid, nulls), nil
		}, true), nil
	}
	return bindSig([]argClass{clsDouble, clsDouble}, types.Float64, func(in []arrow.Array, n int) (arrow.Array, error) {
		x, y := in[0].(*array.Float64).Float64Values(), in[1].(*array.Float64).Float64Values()
		out := make([]float64, n)
		for i := range out {
			out[i] = math.Nextafter(x[i], y[i])
		}
		valid, nulls := andValidity(n, in...)
		return fixedArray(types.Float64, out, valid, nulls), nil
	})(c)
}
