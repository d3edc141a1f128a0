package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/types"
)

// Expr is a bound, typed scalar expression over the columns of a node's input.
type Expr interface {
	Type() arrow.DataType
	String() string
	// Children returns the direct sub-expressions.
	Children() []Expr
}

// ColRef is input column Idx.
type ColRef struct {
	Idx  int
	T    arrow.DataType
	Name string
}

// Literal is a constant.
type Literal struct{ V types.Value }

// Call applies a resolved scalar function.
type Call struct {
	Fn   *kernels.Function
	Args []Expr
}

// Cast converts E to To.
type Cast struct {
	E  Expr
	To arrow.DataType
}

// When is one branch of a CASE.
type When struct{ Cond, Then Expr }

// Case is a searched CASE; a simple CASE is bound into this form.
type Case struct {
	Whens []When
	Else  Expr // never nil: a missing ELSE is a NULL literal
	T     arrow.DataType
}

// InList is E [NOT] IN (List...) with SQL semantics: NULL when no element equals E
// and E or some element is NULL.
type InList struct {
	E    Expr
	List []Expr
	Not  bool
}

// Subquery is an uncorrelated scalar subquery: evaluated once, at most one row.
type Subquery struct {
	Plan Node
	T    arrow.DataType
}

// InSubquery is E [NOT] IN (an uncorrelated subquery of one column of E's type):
// the subquery is read once into a set.
type InSubquery struct {
	E    Expr
	Plan Node
	Not  bool
}

func (e *InSubquery) Type() arrow.DataType { return types.Boolean }
func (e *InSubquery) Children() []Expr     { return []Expr{e.E} }
func (e *InSubquery) String() string {
	op := " IN "
	if e.Not {
		op = " NOT IN "
	}
	return e.E.String() + op + fmt.Sprintf("(subquery %p)", e.Plan)
}

// Unused stands for a projection output that nothing above reads (set by column
// pruning): it is never computed, and its column stays nil in batches.
type Unused struct{ T arrow.DataType }

func (e *Unused) Type() arrow.DataType { return e.T }
func (e *Unused) Children() []Expr     { return nil }
func (e *Unused) String() string       { return "unused" }

func (e *ColRef) Type() arrow.DataType   { return e.T }
func (e *Literal) Type() arrow.DataType  { return e.V.Type }
func (e *Call) Type() arrow.DataType     { return e.Fn.Result }
func (e *Cast) Type() arrow.DataType     { return e.To }
func (e *Case) Type() arrow.DataType     { return e.T }
func (e *InList) Type() arrow.DataType   { return types.Boolean }
func (e *Subquery) Type() arrow.DataType { return e.T }

func (e *ColRef) Children() []Expr   { return nil }
func (e *Literal) Children() []Expr  { return nil }
func (e *Call) Children() []Expr     { return e.Args }
func (e *Cast) Children() []Expr     { return []Expr{e.E} }
func (e *Subquery) Children() []Expr { return nil }
func (e *Case) Children() []Expr {
	out := make([]Expr, 0, 2*len(e.Whens)+1)
	for _, w := range e.Whens {
		out = append(out, w.Cond, w.Then)
	}
	return append(out, e.Else)
}
func (e *InList) Children() []Expr { return append([]Expr{e.E}, e.List...) }

func (e *ColRef) String() string { return fmt.Sprintf("#%d", e.Idx) }
func (e *Literal) String() string {
	if e.V.Null {
		return "NULL::" + types.Name(e.V.Type)
	}
	if types.IsString(e.V.Type) {
		return "'" + strings.ReplaceAll(e.V.S, "'", "''") + "'"
	}
	if types.IsNumeric(e.V.Type) || e.V.Type.ID() == arrow.BOOL {
		return e.V.String() + "::" + types.Name(e.V.Type)
	}
	return types.Name(e.V.Type) + " '" + e.V.String() + "'"
}
func (e *Call) String() string   { return exprString(e) }
func (e *Cast) String() string   { return exprString(e) }
func (e *Case) String() string   { return exprString(e) }
func (e *InList) String() string { return exprString(e) }

// exprString renders e into one builder: building each level's text from its
// arguments' texts would copy a chain of n calls n times.
func exprString(e Expr) string {
	var b strings.Builder
	render(&b, e, nil)
	return b.String()
}

func (e *Subquery) String() string { return fmt.Sprintf("(subquery %p)", e.Plan) }

// MapExpr rebuilds e bottom-up, replacing each node by f(node) after its children.
func MapExpr(e Expr, f func(Expr) (Expr, error)) (Expr, error) {
	var err error
	switch x := e.(type) {
	case *Call:
		args := make([]Expr, len(x.Args))
		for i, a := range x.Args {
			if args[i], err = MapExpr(a, f); err != nil {
				return nil, err
			}
		}
		e = &Call{Fn: x.Fn, Args: args}
	case *Cast:
		in, err := MapExpr(x.E, f)
		if err != nil {
			return nil, err
		}
		e = &Cast{E: in, To: x.To}
	case *Case:
		c := &Case{T: x.T, Whens: make([]When, len(x.Whens))}
		for i, w := range x.Whens {
			if c.Whens[i].Cond, err = MapExpr(w.Cond, f); err != nil {
				return nil, err
			}
			if c.Whens[i].Then, err = MapExpr(w.Then, f); err != nil {
				return nil, err
			}
		}
		if c.Else, err = MapExpr(x.Else, f); err != nil {
			return nil, err
		}
		e = c
	case *InSubquery:
		in, err := MapExpr(x.E, f)
		if err != nil {
			return nil, err
		}
		e = &InSubquery{E: in, Plan: x.Plan, Not: x.Not}
	case *InList:
		in := &InList{Not: x.Not, List: make([]Expr, len(x.List))}
		if in.E, err = MapExpr(x.E, f); err != nil {
			return nil, err
		}
		for i, a := range x.List {
			if in.List[i], err = MapExpr(a, f); err != nil {
				return nil, err
			}
		}
		e = in
	case *ListLambda:
		if e, err = mapLambda(x, f); err != nil {
			return nil, err
		}
	}
	return f(e)
}

// WalkExpr calls f on e and every sub-expression, parents first.
func WalkExpr(e Expr, f func(Expr)) {
	f(e)
	for _, c := range e.Children() {
		WalkExpr(c, f)
	}
}

// ColumnsUsed adds to set the input columns e reads.
func ColumnsUsed(e Expr, set map[int]bool) {
	WalkExpr(e, func(x Expr) {
		if c, ok := x.(*ColRef); ok {
			set[c.Idx] = true
		}
	})
}

// ShiftColumns returns e with every ColRef index moved by delta.
func ShiftColumns(e Expr, delta int) Expr {
	out, _ := MapExpr(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*ColRef); ok {
			return &ColRef{Idx: c.Idx + delta, T: c.T, Name: c.Name}, nil
		}
		return x, nil
	})
	return out
}

// Conjuncts splits e at its top-level ANDs.
func Conjuncts(e Expr) []Expr {
	return appendConjuncts(nil, e)
}

// appendConjuncts appends e's conjuncts to out. One slice grows for the whole tree:
// a chain of n ANDs nested in each other costs O(n), not the O(n²) of copying each
// level's conjuncts into the level above.
func appendConjuncts(out []Expr, e Expr) []Expr {
	for {
		c, ok := e.(*Call)
		if !ok || c.Fn.Name != "and" || len(c.Args) == 0 {
			return append(out, e)
		}
		// The last argument is followed in a loop, so a chain nested on the right
		// does not grow the stack.
		for _, a := range c.Args[:len(c.Args)-1] {
			out = appendConjuncts(out, a)
		}
		e = c.Args[len(c.Args)-1]
	}
}
