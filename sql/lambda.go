package sql

import (
	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
)

// lambdaFunctions are the functions whose arguments may be lambdas.
var lambdaFunctions = map[string]bool{
	"list_transform": true, "array_transform": true, "list_apply": true, "array_apply": true, "apply": true,
	"list_filter": true, "array_filter": true, "filter": true,
	"list_reduce": true, "array_reduce": true, "reduce": true,
}

// lambdaSite is a lambda written as an argument of a lambda function: DuckDB's
// `x -> body`, `(x, i) -> body` or `lambda x, i: body`.
type lambdaSite struct {
	call   int // offset of the function's name: its FuncCall's Location
	arg    int // the lambda's place among the call's arguments
	nargs  int // how many arguments the call has
	params []string
	at     []int // the parameters' offsets
	arrow  int   // offset of -> (of the word lambda)
}

// lambdaCall is an open parenthesis while the tokens are read: the argument list
// of a lambda function or any other parenthesis or bracket.
type lambdaCall struct {
	call     int // offset of the lambda function's name; -1 for any other parenthesis
	arg      int // index of the argument being read
	argStart int // index of its first token
	sites    []lambdaSite
}

// rewriteLambdas reads the lambdas written as arguments of lambda functions. In
// PostgreSQL's grammar `x -> x > 2` is the operator -> applied to x and x, compared
// with 2 (-> binds more tightly than comparisons and AND/OR), and `lambda x: x` does
// not parse at all, while in DuckDB the body of a lambda is the whole rest of the
// argument. So each lambda's parameters and arrow (or the word lambda, the
// parameters and the colon) are blanked in src (the text from byte base on), which
// leaves the body as the argument and keeps every offset, so every error position,
// where it was; markLambdas puts the parameters back around the body in the tree.
func rewriteLambdas(text string, toks []token, src []byte, base int) []lambdaSite {
	var sites []lambdaSite
	var open []lambdaCall
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if n := len(open); n > 0 && open[n-1].call >= 0 && i == open[n-1].argStart {
			if s, end, ok := readLambdaHead(text, toks, i); ok {
				c := &open[n-1]
				s.call, s.arg = c.call, c.arg
				c.sites = append(c.sites, s)
				for k := t.start; k < toks[end].end; k++ {
					if src[k-base] != '\n' {
						src[k-base] = ' '
					}
				}
				i = end
				continue
			}
		}
		switch t.kind {
		case tokLParen, tokLBracket, tokLBrace:
			c := lambdaCall{call: -1, argStart: i + 1}
			if t.kind == tokLParen && i > 0 && isWordToken(toks[i-1]) && (i < 2 || toks[i-2].kind != tokDot) &&
				!isQuotedIdent(text, toks[i-1]) && lambdaFunctions[identValue(text, toks[i-1])] {
				c.call = toks[i-1].start
			}
			open = append(open, c)
		case tokRParen, tokRBracket, tokRBrace:
			if len(open) == 0 {
				continue
			}
			c := open[len(open)-1]
			open = open[:len(open)-1]
			for _, s := range c.sites {
				s.nargs = c.arg + 1
				sites = append(sites, s)
			}
		case tokComma:
			if len(open) > 0 {
				c := &open[len(open)-1]
				c.arg++
				c.argStart = i + 1
			}
		}
	}
	return sites
}

// readLambdaHead reads the parameters of a lambda whose first token is toks[i]: `x
// ->`, `(x, y) ->` or `lambda x, y:`. It returns the site and the index of the
// arrow's (the colon's) token.
func readLambdaHead(text string, toks []token, i int) (lambdaSite, int, bool) {
	var s lambdaSite
	word := func(t token) bool { return t.kind == pg.Token_IDENT || t.kw == pg.KeywordKind_UNRESERVED_KEYWORD }
	params := func(j int) (int, bool) {
		for ; j < len(toks); j += 2 {
			if !word(toks[j]) {
				return 0, false
			}
			s.params = append(s.params, identValue(text, toks[j]))
			s.at = append(s.at, toks[j].start)
			if j+1 >= len(toks) || toks[j+1].kind != tokComma {
				return j + 1, true
			}
		}
		return 0, false
	}
	isArrow := func(j int) bool {
		return j < len(toks) && toks[j].kind == pg.Token_Op && text[toks[j].start:toks[j].end] == "->"
	}
	t := toks[i]
	switch {
	case is(text, t, "lambda") && i+1 < len(toks) && word(toks[i+1]):
		j, ok := params(i + 1)
		if !ok || j >= len(toks) || text[toks[j].start:toks[j].end] != ":" {
			return s, 0, false
		}
		s.arrow = t.start
		return s, j, true
	case word(t) && isArrow(i+1):
		s.params, s.at, s.arrow = []string{identValue(text, t)}, []int{t.start}, toks[i+1].start
		return s, i + 1, true
	case t.kind == tokLParen:
		j, ok := params(i + 1)
		if !ok || j >= len(toks) || toks[j].kind != tokRParen || !isArrow(j+1) {
			return s, 0, false
		}
		s.arrow = toks[j+1].start
		return s, j + 1, true
	}
	return s, 0, false
}

// markLambdas replaces each argument rewriteLambdas read as a lambda's body by the
// lambda, an -> expression whose left side is the parameter (a column reference)
// or the parameters (a row of them) and whose right side is the body: the tree
// DuckDB's grammar builds.
func markLambdas(m any, sites []lambdaSite) error {
	if len(sites) == 0 {
		return nil
	}
	calls := map[int]*pg.FuncCall{}
	walk(m, func(m any) {
		if fc, ok := m.(*pg.FuncCall); ok {
			calls[int(fc.Location)] = fc
		}
	})
	for _, s := range sites {
		fc := calls[s.call]
		if fc == nil || len(fc.Args) != s.nargs || fc.Args[s.arg] == nil {
			return errs.At(errs.Syntax, s.arrow, "a lambda function is not allowed here")
		}
		fc.Args[s.arg] = lambdaNode(s.params, s.at, s.arrow, fc.Args[s.arg])
	}
	return nil
}

// lambdaNode is the lambda of the parameters params (at their offsets at) whose
// body is body: an -> expression at offset arrow.
func lambdaNode(params []string, at []int, arrow int, body *pg.Node) *pg.Node {
	refs := make([]*pg.Node, len(params))
	for k, p := range params {
		refs[k] = pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(p)}, int32(at[k]))
	}
	left := refs[0]
	if len(refs) > 1 {
		left = &pg.Node{Node: &pg.Node_RowExpr{RowExpr: &pg.RowExpr{Args: refs, RowFormat: pg.CoercionForm_COERCE_IMPLICIT_CAST, Location: int32(at[0])}}}
	}
	return pg.MakeAExprNode(pg.A_Expr_Kind_AEXPR_OP, []*pg.Node{pg.MakeStrNode("->")}, left, body, int32(arrow))
}

// LambdaParams returns the parameter names of n when it is a lambda (an ->
// expression over a column reference or a row of them), with their offsets.
func LambdaParams(n *pg.Node) (names []string, at []int, body *pg.Node, ok bool) {
	a := n.GetAExpr()
	if a == nil || a.Kind != pg.A_Expr_Kind_AEXPR_OP || len(a.Name) != 1 || a.Name[0].GetString_().GetSval() != "->" || a.Lexpr == nil {
		return nil, nil, nil, false
	}
	refs := []*pg.Node{a.Lexpr}
	if r := a.Lexpr.GetRowExpr(); r != nil {
		refs = r.Args
	}
	for _, r := range refs {
		cr := r.GetColumnRef()
		if cr == nil || len(cr.Fields) != 1 || cr.Fields[0].GetString_() == nil {
			return nil, nil, nil, false
		}
		names = append(names, cr.Fields[0].GetString_().GetSval())
		at = append(at, int(cr.Location))
	}
	return names, at, a.Rexpr, true
}
