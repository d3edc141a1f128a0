package kernels

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// The regular expression functions, with DuckDB's semantics. DuckDB uses RE2, whose
// syntax and leftmost-first matching Go's regexp shares. A constant pattern is
// compiled once, when the call is bound (so a bad one fails the statement before it
// runs); a pattern that varies by row is compiled once per distinct value in a
// batch.

// reOpts are the options of a regexp function's flags argument.
type reOpts struct {
	fold    bool // 'i'; 'c' turns it off again
	dotNL   bool // 's': . matches a newline; 'm', 'n' and 'p' turn it off again
	literal bool // 'l': the pattern is a plain string
	global  bool // 'g': regexp_replace replaces every match
}

// parseRegexOptions reads a flags string as DuckDB does: later letters override
// earlier ones, and 'g' is only for regexp_replace.
func parseRegexOptions(s string, allowGlobal bool) (reOpts, error) {
	var o reOpts
	for _, r := range s {
		switch r {
		case 'c':
			o.fold = false
		case 'i':
			o.fold = true
		case 'l':
			o.literal = true
		case 'm', 'n', 'p':
			o.dotNL = false
		case 's':
			o.dotNL = true
		case 'g':
			if !allowGlobal {
				return o, errs.New(errs.Analysis, "option 'g' (global replace) is only valid for regexp_replace")
			}
			o.global = true
		default:
			return o, errs.New(errs.Analysis, "unrecognized regex option %q", string(r))
		}
	}
	return o, nil
}

// compileRegexp compiles pattern under o; full anchors it at both ends.
func compileRegexp(pattern string, o reOpts, full bool) (*regexp.Regexp, error) {
	p := pattern
	if o.literal {
		p = regexp.QuoteMeta(p)
	}
	if full {
		p = `\A(?:` + p + `)\z`
	}
	var flags string
	if o.fold {
		flags += "i"
	}
	if o.dotNL {
		flags += "s"
	}
	if flags != "" {
		p = "(?" + flags + ")" + p
	}
	re, err := regexp.Compile(p)
	if err != nil {
		msg := err.Error()
		if e, ok := err.(interface{ Unwrap() error }); ok && e.Unwrap() != nil {
			msg = e.Unwrap().Error()
		}
		return nil, errs.New(errs.Analysis, "invalid regular expression %q: %s", pattern, strings.TrimPrefix(msg, "error parsing regexp: "))
	}
	return re, nil
}

// rePattern is the pattern argument of a bound call: compiled already when it is
// constant.
type rePattern struct {
	fixed *regexp.Regexp
	opts  reOpts
	full  bool
}

// lookup returns a function giving the compiled pattern of one row; it is for one
// batch (its cache is not shared between goroutines).
func (p *rePattern) lookup(pats *array.String) func(i int) (*regexp.Regexp, error) {
	if p.fixed != nil {
		return func(int) (*regexp.Regexp, error) { return p.fixed, nil }
	}
	cache := map[string]*regexp.Regexp{}
	return func(i int) (*regexp.Regexp, error) {
		s := pats.Value(i)
		if re, ok := cache[s]; ok {
			return re, nil
		}
		re, err := compileRegexp(s, p.opts, p.full)
		if err != nil {
			return nil, err
		}
		if len(cache) < 1024 {
			cache[s] = re
		}
		return re, nil
	}
}

// bindPattern checks the string arguments of a regexp call (the subject, the
// pattern, and the options at position optAt when given, which must be a constant)
// and compiles a constant pattern.
func bindPattern(c *call, optAt int, allowGlobal, full bool) (*rePattern, error) {
	p := &rePattern{full: full}
	if optAt < len(c.args) {
		if !stringish(c.args[optAt]) {
			return nil, c.mismatch()
		}
		v := c.consts[optAt]
		if v == nil {
			return nil, errs.New(errs.Analysis, "%s: the regex options must be a constant", c.name)
		}
		if v.Null {
			return nil, errs.New(errs.Analysis, "%s: the regex options must not be NULL", c.name)
		}
		o, err := parseRegexOptions(v.S, allowGlobal)
		if err != nil {
			return nil, err
		}
		p.opts = o
	}
	if s, ok := c.constString(1); ok {
		re, err := compileRegexp(s, p.opts, full)
		if err != nil {
			return nil, err
		}
		p.fixed = re
	}
	return p, nil
}

func strArgs(c *call, n int) bool {
	for i := 0; i < n; i++ {
		if !stringish(c.args[i]) {
			return false
		}
	}
	return true
}

// regexpArgs declares a regexp call's arguments: strings, except a group index at
// position groupAt (BIGINT). The options and group are constants read at bind time;
// they are declared so that the caller passes them, and the kernels ignore them.
func regexpArgs(c *call, groupAt int) ([]arrow.DataType, error) {
	args := make([]arrow.DataType, len(c.args))
	for i, t := range c.args {
		if i == groupAt {
			if !intish(t) {
				return nil, c.mismatch()
			}
			args[i] = types.Int64
			continue
		}
		if !stringish(t) {
			return nil, c.mismatch()
		}
		args[i] = types.String
	}
	return args, nil
}

// bindRegexpMatch binds regexp_matches (a match anywhere) and regexp_full_match
// (the whole string): (s, pattern [, options]).
func bindRegexpMatch(full bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) < 2 || len(c.args) > 3 {
			return nil, c.mismatch()
		}
		args, err := regexpArgs(c, -1)
		if err != nil {
			return nil, err
		}
		p, err := bindPattern(c, 2, false, full)
		if err != nil {
			return nil, err
		}
		return newFunction(c, args, types.Boolean, func(in []arrow.Array, n int) (arrow.Array, error) {
			s := str(in[0])
			re := p.lookup(str(in[1]))
			var bad error
			out := evalBools(in[:2], n, func(i int) bool {
				r, err := re(i)
				if err != nil {
					bad = err
					return false
				}
				return r.MatchString(s.Value(i))
			})
			if bad != nil {
				return nil, bad
			}
			return out, nil
		}, true), nil
	}
}

// rewrite is regexp_replace's replacement: literal text with \0 … \9 standing for
// the match and its groups and \\ for a backslash, as RE2 reads it.
type rewrite struct {
	lits   []string // lits[k] comes before groups[k]; the last one ends it
	groups []int
	ok     bool // false when the text is not a valid rewrite for the pattern
}

func parseRewrite(r string, numGroups int) rewrite {
	var out rewrite
	var lit strings.Builder
	for i := 0; i < len(r); i++ {
		c := r[i]
		if c != '\\' {
			lit.WriteByte(c)
			continue
		}
		if i+1 == len(r) {
			return rewrite{}
		}
		i++
		switch d := r[i]; {
		case d == '\\':
			lit.WriteByte('\\')
		case d >= '0' && d <= '9':
			if int(d-'0') > numGroups {
				return rewrite{}
			}
			out.lits = append(out.lits, lit.String())
			out.groups = append(out.groups, int(d-'0'))
			lit.Reset()
		default:
			return rewrite{}
		}
	}
	out.lits = append(out.lits, lit.String())
	out.ok = true
	return out
}

// apply appends the rewrite of one match (loc as FindStringSubmatchIndex gives it).
func (rw *rewrite) apply(dst []byte, s string, loc []int) []byte {
	for k, g := range rw.groups {
		dst = append(dst, rw.lits[k]...)
		if a, b := loc[2*g], loc[2*g+1]; a >= 0 {
			dst = append(dst, s[a:b]...)
		}
	}
	return append(dst, rw.lits[len(rw.lits)-1]...)
}

// regexpReplace replaces the first match of re in s (every match when global) by
// rw. An invalid rewrite leaves s as it is, as RE2's Replace does.
func regexpReplace(dst []byte, s string, re *regexp.Regexp, rw rewrite, global bool) []byte {
	if !rw.ok {
		return append(dst, s...)
	}
	if !global {
		loc := re.FindStringSubmatchIndex(s)
		if loc == nil {
			return append(dst, s...)
		}
		dst = append(dst, s[:loc[0]]...)
		dst = rw.apply(dst, s, loc)
		return append(dst, s[loc[1]:]...)
	}
	last := 0
	for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
		dst = append(dst, s[last:loc[0]]...)
		dst = rw.apply(dst, s, loc)
		last = loc[1]
	}
	return append(dst, s[last:]...)
}

// bindRegexpReplace binds regexp_replace(s, pattern, replacement [, options]).
func bindRegexpReplace(c *call) (*Function, error) {
	if len(c.args) < 3 || len(c.args) > 4 {
		return nil, c.mismatch()
	}
	args, err := regexpArgs(c, -1)
	if err != nil {
		return nil, err
	}
	p, err := bindPattern(c, 3, true, false)
	if err != nil {
		return nil, err
	}
	k := func(in []arrow.Array, n int, reserve func(int64) error) (arrow.Array, error) {
		s, r := str(in[0]), str(in[2])
		re := p.lookup(str(in[1]))
		valid, _ := andValidity(n, in[:3]...)
		b := newStrBuilder(n, len(s.ValueBytes()))
		var lastRe *regexp.Regexp
		var lastR string
		var rw rewrite
		for i := 0; i < n; i++ {
			if !isValid(valid, 0, i) {
				b.addNull()
				continue
			}
			x, err := re(i)
			if err != nil {
				return nil, err
			}
			if x != lastRe || r.Value(i) != lastR {
				lastRe, lastR = x, r.Value(i)
				rw = parseRewrite(lastR, x.NumSubexp())
			}
			b.data = regexpReplace(b.data, s.Value(i), x, rw, p.opts.global)
			b.offs = append(b.offs, int32(len(b.data)))
			if len(b.data) > maxStringData {
				return nil, reserveStrings("regexp_replace", n, int64(len(b.data)), nil)
			}
		}
		// A replacement can make the result far larger than its input: the bytes
		// are counted against the statement's memory before the result is kept.
		if err := reserveStrings("regexp_replace", n, int64(len(b.data)), reserve); err != nil {
			return nil, err
		}
		return b.finish(), nil
	}
	f := newFunction(c, args, types.String, func(in []arrow.Array, n int) (arrow.Array, error) { return k(in, n, nil) }, true)
	f.EvalSized = func(in []arrow.Array, n int, reserve func(int64) error) (arrow.Array, error) {
		g := newFunction(c, args, types.String, func(in []arrow.Array, n int) (arrow.Array, error) { return k(in, n, reserve) }, true)
		return g.Eval(in, n)
	}
	return f, nil
}

// constGroup reads the constant group index of regexp_extract(_all) at position i:
// 0 when absent; null when it is a NULL constant.
func constGroup(c *call, i int) (g int, null bool, err error) {
	if i >= len(c.args) {
		return 0, false, nil
	}
	v := c.consts[i]
	if v == nil {
		return 0, false, errs.New(errs.Analysis, "%s: the group index must be a constant", c.name)
	}
	if v.Null {
		return 0, true, nil
	}
	n := v.I
	if types.IsUnsigned(v.Type) {
		n = int64(min(v.U, 1<<31))
	}
	if n < 0 || n > 9 {
		return 0, false, errs.New(errs.Analysis, "%s: the group index must be between 0 and 9, not %d", c.name, n)
	}
	return int(n), false, nil
}

// bindExtractArgs binds the arguments regexp_extract and regexp_extract_all share:
// (s, pattern [, group [, options]]), the group and options constants.
func bindExtractArgs(c *call) (args []arrow.DataType, group int, nullGroup bool, p *rePattern, err error) {
	if len(c.args) < 2 || len(c.args) > 4 {
		return nil, 0, false, nil, c.mismatch()
	}
	if args, err = regexpArgs(c, 2); err != nil {
		return nil, 0, false, nil, err
	}
	if group, nullGroup, err = constGroup(c, 2); err != nil {
		return nil, 0, false, nil, err
	}
	if p, err = bindPattern(c, 3, false, false); err != nil {
		return nil, 0, false, nil, err
	}
	return args, group, nullGroup, p, nil
}

// bindRegexpExtract binds regexp_extract(s, pattern [, group [, options]]): the
// group of the first match, ” when nothing matches or the group took no part.
func bindRegexpExtract(c *call) (*Function, error) {
	args, group, nullGroup, p, err := bindExtractArgs(c)
	if err != nil {
		return nil, err
	}
	return newFunction(c, args, types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
		s := str(in[0])
		re := p.lookup(str(in[1]))
		return evalStrings(in[:2], n, func(i int) (string, error) {
			x, err := re(i)
			if err != nil || nullGroup || group > x.NumSubexp() {
				return "", err
			}
			v := s.Value(i)
			loc := x.FindStringSubmatchIndex(v)
			if loc == nil || loc[2*group] < 0 {
				return "", nil
			}
			return v[loc[2*group]:loc[2*group+1]], nil
		})
	}, true), nil
}

// bindRegexpExtractAll binds regexp_extract_all(s, pattern [, group [, options]]):
// the group of every match, a list, with NULL where the group took no part.
func bindRegexpExtractAll(c *call) (*Function, error) {
	args, group, nullGroup, p, err := bindExtractArgs(c)
	if err != nil {
		return nil, err
	}
	checkGroup := func(x *regexp.Regexp) error {
		if group > x.NumSubexp() {
			return errs.New(errs.Analysis, "regexp_extract_all: the pattern has %d groups, so group %d does not exist", x.NumSubexp(), group)
		}
		return nil
	}
	if p.fixed != nil {
		if err := checkGroup(p.fixed); err != nil {
			return nil, err
		}
	}
	return newFunction(c, args, StringList, func(in []arrow.Array, n int) (arrow.Array, error) {
		s := str(in[0])
		re := p.lookup(str(in[1]))
		return evalLists(in[:2], n, func(i int, b *listBuilder) error {
			x, err := re(i)
			if err != nil {
				return err
			}
			if nullGroup {
				return nil
			}
			if err := checkGroup(x); err != nil {
				return err
			}
			v := s.Value(i)
			for _, loc := range allMatches(x, v) {
				if loc[2*group] < 0 {
					b.addNullElem()
				} else {
					b.add(v[loc[2*group]:loc[2*group+1]])
				}
			}
			return nil
		})
	}, true), nil
}

// bindRegexpSplit binds regexp_split_to_array and string_split_regex
// (s, pattern [, options]): the pieces between the matches.
func bindRegexpSplit(c *call) (*Function, error) {
	if len(c.args) < 2 || len(c.args) > 3 {
		return nil, c.mismatch()
	}
	args, err := regexpArgs(c, -1)
	if err != nil {
		return nil, err
	}
	p, err := bindPattern(c, 2, false, false)
	if err != nil {
		return nil, err
	}
	return newFunction(c, args, StringList, func(in []arrow.Array, n int) (arrow.Array, error) {
		s := str(in[0])
		re := p.lookup(str(in[1]))
		return evalLists(in[:2], n, func(i int, b *listBuilder) error {
			x, err := re(i)
			if err != nil {
				return err
			}
			regexpSplit(b, x, s.Value(i))
			return nil
		})
	}, true), nil
}

// stringSplit is string_split(s, separator): the pieces between occurrences of the
// separator; an empty separator splits into characters, a NULL one gives [s].
func stringSplit(in []arrow.Array, n int) (arrow.Array, error) {
	s, sep := str(in[0]), str(in[1])
	return evalLists(in[:1], n, func(i int, b *listBuilder) error {
		v := s.Value(i)
		switch {
		case sep.IsNull(i):
			b.add(v)
		case v == "":
			b.add(v)
		case sep.Value(i) == "":
			for len(v) > 0 {
				_, size := utf8.DecodeRuneInString(v)
				b.add(v[:size])
				v = v[size:]
			}
		default:
			for _, part := range strings.Split(v, sep.Value(i)) {
				b.add(part)
			}
		}
		return nil
	})
}

// regexpEscape is regexp_escape(s): s with every ASCII character other than a
// letter, a digit or _ escaped by a backslash, as RE2's QuoteMeta writes it.
func regexpEscape(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c >= utf8.RuneSelf:
		case c == 0:
			sb.WriteString(`\x00`)
			continue
		default:
			sb.WriteByte('\\')
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

// allMatches is every match of re in s as RE2 finds them one after another, the way
// DuckDB's regexp_extract_all does: after a non-empty match ending at p the search
// goes on from p, so an empty match right there counts, where Go's FindAll skips
// it. Go's matches are completed with those empty ones by matching at p anchored,
// which gives RE2's answer only when the pattern does not look at what comes
// before p (no ^, $, \b or \B); for such patterns Go's matches are kept as they are.
func allMatches(re *regexp.Regexp, s string) [][]int {
	locs := re.FindAllStringSubmatchIndex(s, -1)
	anch := anchoredOf(re)
	if anch == nil {
		return locs
	}
	var out [][]int
	emptyAt := func(p int) {
		loc := anch.FindStringSubmatchIndex(s[p:])
		if loc == nil || loc[1] != 0 {
			return
		}
		for k := range loc {
			if loc[k] >= 0 {
				loc[k] += p
			}
		}
		out = append(out, loc)
	}
	for k, loc := range locs {
		if k > 0 {
			if prev := locs[k-1]; prev[1] > prev[0] && loc[0] > prev[1] {
				emptyAt(prev[1])
			}
		}
		out = append(out, loc)
	}
	if n := len(locs); n > 0 && locs[n-1][1] > locs[n-1][0] {
		emptyAt(locs[n-1][1])
	}
	return out
}

// anchored holds, per compiled pattern, the pattern anchored at the start of the
// text, or nil when the pattern has assertions that look around its position.
var anchored sync.Map // *regexp.Regexp → *regexp.Regexp (nil when not usable)

func anchoredOf(re *regexp.Regexp) *regexp.Regexp {
	if v, ok := anchored.Load(re); ok {
		return v.(*regexp.Regexp)
	}
	var a *regexp.Regexp
	if t, err := syntax.Parse(re.String(), syntax.Perl); err == nil && !hasAssertion(t) {
		a, _ = regexp.Compile(`^(?:` + re.String() + `)`)
	}
	anchored.Store(re, a)
	return a
}

func hasAssertion(t *syntax.Regexp) bool {
	switch t.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, sub := range t.Sub {
		if hasAssertion(sub) {
			return true
		}
	}
	return false
}

// regexpSplit adds the pieces of s between matches of re as DuckDB finds them: each
// search starts afresh on the rest of the string (so ^ matches where the last piece
// ended), and an empty match at the start of the rest takes one character into the
// piece.
func regexpSplit(b *listBuilder, re *regexp.Regexp, s string) {
	rest := s
	for len(rest) > 0 {
		loc := re.FindStringIndex(rest)
		if loc == nil {
			break
		}
		pos, size := loc[0], loc[1]-loc[0]
		if size == 0 && pos == 0 {
			_, w := utf8.DecodeRuneInString(rest)
			pos = w
			if pos == len(rest) {
				break
			}
		}
		b.add(rest[:pos])
		rest = rest[pos+size:]
	}
	b.add(rest)
}
