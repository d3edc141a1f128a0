package plan

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// LambdaKind is what a lambda function makes of its lambda's results.
type LambdaKind uint8

const (
	// LambdaTransform lists the body's value for each element.
	LambdaTransform LambdaKind = iota
	// LambdaFilter keeps the elements the body is true for.
	LambdaFilter
	// LambdaReduce folds the elements with the body, from the first (or the
	// initial value) on.
	LambdaReduce
)

// ListLambda applies a lambda to the elements of a list: its body is computed for
// all the elements of all rows at once, over a batch of the elements, where the
// body's parameters are columns after the input's columns (gathered to the
// elements' rows).
type ListLambda struct {
	Kind LambdaKind
	Name string // the function as written
	List Expr
	Init Expr // list_reduce's initial value; nil without one
	Body Expr
	// Cond, when set, keeps the elements it is true for before Body is computed
	// (a list comprehension's IF); Body's position parameter still counts in the
	// whole list.
	Cond Expr
	// Params is how many parameters the lambda takes; Outer how many the lambdas it
	// is written in take, whose columns the batch of its body carries along.
	Params, Outer int
	T             arrow.DataType
}

// LambdaParam is a parameter of a lambda, in its body: an element of the list, the
// element's position (from 1), or list_reduce's accumulated value.
type LambdaParam struct {
	Name string
	T    arrow.DataType
	// FromEnd places the parameter in the batch its body is computed over, whose
	// last columns are the parameters of the lambdas open there: it is column
	// len(cols)-FromEnd however many columns the input has.
	FromEnd int
}

func (e *ListLambda) Type() arrow.DataType { return e.T }
func (e *ListLambda) Children() []Expr {
	out := []Expr{e.List}
	if e.Init != nil {
		out = append(out, e.Init)
	}
	if e.Cond != nil {
		out = append(out, e.Cond)
	}
	return append(out, e.Body)
}
func (e *ListLambda) String() string {
	s := e.Name + "(" + e.List.String()
	if e.Init != nil {
		s += ", " + e.Init.String()
	}
	if e.Cond != nil {
		s += fmt.Sprintf(", λ%d -> %s", e.Params, e.Cond.String())
	}
	return s + fmt.Sprintf(", λ%d -> %s)", e.Params, e.Body.String())
}

func (e *LambdaParam) Type() arrow.DataType { return e.T }
func (e *LambdaParam) Children() []Expr     { return nil }
func (e *LambdaParam) String() string       { return fmt.Sprintf("λ%s@%d", e.Name, e.FromEnd) }

// mapLambda is MapExpr for a ListLambda: its list, initial value and body.
func mapLambda(x *ListLambda, f func(Expr) (Expr, error)) (Expr, error) {
	out := *x
	var err error
	if out.List, err = MapExpr(x.List, f); err != nil {
		return nil, err
	}
	if x.Init != nil {
		if out.Init, err = MapExpr(x.Init, f); err != nil {
			return nil, err
		}
	}
	if x.Cond != nil {
		if out.Cond, err = MapExpr(x.Cond, f); err != nil {
			return nil, err
		}
	}
	if out.Body, err = MapExpr(x.Body, f); err != nil {
		return nil, err
	}
	return &out, nil
}
