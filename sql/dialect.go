package sql

import (
	"slices"
	"strings"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
)

// Dialect records the DuckDB forms the dialect layer took out of a query's text
// before PostgreSQL's grammar read it, for the binder to apply.
//
// The layer works on tokens and rewrites the text at equal length (blanking words
// with spaces, or writing a same-length marker), so every offset PostgreSQL reports
// and every Location in the tree stays a byte offset into the original request. What
// was removed is keyed by a Location the tree still holds: a SELECT by the Location
// of its first select item (SelectKey), a star by its ColumnRef's Location, an ALL
// by the Location of the marker written in its place.
//
// A nil *Dialect records nothing; its methods answer as for a plain query.
type Dialect struct {
	all     map[int]bool            // markers written for GROUP BY ALL and ORDER BY ALL
	qualify map[int]*pg.Node        // QUALIFY conditions, by SelectKey
	byName  map[int]bool            // UNION BY NAME, by the SelectKey of the right operand
	exclude map[int][]string        // * EXCLUDE (…) names, by the star's Location
	replace map[int][]*pg.ResTarget // * REPLACE (… AS name), by the star's Location
	rename  map[int][][2]string     // * RENAME (old AS new), by the star's Location
	percent map[int]bool            // LIMIT n% and LIMIT n PERCENT, by n's Location
	structs map[int]bool            // struct literals {k: v}, by their row's Location
	maps    map[int]bool            // map literals MAP {k: v}, by their call's Location
}

// allMarker replaces the word ALL of GROUP BY ALL and ORDER BY ALL: a quoted
// identifier of the word's length, so the grammar reads a column reference whose
// Location marks the place.
const allMarker = `"_"`

// SelectKey is the key the dialect layer files a plain SELECT under: the Location of
// its first select item, or -1 for a SELECT with none (VALUES, a set operation).
func SelectKey(sel *pg.SelectStmt) int {
	if sel == nil || len(sel.TargetList) == 0 {
		return -1
	}
	if rt := sel.TargetList[0].GetResTarget(); rt != nil {
		return int(rt.Location)
	}
	return -1
}

// IsAll reports whether n, a GROUP BY or ORDER BY item, was written as ALL.
func (d *Dialect) IsAll(n *pg.Node) bool {
	if d == nil || n == nil {
		return false
	}
	cr := n.GetColumnRef()
	return cr != nil && d.all[int(cr.Location)]
}

// IsPercent reports whether n, a LIMIT count, was written n% or n PERCENT.
func (d *Dialect) IsPercent(n *pg.Node) bool {
	if d == nil || n == nil {
		return false
	}
	c := n.GetAConst()
	return c != nil && d.percent[int(c.Location)]
}

// Qualify returns the QUALIFY condition of sel, or nil.
func (d *Dialect) Qualify(sel *pg.SelectStmt) *pg.Node {
	if d == nil {
		return nil
	}
	return d.qualify[SelectKey(sel)]
}

// ByName reports whether the set operation sel was written UNION [ALL] BY NAME.
func (d *Dialect) ByName(sel *pg.SelectStmt) bool {
	if d == nil || sel == nil || sel.Rarg == nil {
		return false
	}
	return d.byName[SelectKey(leftmost(sel.Rarg))]
}

// leftmost is the first plain SELECT of a set operation's operand.
func leftmost(sel *pg.SelectStmt) *pg.SelectStmt {
	for sel.Larg != nil && sel.Op != pg.SetOperation_SETOP_NONE {
		sel = sel.Larg
	}
	return sel
}

// Exclude returns the names of * EXCLUDE (…) written after the star cr, or nil.
func (d *Dialect) Exclude(cr *pg.ColumnRef) []string {
	if d == nil {
		return nil
	}
	return d.exclude[int(cr.Location)]
}

// Replace returns the items of * REPLACE (expr AS name, …) written after the star
// cr, or nil. Each has a Name.
func (d *Dialect) Replace(cr *pg.ColumnRef) []*pg.ResTarget {
	if d == nil {
		return nil
	}
	return d.replace[int(cr.Location)]
}

// dialectLevel is one bracket level of the walk: the SELECT it holds, if any, and
// where in that SELECT the walk is.
type dialectLevel struct {
	selKey int  // SelectKey of the level's current SELECT, -1 before one
	inList bool // within the select list
}

// rewriteDialect finds the DuckDB-only forms among toks (one statement, whose text
// src starts at byte offset base of text), rewrites src at equal length so
// PostgreSQL's grammar parses it, and returns what it removed (nil when nothing).
// Comments are not tokens and string literals are single tokens, so words inside
// either are never read as syntax.
func rewriteDialect(text string, toks []token, src []byte, base int) (*Dialect, error) {
	var d *Dialect
	get := func() *Dialect {
		if d == nil {
			d = &Dialect{}
		}
		return d
	}
	blank := func(from, to int) { // [from, to) in text offsets
		for i := from; i < to; i++ {
			if c := src[i-base]; c != '\n' && c != '\r' {
				src[i-base] = ' '
			}
		}
	}
	stack := []dialectLevel{{selKey: -1}}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		top := &stack[len(stack)-1]
		next := func(k int) token {
			if i+k < len(toks) {
				return toks[i+k]
			}
			return token{kind: tokSemicolon, start: len(text), end: len(text)}
		}
		switch {
		case t.kind == tokLParen:
			stack = append(stack, dialectLevel{selKey: -1})
		case t.kind == tokRParen:
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case t.kind == pg.Token_SELECT:
			top.selKey, top.inList = firstTarget(toks, i), true
		case t.kind == tokComma && top.inList && (next(1).kind == pg.Token_FROM || i == len(toks)-1):
			// A trailing comma ends DuckDB's select list.
			blank(t.start, t.end)
		case t.kind == pg.Token_FROM || endsFromList(t.kind):
			top.inList = false
			if t.kind == pg.Token_LIMIT && (next(1).kind == pg.Token_ICONST || next(1).kind == pg.Token_FCONST) &&
				(next(2).kind == pg.Token_ASCII_37 || is(text, next(2), "percent")) && endsLimit(next(3)) {
				// LIMIT 10% and LIMIT 10 PERCENT: a share of the rows.
				n, mark := next(1), next(2)
				blank(mark.start, mark.end)
				get()
				if d.percent == nil {
					d.percent = map[int]bool{}
				}
				d.percent[n.start] = true
				i += 2
				continue
			}
			if t.kind == pg.Token_GROUP_P || t.kind == pg.Token_ORDER {
				if next(1).kind == pg.Token_BY && next(2).kind == pg.Token_ALL &&
					(t.kind == pg.Token_ORDER || endsGroupBy(text, next(3))) {
					a := next(2)
					if t.kind == pg.Token_ORDER {
						k := 3
						if next(k).kind == pg.Token_ASC || next(k).kind == pg.Token_DESC {
							k++
						}
						if next(k).kind == pg.Token_NULLS_P {
							k += 2
						}
						if c := next(k); c.kind == tokComma {
							return nil, errs.At(errs.Syntax, c.start, "syntax error at or near \",\": ORDER BY ALL takes no other items")
						}
					}
					copy(src[a.start-base:], allMarker)
					get()
					if d.all == nil {
						d.all = map[int]bool{}
					}
					d.all[a.start] = true
					i += 2
					continue
				}
			}
			if t.kind == pg.Token_UNION {
				j := i + 1
				if j < len(toks) && (toks[j].kind == pg.Token_ALL || toks[j].kind == pg.Token_DISTINCT) {
					j++
				}
				if j+1 < len(toks) && toks[j].kind == pg.Token_BY && toks[j+1].kind == pg.Token_NAME_P {
					k := j + 2
					for k < len(toks) && toks[k].kind == tokLParen {
						k++
					}
					if k >= len(toks) || toks[k].kind != pg.Token_SELECT || firstTarget(toks, k) < 0 {
						return nil, errs.At(errs.Analysis, toks[j].start, "UNION BY NAME takes a SELECT on its right")
					}
					blank(toks[j].start, toks[j+1].end)
					get()
					if d.byName == nil {
						d.byName = map[int]bool{}
					}
					d.byName[firstTarget(toks, k)] = true
					i = j + 1
				}
			}
		case is(text, t, "qualify") && top.selKey >= 0 && t.start > top.selKey &&
			toks[i-1].kind != tokComma && toks[i-1].kind != pg.Token_AS && toks[i-1].kind != tokDot:
			// DuckDB reserves QUALIFY: after the first select item it is the clause
			// (which may follow the select list directly in a FROM-first query).
			top.inList = false
			j := i + 1
			for depth := 0; j < len(toks); j++ {
				u := toks[j]
				if u.kind == tokLParen {
					depth++
				} else if u.kind == tokRParen {
					if depth == 0 {
						break
					}
					depth--
				} else if depth == 0 && endsQualify(u.kind) {
					break
				}
			}
			if j == i+1 {
				return nil, errs.At(errs.Syntax, t.start, "syntax error at or near \"%s\": QUALIFY takes a condition", text[t.start:t.end])
			}
			cond, err := parseItems(text, toks[i+1:j])
			if err != nil {
				return nil, err
			}
			if len(cond) != 1 || cond[0].Name != "" {
				return nil, errs.At(errs.Syntax, toks[i+1].start, "syntax error: QUALIFY takes one condition")
			}
			blank(t.start, toks[j-1].end)
			get()
			if d.qualify == nil {
				d.qualify = map[int]*pg.Node{}
			}
			d.qualify[top.selKey] = cond[0].Val
			i = j - 1
		case t.kind == pg.Token_ASCII_42 && top.inList && (t.start == top.selKey || startsItem(toks[i-1].kind)) &&
			starModifier(text, next(1)) > 0:
			star := starLocation(toks, i)
			j := i + 1
			stage := 0
			for j < len(toks) && starModifier(text, toks[j]) > 0 {
				kw := toks[j]
				if starModifier(text, kw) <= stage {
					// DuckDB's order: EXCLUDE, then REPLACE, then RENAME, each once.
					return nil, errs.At(errs.Syntax, kw.start, "syntax error at or near \"%s\"", text[kw.start:kw.end])
				}
				stage = starModifier(text, kw)
				var end int
				var err error
				switch stage {
				case 1:
					var names []string
					names, end, err = excludeList(text, toks, j+1)
					if err != nil {
						return nil, err
					}
					get()
					if d.exclude == nil {
						d.exclude = map[int][]string{}
					}
					d.exclude[star] = append(d.exclude[star], names...)
				case 2:
					var items []*pg.ResTarget
					items, end, err = replaceList(text, toks, j+1)
					if err != nil {
						return nil, err
					}
					for _, it := range items {
						if d != nil && slices.ContainsFunc(d.exclude[star], func(x string) bool { return strings.EqualFold(x, it.Name) }) {
							return nil, errs.At(errs.Syntax, int(it.Location), "column %q cannot occur in both EXCLUDE and REPLACE list", it.Name)
						}
					}
					get()
					if d.replace == nil {
						d.replace = map[int][]*pg.ResTarget{}
					}
					d.replace[star] = append(d.replace[star], items...)
				default:
					var pairs [][2]string
					pairs, end, err = renameList(text, toks, j+1)
					if err != nil {
						return nil, err
					}
					seen := map[string]bool{}
					for _, p := range pairs {
						old := strings.ToLower(p[0])
						switch {
						case seen[old]:
							return nil, errs.At(errs.Syntax, kw.start, "duplicate entry %q in RENAME list", p[0])
						case d != nil && slices.ContainsFunc(d.exclude[star], func(x string) bool { return strings.EqualFold(x, p[0]) }):
							return nil, errs.At(errs.Syntax, kw.start, "column %q cannot occur in both EXCLUDE and RENAME list", p[0])
						case d != nil && slices.ContainsFunc(d.replace[star], func(r *pg.ResTarget) bool { return strings.EqualFold(r.Name, p[0]) }):
							return nil, errs.At(errs.Syntax, kw.start, "column %q cannot occur in both REPLACE and RENAME list", p[0])
						}
						seen[old] = true
					}
					get()
					if d.rename == nil {
						d.rename = map[int][][2]string{}
					}
					d.rename[star] = append(d.rename[star], pairs...)
				}
				blank(kw.start, toks[end-1].end)
				j = end
			}
			i = j - 1
		}
	}
	return d, nil
}

// starModifier numbers the words that may follow a star in DuckDB's order: EXCLUDE
// 1, REPLACE 2, RENAME 3; any other token 0.
func starModifier(text string, t token) int {
	switch {
	case is(text, t, "exclude"):
		return 1
	case is(text, t, "replace"):
		return 2
	case is(text, t, "rename"):
		return 3
	}
	return 0
}

// itemEnd is the index of the token that ends a select list item starting at toks[j]:
// a comma, FROM or another clause, a closing parenthesis, or RENAME, at its level.
func itemEnd(text string, toks []token, j int) int {
	depth := 0
	for k := j; k < len(toks); k++ {
		switch t := toks[k]; {
		case t.kind == tokLParen:
			depth++
		case t.kind == tokRParen:
			if depth == 0 {
				return k
			}
			depth--
		case depth == 0 && (t.kind == tokComma || t.kind == pg.Token_FROM || endsFromList(t.kind) ||
			is(text, t, "rename") || is(text, t, "qualify")):
			return k
		}
	}
	return len(toks)
}

// replaceList reads the items of * REPLACE from toks[j]: a parenthesized list of
// expr AS name, or one such item. It returns them and the index after them.
func replaceList(text string, toks []token, j int) ([]*pg.ResTarget, int, error) {
	start, end, after := j, 0, 0
	if j < len(toks) && toks[j].kind == tokLParen {
		if end = closeParen(toks, j); end < 0 {
			return nil, 0, errs.At(errs.Syntax, toks[j].start, "syntax error: REPLACE list is not closed")
		}
		start, after = j+1, end+1
	} else {
		end = itemEnd(text, toks, j)
		after = end
	}
	if end <= start {
		pos := len(text)
		if start < len(toks) {
			pos = toks[start].start
		}
		return nil, 0, errs.At(errs.Syntax, pos, "syntax error: REPLACE takes a list of expr AS name")
	}
	items, err := parseItems(text, toks[start:end])
	if err != nil {
		return nil, 0, err
	}
	for _, it := range items {
		if it.Name == "" {
			return nil, 0, errs.At(errs.Syntax, int(it.Location), "syntax error: each REPLACE item is expr AS name")
		}
	}
	return items, after, nil
}

// renameList reads the pairs of * RENAME from toks[j]: a parenthesized list of
// column AS name, or one such pair. It returns them and the index after them.
func renameList(text string, toks []token, j int) ([][2]string, int, error) {
	fail := func(k int) error {
		pos := len(text)
		if k < len(toks) {
			pos = toks[k].start
		}
		return errs.At(errs.Syntax, pos, "syntax error: RENAME takes a list of column AS name")
	}
	pair := func(k int) ([2]string, int, error) {
		if k >= len(toks) || !isWordToken(toks[k]) {
			return [2]string{}, 0, fail(k)
		}
		for k+2 < len(toks) && toks[k+1].kind == tokDot && isWordToken(toks[k+2]) {
			k += 2
		}
		old := identValue(text, toks[k])
		if k+2 >= len(toks) || toks[k+1].kind != pg.Token_AS || !isWordToken(toks[k+2]) {
			return [2]string{}, 0, fail(k + 1)
		}
		return [2]string{old, identValue(text, toks[k+2])}, k + 3, nil
	}
	if j >= len(toks) || toks[j].kind != tokLParen {
		p, k, err := pair(j)
		if err != nil {
			return nil, 0, err
		}
		return [][2]string{p}, k, nil
	}
	var out [][2]string
	for k := j + 1; ; {
		p, next, err := pair(k)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, p)
		switch {
		case next < len(toks) && toks[next].kind == tokComma:
			k = next + 1
		case next < len(toks) && toks[next].kind == tokRParen:
			return out, next + 1, nil
		default:
			return nil, 0, fail(next)
		}
	}
}

// Rename returns the (old, new) name pairs of * RENAME (old AS new, …) written after
// the star cr, or nil.
func (d *Dialect) Rename(cr *pg.ColumnRef) [][2]string {
	if d == nil {
		return nil
	}
	return d.rename[int(cr.Location)]
}

// firstTarget is the offset of the first select item of the SELECT at toks[i]
// (past DISTINCT [ON (…)] or ALL), or -1 when there is none.
func firstTarget(toks []token, i int) int {
	j := i + 1
	if j < len(toks) && toks[j].kind == pg.Token_DISTINCT {
		j++
		if j+1 < len(toks) && toks[j].kind == pg.Token_ON && toks[j+1].kind == tokLParen {
			if j = closeParen(toks, j+1); j < 0 {
				return -1
			}
			j++
		}
	} else if j < len(toks) && toks[j].kind == pg.Token_ALL {
		j++
	}
	if j >= len(toks) || toks[j].kind == pg.Token_FROM || toks[j].kind == tokRParen {
		return -1
	}
	return toks[j].start
}

// closeParen is the index of the parenthesis closing toks[open], or -1.
func closeParen(toks []token, open int) int {
	depth := 0
	for j := open; j < len(toks); j++ {
		switch toks[j].kind {
		case tokLParen:
			depth++
		case tokRParen:
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

// starLocation is the Location of the ColumnRef whose star is toks[i]: the star's
// own offset, or that of the first name of a qualified t.* or s.t.*.
func starLocation(toks []token, i int) int {
	j := i
	for j >= 2 && toks[j-1].kind == tokDot && isWordToken(toks[j-2]) {
		j -= 2
	}
	return toks[j].start
}

// excludeList reads EXCLUDE's names from toks[j]: one name, or a parenthesized
// list; a qualified name counts by its last part. It returns the index past them.
func excludeList(text string, toks []token, j int) ([]string, int, error) {
	name := func(k int) (string, int, error) {
		if k >= len(toks) || !isWordToken(toks[k]) {
			pos := len(text)
			if k < len(toks) {
				pos = toks[k].start
			}
			return "", k, errs.At(errs.Syntax, pos, "syntax error: EXCLUDE takes column names")
		}
		for k+2 < len(toks) && toks[k+1].kind == tokDot && isWordToken(toks[k+2]) {
			k += 2
		}
		return identValue(text, toks[k]), k + 1, nil
	}
	if j >= len(toks) || toks[j].kind != tokLParen {
		n, k, err := name(j)
		if err != nil {
			return nil, 0, err
		}
		return []string{n}, k, nil
	}
	var names []string
	k := j + 1
	for {
		n, next, err := name(k)
		if err != nil {
			return nil, 0, err
		}
		names = append(names, n)
		k = next
		if k < len(toks) && toks[k].kind == tokComma {
			k++
			continue
		}
		if k < len(toks) && toks[k].kind == tokRParen {
			return names, k + 1, nil
		}
		pos := len(text)
		if k < len(toks) {
			pos = toks[k].start
		}
		return nil, 0, errs.At(errs.Syntax, pos, "syntax error: EXCLUDE takes a list of column names")
	}
}

// parseItems parses toks, a comma-separated list of expressions each optionally
// followed by AS name, as the select list of "SELECT …", with Locations into text.
func parseItems(text string, toks []token) ([]*pg.ResTarget, error) {
	const prefix = "SELECT "
	start, end := toks[0].start, toks[len(toks)-1].end
	node, err := parseTree(prefix+text[start:end], start-len(prefix), toks, text)
	if err != nil {
		return nil, err
	}
	sel := node.GetSelectStmt()
	if sel == nil || len(sel.FromClause) > 0 || sel.WhereClause != nil || len(sel.GroupClause) > 0 ||
		sel.HavingClause != nil || len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil ||
		sel.Op != pg.SetOperation_SETOP_NONE || len(sel.DistinctClause) > 0 || len(sel.WindowClause) > 0 {
		return nil, errs.At(errs.Syntax, start, "syntax error at or near \"%s\"", text[start:toks[0].end])
	}
	out := make([]*pg.ResTarget, len(sel.TargetList))
	for i, t := range sel.TargetList {
		out[i] = t.GetResTarget()
	}
	return out, nil
}

// endsGroupBy reports whether t can follow a complete GROUP BY clause, which is what
// tells GROUP BY ALL (DuckDB) from GROUP BY ALL a, b (PostgreSQL's quantifier).
func endsGroupBy(text string, t token) bool {
	switch t.kind {
	case tokSemicolon, tokRParen, pg.Token_HAVING, pg.Token_ORDER, pg.Token_LIMIT, pg.Token_OFFSET,
		pg.Token_FETCH, pg.Token_UNION, pg.Token_INTERSECT, pg.Token_EXCEPT, pg.Token_WINDOW:
		return true
	}
	return is(text, t, "qualify")
}

// endsQualify reports whether a keyword ends a QUALIFY condition at its level.
func endsQualify(k pg.Token) bool {
	switch k {
	case pg.Token_ORDER, pg.Token_LIMIT, pg.Token_OFFSET, pg.Token_FETCH, pg.Token_UNION,
		pg.Token_INTERSECT, pg.Token_EXCEPT, pg.Token_WINDOW:
		return true
	}
	return false
}

// startsItem reports whether a token can come just before a select list's star
// other than its first item: a comma, or the dot of t.* (after any other token a
// star multiplies, and a following EXCLUDE is a column name).
func startsItem(k pg.Token) bool {
	switch k {
	case tokComma, tokDot:
		return true
	}
	return false
}

// endsLimit reports whether t can follow a LIMIT count, which tells LIMIT 10% from
// LIMIT 10 % 3.
func endsLimit(t token) bool {
	switch t.kind {
	case tokSemicolon, tokRParen, pg.Token_OFFSET, pg.Token_UNION, pg.Token_INTERSECT, pg.Token_EXCEPT, pg.Token_FOR:
		return true
	}
	return false
}
