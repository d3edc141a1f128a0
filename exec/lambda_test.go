package exec

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// Lambda functions over a list column that is a slice of a longer one (its offsets
// start past zero, and past the first row), with NULL lists, empty lists, NULL
// elements and a captured column, and lambdas nested in each other.
func TestLambdaFunctionsOverSlices(t *testing.T) {
	i64 := types.Int64
	lt := arrow.ListOf(i64)
	lb := array.NewListBuilder(memory.DefaultAllocator, i64)
	vb := lb.ValueBuilder().(*array.Int64Builder)
	// The first row is sliced away: its elements come before every row's.
	for _, row := range [][]any{{100, 200}, {1, 2, 3}, nil, {}, {4, nil}, {5}} {
		if row == nil {
			lb.AppendNull()
			continue
		}
		lb.Append(true)
		for _, v := range row {
			if v == nil {
				vb.AppendNull()
			} else {
				vb.Append(int64(v.(int)))
			}
		}
	}
	full := lb.NewArray()
	list := array.NewSlice(full, 1, 6)
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	kb.AppendValues([]int64{10, 20, 30, 40, 50}, nil)
	b := &vector.Batch{Cols: []arrow.Array{list, kb.NewArray()}, Rows: 5}

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
	l, k := &plan.ColRef{Idx: 0, T: lt}, &plan.ColRef{Idx: 1, T: i64}
	lit := func(v int64) plan.Expr { return &plan.Literal{V: types.Value{Type: i64, I: v}} }
	// One parameter is the last column; of two, the first is one before it.
	x1 := &plan.LambdaParam{Name: "x", T: i64, FromEnd: 1}
	x2, i2 := &plan.LambdaParam{Name: "x", T: i64, FromEnd: 2}, &plan.LambdaParam{Name: "i", T: i64, FromEnd: 1}
	acc, el, pos := &plan.LambdaParam{Name: "a", T: i64, FromEnd: 3}, &plan.LambdaParam{Name: "b", T: i64, FromEnd: 2}, &plan.LambdaParam{Name: "i", T: i64, FromEnd: 1}
	// For each element x, the reduction of its own row's list from x: the inner
	// lambda's list is a column captured per element, its initial value the outer
	// parameter, computed in the outer body's batch, and its parameters are the two
	// last columns of its own.
	inner := &plan.ListLambda{Kind: plan.LambdaReduce, Name: "list_reduce", List: l, Init: x1,
		Body: call("+", x2, i2), Params: 2, Outer: 1, T: i64}
	cases := []struct {
		e    plan.Expr
		want string
	}{
		{&plan.ListLambda{Kind: plan.LambdaTransform, Name: "list_transform", List: l, Body: call("+", x1, k), Params: 1, T: lt},
			"[11 12 13] (null) [] [44 (null)] [55]"},
		{&plan.ListLambda{Kind: plan.LambdaFilter, Name: "list_filter", List: l, Body: call(">", call("*", x2, i2), lit(3)), Params: 2, T: lt},
			"[2 3] (null) [] [4] [5]"},
		{&plan.ListLambda{Kind: plan.LambdaReduce, Name: "list_reduce", List: l, Init: k, Body: call("+", acc, call("*", el, pos)), Params: 3, T: i64},
			"24 (null) 30 (null) 55"},
		{&plan.ListLambda{Kind: plan.LambdaTransform, Name: "list_transform", List: l, Body: inner, Params: 1, T: lt},
			"[7 8 9] (null) [] [(null) (null)] [10]"},
	}
	bd := &builder{env: &Env{}}
	for _, c := range cases {
		ev, err := bd.compile(c.e)
		if err != nil {
			t.Fatalf("%s: %v", c.e, err)
		}
		got, err := ev(context.Background(), b)
		if err != nil {
			t.Fatalf("%s: %v", c.e, err)
		}
		if s := render(got); s != c.want {
			t.Errorf("%s = %s, want %s", c.e, s, c.want)
		}
	}

	// Without an initial value, an empty list is an error, not a NULL.
	ev, err := bd.compile(&plan.ListLambda{Kind: plan.LambdaReduce, Name: "list_reduce", List: l, Body: call("+", x2, i2), Params: 2, T: i64})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev(context.Background(), b); err == nil || !strings.Contains(err.Error(), "empty list") {
		t.Errorf("list_reduce of an empty list without an initial value: %v", err)
	}
}

func render(a arrow.Array) string {
	parts := make([]string, a.Len())
	for i := range parts {
		if a.IsNull(i) {
			parts[i] = "(null)"
			continue
		}
		parts[i] = fmt.Sprint(a.GetOneForMarshal(i))
		if l, ok := a.(*array.List); ok {
			s, e := l.ValueOffsets(i)
			elems := make([]string, 0, e-s)
			for j := s; j < e; j++ {
				if l.ListValues().IsNull(int(j)) {
					elems = append(elems, "(null)")
				} else {
					elems = append(elems, fmt.Sprint(l.ListValues().GetOneForMarshal(int(j))))
				}
			}
			parts[i] = "[" + strings.Join(elems, " ") + "]"
		}
	}
	return strings.Join(parts, " ")
}
