package kernels

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// Smaller string functions with DuckDB's semantics: concat_ws, repeat, ascii,
// unicode, chr, to_base, bin, hex, unhex, unbin, translate, the length functions
// in bits and bytes, the digests, hash, encode/decode, base64, URL encoding,
// format_bytes and array_to_string.

// bindConcatWS binds concat_ws(separator, x, ...): the non-NULL arguments joined by
// the separator; NULL when the separator is.
func bindConcatWS(c *call) (*Function, error) {
	if len(c.args) < 2 || !stringish(c.args[0]) {
		return nil, c.mismatch()
	}
	for _, t := range c.args[1:] {
		if !concatenable(t) {
			return nil, c.mismatch()
		}
	}
	return newFunction(c, repeatType(types.String, len(c.args)), types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
		sep := str(in[0])
		var buf []byte
		return evalStrings(in[:1], n, func(i int) (string, error) {
			buf = buf[:0]
			first := true
			for _, a := range in[1:] {
				s := str(a)
				if s.IsNull(i) {
					continue
				}
				if !first {
					buf = append(buf, sep.Value(i)...)
				}
				first = false
				buf = append(buf, s.Value(i)...)
			}
			return string(buf), nil
		})
	}, false), nil
}

// repeatStrings is repeat(s, n): s n times, ” for n <= 0.
func repeatStrings(args []arrow.Array, n int, reserve func(int64) error) (arrow.Array, error) {
	s, k := str(args[0]), i64(args[1])
	valid, _ := andValidity(n, args...)
	var size int64
	for i := 0; i < n; i++ {
		if isValid(valid, 0, i) && k.Value(i) > 0 {
			l := int64(len(s.Value(i)))
			if l > 0 && k.Value(i) > maxStringData/l {
				size = maxStringData + 1
				break
			}
			size += l * k.Value(i)
		}
	}
	if err := reserveStrings("repeat", n, size, reserve); err != nil {
		return nil, err
	}
	return evalStringsSized(args, n, int(size), func(i int) (string, error) {
		if k.Value(i) <= 0 {
			return "", nil
		}
		return strings.Repeat(s.Value(i), int(k.Value(i))), nil
	})
}

// firstCodePoint is ascii(s) (0 for ”) or unicode(s) (-1 for ”): the code point
// of the first character, as INTEGER.
func firstCodePoint(empty int32) kernel {
	return func(in []arrow.Array, n int) (arrow.Array, error) {
		s := str(in[0])
		valid, nulls := andValidity(n, in...)
		out := make([]int32, n)
		for i := 0; i < n; i++ {
			if !isValid(valid, 0, i) {
				continue
			}
			v := s.Value(i)
			if v == "" {
				out[i] = empty
				continue
			}
			r, _ := utf8.DecodeRuneInString(v)
			out[i] = int32(r)
		}
		return fixedArray(types.Int32, out, valid, nulls), nil
	}
}

// chrKernel is chr(code): the character of a Unicode code point.
func chrKernel(in []arrow.Array, n int) (arrow.Array, error) {
	k := i64(in[0])
	return evalStrings(in, n, func(i int) (string, error) {
		c := k.Value(i)
		if c < 0 || c > utf8.MaxRune || (c >= 0xD800 && c <= 0xDFFF) {
			return "", errs.New(errs.Analysis, "chr: %d is not a valid Unicode code point", c)
		}
		return string(rune(c)), nil
	})
}

// toBase is to_base(n, radix [, min_length]): n in upper-case digits of the radix,
// zero-padded on the left to min_length.
func toBase(in []arrow.Array, n int) (arrow.Array, error) {
	x, r := i64(in[0]), i64(in[1])
	var minLen *array.Int64
	if len(in) > 2 {
		minLen = i64(in[2])
	}
	return evalStrings(in, n, func(i int) (string, error) {
		if x.Value(i) < 0 {
			return "", errs.New(errs.Analysis, "to_base: the number must be at least 0, not %d", x.Value(i))
		}
		if r.Value(i) < 2 || r.Value(i) > 36 {
			return "", errs.New(errs.Analysis, "to_base: the radix must be between 2 and 36, not %d", r.Value(i))
		}
		s := strings.ToUpper(strconv.FormatInt(x.Value(i), int(r.Value(i))))
		if minLen != nil {
			if m := minLen.Value(i); m > int64(len(s)) {
				if m > 64 {
					return "", errs.New(errs.Analysis, "to_base: the minimum length must be at most 64, not %d", m)
				}
				s = strings.Repeat("0", int(m)-len(s)) + s
			}
		}
		return s, nil
	})
}

// bindRadix binds hex(x) and bin(x): an integer's bits (a negative one as its
// 64-bit two's complement) or a string's or blob's bytes, in upper-case hex
// digits or binary digits.
func bindRadix(base int) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 1 {
			return nil, c.mismatch()
		}
		t := c.args[0]
		switch {
		case types.IsUnsigned(t):
			return newFunction(c, []arrow.DataType{types.Uint64}, types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
				x := in[0].(*array.Uint64)
				return evalStrings(in, n, func(i int) (string, error) { return radixDigits(x.Value(i), base), nil })
			}, true), nil
		case types.IsInteger(t):
			return newFunction(c, []arrow.DataType{types.Int64}, types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
				x := i64(in[0])
				return evalStrings(in, n, func(i int) (string, error) { return radixDigits(uint64(x.Value(i)), base), nil })
			}, true), nil
		case stringish(t), types.IsBinary(t):
			at := arrow.DataType(types.String)
			if types.IsBinary(t) {
				at = types.Binary
			}
			return newFunction(c, []arrow.DataType{at}, types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
				b := byteRows(in[0])
				return evalStrings(in, n, func(i int) (string, error) {
					v := b(i)
					if base == 16 {
						return strings.ToUpper(hex.EncodeToString([]byte(v))), nil
					}
					var sb strings.Builder
					for j := 0; j < len(v); j++ {
						s := strconv.FormatUint(uint64(v[j]), 2)
						sb.WriteString(strings.Repeat("0", 8-len(s)) + s)
					}
					return sb.String(), nil
				})
			}, true), nil
		}
		return nil, c.mismatch()
	}
}

func radixDigits(u uint64, base int) string {
	return strings.ToUpper(strconv.FormatUint(u, base))
}

// byteRows reads the rows of a VARCHAR or BLOB array as strings of bytes.
func byteRows(a arrow.Array) func(i int) string {
	if b, ok := a.(*array.Binary); ok {
		return func(i int) string { return bstr(b.Value(i)) }
	}
	s := str(a)
	return s.Value
}

// fromDigits is unhex(s) (base 16) or unbin(s) (base 2): the bytes the digits
// spell, as a BLOB; a leading partial byte is padded with zero bits.
func fromDigits(base int) kernel {
	per := map[int]int{16: 2, 2: 8}[base]
	name := map[int]string{16: "unhex", 2: "unbin"}[base]
	return func(in []arrow.Array, n int) (arrow.Array, error) {
		s := str(in[0])
		out, err := evalStrings(in, n, func(i int) (string, error) {
			v := s.Value(i)
			buf := make([]byte, 0, (len(v)+per-1)/per)
			head := len(v) % per
			if head == 0 {
				head = per
			}
			for j := 0; j < len(v); {
				var b byte
				for ; head > 0; head-- {
					d, ok := digitValue(v[j])
					if !ok || d >= base {
						return "", errs.New(errs.Analysis, "%s: %q is not a digit", name, v[j:j+1])
					}
					b = b*byte(base) + byte(d)
					j++
				}
				buf = append(buf, b)
				head = per
			}
			return string(buf), nil
		})
		if err != nil {
			return nil, err
		}
		return asBinary(out), nil
	}
}

func digitValue(c byte) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}

// asBinary relabels a VARCHAR array as a BLOB array over the same buffers.
func asBinary(a arrow.Array) arrow.Array {
	d := a.Data()
	return array.MakeFromData(array.NewData(types.Binary, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset()))
}

// asVarchar relabels a BLOB array as VARCHAR; the bytes must be valid UTF-8.
func asVarchar(a arrow.Array) arrow.Array {
	d := a.Data()
	return array.MakeFromData(array.NewData(types.String, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset()))
}

// translateKernel is translate(s, from, to): each character of s found in from is
// replaced by the character at the same place in to, or removed when to is shorter.
func translateKernel(in []arrow.Array, n int) (arrow.Array, error) {
	s, from, to := str(in[0]), str(in[1]), str(in[2])
	return evalStrings(in, n, func(i int) (string, error) {
		src, dst := []rune(from.Value(i)), []rune(to.Value(i))
		m := make(map[rune]rune, len(src))
		for k, r := range src {
			if _, seen := m[r]; seen {
				continue
			}
			if k < len(dst) {
				m[r] = dst[k]
			} else {
				m[r] = -1
			}
		}
		var sb strings.Builder
		for _, r := range s.Value(i) {
			if t, ok := m[r]; ok {
				if t >= 0 {
					sb.WriteRune(t)
				}
				continue
			}
			sb.WriteRune(r)
		}
		return sb.String(), nil
	})
}

// bindByteLength binds strlen (VARCHAR), octet_length (BLOB) and bit_length (either):
// the bytes (or bits) of the value.
func bindByteLength(bits bool, strOK, blobOK bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 1 {
			return nil, c.mismatch()
		}
		t := c.args[0]
		var at arrow.DataType
		switch {
		case blobOK && types.IsBinary(t):
			at = types.Binary
		case strOK && stringish(t):
			at = types.String
		default:
			return nil, c.mismatch()
		}
		mul := int64(1)
		if bits {
			mul = 8
		}
		return newFunction(c, []arrow.DataType{at}, types.Int64, func(in []arrow.Array, n int) (arrow.Array, error) {
			b := byteRows(in[0])
			return evalInts(in, n, func(i int) int64 { return mul * int64(len(b(i))) }), nil
		}, true), nil
	}
}

// bindDigest binds md5, sha1 and sha256 of a VARCHAR or BLOB: the digest in
// lower-case hex.
func bindDigest(sum func([]byte) []byte) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 1 || !(stringish(c.args[0]) || types.IsBinary(c.args[0])) {
			return nil, c.mismatch()
		}
		at := arrow.DataType(types.String)
		if types.IsBinary(c.args[0]) {
			at = types.Binary
		}
		return newFunction(c, []arrow.DataType{at}, types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
			b := byteRows(in[0])
			return evalStrings(in, n, func(i int) (string, error) { return hex.EncodeToString(sum([]byte(b(i)))), nil })
		}, true), nil
	}
}

var (
	md5Sum    = func(b []byte) []byte { s := md5.Sum(b); return s[:] }
	sha1Sum   = func(b []byte) []byte { s := sha1.Sum(b); return s[:] }
	sha256Sum = func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }
)

// hashOfNull is what hash gives a NULL argument: DuckDB's hash of NULL is not NULL.
const hashOfNull = 0x9e3779b97f4a7c15

// bindHash binds hash(x, ...): a UBIGINT hash of the arguments' text forms. Equal
// values of one type hash alike within Lore; the values differ from DuckDB's.
func bindHash(c *call) (*Function, error) {
	if len(c.args) == 0 {
		return nil, c.mismatch()
	}
	for _, t := range c.args {
		if !CanCast(t, types.String) {
			return nil, c.mismatch()
		}
	}
	return newFunction(c, repeatType(types.String, len(c.args)), types.Uint64, func(in []arrow.Array, n int) (arrow.Array, error) {
		out := make([]uint64, n)
		for i := range out {
			var h uint64
			for k, a := range in {
				s := str(a)
				x := uint64(hashOfNull)
				if !s.IsNull(i) {
					x = hashString(s.Value(i))
				}
				if k == 0 {
					h = x
				} else {
					h = hashCombine(h, x)
				}
			}
			out[i] = h
		}
		return fixedArray(types.Uint64, out, nil, 0), nil
	}, false), nil
}

// encodeKernel is encode(s): the string's UTF-8 bytes as a BLOB.
func encodeKernel(in []arrow.Array, n int) (arrow.Array, error) { return asBinary(in[0]), nil }

// decodeKernel is decode(blob): the bytes as VARCHAR; they must be UTF-8.
func decodeKernel(in []arrow.Array, n int) (arrow.Array, error) {
	b := in[0].(*array.Binary)
	for i := 0; i < n; i++ {
		if b.IsValid(i) && !utf8.Valid(b.Value(i)) {
			return nil, errs.New(errs.Analysis, "decode: the blob is not valid UTF-8")
		}
	}
	return asVarchar(in[0]), nil
}

// toBase64 is base64(blob): the standard padded encoding.
func toBase64(in []arrow.Array, n int) (arrow.Array, error) {
	b := in[0].(*array.Binary)
	return evalStrings(in, n, func(i int) (string, error) { return base64.StdEncoding.EncodeToString(b.Value(i)), nil })
}

// fromBase64 is from_base64(s): the bytes a padded base64 string spells.
func fromBase64(in []arrow.Array, n int) (arrow.Array, error) {
	s := str(in[0])
	out, err := evalStrings(in, n, func(i int) (string, error) {
		b, err := base64.StdEncoding.DecodeString(s.Value(i))
		if err != nil {
			return "", errs.New(errs.Analysis, "from_base64: %q is not base64: %v", s.Value(i), err)
		}
		return string(b), nil
	})
	if err != nil {
		return nil, err
	}
	return asBinary(out), nil
}

// urlEncode is url_encode(s): every byte but letters, digits and -._~ as %XX.
func urlEncode(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			sb.WriteByte(c)
			continue
		}
		sb.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{c})))
	}
	return sb.String()
}

// urlDecode is url_decode(s): %XX sequences decoded; anything else, including a
// malformed escape, kept as it is.
func urlDecode(in []arrow.Array, n int) (arrow.Array, error) {
	s := str(in[0])
	return evalStrings(in, n, func(i int) (string, error) {
		v := s.Value(i)
		var buf []byte
		for j := 0; j < len(v); j++ {
			if v[j] == '%' && j+2 < len(v) {
				hi, ok1 := digitValue(v[j+1])
				lo, ok2 := digitValue(v[j+2])
				if ok1 && ok2 {
					buf = append(buf, byte(hi<<4|lo))
					j += 2
					continue
				}
			}
			buf = append(buf, v[j])
		}
		if !utf8.Valid(buf) {
			return "", errs.New(errs.Analysis, "url_decode: %q does not decode to valid UTF-8", v)
		}
		return string(buf), nil
	})
}

// formatBytes is format_bytes (formatReadableSize) with unit 1024 and KiB … PiB,
// or formatReadableDecimalSize with unit 1000 and kB … PB: the whole number of the
// largest unit not above the value and one decimal, truncated.
func formatBytes(unit int64) kernel {
	names := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	if unit == 1000 {
		names = []string{"kB", "MB", "GB", "TB", "PB"}
	}
	return func(in []arrow.Array, n int) (arrow.Array, error) {
		x := i64(in[0])
		return evalStrings(in, n, func(i int) (string, error) {
			v := x.Value(i)
			sign := ""
			u := uint64(v)
			if v < 0 {
				sign, u = "-", -u
			}
			if u < uint64(unit) {
				if u == 1 {
					return sign + "1 byte", nil
				}
				return sign + strconv.FormatUint(u, 10) + " bytes", nil
			}
			div, k := uint64(unit), 0
			for k+1 < len(names) && u/uint64(unit) >= div {
				div *= uint64(unit)
				k++
			}
			hi, lo := bits.Mul64(u%div, 10)
			frac, _ := bits.Div64(hi, lo, div)
			whole := u / div
			return sign + strconv.FormatUint(whole, 10) + "." + strconv.FormatUint(frac, 10) + " " + names[k], nil
		})
	}
}

// bindArrayToString binds array_to_string(list, separator) for lists of strings:
// the non-NULL elements joined by the separator.
func bindArrayToString(c *call) (*Function, error) {
	if len(c.args) != 2 || !stringish(c.args[1]) {
		return nil, c.mismatch()
	}
	lt, ok := c.args[0].(*arrow.ListType)
	if !ok || !types.IsString(lt.Elem()) {
		return nil, c.mismatch()
	}
	return newFunction(c, []arrow.DataType{StringList, types.String}, types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
		l := in[0].(*array.List)
		elems := plainStrings(l.ListValues())
		sep := str(in[1])
		var buf []byte
		return evalStrings(in[:1], n, func(i int) (string, error) {
			buf = buf[:0]
			from, to := l.ValueOffsets(i)
			first := true
			for j := from; j < to; j++ {
				if elems.IsNull(int(j)) {
					continue
				}
				if !first {
					// A NULL separator joins with commas, as in DuckDB.
					if sep.IsNull(i) {
						buf = append(buf, ',')
					} else {
						buf = append(buf, sep.Value(i)...)
					}
				}
				first = false
				buf = append(buf, elems.Value(int(j))...)
			}
			return string(buf), nil
		})
	}, false), nil
}

// bindToBase binds to_base(n, radix [, min_length]).
func bindToBase(c *call) (*Function, error) {
	if len(c.args) == 3 {
		return bindSig([]argClass{clsInt, clsInt, clsInt}, types.String, toBase)(c)
	}
	return bindSig([]argClass{clsInt, clsInt}, types.String, toBase)(c)
}

// bindBlob1 binds a function of one BLOB argument; a string constant is cast to
// BLOB, as DuckDB casts a string literal, a string column is not.
func bindBlob1(result arrow.DataType, k kernel) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 1 {
			return nil, c.mismatch()
		}
		literal := types.IsString(c.args[0]) && c.consts[0] != nil
		if !(isNullType(c.args[0]) || types.IsBinary(c.args[0]) || literal) {
			return nil, c.mismatch()
		}
		return newFunction(c, []arrow.DataType{types.Binary}, result, k, true), nil
	}
}

// bindTry binds TRY(x): x itself, its type kept. The executor computes it row by
// row when x fails, so that a failing row gives NULL (see exec's compileTry); a
// bare evaluation is the identity.
func bindTry(c *call) (*Function, error) {
	if len(c.args) != 1 {
		return nil, c.mismatch()
	}
	t := c.args[0]
	if isNullType(t) {
		t = types.Int32
	}
	return newFunction(c, []arrow.DataType{t}, t, identity, false), nil
}

// bindConstantOrNull binds constant_or_null(x, y, ...): x where every other argument
// is non-NULL, else NULL.
func bindConstantOrNull(c *call) (*Function, error) {
	if len(c.args) < 2 {
		return nil, c.mismatch()
	}
	t := c.args[0]
	if isNullType(t) {
		t = types.Int32
	}
	args := append([]arrow.DataType{t}, c.args[1:]...)
	return newFunction(c, args, t, func(in []arrow.Array, n int) (arrow.Array, error) {
		valid, nulls := andValidity(n, in[1:]...)
		if nulls == 0 {
			return in[0], nil
		}
		mask := boolArray(valid, n, nil, 0)
		return IfElse(mask, in[0], nullArray(t, n)), nil
	}, false), nil
}

// bindError binds error(message): evaluating it on a row fails the statement with
// the message.
func bindError(c *call) (*Function, error) {
	if len(c.args) != 1 || !stringish(c.args[0]) {
		return nil, c.mismatch()
	}
	return newFunction(c, []arrow.DataType{types.String}, types.Null, func(in []arrow.Array, n int) (arrow.Array, error) {
		if n > 0 {
			m := str(in[0])
			msg := ""
			if m.IsValid(0) {
				msg = m.Value(0)
			}
			return nil, errs.New(errs.Analysis, "%s", msg)
		}
		return nullArray(types.Null, 0), nil
	}, false), nil
}
