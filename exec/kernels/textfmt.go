package kernels

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// printf(format, ...) and format(format, ...) as DuckDB has them: printf reads C's
// %-specifications, format the {}-fields of the fmt library. Integers are formatted
// as BIGINT, floats and decimals as DOUBLE, booleans as themselves and anything
// else as its text; a NULL argument makes the result NULL. A specification that
// does not suit its argument's kind (%s of an integer, {:d} of a string) is an
// error, as in DuckDB.

// fmtKind is how a formatting argument is passed.
type fmtKind uint8

const (
	fmtInt fmtKind = iota
	fmtFloat
	fmtBool
	fmtStr
)

func (k fmtKind) String() string {
	return [...]string{"int", "float", "bool", "string"}[k]
}

// fmtSpec is one parsed field: fill and alignment, sign, alternate form (#), zero
// padding, width, precision (-1 when absent), thousands separators and the type
// letter (0 when absent).
type fmtSpec struct {
	fill      rune
	align     byte
	sign      byte
	alt       bool
	zero      bool
	width     int
	prec      int
	thousands bool
	typ       byte
	// unsigned, set by printf, formats a negative integer's x, o and b digits
	// as its 64-bit two's complement, as C does.
	unsigned bool
}

// bindFormat binds printf and format: the format string, then any arguments.
func bindFormat(c *call) (*Function, error) {
	if len(c.args) == 0 || !stringish(c.args[0]) {
		return nil, c.mismatch()
	}
	args := make([]arrow.DataType, len(c.args))
	kinds := make([]fmtKind, len(c.args))
	args[0] = types.String
	for i, t := range c.args[1:] {
		switch {
		case isNullType(t), types.IsString(t):
			args[i+1], kinds[i+1] = types.String, fmtStr
		case types.IsInteger(t):
			args[i+1], kinds[i+1] = types.Int64, fmtInt
		case types.IsFloat(t), types.IsDecimal(t):
			args[i+1], kinds[i+1] = types.Float64, fmtFloat
		case t.ID() == arrow.BOOL:
			args[i+1], kinds[i+1] = types.Boolean, fmtBool
		case CanCast(t, types.String):
			args[i+1], kinds[i+1] = types.String, fmtStr
		default:
			return nil, c.mismatch()
		}
	}
	printf := c.name == "printf" || c.name == "sprintf"
	return newFunction(c, args, types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
		f := str(in[0])
		vals := make([]fmtValue, len(in)-1)
		return evalStrings(in, n, func(i int) (string, error) {
			for j, a := range in[1:] {
				vals[j] = fmtValueAt(a, kinds[j+1], i)
			}
			if printf {
				return formatPrintf(f.Value(i), vals)
			}
			return formatFmt(f.Value(i), vals)
		})
	}, false), nil
}

// fmtValue is one argument's value in one row.
type fmtValue struct {
	kind fmtKind
	i    int64
	f    float64
	s    string
}

func fmtValueAt(a arrow.Array, k fmtKind, i int) fmtValue {
	v := fmtValue{kind: k}
	switch k {
	case fmtInt:
		v.i = a.(*array.Int64).Value(i)
	case fmtFloat:
		v.f = a.(*array.Float64).Value(i)
	case fmtBool:
		if a.(*array.Boolean).Value(i) {
			v.i = 1
		}
	default:
		v.s = a.(*array.String).Value(i)
	}
	return v
}

func fmtError(format string, args ...any) error { return errs.New(errs.Analysis, format, args...) }

// formatPrintf formats C-style: %[flags][width][.precision]type, %% for a percent.
func formatPrintf(f string, vals []fmtValue) (string, error) {
	var sb strings.Builder
	next := 0
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			sb.WriteByte(c)
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			sb.WriteByte('%')
			continue
		}
		sp := fmtSpec{fill: ' ', prec: -1, align: '>', unsigned: true}
	flags:
		for ; i < len(f); i++ {
			switch f[i] {
			case '-':
				sp.align = '<'
			case '+', ' ':
				sp.sign = f[i]
			case '#':
				sp.alt = true
			case '0':
				sp.zero = true
			case ',', '\'':
				sp.thousands = true
			default:
				break flags
			}
		}
		i = readNumber(f, i, &sp.width)
		if i < len(f) && f[i] == '.' {
			sp.prec = 0
			i = readNumber(f, i+1, &sp.prec)
		}
		if i >= len(f) {
			return "", fmtError("printf: the format %q ends inside a specification", f)
		}
		sp.typ = f[i]
		switch sp.typ {
		case 'i', 'u':
			sp.typ = 'd'
		}
		if sp.align == '<' {
			sp.zero = false
		}
		if next >= len(vals) {
			return "", fmtError("printf: argument %d is missing for format %q", next+1, f)
		}
		s, err := formatValue(vals[next], sp)
		if err != nil {
			return "", err
		}
		sb.WriteString(s)
		next++
	}
	return sb.String(), nil
}

// readNumber reads decimal digits of f from i into *n and returns the position after.
func readNumber(f string, i int, n *int) int {
	for ; i < len(f) && f[i] >= '0' && f[i] <= '9'; i++ {
		if *n < 1<<20 {
			*n = *n*10 + int(f[i]-'0')
		}
	}
	return i
}

// formatFmt formats in the fmt library's style: {} takes the next argument, {n}
// argument n (from 0), {:spec} or {n:spec} with a specification
// [[fill]align][sign][#][0][width][.precision][,][type]; {{ and }} are braces.
func formatFmt(f string, vals []fmtValue) (string, error) {
	var sb strings.Builder
	next, manual := 0, false
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c == '}' {
			if i+1 < len(f) && f[i+1] == '}' {
				i++
				sb.WriteByte('}')
				continue
			}
			return "", fmtError("format: unmatched '}' in %q", f)
		}
		if c != '{' {
			sb.WriteByte(c)
			continue
		}
		if i+1 < len(f) && f[i+1] == '{' {
			i++
			sb.WriteByte('{')
			continue
		}
		end := strings.IndexByte(f[i:], '}')
		if end < 0 {
			return "", fmtError("format: unmatched '{' in %q", f)
		}
		field := f[i+1 : i+end]
		i += end
		idxText, specText, _ := strings.Cut(field, ":")
		idx := next
		if idxText != "" {
			k, err := strconv.Atoi(idxText)
			if err != nil || k < 0 {
				return "", fmtError("format: invalid argument index %q in %q", idxText, f)
			}
			if next > 0 {
				return "", fmtError("format: cannot switch from automatic to manual argument indexing in %q", f)
			}
			idx, manual = k, true
		} else {
			if manual {
				return "", fmtError("format: cannot switch from manual to automatic argument indexing in %q", f)
			}
			next++
		}
		if idx >= len(vals) {
			return "", fmtError("format: argument index %d is out of range in %q", idx, f)
		}
		sp, err := parseFmtSpec(specText)
		if err != nil {
			return "", err
		}
		s, err := formatValue(vals[idx], sp)
		if err != nil {
			return "", err
		}
		sb.WriteString(s)
	}
	return sb.String(), nil
}

func parseFmtSpec(s string) (fmtSpec, error) {
	sp := fmtSpec{fill: ' ', prec: -1}
	isAlign := func(b byte) bool { return b == '<' || b == '>' || b == '^' }
	if r, size := utf8.DecodeRuneInString(s); size > 0 && size < len(s) && isAlign(s[size]) {
		sp.fill, sp.align, s = r, s[size], s[size+1:]
	} else if len(s) > 0 && isAlign(s[0]) {
		sp.align, s = s[0], s[1:]
	}
	if len(s) > 0 && (s[0] == '+' || s[0] == '-' || s[0] == ' ') {
		sp.sign, s = s[0], s[1:]
	}
	if len(s) > 0 && s[0] == '#' {
		sp.alt, s = true, s[1:]
	}
	if len(s) > 0 && s[0] == '0' {
		sp.zero, s = true, s[1:]
	}
	i := readNumber(s, 0, &sp.width)
	if i < len(s) && s[i] == '.' {
		sp.prec = 0
		j := readNumber(s, i+1, &sp.prec)
		if j == i+1 {
			return sp, fmtError("format: missing precision in {:%s}", s)
		}
		i = j
	}
	if i < len(s) && s[i] == ',' {
		sp.thousands = true
		i++
	}
	if i < len(s) {
		sp.typ = s[i]
		i++
	}
	if i != len(s) {
		return sp, fmtError("format: invalid format specification {:%s}", s)
	}
	if sp.align != 0 {
		sp.zero = false
	}
	return sp, nil
}

// maxFmtWidth bounds a field's width and precision: one field may not ask for
// more text than this, whatever the rows.
const maxFmtWidth = 1 << 20

// formatValue formats one argument under its specification.
func formatValue(v fmtValue, sp fmtSpec) (string, error) {
	if sp.width > maxFmtWidth || sp.prec > maxFmtWidth {
		return "", fmtError("a format width or precision above %d is not supported", maxFmtWidth)
	}
	bad := func() (string, error) {
		return "", fmtError("invalid type specifier %q for formatting a value of type %s", string(sp.typ), v.kind)
	}
	switch v.kind {
	case fmtBool:
		switch sp.typ {
		case 0, 's':
			return padText(map[bool]string{true: "true", false: "false"}[v.i != 0], sp), nil
		}
		return formatIntSpec(v.i, sp, bad)
	case fmtStr:
		if sp.typ != 0 && sp.typ != 's' {
			return bad()
		}
		s := v.s
		if sp.prec >= 0 {
			s = s[:runeOffset(s, int64(sp.prec))]
		}
		return padText(s, sp), nil
	case fmtInt:
		return formatIntSpec(v.i, sp, bad)
	}
	return formatFloatSpec(v.f, sp, bad)
}

func formatIntSpec(x int64, sp fmtSpec, bad func() (string, error)) (string, error) {
	if sp.prec >= 0 && sp.typ != 'c' {
		return "", fmtError("precision not allowed for an integer")
	}
	neg := x < 0
	u := uint64(x)
	if neg && sp.unsigned && sp.typ != 0 && sp.typ != 'd' && sp.typ != 'c' {
		neg = false
	} else if neg {
		u = -u
	}
	var digits, prefix string
	switch sp.typ {
	case 0, 'd':
		digits = strconv.FormatUint(u, 10)
		if sp.thousands {
			digits = groupThousands(digits)
		}
	case 'x', 'X':
		digits = strconv.FormatUint(u, 16)
		if sp.alt {
			prefix = "0x"
		}
		if sp.typ == 'X' {
			digits, prefix = strings.ToUpper(digits), strings.ToUpper(prefix)
		}
	case 'o':
		digits = strconv.FormatUint(u, 8)
		if sp.alt && digits != "0" {
			prefix = "0"
		}
	case 'b', 'B':
		digits = strconv.FormatUint(u, 2)
		if sp.alt {
			prefix = "0" + string(sp.typ)
		}
	case 'c':
		if x < 0 || x > utf8.MaxRune {
			return "", fmtError("character code %d is out of range", x)
		}
		return padText(string(rune(x)), sp), nil
	default:
		return bad()
	}
	return padNumber(signOf(neg, sp)+prefix, digits, sp), nil
}

func signOf(neg bool, sp fmtSpec) string {
	switch {
	case neg:
		return "-"
	case sp.sign == '+':
		return "+"
	case sp.sign == ' ':
		return " "
	}
	return ""
}

func formatFloatSpec(f float64, sp fmtSpec, bad func() (string, error)) (string, error) {
	neg := math.Signbit(f) && !math.IsNaN(f)
	a := math.Abs(f)
	var digits string
	upper := sp.typ >= 'A' && sp.typ <= 'Z'
	switch {
	case math.IsInf(a, 0):
		digits = "inf"
	case math.IsNaN(a):
		digits = "nan"
	}
	if digits == "" {
		switch sp.typ {
		case 0:
			if sp.prec >= 0 {
				digits = formatGeneral(a, max(sp.prec, 1), false)
			} else {
				digits = shortestFloat(a)
			}
		case 'f', 'F':
			p := sp.prec
			if p < 0 {
				p = 6
			}
			digits = strconv.FormatFloat(a, 'f', p, 64)
		case 'e', 'E':
			p := sp.prec
			if p < 0 {
				p = 6
			}
			digits = strconv.FormatFloat(a, 'e', p, 64)
		case 'g', 'G':
			p := sp.prec
			if p < 0 {
				p = 6
			}
			digits = formatGeneral(a, max(p, 1), sp.alt)
		default:
			return bad()
		}
		if sp.thousands {
			intPart, rest := digits, ""
			if k := strings.IndexAny(digits, ".e"); k >= 0 {
				intPart, rest = digits[:k], digits[k:]
			}
			digits = groupThousands(intPart) + rest
		}
	}
	if upper {
		digits = strings.ToUpper(digits)
	}
	if digits == "inf" || digits == "nan" || digits == "INF" || digits == "NAN" {
		sp.zero = false
	}
	return padNumber(signOf(neg, sp), digits, sp), nil
}

// formatGeneral is C's %g: p significant digits, exponent form when the exponent
// is below -4 or at least p, trailing zeros removed unless alt.
func formatGeneral(a float64, p int, alt bool) string {
	e := strconv.FormatFloat(a, 'e', p-1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	var s string
	if x < -4 || x >= p {
		if !alt && strings.Contains(mant, ".") {
			mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		}
		s = mant + "e" + exp
	} else {
		s = strconv.FormatFloat(a, 'f', max(p-1-x, 0), 64)
		if !alt && strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
	}
	return s
}

// shortestFloat is the fmt library's default for a double: the shortest digits
// that read back exactly, in plain notation for exponents from -4 to 15 (with ".0"
// on an integral value), else as 1.5e+20.
func shortestFloat(a float64) string {
	e := strconv.FormatFloat(a, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	if x < -4 || x >= 16 {
		if len(exp) == 2 { // e+5 is written e+05
			exp = exp[:1] + "0" + exp[1:]
		}
		return mant + "e" + exp
	}
	s := strconv.FormatFloat(a, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// groupThousands puts a comma between each group of three digits.
func groupThousands(d string) string {
	if len(d) <= 3 {
		return d
	}
	var sb strings.Builder
	head := len(d) % 3
	if head > 0 {
		sb.WriteString(d[:head])
	}
	for i := head; i < len(d); i += 3 {
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(d[i : i+3])
	}
	return sb.String()
}

// padText pads s to the width, on the right unless aligned otherwise.
func padText(s string, sp fmtSpec) string {
	align := sp.align
	if align == 0 {
		align = '<'
	}
	return padTo(s, sp.width, sp.fill, align)
}

// padNumber pads a number to the width: with zeros after its sign and prefix when
// zero padding is asked for, else with the fill on the left unless aligned
// otherwise.
func padNumber(head, digits string, sp fmtSpec) string {
	if sp.zero {
		if k := sp.width - len(head) - len(digits); k > 0 {
			return head + strings.Repeat("0", k) + digits
		}
		return head + digits
	}
	align := sp.align
	if align == 0 {
		align = '>'
	}
	return padTo(head+digits, sp.width, sp.fill, align)
}

func padTo(s string, width int, fill rune, align byte) string {
	k := width - utf8.RuneCountInString(s)
	if k <= 0 {
		return s
	}
	f := string(fill)
	switch align {
	case '<':
		return s + strings.Repeat(f, k)
	case '^':
		return strings.Repeat(f, k/2) + s + strings.Repeat(f, k-k/2)
	}
	return strings.Repeat(f, k) + s
}
