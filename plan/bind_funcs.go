//go:build cgo

package plan

import (
	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
	"github.com/loredb/lore/types"
)

// similarTo binds x [NOT] SIMILAR TO pattern. DuckDB reads the pattern as a regular
// expression that must match the whole string (regexp_full_match), not as the SQL
// standard's SIMILAR pattern; PostgreSQL's parser wraps the pattern in
// similar_to_escape, which is taken off again.
func (b *binder) similarTo(a *pg.A_Expr, ec *exprCtx) (Expr, error) {
	pos := int(a.Location)
	l, err := b.expr(a.Lexpr, ec)
	if err != nil {
		return nil, err
	}
	pat := a.Rexpr
	if fc := pat.GetFuncCall(); fc != nil && funcName(fc) == "similar_to_escape" {
		if len(fc.Args) != 1 {
			return nil, errs.At(errs.Analysis, pos, "SIMILAR TO with a custom ESCAPE is not supported")
		}
		pat = fc.Args[0]
	}
	r, err := b.expr(pat, ec)
	if err != nil {
		return nil, err
	}
	m, err := b.call("regexp_full_match", []Expr{l, r}, pos)
	if err != nil {
		return nil, err
	}
	if op := a.Name[len(a.Name)-1].GetString_().GetSval(); op == "!~" {
		return b.call("not", []Expr{m}, pos)
	}
	return m, nil
}

// conditionalCall binds if(cond, then, else) as the CASE it stands for, so that
// only the rows a branch is taken for are computed by it; ok is false for any
// other function.
func (b *binder) conditionalCall(name string, fc *pg.FuncCall, ec *exprCtx) (e Expr, ok bool, err error) {
	if name == "try" && len(fc.Args) == 1 {
		return b.tryConstantCast(fc.Args[0], ec)
	}
	if name != "if" || len(fc.Funcname) != 1 {
		return nil, false, nil
	}
	if len(fc.Args) != 3 {
		return nil, true, errs.At(errs.Analysis, int(fc.Location), "if takes 3 arguments (condition, then, else), not %d", len(fc.Args))
	}
	ce := &pg.CaseExpr{
		Args:      []*pg.Node{{Node: &pg.Node_CaseWhen{CaseWhen: &pg.CaseWhen{Expr: fc.Args[0], Result: fc.Args[1], Location: fc.Location}}}},
		Defresult: fc.Args[2],
		Location:  fc.Location,
	}
	e, err = b.caseExpr(ce, ec)
	return e, true, err
}

// tryConstantCast binds TRY(CAST('text' AS t)) whose text does not convert: the cast
// of a constant is done when it is bound, so its failure is turned into the NULL
// of t here rather than by the executor. ok is false for any other argument.
func (b *binder) tryConstantCast(arg *pg.Node, ec *exprCtx) (Expr, bool, error) {
	tc := arg.GetTypeCast()
	if tc == nil || tc.Arg.GetAConst() == nil {
		return nil, false, nil
	}
	if _, err := b.typeCast(tc, ec); err == nil || errs.CodeOf(err) != errs.Analysis {
		return nil, false, nil
	}
	to, err := typeName(tc.TypeName)
	if err != nil {
		return nil, false, nil
	}
	return &Literal{V: types.NullOf(to)}, true, nil
}
