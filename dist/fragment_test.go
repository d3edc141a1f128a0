package dist_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/dist"
	"github.com/loredb/lore/dist/disttest"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// call is the call of scalar function name over args, resolved as the binder
// resolves it.
func call(t *testing.T, name string, args ...plan.Expr) *plan.Call {
	t.Helper()
	ts := make([]arrow.DataType, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	fn, err := kernels.Resolve(name, ts)
	if err != nil {
		t.Fatalf("resolving %s: %v", name, err)
	}
	return &plan.Call{Fn: fn, Args: args}
}

func col(i int, name string, dt arrow.DataType) *plan.ColRef {
	return &plan.ColRef{Idx: i, T: dt, Name: name}
}

func lit(v types.Value) *plan.Literal { return &plan.Literal{V: v} }

// aggColumns are the columns of an aggregate of groups, aggs and groupings.
func aggColumns(groups []plan.Expr, aggs []plan.AggCall, groupings int) []plan.Column {
	var out []plan.Column
	for i, g := range groups {
		out = append(out, plan.Column{Name: fmt.Sprint("g", i), Type: g.Type()})
	}
	for _, c := range aggs {
		out = append(out, plan.Column{Name: c.Func, Type: c.T})
	}
	for i := range groupings {
		out = append(out, plan.Column{Name: fmt.Sprint("grouping", i), Type: types.Int64})
	}
	return out
}

var dec102 = types.Decimal(10, 2)

// richFragment is an aggregate that uses every part of the fragment form: a scan
// with required columns and pruning predicates, a filter and a projection of calls,
// CASE, CAST, IN lists and constants of several types (NULLs among them), grouped
// by a column and a computed expression, with aggregates of every option, grouping
// sets and GROUPING() columns.
func richFragment(t *testing.T) *plan.Aggregate {
	t.Helper()
	scan := &plan.Scan{
		Alias: "t",
		Cols: []plan.Column{
			{Name: "id", Type: types.Int64, Table: "t"},
			{Name: "x", Type: types.Float64, Table: "t"},
			{Name: "s", Type: types.String, Table: "t"},
			{Name: "d", Type: types.Date, Table: "t"},
			{Name: "p", Type: dec102, Table: "t"},
			{Name: "h", Type: types.Boolean, Table: "u", Hidden: true, Merged: true},
			{Name: "ts", Type: types.TimestampTZ, Table: "t"},
			{Name: "k", Type: &arrow.DictionaryType{IndexType: types.Int32, ValueType: types.String}, Table: "t"},
			{Name: "r", Type: arrow.StructOf(arrow.Field{Name: "a", Type: types.Int64, Nullable: true}, arrow.Field{Name: "b", Type: arrow.ListOf(types.String), Nullable: true}), Table: "t"},
		},
		Required: []bool{true, true, true, true, true, false, true, false, false},
		Filters: []source.Predicate{
			{Column: "id", Op: ">=", Values: []types.Value{types.IntValue(-3)}},
			{Column: "s", Op: "in", Values: []types.Value{types.StringValue("a'b"), types.StringValue(""), types.NullOf(types.String)}},
			{Column: "d", Op: "<", Values: []types.Value{types.DateValue(19000)}},
			{Column: "p", Op: ">", Values: []types.Value{{Type: dec102, D: decimal128.FromI64(-12345)}}},
			{Column: "h", Op: "is_null"},
			{Column: "ts", Op: "<=", Values: []types.Value{{Type: types.TimestampTZ, I: 1_700_000_000_000_000}}},
		},
	}
	id, x, s, d, p := col(0, "id", types.Int64), col(1, "x", types.Float64), col(2, "s", types.String), col(3, "d", types.Date), col(4, "p", dec102)
	cond := call(t, "and",
		call(t, "and",
			call(t, "<", x, lit(types.FloatValue(10.5))),
			call(t, "like", s, lit(types.StringValue("a%")))),
		call(t, "and",
			&plan.InList{E: id, List: []plan.Expr{lit(types.IntValue(1)), lit(types.IntValue(2)), lit(types.NullOf(types.Int64))}, Not: true},
			call(t, "or",
				call(t, "=", d, lit(types.DateValue(19500))),
				call(t, ">", p, lit(types.Value{Type: dec102, D: decimal128.FromI64(150)})))))
	filter := &plan.Filter{Input: scan, Cond: cond}
	size := &plan.Case{
		Whens: []plan.When{
			{Cond: call(t, ">", id, lit(types.IntValue(5))), Then: lit(types.StringValue("big"))},
			{Cond: call(t, "is_null", x), Then: lit(types.StringValue("none"))},
		},
		Else: lit(types.NullOf(types.String)),
		T:    types.String,
	}
	exprs := []plan.Expr{id, x, s, size, &plan.Cast{E: id, To: types.Float64}, call(t, "+", id, lit(types.IntValue(1))), p, &plan.Unused{T: types.Date}}
	project := &plan.Project{Input: filter, Exprs: exprs}
	for i, e := range exprs {
		project.Cols = append(project.Cols, plan.Column{Name: fmt.Sprint("e", i), Type: e.Type()})
	}
	pid, px, ps, psize, pcast, pnext, pp := col(0, "id", types.Int64), col(1, "x", types.Float64), col(2, "s", types.String),
		col(3, "size", types.String), col(4, "xd", types.Float64), col(5, "next", types.Int64), col(6, "p", dec102)
	groups := []plan.Expr{ps, call(t, "upper", psize)}
	aggs := []plan.AggCall{
		{Func: "count_star", T: types.Int64},
		{Func: "sum", Arg: pid, T: types.Int64},
		{Func: "avg", Arg: px, T: types.Float64},
		{Func: "min", Arg: ps, T: types.String},
		{Func: "count", Arg: pid, T: types.Int64, Distinct: true},
		{Func: "sum", Arg: pnext, T: types.Int64, Filter: call(t, ">", px, lit(types.FloatValue(0)))},
		{Func: "string_agg", Arg: ps, T: types.String, Sep: ", ", Order: []plan.SortKey{{E: pid, Desc: true, NullsFirst: true}, {E: pcast}}},
		{Func: "approx_count_distinct", Arg: pid, T: types.Int64, Written: "count"},
		{Func: "approx_percentile", Arg: px, T: arrow.ListOf(types.Float64), Quantiles: []float64{0.5, 0.99}, List: true},
		{Func: "quantile_disc", Arg: px, T: types.Float64, Quantiles: []float64{0.25}, FromTop: true},
		{Func: "corr", Arg: px, Args: []plan.Expr{pcast}, T: types.Float64},
		{Func: "sum", Arg: pp, T: types.Decimal(38, 2)},
	}
	a := &plan.Aggregate{
		Input:     project,
		Groups:    groups,
		Aggs:      aggs,
		Sets:      [][]int{{0, 1}, {0}, {}},
		Groupings: [][]int{{0}, {0, 1}},
	}
	a.Cols = aggColumns(groups, aggs, len(a.Groupings))
	a.Cols[0].Table = "t"
	return a
}

// same compares a plan and its decoded form part by part, reporting each
// difference at its path.
type same struct{ t *testing.T }

func (c same) typ(path string, a, b arrow.DataType) {
	c.t.Helper()
	switch {
	case a == nil && b == nil:
	case a == nil || b == nil || !arrow.TypeEqual(a, b):
		c.t.Errorf("%s: type %v, decoded %v", path, a, b)
	}
}

func (c same) value(path string, a, b types.Value) {
	c.t.Helper()
	c.typ(path, a.Type, b.Type)
	if a.Null != b.Null || a.String() != b.String() {
		c.t.Errorf("%s: value %v (null %v), decoded %v (null %v)", path, a, a.Null, b, b.Null)
	}
}

func (c same) columns(path string, a, b []plan.Column) {
	c.t.Helper()
	if len(a) != len(b) {
		c.t.Errorf("%s: %d columns, decoded %d", path, len(a), len(b))
		return
	}
	for i := range a {
		p := fmt.Sprintf("%s[%d]", path, i)
		c.typ(p, a[i].Type, b[i].Type)
		if a[i].Name != b[i].Name || a[i].Table != b[i].Table || a[i].Hidden != b[i].Hidden || a[i].Merged != b[i].Merged {
			c.t.Errorf("%s: column %+v, decoded %+v", p, a[i], b[i])
		}
	}
}

func (c same) exprs(path string, a, b []plan.Expr) {
	c.t.Helper()
	if len(a) != len(b) {
		c.t.Errorf("%s: %d expressions, decoded %d", path, len(a), len(b))
		return
	}
	for i := range a {
		c.expr(fmt.Sprintf("%s[%d]", path, i), a[i], b[i])
	}
}

func (c same) expr(path string, a, b plan.Expr) {
	c.t.Helper()
	if a == nil || b == nil {
		if a != nil || b != nil {
			c.t.Errorf("%s: %v, decoded %v", path, a, b)
		}
		return
	}
	if fmt.Sprintf("%T", a) != fmt.Sprintf("%T", b) {
		c.t.Errorf("%s: %T, decoded %T", path, a, b)
		return
	}
	if a.String() != b.String() {
		c.t.Errorf("%s: %s, decoded %s", path, a, b)
	}
	c.typ(path, a.Type(), b.Type())
	switch x := a.(type) {
	case *plan.ColRef:
		y := b.(*plan.ColRef)
		if x.Idx != y.Idx || x.Name != y.Name {
			c.t.Errorf("%s: column %d %q, decoded %d %q", path, x.Idx, x.Name, y.Idx, y.Name)
		}
	case *plan.Literal:
		c.value(path, x.V, b.(*plan.Literal).V)
	case *plan.Call:
		y := b.(*plan.Call)
		if x.Fn.Name != y.Fn.Name {
			c.t.Errorf("%s: function %s, decoded %s", path, x.Fn.Name, y.Fn.Name)
		}
		c.exprs(path+".args", x.Args, y.Args)
	case *plan.Cast:
		c.expr(path+".e", x.E, b.(*plan.Cast).E)
	case *plan.Case:
		y := b.(*plan.Case)
		if len(x.Whens) != len(y.Whens) {
			c.t.Errorf("%s: %d WHENs, decoded %d", path, len(x.Whens), len(y.Whens))
			return
		}
		for i := range x.Whens {
			c.expr(fmt.Sprintf("%s.when[%d]", path, i), x.Whens[i].Cond, y.Whens[i].Cond)
			c.expr(fmt.Sprintf("%s.then[%d]", path, i), x.Whens[i].Then, y.Whens[i].Then)
		}
		c.expr(path+".else", x.Else, y.Else)
	case *plan.InList:
		y := b.(*plan.InList)
		if x.Not != y.Not {
			c.t.Errorf("%s: NOT %v, decoded %v", path, x.Not, y.Not)
		}
		c.expr(path+".e", x.E, y.E)
		c.exprs(path+".list", x.List, y.List)
	case *plan.Unused:
	default:
		c.t.Errorf("%s: an expression of kind %T the comparison does not know", path, a)
	}
}

func (c same) node(path string, a, b plan.Node) {
	c.t.Helper()
	if fmt.Sprintf("%T", a) != fmt.Sprintf("%T", b) {
		c.t.Errorf("%s: %T, decoded %T", path, a, b)
		return
	}
	switch x := a.(type) {
	case *plan.Scan:
		y := b.(*plan.Scan)
		if x.Alias != y.Alias {
			c.t.Errorf("%s: alias %q, decoded %q", path, x.Alias, y.Alias)
		}
		c.columns(path+".cols", x.Cols, y.Cols)
		if fmt.Sprint(x.Required) != fmt.Sprint(y.Required) || (x.Required == nil) != (y.Required == nil) {
			c.t.Errorf("%s: required %v, decoded %v", path, x.Required, y.Required)
		}
		if len(x.Filters) != len(y.Filters) {
			c.t.Errorf("%s: %d filters, decoded %d", path, len(x.Filters), len(y.Filters))
			return
		}
		for i, f := range x.Filters {
			g := y.Filters[i]
			p := fmt.Sprintf("%s.filters[%d]", path, i)
			if f.Column != g.Column || f.Op != g.Op || len(f.Values) != len(g.Values) {
				c.t.Errorf("%s: %s %s (%d values), decoded %s %s (%d values)", p, f.Column, f.Op, len(f.Values), g.Column, g.Op, len(g.Values))
				continue
			}
			for j := range f.Values {
				c.value(fmt.Sprintf("%s.values[%d]", p, j), f.Values[j], g.Values[j])
			}
		}
		if y.Ref != nil {
			c.t.Errorf("%s: the decoded scan names a table", path)
		}
	case *plan.Filter:
		y := b.(*plan.Filter)
		c.expr(path+".cond", x.Cond, y.Cond)
		c.node(path+".input", x.Input, y.Input)
	case *plan.Project:
		y := b.(*plan.Project)
		c.exprs(path+".exprs", x.Exprs, y.Exprs)
		c.columns(path+".cols", x.Cols, y.Cols)
		c.node(path+".input", x.Input, y.Input)
	case *plan.Aggregate:
		y := b.(*plan.Aggregate)
		c.exprs(path+".groups", x.Groups, y.Groups)
		if len(x.Aggs) != len(y.Aggs) {
			c.t.Errorf("%s: %d aggregates, decoded %d", path, len(x.Aggs), len(y.Aggs))
		} else {
			for i := range x.Aggs {
				c.aggCall(fmt.Sprintf("%s.aggs[%d]", path, i), &x.Aggs[i], &y.Aggs[i])
			}
		}
		c.columns(path+".cols", x.Cols, y.Cols)
		if fmt.Sprint(x.Sets) != fmt.Sprint(y.Sets) || len(x.Sets) != len(y.Sets) {
			c.t.Errorf("%s: sets %v, decoded %v", path, x.Sets, y.Sets)
		}
		if fmt.Sprint(x.Groupings) != fmt.Sprint(y.Groupings) || len(x.Groupings) != len(y.Groupings) {
			c.t.Errorf("%s: groupings %v, decoded %v", path, x.Groupings, y.Groupings)
		}
		c.node(path+".input", x.Input, y.Input)
	default:
		c.t.Errorf("%s: a node of kind %T the comparison does not know", path, a)
	}
}

func (c same) aggCall(path string, a, b *plan.AggCall) {
	c.t.Helper()
	if a.Func != b.Func || a.Written != b.Written || a.Sep != b.Sep || a.List != b.List || a.FromTop != b.FromTop || a.Distinct != b.Distinct {
		c.t.Errorf("%s: %+v, decoded %+v", path, *a, *b)
	}
	if fmt.Sprint(a.Quantiles) != fmt.Sprint(b.Quantiles) {
		c.t.Errorf("%s: quantiles %v, decoded %v", path, a.Quantiles, b.Quantiles)
	}
	c.typ(path+".t", a.T, b.T)
	c.expr(path+".arg", a.Arg, b.Arg)
	c.expr(path+".filter", a.Filter, b.Filter)
	c.exprs(path+".args", a.Args, b.Args)
	if len(a.Order) != len(b.Order) {
		c.t.Errorf("%s: %d order keys, decoded %d", path, len(a.Order), len(b.Order))
		return
	}
	for i, k := range a.Order {
		p := fmt.Sprintf("%s.order[%d]", path, i)
		c.expr(p, k.E, b.Order[i].E)
		if k.Desc != b.Order[i].Desc || k.NullsFirst != b.Order[i].NullsFirst {
			c.t.Errorf("%s: desc %v nulls first %v, decoded %v %v", p, k.Desc, k.NullsFirst, b.Order[i].Desc, b.Order[i].NullsFirst)
		}
	}
	if a.Spec().String() != b.Spec().String() {
		c.t.Errorf("%s: spec %s, decoded %s", path, a.Spec(), b.Spec())
	}
}

// TestFragmentRoundTrip: a fragment that uses every part of the form decodes to the
// same plan, node by node and expression by expression, with its scan at the bottom
// and no table; the decoded plan encodes to the same bytes.
func TestFragmentRoundTrip(t *testing.T) {
	a := richFragment(t)
	b, err := dist.MarshalFragment(a)
	if err != nil {
		t.Fatal(err)
	}
	back, scan, err := dist.UnmarshalFragment(b)
	if err != nil {
		t.Fatal(err)
	}
	same{t}.node("aggregate", a, back)
	bottom := back.Input
	for {
		switch n := bottom.(type) {
		case *plan.Filter:
			bottom = n.Input
			continue
		case *plan.Project:
			bottom = n.Input
			continue
		}
		break
	}
	if bottom != plan.Node(scan) {
		t.Errorf("UnmarshalFragment returned a scan (%p) that is not the plan's (%p)", scan, bottom)
	}
	again, err := dist.MarshalFragment(back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, b) {
		t.Errorf("the decoded fragment encodes to other bytes (%d, not %d)", len(again), len(b))
	}

	// The smallest fragment: COUNT(*) straight over a scan of no required columns.
	bare := &plan.Aggregate{
		Input: &plan.Scan{Cols: []plan.Column{{Name: "id", Type: types.Int64}}},
		Aggs:  []plan.AggCall{{Func: "count_star", T: types.Int64}},
		Cols:  []plan.Column{{Name: "count_star()", Type: types.Int64}},
	}
	b, err = dist.MarshalFragment(bare)
	if err != nil {
		t.Fatal(err)
	}
	back, _, err = dist.UnmarshalFragment(b)
	if err != nil {
		t.Fatal(err)
	}
	same{t}.node("bare", bare, back)
	if again, err := dist.MarshalFragment(back); err != nil || !bytes.Equal(again, b) {
		t.Errorf("the decoded bare fragment encodes to other bytes: %v", err)
	}
}

// TestFragmentRefusesWhatWorkersCannotCompute: an aggregate whose input is not
// filters and projections over one scan, or holds an expression workers cannot
// compute (a subquery), has no fragment: INVALID_SETTING.
func TestFragmentRefusesWhatWorkersCannotCompute(t *testing.T) {
	scan := func() *plan.Scan {
		return &plan.Scan{Cols: []plan.Column{{Name: "id", Type: types.Int64}}}
	}
	id := col(0, "id", types.Int64)
	sub := &plan.Subquery{Plan: &plan.Values{Cols: []plan.Column{{Name: "v", Type: types.Int64}}}, T: types.Int64}
	count := []plan.AggCall{{Func: "count_star", T: types.Int64}}
	deferred := scan()
	deferred.Deferred = []plan.DeferredPredicate{{Column: "id", Op: "=", Value: sub}}
	for _, c := range []struct {
		name string
		a    *plan.Aggregate
	}{
		{"subquery in a filter", &plan.Aggregate{Input: &plan.Filter{Input: scan(), Cond: call(t, "=", id, sub)}, Aggs: count}},
		{"IN subquery in a filter", &plan.Aggregate{Input: &plan.Filter{Input: scan(), Cond: &plan.InSubquery{E: id, Plan: sub.Plan}}, Aggs: count}},
		{"subquery in a projection", &plan.Aggregate{Input: &plan.Project{Input: scan(), Exprs: []plan.Expr{sub}, Cols: []plan.Column{{Name: "v", Type: types.Int64}}}, Aggs: count}},
		{"subquery as an aggregate's argument", &plan.Aggregate{Input: scan(), Aggs: []plan.AggCall{{Func: "sum", Arg: sub, T: types.Int64}}}},
		{"subquery as a group", &plan.Aggregate{Input: scan(), Groups: []plan.Expr{sub}, Aggs: count}},
		{"subquery in an aggregate's filter", &plan.Aggregate{Input: scan(), Aggs: []plan.AggCall{{Func: "count_star", T: types.Int64, Filter: call(t, "=", id, sub)}}}},
		{"pruning by a subquery", &plan.Aggregate{Input: deferred, Aggs: count}},
		{"values", &plan.Aggregate{Input: &plan.Values{Cols: []plan.Column{{Name: "v", Type: types.Int64}}, Rows: [][]plan.Expr{{lit(types.IntValue(1))}}}, Aggs: count}},
		{"a join", &plan.Aggregate{Input: &plan.Join{Kind: plan.InnerJoin, Left: scan(), Right: scan(), LeftKeys: []plan.Expr{id}, RightKeys: []plan.Expr{id}}, Aggs: count}},
		{"an aggregate", &plan.Aggregate{Input: &plan.Aggregate{Input: scan(), Aggs: count}, Aggs: count}},
		{"a join under a filter", &plan.Aggregate{Input: &plan.Filter{Input: &plan.Join{Kind: plan.CrossJoin, Left: scan(), Right: scan()}, Cond: lit(types.BoolValue(true))}, Aggs: count}},
	} {
		b, err := dist.MarshalFragment(c.a)
		if errs.CodeOf(err) != errs.InvalidSetting {
			t.Errorf("%s: %d bytes, %v; want INVALID_SETTING", c.name, len(b), err)
		}
	}
}

// decode runs read on b, turning a panic into a test failure.
func decode(t *testing.T, what string, b []byte, read func([]byte) error) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s (%d bytes): panic: %v", what, len(b), r)
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return read(b)
}

func readFragment(b []byte) error {
	_, _, err := dist.UnmarshalFragment(b)
	return err
}

// TestFragmentCorruption: a fragment cut short, padded, of another form or version,
// or naming a function this build cannot resolve, is CORRUPT_SOURCE; a fragment with
// any byte changed is CORRUPT_SOURCE or some plan, never a panic or a hang.
func TestFragmentCorruption(t *testing.T) {
	b, err := dist.MarshalFragment(richFragment(t))
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string][]byte{"nothing": nil, "padded": append(append([]byte{}, b...), 0)}
	for n := 0; n < len(b); n += max(1, len(b)/400) {
		bad[fmt.Sprintf("cut to %d bytes", n)] = b[:n]
	}
	for _, i := range []int{0, 1, 2, 3} {
		other := append([]byte{}, b...)
		other[i]++
		bad[fmt.Sprintf("byte %d of the header changed", i)] = other
	}
	for name, bb := range bad {
		if err := decode(t, name, bb, readFragment); errs.CodeOf(err) != errs.CorruptSource {
			t.Errorf("%s: %v, want CORRUPT_SOURCE", name, err)
		}
	}

	// Every byte changed in turn, three ways, in a goroutine bounded in time.
	done := make(chan int)
	go func() {
		decoded := 0
		for i := 4; i < len(b); i++ {
			for _, mask := range []byte{0x01, 0x80, 0xff} {
				flipped := append([]byte{}, b...)
				flipped[i] ^= mask
				what := fmt.Sprintf("byte %d ^ %#x", i, mask)
				err := decode(t, what, flipped, readFragment)
				switch {
				case err == nil:
					decoded++
				case errs.CodeOf(err) != errs.CorruptSource:
					t.Errorf("%s: %v, want CORRUPT_SOURCE or a plan", what, err)
				}
			}
		}
		done <- decoded
	}()
	select {
	case decoded := <-done:
		t.Logf("%d of %d changed fragments decode to some plan", decoded, 3*(len(b)-4))
	case <-time.After(60 * time.Second):
		t.Fatal("decoding fragments with a changed byte did not finish in a minute")
	}

	// Calls this build cannot resolve: a function it does not have, and one it has
	// of another result type for those arguments.
	id := col(0, "id", types.Int64)
	for _, fn := range []*kernels.Function{
		{Name: "no_such_function", Result: types.Int64},
		{Name: "+", Result: types.String},
	} {
		a := &plan.Aggregate{
			Input: &plan.Project{
				Input: &plan.Scan{Cols: []plan.Column{{Name: "id", Type: types.Int64}}},
				Exprs: []plan.Expr{&plan.Call{Fn: fn, Args: []plan.Expr{id, lit(types.IntValue(1))}}},
				Cols:  []plan.Column{{Name: "f", Type: fn.Result}},
			},
			Aggs: []plan.AggCall{{Func: "count_star", T: types.Int64}},
			Cols: []plan.Column{{Name: "n", Type: types.Int64}},
		}
		fb, err := dist.MarshalFragment(a)
		if err != nil {
			t.Fatalf("%s: %v", fn.Name, err)
		}
		if err := decode(t, fn.Name, fb, readFragment); errs.CodeOf(err) != errs.CorruptSource {
			t.Errorf("a call of %s returning %s: %v, want CORRUPT_SOURCE", fn.Name, types.Name(fn.Result), err)
		}
	}
}

// row is one input row of the partials' aggregate: id BIGINT, s VARCHAR, v BIGINT,
// w VARCHAR, o BIGINT (NULL where nil).
type row [5]any

var rowTypes = []arrow.DataType{types.Int64, types.String, types.Int64, types.String, types.Int64}

func rowColumns(rows []row) []arrow.Array {
	out := make([]arrow.Array, len(rowTypes))
	for c, dt := range rowTypes {
		vals := make([]types.Value, len(rows))
		for i, r := range rows {
			switch v := r[c].(type) {
			case nil:
				vals[i] = types.NullOf(dt)
			case int:
				vals[i] = types.IntValue(int64(v))
			case string:
				vals[i] = types.StringValue(v)
			}
		}
		out[c] = vector.FromValues(dt, vals)
	}
	return out
}

// partialsAggregate is an aggregate over a scan of the rows' columns, grouped by
// id and s when grouped.
func partialsAggregate(grouped bool) *plan.Aggregate {
	cols := []plan.Column{{Name: "id"}, {Name: "s"}, {Name: "v"}, {Name: "w"}, {Name: "o"}}
	for i := range cols {
		cols[i].Type = rowTypes[i]
	}
	id, s, v, w, o := col(0, "id", types.Int64), col(1, "s", types.String), col(2, "v", types.Int64), col(3, "w", types.String), col(4, "o", types.Int64)
	a := &plan.Aggregate{
		Input: &plan.Scan{Cols: cols},
		Aggs: []plan.AggCall{
			{Func: "count_star", T: types.Int64},
			{Func: "sum", Arg: v, T: types.Int64},
			{Func: "avg", Arg: v, T: types.Float64},
			{Func: "min", Arg: w, T: types.String},
			{Func: "count", Arg: v, T: types.Int64, Distinct: true},
			{Func: "string_agg", Arg: w, T: types.String, Sep: "|", Order: []plan.SortKey{{E: o, Desc: true}}},
			{Func: "approx_count_distinct", Arg: v, T: types.Int64},
			{Func: "count", Arg: w, T: types.Int64},
		},
	}
	if grouped {
		a.Groups = []plan.Expr{id, s}
	}
	a.Cols = aggColumns(a.Groups, a.Aggs, 0)
	return a
}

// keyOf is group g's key as text.
func keyOf(keys []arrow.Array, g int) string {
	var parts []string
	for _, k := range keys {
		v := types.ValueAt(k, g)
		if v.Null {
			parts = append(parts, "NULL")
		} else {
			parts = append(parts, fmt.Sprintf("%q", v.String()))
		}
	}
	return strings.Join(parts, ",")
}

// buildPartial is the partial of a over rows as a worker makes it: a group per
// distinct key, in order of first appearance, each aggregate's state fed every row.
func buildPartial(t *testing.T, a *plan.Aggregate, rows []row) *dist.Partial {
	t.Helper()
	cols := rowColumns(rows)
	p := &dist.Partial{Groups: 1}
	var groups []uint32
	if len(a.Groups) > 0 {
		at := map[string]uint32{}
		var first []row
		groups = make([]uint32, len(rows))
		for i, r := range rows {
			k := fmt.Sprintf("%v|%v", r[0], r[1])
			g, ok := at[k]
			if !ok {
				g = uint32(len(first))
				at[k] = g
				first = append(first, r)
			}
			groups[i] = g
		}
		p.Groups = len(first)
		keyCols := rowColumns(first)
		for _, e := range a.Groups {
			p.Keys = append(p.Keys, keyCols[e.(*plan.ColRef).Idx])
		}
	}
	for i := range a.Aggs {
		c := &a.Aggs[i]
		acc, err := agg.New(c.Spec())
		if err != nil {
			t.Fatalf("%s: %v", c.Spec(), err)
		}
		acc.Resize(p.Groups)
		if len(rows) > 0 {
			var err error
			if in := c.Inputs(); len(in) == 0 {
				err = acc.Update(cols[0], nil, groups)
			} else {
				args := make([]arrow.Array, len(in))
				for j, e := range in {
					args[j] = cols[e.(*plan.ColRef).Idx]
				}
				err = agg.UpdateArgs(acc, args, nil, groups)
			}
			if err != nil {
				t.Fatalf("%s: %v", c.Spec(), err)
			}
		}
		p.States = append(p.States, acc)
	}
	return p
}

// results are a partial's finished aggregates by group key, as text.
func results(t *testing.T, a *plan.Aggregate, p *dist.Partial) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	finals := make([]arrow.Array, len(p.States))
	for i, s := range p.States {
		f, err := s.Final()
		if err != nil {
			t.Fatalf("%s: %v", a.Aggs[i].Spec(), err)
		}
		if f.Len() != p.Groups {
			t.Fatalf("%s: %d results for %d groups", a.Aggs[i].Spec(), f.Len(), p.Groups)
		}
		finals[i] = f
	}
	for g := 0; g < p.Groups; g++ {
		k := keyOf(p.Keys, g)
		if _, dup := out[k]; dup {
			t.Fatalf("the key %s is in two groups", k)
		}
		for _, f := range finals {
			out[k] = append(out[k], types.ValueAt(f, g).String())
		}
	}
	return out
}

func sameResults(t *testing.T, what string, got, want map[string][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d groups, want %d", what, len(got), len(want))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: no group (%s)", what, k)
			continue
		}
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("%s: group (%s) is %q, want %q", what, k, g, w)
		}
	}
}

var partialRows = []row{
	{1, "a", 10, "p", 1},
	{1, "a", 20, nil, 2},
	{nil, "a", 10, "q", 3},
	{2, nil, nil, "r", 4},
	{nil, nil, 5, "s", 5},
	{1, "a", 10, "t", 6},
	{2, nil, 7, "u", 7},
	{3, "b", nil, nil, 8},
	{nil, nil, 5, "v", 9},
	{2, "b", 1, "w", 10},
}

// TestPartialRoundTripAndMerge: partials of a grouped aggregate (NULL keys among its
// groups) and of an ungrouped one decode to partials that encode to the same bytes;
// merged through a Merger, through MergeForms, or through MergeForms of merged
// forms, their results are those of one aggregate over every row, group by group.
func TestPartialRoundTripAndMerge(t *testing.T) {
	for _, grouped := range []bool{true, false} {
		a := partialsAggregate(grouped)
		name := map[bool]string{true: "grouped", false: "ungrouped"}[grouped]
		fragment, err := dist.MarshalFragment(a)
		if err != nil {
			t.Fatal(err)
		}
		// The runner merges with the aggregate its fragment decodes to.
		decoded, _, err := dist.UnmarshalFragment(fragment)
		if err != nil {
			t.Fatal(err)
		}
		want := results(t, a, buildPartial(t, a, partialRows))
		parts := [][]row{partialRows[:5], partialRows[5:8], nil, partialRows[8:]}
		var forms [][]byte
		m, err := dist.NewMerger(a)
		if err != nil {
			t.Fatal(err)
		}
		for i, rows := range parts {
			p := buildPartial(t, a, rows)
			b, err := p.MarshalBinary()
			if err != nil {
				t.Fatalf("%s: partial %d: %v", name, i, err)
			}
			back, err := dist.UnmarshalPartial(a, b)
			if err != nil {
				t.Fatalf("%s: partial %d: %v", name, i, err)
			}
			if back.Groups != p.Groups || len(back.Keys) != len(p.Keys) || len(back.States) != len(p.States) {
				t.Errorf("%s: partial %d: %d groups, %d keys, %d states; decoded %d, %d, %d", name, i,
					p.Groups, len(p.Keys), len(p.States), back.Groups, len(back.Keys), len(back.States))
			}
			sameResults(t, fmt.Sprintf("%s: partial %d decoded", name, i), results(t, a, back), results(t, a, p))
			if again, err := back.MarshalBinary(); err != nil || !bytes.Equal(again, b) {
				t.Errorf("%s: partial %d decoded encodes to other bytes: %v", name, i, err)
			}
			if err := m.Add(back); err != nil {
				t.Fatalf("%s: merging partial %d: %v", name, i, err)
			}
			forms = append(forms, b)
		}
		sameResults(t, name+": merged", results(t, a, m.Result()), want)

		merged, err := dist.MergeForms(decoded, forms...)
		if err != nil {
			t.Fatal(err)
		}
		p, err := dist.UnmarshalPartial(a, merged)
		if err != nil {
			t.Fatal(err)
		}
		sameResults(t, name+": MergeForms", results(t, a, p), want)

		left, err := dist.MergeForms(decoded, forms[0], forms[2])
		if err != nil {
			t.Fatal(err)
		}
		right, err := dist.MergeForms(decoded, forms[1], forms[3])
		if err != nil {
			t.Fatal(err)
		}
		merged, err = dist.MergeForms(decoded, right, left)
		if err != nil {
			t.Fatal(err)
		}
		if p, err = dist.UnmarshalPartial(a, merged); err != nil {
			t.Fatal(err)
		}
		sameResults(t, name+": MergeForms of merged forms", results(t, a, p), want)

		// No partial at all is the aggregate over no row.
		none, err := dist.MergeForms(decoded)
		if err != nil {
			t.Fatal(err)
		}
		if p, err = dist.UnmarshalPartial(a, none); err != nil {
			t.Fatal(err)
		}
		sameResults(t, name+": MergeForms of none", results(t, a, p), results(t, a, buildPartial(t, a, nil)))
	}
}

// TestPartialRefusesWhatIsNotItsAggregates: a partial read for another aggregate
// (other aggregates, other or no keys, keys of other types, states of another
// number of groups), cut short or padded is CORRUPT_SOURCE, never a panic.
func TestPartialRefusesWhatIsNotItsAggregates(t *testing.T) {
	grouped, ungrouped := partialsAggregate(true), partialsAggregate(false)
	p := buildPartial(t, grouped, partialRows)
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	u, err := buildPartial(t, ungrouped, partialRows).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	form := func(p *dist.Partial) []byte {
		t.Helper()
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	fewer := *p
	fewer.States = p.States[:len(p.States)-1]
	intKeys := *p
	intKeys.Keys = []arrow.Array{p.Keys[0], p.Keys[0]}
	oneKey := *p
	oneKey.Keys = p.Keys[:1]
	other := buildPartial(t, grouped, partialRows[:3])
	mixedMore := *other
	mixedMore.States = append([]agg.Accumulator{}, other.States...)
	mixedMore.States[6] = p.States[6] // approx_count_distinct of more groups
	reordered := partialsAggregate(true)
	reordered.Aggs[0], reordered.Aggs[5] = reordered.Aggs[5], reordered.Aggs[0]

	cases := []struct {
		name string
		a    *plan.Aggregate
		b    []byte
	}{
		{"one state too few", grouped, form(&fewer)},
		{"keys of another type", grouped, form(&intKeys)},
		{"one key too few", grouped, form(&oneKey)},
		{"a state of more groups", grouped, form(&mixedMore)},
		{"an ungrouped partial read as grouped", grouped, u},
		{"a grouped partial read as ungrouped", ungrouped, b},
		{"states in another order", reordered, b},
		{"padded", grouped, append(append([]byte{}, b...), 0)},
		{"another version", grouped, append([]byte{b[0], b[1], b[2], b[3] + 1}, b[4:]...)},
		{"nothing", grouped, nil},
	}
	for _, f := range [][]byte{b, u} {
		for n := 0; n < len(f); n += max(1, len(f)/400) {
			a := grouped
			if bytes.Equal(f, u) {
				a = ungrouped
			}
			cases = append(cases, struct {
				name string
				a    *plan.Aggregate
				b    []byte
			}{fmt.Sprintf("cut to %d of %d bytes", n, len(f)), a, f[:n]})
		}
	}
	// What decodes must merge, or be refused as corrupt.
	readAndMerge := func(a *plan.Aggregate) func([]byte) error {
		return func(b []byte) error {
			p, err := dist.UnmarshalPartial(a, b)
			if err != nil {
				return err
			}
			m, err := dist.NewMerger(a)
			if err != nil {
				return err
			}
			return m.Add(p)
		}
	}
	for _, c := range cases {
		if err := decode(t, c.name, c.b, readAndMerge(c.a)); errs.CodeOf(err) != errs.CorruptSource {
			t.Errorf("%s: %v, want CORRUPT_SOURCE", c.name, err)
		}
	}

	// Bytes changed in turn, two ways — every byte of the form's start, which holds
	// the keys, then a sample of the states: the partial is refused as corrupt, or
	// decodes to one that merges.
	step := func(i int) int {
		if i < 2048 {
			return 1
		}
		return max(1, len(b)/2000)
	}
	for i := 4; i < len(b); i += step(i) {
		for _, mask := range []byte{0x01, 0xff} {
			flipped := append([]byte{}, b...)
			flipped[i] ^= mask
			what := fmt.Sprintf("byte %d ^ %#x", i, mask)
			if err := decode(t, what, flipped, readAndMerge(grouped)); err != nil && errs.CodeOf(err) != errs.CorruptSource {
				t.Errorf("%s: %v, want CORRUPT_SOURCE or a partial that merges", what, err)
			}
		}
	}
}

// TestJobWithFragment: a job carries its fragment and its zones' descriptors
// through its byte form unchanged, with zones or none; a job whose fragment is not
// one is CORRUPT_SOURCE.
func TestJobWithFragment(t *testing.T) {
	fragment, err := dist.MarshalFragment(richFragment(t))
	if err != nil {
		t.Fatal(err)
	}
	dir, l, rec, v := disttest.Hive(t)
	refs, err := dist.ZoneRefs(l, rec, dist.TableRefOf("parquet", dir, l, v))
	if err != nil {
		t.Fatal(err)
	}
	for _, refs := range [][]source.ZoneRef{nil, refs} {
		job, err := dist.MarshalJob(fragment, refs)
		if err != nil {
			t.Fatal(err)
		}
		f, zones, err := dist.UnmarshalJob(job)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f, fragment) {
			t.Errorf("a job of %d zones: its fragment (%d bytes) is not the one it was made with (%d bytes)", len(refs), len(f), len(fragment))
		}
		if len(zones) != len(refs) {
			t.Errorf("a job of %d zones reads back %d", len(refs), len(zones))
			continue
		}
		for i, z := range zones {
			if want, _ := refs[i].MarshalBinary(); !bytes.Equal(z, want) {
				t.Errorf("a job's zone %d is not the descriptor it was made with", i)
			}
		}
	}
	for name, bad := range map[string][]byte{
		"cut short":             fragment[:len(fragment)/2],
		"padded":                append(append([]byte{}, fragment...), 0),
		"of another version":    append([]byte{fragment[0], fragment[1], fragment[2], fragment[3] + 1}, fragment[4:]...),
		"not a fragment at all": []byte("LAF"),
	} {
		job, err := dist.MarshalJob(bad, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := dist.UnmarshalJob(job); errs.CodeOf(err) != errs.CorruptSource {
			t.Errorf("a job whose fragment is %s: %v, want CORRUPT_SOURCE", name, err)
		}
	}
}

// TestPartialResults: the lines of a distributed aggregate read back as the partial
// and every zone's time, in any order; a zone without its time or with two, two
// partials or none, and lines that are not a run's are CORRUPT_SOURCE.
func TestPartialResults(t *testing.T) {
	ctx := context.Background()
	partial := []byte("LAP\x01 some partial bytes")
	took := []time.Duration{3 * time.Millisecond, 0, 2 * time.Second, 1500 * time.Microsecond}
	var lines []string
	for z := len(took) - 1; z >= 0; z-- {
		lines = append(lines, dist.TimeLine(z, took[z]))
		if z == 2 {
			lines = append(lines, dist.PartialLine(partial), "")
		}
	}
	got, gotTook, err := dist.ReadPartialResults(ctx, strings.NewReader(strings.Join(lines, "\n")+"\n"), len(took))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, partial) {
		t.Errorf("the partial read back is %q, not %q", got, partial)
	}
	if fmt.Sprint(gotTook) != fmt.Sprint(took) {
		t.Errorf("the zones' times read back are %v, not %v", gotTook, took)
	}
	if _, gotTook, err := dist.ReadPartialResults(ctx, strings.NewReader(dist.PartialLine(partial)+"\n"+dist.TimeLine(0, -time.Second)), 1); err != nil || gotTook[0] != 0 {
		t.Errorf("a negative time: %v, %v; want 0", gotTook, err)
	}

	p, t0, t1 := dist.PartialLine(partial), dist.TimeLine(0, time.Millisecond), dist.TimeLine(1, time.Millisecond)
	for _, c := range []struct {
		name  string
		lines []string
	}{
		{"a zone without its time", []string{p, t0}},
		{"a zone's time twice", []string{p, t0, t1, t0}},
		{"a zone beyond the run's", []string{p, t0, t1, dist.TimeLine(2, time.Millisecond)}},
		{"two partials", []string{p, t0, t1, p}},
		{"a partial of another index", []string{"p\t1\tAA==", t0, t1}},
		{"no partial", []string{t0, t1}},
		{"nothing", nil},
		{"a time that is not one", []string{p, t0, "t\t1\t"}},
		{"a time with bytes past it", []string{p, t0, "t\t1\tAQE="}},
		{"a line of another kind", []string{p, t0, t1, "z\t0\tAA=="}},
		{"two fields", []string{p, t0, "t\t1"}},
		{"four fields", []string{p, t0, t1 + "\tAA=="}},
		{"no index", []string{p, t0, "t\tone\tAQ=="}},
		{"a negative index", []string{p, t0, t1, "t\t-1\tAQ=="}},
		{"not base64", []string{p, t0, "t\t1\t!!"}},
		{"garbage", []string{"\x00\x01garbage"}},
	} {
		_, _, err := dist.ReadPartialResults(ctx, strings.NewReader(strings.Join(c.lines, "\n")), 2)
		if errs.CodeOf(err) != errs.CorruptSource {
			t.Errorf("%s: %v, want CORRUPT_SOURCE", c.name, err)
		}
	}
}
