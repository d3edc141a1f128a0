package kernels

import (
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// s [NOT] [I]LIKE pattern ESCAPE e where the pattern or the escape is not a
// literal: like_escape(s, pattern, e) and its negated and case-folded forms. Each
// row's pattern is rewritten to the backslash escapes compileLike reads; a pattern
// ending in its escape character matches nothing, as in DuckDB.

func init() {
	registry["like_escape"] = bindLikeEscape(false, false)
	registry["not_like_escape"] = bindLikeEscape(false, true)
	registry["ilike_escape"] = bindLikeEscape(true, false)
	registry["not_ilike_escape"] = bindLikeEscape(true, true)
}

func bindLikeEscape(fold, negate bool) binder {
	return bindSig([]argClass{clsStr, clsStr, clsStr}, types.Boolean, func(in []arrow.Array, n int) (arrow.Array, error) {
		s, p, e := str(in[0]), str(in[1]), str(in[2])
		valid, nulls := andValidity(n, in...)
		bits := make([]byte, bitmapLen(n))
		var lastPat, lastEsc string
		var lp *likePattern
		matchable := false
		for i := 0; i < n; i++ {
			if !isValid(valid, 0, i) {
				continue
			}
			if pat, esc := p.Value(i), e.Value(i); lp == nil || pat != lastPat || esc != lastEsc {
				if utf8.RuneCountInString(esc) > 1 {
					return nil, errs.New(errs.Analysis, "the LIKE escape must be a single character, not %s", types.QuoteString(esc))
				}
				rewritten, ok := escapeLikePattern(pat, esc)
				var err error
				if lp, err = compileLike(rewritten, fold); err != nil {
					return nil, err
				}
				lastPat, lastEsc, matchable = pat, esc, ok
			}
			if (matchable && lp.match(s.Value(i))) != negate {
				bitutil.SetBit(bits, i)
			}
		}
		return boolArray(bits, n, valid, nulls), nil
	})
}

// escapeLikePattern rewrites a LIKE pattern whose escape character is esc (none
// when empty) into one escaped with backslashes; ok is false when the pattern
// ends with a lone escape character.
func escapeLikePattern(pattern, esc string) (string, bool) {
	e, _ := utf8.DecodeRuneInString(esc)
	var out strings.Builder
	pr := []rune(pattern)
	for i := 0; i < len(pr); i++ {
		switch {
		case esc != "" && pr[i] == e:
			if i+1 >= len(pr) {
				return "", false
			}
			i++
			out.WriteRune('\\')
			out.WriteRune(pr[i])
		case pr[i] == '\\':
			out.WriteString(`\\`)
		default:
			out.WriteRune(pr[i])
		}
	}
	return out.String(), true
}
