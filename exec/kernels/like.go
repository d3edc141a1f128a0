package kernels

import (
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/loredb/lore/errs"
)

// likePattern is a compiled LIKE pattern: literal segments separated by % with _
// matching exactly one character. The common shapes (exact, prefix%, %suffix,
// %infix%) are matched with a single strings call.
type likePattern struct {
	kind     byte // 'e' exact, 'p' prefix, 's' suffix, 'c' contains, 'g' general
	lit      string
	segs     []likeSeg // general form
	anchorL  bool      // the pattern does not start with %
	anchorR  bool      // the pattern does not end with %
	foldCase bool
	scratch  []byte // ASCII case folding without allocation; a pattern serves one call
}

// likeSeg is a run between % signs: literal text in which '_' positions (by byte
// index into text) match any character.
type likeSeg struct {
	text   string
	any    []bool // any[i]: text[i] is a '_' wildcard (a placeholder byte)
	hasAny bool
}

// compileLike compiles a LIKE pattern with escape character '\'.
func compileLike(p string, foldCase bool) (*likePattern, error) {
	if foldCase {
		p = strings.ToLower(p)
	}
	var segs []likeSeg
	var cur strings.Builder
	var curAny []bool
	hasAny := false
	flush := func() {
		segs = append(segs, likeSeg{text: cur.String(), any: curAny, hasAny: hasAny})
		cur.Reset()
		curAny, hasAny = nil, false
	}
	startsPct, endsPct := false, false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '\\':
			if i+1 >= len(p) {
				return nil, errs.New(errs.Analysis, "LIKE pattern must not end with escape character: %q", p)
			}
			i++
			cur.WriteByte(p[i])
			curAny = append(curAny, false)
		case '%':
			if i == 0 {
				startsPct = true
			}
			if i == len(p)-1 {
				endsPct = true
			}
			flush()
		case '_':
			cur.WriteByte('_')
			curAny = append(curAny, true)
			hasAny = true
		default:
			cur.WriteByte(c)
			curAny = append(curAny, false)
		}
	}
	flush()
	lp := &likePattern{foldCase: foldCase, anchorL: !startsPct, anchorR: !endsPct}
	// Drop empty segments produced by consecutive %; keep the anchors.
	var kept []likeSeg
	for i, s := range segs {
		if s.text == "" && i != 0 && i != len(segs)-1 {
			continue
		}
		kept = append(kept, s)
	}
	segs = kept
	anyWild := false
	for _, s := range segs {
		anyWild = anyWild || s.hasAny
	}
	switch {
	case anyWild:
		lp.kind = 'g'
	case len(segs) == 1:
		lp.kind, lp.lit = 'e', segs[0].text
	case len(segs) == 2 && segs[1].text == "":
		lp.kind, lp.lit = 'p', segs[0].text
	case len(segs) == 2 && segs[0].text == "":
		lp.kind, lp.lit = 's', segs[1].text
	case len(segs) == 3 && segs[0].text == "" && segs[2].text == "":
		lp.kind, lp.lit = 'c', segs[1].text
	default:
		lp.kind = 'g'
	}
	lp.segs = segs
	return lp, nil
}

func (lp *likePattern) match(s string) bool {
	if lp.foldCase {
		s = lp.fold(s)
	}
	switch lp.kind {
	case 'e':
		return s == lp.lit
	case 'p':
		return strings.HasPrefix(s, lp.lit)
	case 's':
		return strings.HasSuffix(s, lp.lit)
	case 'c':
		return strings.Contains(s, lp.lit)
	}
	return lp.matchGeneral(s)
}

// fold lower-cases s for ILIKE, into the pattern's scratch buffer when ASCII.
func (lp *likePattern) fold(s string) string {
	if !isASCII(s) {
		return strings.ToLower(s)
	}
	b := append(lp.scratch[:0], s...)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	lp.scratch = b
	return bstr(b)
}

// matchGeneral matches segment by segment: the first is anchored at the start
// (when the pattern does not begin with %), the last at the end, and each middle
// segment at its leftmost occurrence, which is optimal for % wildcards.
func (lp *likePattern) matchGeneral(s string) bool {
	segs := lp.segs
	pos := 0
	for k, seg := range segs {
		first, last := k == 0, k == len(segs)-1
		switch {
		case first && last:
			end, ok := segAt(seg, s, 0)
			return ok && end == len(s)
		case first:
			end, ok := segAt(seg, s, 0)
			if !ok {
				return false
			}
			pos = end
		case last:
			// The last segment must match at the end, after pos.
			return segEndsAt(seg, s, pos)
		case !seg.hasAny:
			// A literal middle segment: its leftmost occurrence, found with one
			// (vectorised) search instead of a match attempt per position. It starts on
			// a character boundary, as s and the segment are UTF-8.
			i := strings.Index(s[pos:], seg.text)
			if i < 0 {
				return false
			}
			pos += i + len(seg.text)
		default:
			found := false
			for start := pos; start <= len(s); {
				if end, ok := segAt(seg, s, start); ok {
					pos, found = end, true
					break
				}
				if start == len(s) {
					break
				}
				_, w := utf8.DecodeRuneInString(s[start:])
				start += w
			}
			if !found {
				return false
			}
		}
	}
	return true
}

// segAt matches seg at byte position start of s and returns the end position.
func segAt(seg likeSeg, s string, start int) (int, bool) {
	if !seg.hasAny {
		if strings.HasPrefix(s[start:], seg.text) {
			return start + len(seg.text), true
		}
		return 0, false
	}
	p := start
	for i := 0; i < len(seg.text); i++ {
		if p >= len(s) {
			return 0, false
		}
		if seg.any[i] {
			_, w := utf8.DecodeRuneInString(s[p:])
			p += w
			continue
		}
		if s[p] != seg.text[i] {
			return 0, false
		}
		p++
	}
	return p, true
}

// segEndsAt reports whether seg matches a suffix of s starting at or after pos.
func segEndsAt(seg likeSeg, s string, pos int) bool {
	if !seg.hasAny {
		return len(s)-pos >= len(seg.text) && strings.HasSuffix(s, seg.text)
	}
	// Wildcards make the suffix length in bytes variable: try each start.
	for start := pos; start <= len(s); {
		if end, ok := segAt(seg, s, start); ok && end == len(s) {
			return true
		}
		if start == len(s) {
			break
		}
		_, w := utf8.DecodeRuneInString(s[start:])
		start += w
	}
	return false
}

// likeKernel evaluates s [NOT] [I]LIKE pattern. A constant pattern (the usual
// case) is compiled once and the rows are read straight from the string buffer;
// otherwise each distinct consecutive pattern is compiled once.
func likeKernel(foldCase, negate bool) func(args []arrow.Array, n int) (arrow.Array, error) {
	return func(args []arrow.Array, n int) (arrow.Array, error) {
		s, p := str(args[0]), str(args[1])
		valid, nulls := andValidity(n, args...)
		bits := make([]byte, bitmapLen(n))
		if n > 0 && p.NullN() == 0 && constantValue(p) {
			lp, err := compileLike(p.Value(0), foldCase)
			if err != nil {
				return nil, err
			}
			offs, data := strRaw(s)
			for i := 0; i < n; i++ {
				if isValid(valid, 0, i) && lp.match(bstr(data[offs[i]:offs[i+1]])) != negate {
					bits[i>>3] |= 1 << (i & 7)
				}
			}
			return boolArray(bits, n, valid, nulls), nil
		}
		var lastPat string
		var lp *likePattern
		for i := 0; i < n; i++ {
			if !isValid(valid, 0, i) {
				continue
			}
			if pat := p.Value(i); lp == nil || pat != lastPat {
				var err error
				if lp, err = compileLike(pat, foldCase); err != nil {
					return nil, err
				}
				lastPat = pat
			}
			if lp.match(s.Value(i)) != negate {
				bitutil.SetBit(bits, i)
			}
		}
		return boolArray(bits, n, valid, nulls), nil
	}
}
