package sql

import (
	"strings"
)

// rewriteNullTreatment blanks IGNORE NULLS and RESPECT NULLS written last in a
// function's argument list (`lag(x, 1 IGNORE NULLS)`, DuckDB's form, which
// PostgreSQL's grammar does not have) with spaces in src, so every offset stays
// put. It returns the byte offsets of the functions' names that ignore NULLs: the
// Location the grammar gives their FuncCall. RESPECT NULLS is the default and only
// blanked.
func rewriteNullTreatment(text string, toks []token, src []byte, base int) map[int]bool {
	var ignore map[int]bool
	// calls holds, per open parenthesis, the offset of the function name before it
	// (-1 for a parenthesis that opens no call).
	var calls []int
	for i, t := range toks {
		switch t.kind {
		case tokLParen:
			at := -1
			if i > 0 && isWordToken(toks[i-1]) {
				at = toks[i-1].start
			}
			calls = append(calls, at)
		case tokRParen:
			if len(calls) > 0 {
				calls = calls[:len(calls)-1]
			}
		}
		if i+2 >= len(toks) || len(calls) == 0 || calls[len(calls)-1] < 0 || i == 0 {
			continue
		}
		word := strings.ToUpper(text[t.start:t.end])
		if (word != "IGNORE" && word != "RESPECT") || !isWordToken(t) {
			continue
		}
		nulls := toks[i+1]
		if !strings.EqualFold(text[nulls.start:nulls.end], "NULLS") || toks[i+2].kind != tokRParen ||
			toks[i-1].kind == tokLParen || toks[i-1].kind == tokComma {
			continue
		}
		for k := t.start; k < nulls.end; k++ {
			if src[k-base] != '\n' {
				src[k-base] = ' '
			}
		}
		if word == "IGNORE" {
			if ignore == nil {
				ignore = map[int]bool{}
			}
			ignore[calls[len(calls)-1]] = true
		}
	}
	return ignore
}
