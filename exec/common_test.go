package exec

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// TestCommonSubexpressions compiles expression lists that share parts: each shared
// call is computed once, nothing is taken out of a CASE, and every expression gives
// what it gives compiled alone.
func TestCommonSubexpressions(t *testing.T) {
	i64 := types.Int64
	call := func(name string, args ...plan.Expr) plan.Expr {
		ts := make([]arrow.DataType, len(args))
		for i, a := range args {
			ts[i] = a.Type()
		}
		fn, err := kernels.Resolve(name, ts)
		if err != nil {
			t.Fatal(err)
		}
		return &plan.Call{Fn: fn, Args: args}
	}
	x, y, z := &plan.ColRef{Idx: 0, T: i64}, &plan.ColRef{Idx: 1, T: i64}, &plan.ColRef{Idx: 2, T: i64}
	lit := func(v int64) plan.Expr { return &plan.Literal{V: types.Value{Type: i64, I: v}} }
	oneMinusY := call("-", lit(1), y)
	xy := call("*", x, oneMinusY)
	div := func(e plan.Expr) plan.Expr {
		return &plan.Case{Whens: []plan.When{{Cond: call("<>", y, lit(0)), Then: call("/", lit(10), e)}}, Else: &plan.Literal{V: types.NullOf(types.Float64)}, T: types.Float64}
	}
	cases := []struct {
		name   string
		exprs  []plan.Expr
		common int
	}{
		{"nested", []plan.Expr{x, xy, call("*", xy, call("+", lit(1), z)), oneMinusY}, 2},
		{"cast", []plan.Expr{&plan.Cast{E: call("+", x, y), To: types.Float64}, call("+", &plan.Cast{E: call("+", x, y), To: types.Float64}, &plan.Literal{V: types.Value{Type: types.Float64, F: 1}})}, 2},
		{"none", []plan.Expr{call("+", x, y), call("+", x, z), call("+", y, x)}, 0},
		{"literal types", []plan.Expr{call("+", x, lit(1)), call("+", x, &plan.Literal{V: types.Value{Type: types.Int32, I: 1}})}, 0},
		// y is 0 in a row: 10/y must stay under the CASE that guards it.
		{"case", []plan.Expr{div(y), div(y), call("+", div(y), &plan.Literal{V: types.Value{Type: types.Float64, F: 1}})}, 0},
	}
	b := &vector.Batch{Rows: 4}
	for _, vals := range [][]int64{{1, 2, 3, -4}, {0, 5, 1, 0}, {7, 7, -7, 9}} {
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		ib.AppendValues(vals, nil)
		b.Cols = append(b.Cols, ib.NewArray())
	}
	bd := &builder{env: &Env{}}
	ctx := context.Background()
	for _, c := range cases {
		l, err := bd.compileList(c.exprs)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(l.common) != c.common {
			t.Errorf("%s: %d common sub-expressions, want %d", c.name, len(l.common), c.common)
		}
		eb, err := l.extend(ctx, b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i, e := range c.exprs {
			got, err := l.exprs[i](ctx, eb)
			if err != nil {
				t.Fatalf("%s: %s: %v", c.name, e, err)
			}
			alone, err := bd.compile(e)
			if err != nil {
				t.Fatal(err)
			}
			want, err := alone(ctx, b)
			if err != nil {
				t.Fatalf("%s: %s alone: %v", c.name, e, err)
			}
			if !arrow.TypeEqual(got.DataType(), want.DataType()) || !array.Equal(got, want) {
				t.Errorf("%s: %s = %v, alone %v", c.name, e, got, want)
			}
		}
	}
}
