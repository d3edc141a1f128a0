package rules

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

func lit(v types.Value) plan.Expr { return &plan.Literal{V: v} }

func TestClassify(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: types.Int64}, {Name: "f", Type: types.Float64}}, nil)
	scan := &plan.Scan{Ref: &plan.TableRef{Listing: &source.Listing{Schema: schema}},
		Cols: []plan.Column{{Name: "x", Type: types.Int64}, {Name: "f", Type: types.Float64}}}
	x := &plan.ColRef{Idx: 0, T: types.Int64, Name: "x"}
	f := &plan.ColRef{Idx: 1, T: types.Float64, Name: "f"}
	i := func(v int64) plan.Expr { return lit(types.IntValue(v)) }
	fl := func(v float64) plan.Expr { return lit(types.FloatValue(v)) }
	// Zone: x in [10, 20] with no NULLs; f in [1, 2] with NaN possible.
	zone := func(nulls int64, single bool) func(int) (ColumnFacts, bool) {
		return func(col int) (ColumnFacts, bool) {
			if col == 0 {
				hi := int64(20)
				if single {
					hi = 10
				}
				return ColumnFacts{Rows: 100, Nulls: nulls, Min: types.IntValue(10), Max: types.IntValue(hi), Bounded: true}, true
			}
			return ColumnFacts{Rows: 100, Nulls: 0, Min: types.FloatValue(1), Max: types.FloatValue(2), Bounded: true, MayHaveNaN: true}, true
		}
	}
	cases := []struct {
		e      plan.Expr
		nulls  int64
		single bool
		want   Verdict
	}{
		{call(t, ">", x, i(5)), 0, false, All},
		{call(t, ">", x, i(5)), 3, false, Some}, // NULLs are not TRUE
		{call(t, ">", x, i(20)), 0, false, None},
		{call(t, ">", x, i(20)), 3, false, None},
		{call(t, ">=", x, i(20)), 0, false, Some},
		{call(t, "<", x, i(10)), 0, false, None},
		{call(t, "<=", x, i(20)), 0, false, All},
		{call(t, "=", x, i(25)), 0, false, None},
		{call(t, "=", x, i(15)), 0, false, Some},
		{call(t, "=", x, i(10)), 0, true, All},
		{call(t, "<>", x, i(10)), 0, true, None},
		{call(t, "<>", x, i(99)), 0, false, All},
		{call(t, "<", i(5), x), 0, false, All}, // literal first
		{&plan.InList{E: x, List: []plan.Expr{i(1), i(2), i(30)}}, 0, false, None},
		{&plan.InList{E: x, List: []plan.Expr{i(1), i(15)}}, 0, false, Some},
		{&plan.InList{E: x, List: []plan.Expr{i(10), i(15)}}, 0, true, All},
		{call(t, "is_null", x), 0, false, None},
		{call(t, "is_null", x), 100, false, All},
		{call(t, "is_not_null", x), 0, false, All},
		{call(t, "and", call(t, ">", x, i(5)), call(t, "<", x, i(30))), 0, false, All},
		{call(t, "and", call(t, ">", x, i(5)), call(t, "<", x, i(15))), 0, false, Some},
		{call(t, "and", call(t, ">", x, i(50)), call(t, "<", x, i(15))), 0, false, None},
		{call(t, "or", call(t, ">", x, i(50)), call(t, "<", x, i(0))), 0, false, None},
		{call(t, "or", call(t, ">", x, i(50)), call(t, ">", x, i(0))), 0, false, All},
		{call(t, "not", call(t, ">", x, i(50))), 0, false, All},
		{call(t, "not", call(t, ">", x, i(50))), 3, false, Some}, // NOT NULL is NULL
		{call(t, "not", call(t, ">", x, i(0))), 3, false, None},
		{call(t, "not", call(t, "is_not_null", x)), 3, false, Some}, // the NULL rows are TRUE
		{call(t, "not", call(t, "is_null", x)), 0, false, All},
		// NaN is above every number: the upper bound of f decides nothing.
		{call(t, ">", f, fl(5)), 0, false, Some},
		{call(t, "<", f, fl(5)), 0, false, Some},
		{call(t, "<", f, fl(0.5)), 0, false, None},
		{call(t, ">", f, fl(0.5)), 0, false, All},
		{call(t, "=", f, fl(math.Inf(1))), 0, false, Some},
		// Not a storage form: unsure.
		{call(t, ">", call(t, "+", x, i(1)), i(5)), 0, false, Some},
	}
	for _, c := range cases {
		if got := Classify(scan, c.e, zone(c.nulls, c.single)); got != c.want {
			t.Errorf("%s (nulls %d, single %v): %s, want %s", plan.Render(c.e, func(i int) string { return scan.Cols[i].Name }), c.nulls, c.single, got, c.want)
		}
	}
	// Nothing known about the column: unsure.
	if got := Classify(scan, call(t, ">", x, i(5)), func(int) (ColumnFacts, bool) { return ColumnFacts{}, false }); got != Some {
		t.Errorf("no facts: %s", got)
	}
}

// tri is a three-valued truth: 0 false, 1 true, 2 NULL.
type tri uint8

func eval(t *testing.T, e plan.Expr, x *int64) tri {
	switch c := e.(type) {
	case *plan.InList:
		if x == nil {
			return 2
		}
		for _, it := range c.List {
			if it.(*plan.Literal).V.I == *x {
				return 1
			}
		}
		return 0
	case *plan.Call:
		switch c.Fn.Name {
		case "and", "or":
			a, b := eval(t, c.Args[0], x), eval(t, c.Args[1], x)
			if c.Fn.Name == "and" {
				switch {
				case a == 0 || b == 0:
					return 0
				case a == 1 && b == 1:
					return 1
				}
				return 2
			}
			switch {
			case a == 1 || b == 1:
				return 1
			case a == 0 && b == 0:
				return 0
			}
			return 2
		case "not":
			a := eval(t, c.Args[0], x)
			if a == 2 {
				return 2
			}
			return 1 - a
		case "is_null":
			if x == nil {
				return 1
			}
			return 0
		case "is_not_null":
			if x == nil {
				return 0
			}
			return 1
		}
		if x == nil {
			return 2
		}
		v := c.Args[1].(*plan.Literal).V.I
		ok := map[string]bool{"=": *x == v, "<>": *x != v, "<": *x < v, "<=": *x <= v, ">": *x > v, ">=": *x >= v}[c.Fn.Name]
		if ok {
			return 1
		}
		return 0
	}
	t.Fatalf("cannot evaluate %T", e)
	return 2
}

// TestClassifyIsSound draws random zones and predicates and checks every verdict
// against the rows: None means no row is TRUE, All means every row is.
func TestClassifyIsSound(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: types.Int64}}, nil)
	scan := &plan.Scan{Ref: &plan.TableRef{Listing: &source.Listing{Schema: schema}}, Cols: []plan.Column{{Name: "x", Type: types.Int64}}}
	x := &plan.ColRef{Idx: 0, T: types.Int64, Name: "x"}
	r := rand.New(rand.NewPCG(9, 9))
	var gen func(depth int) plan.Expr
	gen = func(depth int) plan.Expr {
		if depth > 0 && r.IntN(3) == 0 {
			switch r.IntN(3) {
			case 0:
				return call(t, "and", gen(depth-1), gen(depth-1))
			case 1:
				return call(t, "or", gen(depth-1), gen(depth-1))
			default:
				return call(t, "not", gen(depth-1))
			}
		}
		v := lit(types.IntValue(r.Int64N(30)))
		switch k := r.IntN(9); k {
		case 6:
			return call(t, "is_null", x)
		case 7:
			return call(t, "is_not_null", x)
		case 8:
			return &plan.InList{E: x, List: []plan.Expr{v, lit(types.IntValue(r.Int64N(30)))}}
		default:
			return call(t, []string{"=", "<>", "<", "<=", ">", ">="}[k], x, v)
		}
	}
	verdicts := map[Verdict]int{}
	for n := 0; n < 20000; n++ {
		rows := make([]*int64, 1+r.IntN(6))
		var facts ColumnFacts
		facts.Rows = int64(len(rows))
		for i := range rows {
			if r.IntN(4) == 0 {
				facts.Nulls++
				continue
			}
			v := r.Int64N(30)
			rows[i] = &v
			if !facts.Bounded || v < facts.Min.I {
				facts.Min = types.IntValue(v)
			}
			if !facts.Bounded || v > facts.Max.I {
				facts.Max = types.IntValue(v)
			}
			facts.Bounded = true
		}
		e := gen(3)
		got := Classify(scan, e, func(int) (ColumnFacts, bool) { return facts, true })
		verdicts[got]++
		for _, row := range rows {
			v := eval(t, e, row)
			if (got == None && v == 1) || (got == All && v != 1) {
				t.Fatalf("%s over %v: %s, but a row gives %d", plan.Render(e, func(int) string { return "x" }), rows, got, v)
			}
		}
	}
	if verdicts[None] == 0 || verdicts[All] == 0 {
		t.Fatalf("the draw never decided: %v", verdicts)
	}
	t.Logf("verdicts: %v", verdicts)
}
