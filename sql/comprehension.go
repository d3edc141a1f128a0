package sql

import (
	"errors"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
)

// Comprehension is the name of the call a list comprehension is read as: [expr
// FOR x, i IN list IF cond] calls it with list, (x, i) -> expr and (x, i) -> cond.
// The space keeps it apart from any name written without quotes.
const Comprehension = "list comprehension"

// comprehension is a list comprehension written in the text.
type comprehension struct {
	start, end int    // the bytes of [ … ]
	expr, list [2]int // the bytes of the element's expression and of the list
	cond       [2]int // the bytes of the IF condition; cond[1] is 0 without one
	params     []string
	at         []int // the parameters' offsets
	forAt      int   // offset of FOR
}

// findComprehensions returns the list comprehensions of the text, inner ones
// before the ones they are in: brackets holding, outside any parenthesis of their
// own, FOR, parameters, IN, a list and, after an IF that calls nothing, a condition.
func findComprehensions(text string, toks []token) []comprehension {
	type open struct {
		tok                  int
		bracket              bool
		forTok, inTok, ifTok int
	}
	var out []comprehension
	var stack []open
	for i, t := range toks {
		switch t.kind {
		case tokLParen, tokLBracket, tokLBrace:
			stack = append(stack, open{tok: i, bracket: t.kind == tokLBracket, forTok: -1, inTok: -1, ifTok: -1})
			continue
		case tokRParen, tokRBracket, tokRBrace:
			if len(stack) == 0 {
				continue
			}
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if t.kind != tokRBracket || !o.bracket || o.forTok <= o.tok+1 || o.inTok < 0 {
				continue
			}
			c := comprehension{start: toks[o.tok].start, end: t.end, forAt: toks[o.forTok].start}
			j := o.forTok + 1
			for ; j < o.inTok; j += 2 {
				w := toks[j]
				if w.kind != pg.Token_IDENT && w.kw != pg.KeywordKind_UNRESERVED_KEYWORD {
					break
				}
				c.params = append(c.params, identValue(text, w))
				c.at = append(c.at, w.start)
				if j+1 < o.inTok && toks[j+1].kind != tokComma {
					break
				}
			}
			listEnd := i
			if o.ifTok > o.inTok {
				listEnd = o.ifTok
				if o.ifTok+1 >= i {
					continue
				}
				c.cond = [2]int{toks[o.ifTok+1].start, toks[i-1].end}
			}
			if j != o.inTok+1 && j != o.inTok || len(c.params) == 0 || o.inTok+1 >= listEnd {
				continue
			}
			c.expr = [2]int{toks[o.tok+1].start, toks[o.forTok-1].end}
			c.list = [2]int{toks[o.inTok+1].start, toks[listEnd-1].end}
			out = append(out, c)
			continue
		}
		if len(stack) == 0 || !stack[len(stack)-1].bracket {
			continue
		}
		o := &stack[len(stack)-1]
		switch {
		case t.kind == pg.Token_FOR && o.forTok < 0:
			o.forTok = i
		case t.kind == pg.Token_IN_P && o.forTok >= 0 && o.inTok < 0:
			o.inTok = i
		case o.inTok >= 0 && is(text, t, "if") && (i+1 >= len(toks) || toks[i+1].kind != tokLParen):
			o.ifTok = i
		}
	}
	return out
}

// rewriteComprehensions reads the list comprehensions, which PostgreSQL's grammar
// has no form for: each one's parts are parsed on their own, at their offsets in
// the text (so every position in them stays right), into a call of Comprehension,
// and its text in src (from byte base on) becomes a quoted identifier of the same
// length, which markComprehensions replaces by the call once the statement is
// parsed. Inner comprehensions are read first and their calls put into the parts
// of the ones around them. edits are the insertions nested literals need (offsets
// into src); those inside a comprehension apply to its parts, and the others are
// returned for the statement.
func rewriteComprehensions(text string, toks []token, src []byte, base int, edits []edit) (map[int]*pg.Node, []edit, error) {
	cs := findComprehensions(text, toks)
	if len(cs) == 0 {
		return nil, edits, nil
	}
	// An edit in the bytes [lo, hi) applies there unless a comprehension among them
	// holds it; the bracket of a comprehension opens no list literal, so its ARRAY
	// goes too.
	applies := func(e edit, lo, hi int) bool {
		if e.at < lo-base || e.at >= hi-base {
			return false
		}
		for _, c := range cs {
			if c.start >= lo && c.end <= hi &&
				(e.at > c.start-base && e.at < c.end-base || e.at == c.start-base && e.ins == "ARRAY") {
				return false
			}
		}
		return true
	}
	var rest []edit
	for _, e := range edits {
		if applies(e, base, base+len(src)+1) {
			rest = append(rest, e)
		}
	}
	calls := make(map[int]*pg.Node, len(cs))
	part := func(r [2]int) (*pg.Node, error) {
		const head = "SELECT "
		if r[0]-base < len(head) {
			return nil, errs.At(errs.Syntax, r[0], "a list comprehension is not allowed here")
		}
		buf := make([]byte, len(src))
		for k := range buf {
			buf[k] = ' '
			if src[k] == '\n' {
				buf[k] = '\n'
			}
		}
		copy(buf, head)
		copy(buf[r[0]-base:r[1]-base], src[r[0]-base:r[1]-base])
		var mine []edit
		for _, e := range edits {
			if applies(e, r[0], r[1]) {
				mine = append(mine, e)
			}
		}
		var n *pg.Node
		var err error
		if len(mine) == 0 {
			n, err = parseTree(string(buf), base, toks, text)
		} else {
			out, back := splice(string(buf), mine)
			n, err = parseMapped(out, func(o int) int { return base + back(o) }, toks, text)
		}
		if err != nil {
			// The part ended early: the error is at the word after it.
			var e *errs.Error
			if errors.As(err, &e) && (e.Pos >= r[1] || e.Pos == errs.NoPosition) {
				for _, t := range toks {
					if t.start >= r[1] {
						return nil, errs.At(errs.Syntax, t.start, "syntax error at or near %q", text[t.start:t.end])
					}
				}
			}
			return nil, err
		}
		sel := n.GetSelectStmt()
		if sel == nil || len(sel.TargetList) != 1 || sel.TargetList[0].GetResTarget() == nil || len(sel.FromClause) > 0 {
			return nil, errs.At(errs.Syntax, r[0], "a list comprehension's part is not one expression")
		}
		val := sel.TargetList[0].GetResTarget().Val
		markComprehensions(val, calls)
		return val, nil
	}
	for _, c := range cs {
		list, err := part(c.list)
		if err != nil {
			return nil, nil, err
		}
		expr, err := part(c.expr)
		if err != nil {
			return nil, nil, err
		}
		args := []*pg.Node{list, lambdaNode(c.params, c.at, c.forAt, expr)}
		if c.cond[1] > 0 {
			cond, err := part(c.cond)
			if err != nil {
				return nil, nil, err
			}
			args = append(args, lambdaNode(c.params, c.at, c.forAt, cond))
		}
		calls[c.start] = &pg.Node{Node: &pg.Node_FuncCall{FuncCall: &pg.FuncCall{
			Funcname: []*pg.Node{pg.MakeStrNode(Comprehension)}, Args: args,
			Funcformat: pg.CoercionForm_COERCE_EXPLICIT_CALL, Location: int32(c.start),
		}}}
		for k := c.start; k < c.end; k++ {
			if src[k-base] != '\n' {
				src[k-base] = '_'
			}
		}
		src[c.start-base], src[c.end-1-base] = '"', '"'
	}
	return calls, rest, nil
}

// markComprehensions puts the calls rewriteComprehensions made in the places of
// their quoted identifiers in the tree below m.
func markComprehensions(m any, calls map[int]*pg.Node) {
	if len(calls) == 0 {
		return
	}
	walk(m, func(m any) {
		n, ok := m.(*pg.Node)
		if !ok {
			return
		}
		cr := n.GetColumnRef()
		if cr == nil || len(cr.Fields) != 1 {
			return
		}
		if call, ok := calls[int(cr.Location)]; ok {
			n.Node = call.Node
		}
	})
}
