package kernels

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/rivo/uniseg"
)

// String functions. They go row by row over typed accessors (not per-row boxing);
// over a dictionary column with constant other arguments the registry runs them
// once per dictionary value. Positions and lengths count characters (code points),
// not bytes.

// caseMap writes lower- or upper-cased rows straight into the result buffer:
// ASCII rows byte by byte with no allocation, others through the unicode tables.
func caseMap(x arrow.Array, upper bool) arrow.Array {
	a := x.(*array.String)
	n := a.Len()
	offs, data := strRaw(a)
	b := newStrBuilder(n, len(a.ValueBytes()))
	lo, hi, delta := byte('A'), byte('Z'), int('a'-'A')
	if upper {
		lo, hi, delta = 'a', 'z', -delta
	}
	for i := 0; i < n; i++ {
		if a.IsNull(i) {
			b.addNull()
			continue
		}
		row := data[offs[i]:offs[i+1]]
		ascii := true
		for _, c := range row {
			if c >= utf8.RuneSelf {
				ascii = false
				break
			}
		}
		if !ascii {
			if upper {
				b.add(strings.ToUpper(string(row)))
			} else {
				b.add(strings.ToLower(string(row)))
			}
			continue
		}
		start := len(b.data)
		b.data = append(b.data, row...)
		for j := start; j < len(b.data); j++ {
			if c := b.data[j]; c >= lo && c <= hi {
				b.data[j] = byte(int(c) + delta)
			}
		}
		b.offs = append(b.offs, int32(len(b.data)))
	}
	return b.finish()
}

// mapStrings applies f to every non-NULL row of a VARCHAR array.
func mapStrings(x arrow.Array, f func(string) string) arrow.Array {
	a := x.(*array.String)
	n := a.Len()
	b := newStrBuilder(n, len(a.ValueBytes()))
	for i := 0; i < n; i++ {
		if a.IsNull(i) {
			b.addNull()
		} else {
			b.add(f(a.Value(i)))
		}
	}
	return b.finish()
}

func isASCII(s string) bool {
	return asciiBytes(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// asciiBytes reports whether b holds only ASCII bytes, looking at eight at a time.
func asciiBytes(b []byte) bool {
	i := 0
	for ; i+32 <= len(b); i += 32 {
		w := binary.LittleEndian.Uint64(b[i:]) | binary.LittleEndian.Uint64(b[i+8:]) |
			binary.LittleEndian.Uint64(b[i+16:]) | binary.LittleEndian.Uint64(b[i+24:])
		if w&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// strLength is length(s) in characters, as BIGINT.
func strLength(x arrow.Array) arrow.Array {
	a := x.(*array.String)
	n := a.Len()
	out := make([]int64, n)
	offs, data := strRaw(a)
	if n > 0 && asciiBytes(data[offs[0]:offs[n]]) {
		// All of the batch's text is ASCII (checked eight bytes at a time): a
		// character is a byte.
		for i := range n {
			out[i] = int64(offs[i+1] - offs[i])
		}
	} else {
		for i := range n {
			out[i] = int64(utf8.RuneCount(data[offs[i]:offs[i+1]]))
		}
	}
	valid, nulls := copyValidity(x)
	return fixedArray(types.Int64, out, valid, nulls)
}

// runeOffset returns the byte offset of the k-th character (0-based) of s, or len(s).
func runeOffset(s string, k int64) int {
	if k <= 0 {
		return 0
	}
	if isASCII(s) {
		return int(min(k, int64(len(s))))
	}
	for i := range s {
		if k == 0 {
			return i
		}
		k--
	}
	return len(s)
}

func runeLen(s string) int64 {
	if isASCII(s) {
		return int64(len(s))
	}
	return int64(utf8.RuneCountInString(s))
}

// substring follows DuckDB: a positive start counts from 1, a negative one from the
// end, 0 starts one character before the first; a negative length takes the
// characters before start.
func substring(s string, start, length int64) string {
	from, to := substringRange(runeLen(s), start, length)
	if from >= to {
		return ""
	}
	return s[runeOffset(s, from):runeOffset(s, to)]
}

// substringRange is the [from, to) range of units (characters, or graphemes for
// substring_grapheme) that substring(s, start, length) takes from a string of size
// units; from >= to when it takes none.
func substringRange(size, start, length int64) (from, to int64) {
	if length == 0 {
		return 0, 0
	}
	switch {
	case start > 0:
		from = min(size, start-1)
	case start < 0:
		from = max(size+start, 0)
	default:
		// Start 0 is one character before the first: one fewer is taken, and
		// nothing at all when length is negative (tested before the decrement,
		// which would wrap around for the smallest BIGINT).
		if length <= 1 {
			return 0, 0
		}
		from = 0
		length--
	}
	if length > 0 {
		if length > size { // also guards from+length against overflow
			length = size
		}
		to = min(size, from+length)
	} else {
		to = from
		from = max(0, from+length)
	}
	return from, to
}

// evalStrings runs f over rows where every argument is non-NULL, producing VARCHAR.
func evalStrings(args []arrow.Array, n int, f func(i int) (string, error)) (arrow.Array, error) {
	return evalStringsSized(args, n, 16*n, f)
}

// evalStringsSized is evalStrings for a result of about size bytes.
func evalStringsSized(args []arrow.Array, n, size int, f func(i int) (string, error)) (arrow.Array, error) {
	valid, _ := andValidity(n, args...)
	b := newStrBuilder(n, size)
	for i := 0; i < n; i++ {
		if !isValid(valid, 0, i) {
			b.addNull()
			continue
		}
		s, err := f(i)
		if err != nil {
			return nil, err
		}
		b.add(s)
	}
	return b.finish(), nil
}

// evalInts runs f over rows where every argument is non-NULL, producing BIGINT.
func evalInts(args []arrow.Array, n int, f func(i int) int64) arrow.Array {
	valid, nulls := andValidity(n, args...)
	out := make([]int64, n)
	for i := 0; i < n; i++ {
		if isValid(valid, 0, i) {
			out[i] = f(i)
		}
	}
	return fixedArray(types.Int64, out, valid, nulls)
}

// evalBools runs f over rows where every argument is non-NULL, producing BOOLEAN.
func evalBools(args []arrow.Array, n int, f func(i int) bool) *array.Boolean {
	valid, nulls := andValidity(n, args...)
	bits := make([]byte, bitmapLen(n))
	for i := 0; i < n; i++ {
		if isValid(valid, 0, i) && f(i) {
			bitutil.SetBit(bits, i)
		}
	}
	return boolArray(bits, n, valid, nulls)
}

func str(a arrow.Array) *array.String { return a.(*array.String) }
func i64(a arrow.Array) *array.Int64  { return a.(*array.Int64) }

// concatStrings is concat(...): NULL arguments are skipped.
func concatStrings(args []arrow.Array, n int) arrow.Array {
	b := newStrBuilder(n, 16*n)
	var buf []byte
	for i := 0; i < n; i++ {
		buf = buf[:0]
		for _, a := range args {
			if s := str(a); !s.IsNull(i) {
				buf = append(buf, s.Value(i)...)
			}
		}
		b.addBytes(buf)
	}
	return b.finish()
}

// concatOp is a || b: NULL if either is NULL.
func concatOp(args []arrow.Array, n int) (arrow.Array, error) {
	x, y := str(args[0]), str(args[1])
	return evalStrings(args, n, func(i int) (string, error) { return x.Value(i) + y.Value(i), nil })
}

func trimFunc(kind byte) func(args []arrow.Array, n int) (arrow.Array, error) {
	return func(args []arrow.Array, n int) (arrow.Array, error) {
		s := str(args[0])
		var set *array.String
		if len(args) > 1 {
			set = str(args[1])
		}
		return evalStrings(args, n, func(i int) (string, error) {
			cut := " "
			if set != nil {
				cut = set.Value(i)
			}
			switch kind {
			case 'l':
				return strings.TrimLeft(s.Value(i), cut), nil
			case 'r':
				return strings.TrimRight(s.Value(i), cut), nil
			}
			return strings.Trim(s.Value(i), cut), nil
		})
	}
}

func replaceStrings(args []arrow.Array, n int, reserve func(int64) error) (arrow.Array, error) {
	s, from, to := str(args[0]), str(args[1]), str(args[2])
	// Each replacement can make a row longer: the result's size is counted first.
	valid, _ := andValidity(n, args...)
	var size int64
	for i := 0; i < n; i++ {
		if !isValid(valid, 0, i) {
			continue
		}
		v, f := s.Value(i), from.Value(i)
		size += int64(len(v))
		if f != "" {
			size += int64(strings.Count(v, f)) * int64(len(to.Value(i))-len(f))
		}
	}
	if err := reserveStrings("replace", n, size, reserve); err != nil {
		return nil, err
	}
	return evalStringsSized(args, n, int(size), func(i int) (string, error) {
		f := from.Value(i)
		if f == "" {
			return s.Value(i), nil
		}
		return strings.ReplaceAll(s.Value(i), f, to.Value(i)), nil
	})
}

func strpos(args []arrow.Array, n int) (arrow.Array, error) {
	s, sub := str(args[0]), str(args[1])
	return evalInts(args, n, func(i int) int64 {
		v := s.Value(i)
		k := strings.Index(v, sub.Value(i))
		if k < 0 {
			return 0
		}
		return runeLen(v[:k]) + 1
	}), nil
}

// leftRight is left(s, k) (first k characters; negative k drops the last -k) or
// right(s, k) (last k; negative k drops the first -k), as DuckDB defines them.
func leftRight(right bool) func(args []arrow.Array, n int) (arrow.Array, error) {
	return func(args []arrow.Array, n int) (arrow.Array, error) {
		s, k := str(args[0]), i64(args[1])
		return evalStrings(args, n, func(i int) (string, error) {
			v, c := s.Value(i), k.Value(i)
			size := runeLen(v)
			var from, to int64
			switch {
			case !right && c >= 0:
				from, to = 0, min(c, size)
			case !right:
				from, to = 0, max(0, size+c)
			case c >= 0:
				from, to = max(0, size-c), size
			case c < -size: // tested this way round, as -c overflows for the smallest BIGINT
				from, to = size, size
			default:
				from, to = -c, size
			}
			return v[runeOffset(v, from):runeOffset(v, to)], nil
		})
	}
}

// reverseString reverses s by extended grapheme cluster, as DuckDB does: a letter and
// its combining marks, a flag, an emoji joined by zero-width joiners stay whole.
func reverseString(s string) string {
	if isASCII(s) {
		b := []byte(s)
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
		return string(b)
	}
	out := make([]byte, len(s))
	end := len(out)
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		from, to := g.Positions()
		end -= to - from
		copy(out[end:], s[from:to])
	}
	return string(out)
}

// pad is lpad/rpad(s, width, fill): pads with fill to width characters, or truncates
// to width when s is longer.
func pad(left bool) sizedKernel {
	return func(args []arrow.Array, n int, reserve func(int64) error) (arrow.Array, error) {
		s, w, f := str(args[0]), i64(args[1]), str(args[2])
		// The result's size is counted before it is made: a width can ask for far
		// more than the arguments hold.
		valid, _ := andValidity(n, args...)
		var size int64
		for i := 0; i < n; i++ {
			if !isValid(valid, 0, i) {
				continue
			}
			v, width, fill := s.Value(i), w.Value(i), f.Value(i)
			size += int64(len(v))
			if need := width - runeLen(v); need > 0 && fill != "" && width <= 1<<24 {
				fr := int64(utf8.RuneCountInString(fill))
				size += (need + fr - 1) / fr * int64(len(fill))
			}
		}
		if err := reserveStrings(map[bool]string{true: "lpad", false: "rpad"}[left], n, size, reserve); err != nil {
			return nil, err
		}
		return evalStringsSized(args, n, int(size), func(i int) (string, error) {
			v, width, fill := s.Value(i), w.Value(i), f.Value(i)
			if width < 0 {
				width = 0
			}
			size := runeLen(v)
			if size >= width {
				return v[:runeOffset(v, width)], nil
			}
			if fill == "" {
				return "", errs.New(errs.Analysis, "insufficient padding in %s: empty fill string", map[bool]string{true: "LPAD", false: "RPAD"}[left])
			}
			if width > 1<<24 {
				return "", errs.New(errs.Analysis, "padding width %d is too large", width)
			}
			need := width - size
			fr := []rune(fill)
			var sb strings.Builder
			if !left {
				sb.WriteString(v)
			}
			for k := int64(0); k < need; k++ {
				sb.WriteRune(fr[k%int64(len(fr))])
			}
			if left {
				sb.WriteString(v)
			}
			return sb.String(), nil
		})
	}
}

// splitPart is split_part(s, delim, k): the k-th field (1-based; negative counts
// from the end), ” when out of range.
func splitPart(args []arrow.Array, n int) (arrow.Array, error) {
	s, d, k := str(args[0]), str(args[1]), i64(args[2])
	return evalStrings(args, n, func(i int) (string, error) {
		v, delim, idx := s.Value(i), d.Value(i), k.Value(i)
		var parts []string
		if delim == "" {
			// An empty delimiter splits into characters, as in DuckDB.
			parts = splitRunes(v)
		} else {
			parts = strings.Split(v, delim)
		}
		switch {
		case idx > 0 && idx <= int64(len(parts)):
			return parts[idx-1], nil
		case idx < 0 && idx >= -int64(len(parts)): // -idx would overflow for the smallest BIGINT
			return parts[int64(len(parts))+idx], nil
		}
		return "", nil
	})
}

// splitRunes is s cut into its characters (code points).
func splitRunes(s string) []string {
	parts := make([]string, 0, len(s))
	for i, r := range s {
		parts = append(parts, s[i:i+utf8.RuneLen(r)])
	}
	return parts
}

func hasPrefix(s, p string) bool   { return strings.HasPrefix(s, p) }
func hasSuffix(s, p string) bool   { return strings.HasSuffix(s, p) }
func containsStr(s, p string) bool { return strings.Contains(s, p) }
