package exec

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// stored is a plan node holding two BIGINT columns k and v.
func stored(t *testing.T, k, v []int64) *plan.Stored {
	t.Helper()
	col := func(vals []int64) arrow.Array {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues(vals, nil)
		return b.NewArray()
	}
	return &plan.Stored{Cols: []plan.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}},
		Arrays: []arrow.Array{col(k), col(v)}, Rows: len(k)}
}

func call(t *testing.T, name string, args ...plan.Expr) plan.Expr {
	t.Helper()
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

// TestJoinEmitsPairsAsRead: a join whose probe batch has far more pairs than a batch
// (every row of a key shared by all, or no keys at all) makes them as they are read,
// holding one chunk's output at a time, and a LIMIT above it ends it at once.
func TestJoinEmitsPairsAsRead(t *testing.T) {
	const n = 3000
	same, seq := make([]int64, n), make([]int64, n)
	for i := range seq {
		seq[i] = int64(i)
	}
	for _, keyed := range []bool{false, true} {
		l, r := stored(t, same, seq), stored(t, same, seq)
		j := &plan.Join{Kind: plan.CrossJoin, Left: l, Right: r, Cols: append(l.Columns(), r.Columns()...)}
		if keyed {
			j.Kind = plan.InnerJoin
			j.LeftKeys = []plan.Expr{&plan.ColRef{Idx: 0, T: types.Int64}}
			j.RightKeys = []plan.Expr{&plan.ColRef{Idx: 0, T: types.Int64}}
		}
		budget := NewBudget(1 << 30)
		bd := &builder{env: &Env{Budget: budget, Threads: 2}}
		op, err := bd.build(j)
		if err != nil {
			t.Fatal(err)
		}
		hj := op.(*hashJoin)
		b, err := hj.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b.Len() != vector.BatchSize {
			t.Errorf("keyed %v: first batch has %d rows, want %d", keyed, b.Len(), vector.BatchSize)
		}
		if len(hj.pending) > 1 {
			t.Errorf("keyed %v: %d output batches made ahead of the reader, want at most one", keyed, len(hj.pending))
		}
		hj.Close()
		if budget.Used() != 0 {
			t.Errorf("keyed %v: %d bytes still reserved after Close", keyed, budget.Used())
		}

		recs, err := Run(context.Background(), &Env{Budget: budget, Threads: 2}, &plan.Limit{Input: j, Count: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 1 || recs[0].NumRows() != 3 {
			t.Errorf("keyed %v: LIMIT 3 gave %d batches", keyed, len(recs))
		}
	}
}

// TestJoinChunksKeepSemantics runs every join kind, with and without a residual,
// over probe rows whose partners span several chunks of pairs, and compares with
// the pairs counted one by one.
func TestJoinChunksKeepSemantics(t *testing.T) {
	// Left: 12 rows, keys 0..3 (key 3 has no partner). Right: 9000 rows with keys
	// 0..2, so each matched left row has 3000 partners and chunks end inside rows.
	var lk, lv, rk, rv []int64
	for i := 0; i < 12; i++ {
		lk, lv = append(lk, int64(i%4)), append(lv, int64(i))
	}
	for i := 0; i < 9000; i++ {
		rk, rv = append(rk, int64(i%3)), append(rv, int64(i))
	}
	checkJoinKinds(t, lk, lv, rk, rv)
}

// TestJoinUniqueBuildKeys: a build side whose keys each have one row (a primary
// key), with and without NULL keys among them, takes the join's one-pair-per-row
// path; every join kind still gives the pairs a nested loop gives.
func TestJoinUniqueBuildKeys(t *testing.T) {
	for _, withNulls := range []bool{false, true} {
		var lk, lv, rk, rv []int64
		for i := 0; i < 1200; i++ {
			k := int64(i * 7 % 1201) // distinct
			if withNulls && i%11 == 5 {
				k = nullKey
			}
			lk, lv = append(lk, k), append(lv, int64(i))
		}
		for i := 0; i < 2500; i++ {
			k := int64(i % 1301) // repeats, and misses keys
			if i%13 == 2 {
				k = nullKey
			}
			rk, rv = append(rk, k), append(rv, int64(i))
		}
		checkJoinKinds(t, lk, lv, rk, rv)
	}
}

// nullKey stands for a NULL key in checkJoinKinds' inputs.
const nullKey = -1

// checkJoinKinds joins left (lk, lv) and right (rk, rv) — k the key, nullKey a NULL
// one, v a value — with every join kind, with and without a residual, built on
// either side, and compares the rows with those a nested loop finds.
func checkJoinKinds(t *testing.T, lk, lv, rk, rv []int64) {
	t.Helper()
	l, r := storedKeys(t, lk, lv), storedKeys(t, rk, rv)
	cols := append(l.Columns(), r.Columns()...)
	lit := func(v int64) plan.Expr { return &plan.Literal{V: types.Value{Type: types.Int64, I: v}} }
	// Residual: left.v is even, or right.v < 5 (so odd left rows find few partners,
	// and left row 1, key 1, finds none).
	residual := call(t, "or",
		call(t, "=", call(t, "%", &plan.ColRef{Idx: 1, T: types.Int64}, lit(2)), lit(0)),
		call(t, "<", &plan.ColRef{Idx: 3, T: types.Int64}, lit(5)))
	equal := func(i, j int) bool { return lk[i] != nullKey && lk[i] == rk[j] }
	admits := func(i, j int) bool { return equal(i, j) && (lv[i]%2 == 0 || rv[j] < 5) }
	for _, kind := range []plan.JoinKind{plan.InnerJoin, plan.LeftJoin, plan.RightJoin, plan.FullJoin, plan.SemiJoin, plan.AntiJoin} {
		for _, withResidual := range []bool{false, true} {
			for _, buildLeft := range []bool{false, true} {
				name := fmt.Sprintf("%s residual=%v buildLeft=%v", kind, withResidual, buildLeft)
				ok := equal
				j := &plan.Join{Kind: kind, Left: l, Right: r, Cols: cols, BuildLeft: buildLeft,
					LeftKeys:  []plan.Expr{&plan.ColRef{Idx: 0, T: types.Int64}},
					RightKeys: []plan.Expr{&plan.ColRef{Idx: 0, T: types.Int64}}}
				if withResidual {
					j.Residual, ok = residual, admits
				}
				if kind == plan.SemiJoin || kind == plan.AntiJoin {
					j.Cols = l.Columns()
				}
				var want []string
				lHit, rHit := make([]bool, len(lk)), make([]bool, len(rk))
				for i := range lk {
					for k := range rk {
						if ok(i, k) {
							lHit[i], rHit[k] = true, true
							if kind != plan.SemiJoin && kind != plan.AntiJoin {
								want = append(want, fmt.Sprintf("%d,%d", lv[i], rv[k]))
							}
						}
					}
				}
				for i := range lk {
					switch {
					case kind == plan.SemiJoin && lHit[i], kind == plan.AntiJoin && !lHit[i]:
						want = append(want, fmt.Sprint(lv[i]))
					case (kind == plan.LeftJoin || kind == plan.FullJoin) && !lHit[i]:
						want = append(want, fmt.Sprintf("%d,NULL", lv[i]))
					}
				}
				for k := range rk {
					if (kind == plan.RightJoin || kind == plan.FullJoin) && !rHit[k] {
						want = append(want, fmt.Sprintf("NULL,%d", rv[k]))
					}
				}
				recs, err := Run(context.Background(), &Env{Budget: NewBudget(1 << 30), Threads: 2}, j)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var got []string
				for _, rec := range recs {
					for row := 0; row < int(rec.NumRows()); row++ {
						s := types.ValueAt(rec.Column(1), row).String()
						if rec.NumCols() > 2 {
							s += "," + types.ValueAt(rec.Column(3), row).String()
						}
						got = append(got, s)
					}
				}
				sort.Strings(got)
				sort.Strings(want)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s: %d rows, want %d", name, len(got), len(want))
				}
			}
		}
	}
}

// storedKeys is stored with nullKey keys as NULLs.
func storedKeys(t *testing.T, k, v []int64) *plan.Stored {
	t.Helper()
	s := stored(t, k, v)
	valid := make([]bool, len(k))
	hasNull := false
	for i, x := range k {
		valid[i] = x != nullKey
		hasNull = hasNull || x == nullKey
	}
	if hasNull {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues(k, valid)
		s.Arrays[0] = b.NewArray()
	}
	return s
}

// TestJoinTailAsRead: the build rows a right join emits after its probe side are
// gathered a batch at a time as they are read, not all at once.
func TestJoinTailAsRead(t *testing.T) {
	const n = 3 * vector.BatchSize
	seq := make([]int64, n)
	for i := range seq {
		seq[i] = int64(i)
	}
	l, r := stored(t, []int64{-1}, []int64{-1}), stored(t, seq, seq)
	j := &plan.Join{Kind: plan.RightJoin, Left: l, Right: r, Cols: append(l.Columns(), r.Columns()...),
		LeftKeys:  []plan.Expr{&plan.ColRef{Idx: 0, T: types.Int64}},
		RightKeys: []plan.Expr{&plan.ColRef{Idx: 0, T: types.Int64}}}
	bd := &builder{env: &Env{Budget: NewBudget(1 << 30), Threads: 1}}
	op, err := bd.build(j)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	total := 0
	for {
		b, err := op.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			break
		}
		total += b.Len()
		if p := len(op.(*hashJoin).pending); p > 0 {
			t.Fatalf("%d tail batches made ahead of the reader", p)
		}
	}
	if total != n {
		t.Fatalf("%d rows, want %d", total, n)
	}
}

// TestConcatSharedDictionary: batches gathered from one build column by reference
// concatenate by their indices and stay a dictionary with the same values; batches
// over different dictionaries are expanded.
func TestConcatSharedDictionary(t *testing.T) {
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.AppendValues([]string{"x", "yy", "zzz"}, nil)
	build := sb.NewArray()
	parts := []*vector.Batch{
		{Cols: []arrow.Array{vector.TakeRef(build, []int32{2, 0, -1})}, Rows: 3},
		{Cols: []arrow.Array{vector.TakeRef(build, []int32{1, 1})}, Rows: 2},
	}
	out, err := concatBatches(context.Background(), parts, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.Cols[0].(*array.Dictionary); !ok {
		t.Fatalf("concatenation of one dictionary's rows gave %T", out.Cols[0])
	}
	want := []string{"zzz", "x", "NULL", "yy", "yy"}
	check := func(col arrow.Array) {
		t.Helper()
		plain := kernels.Decode(col).(*array.String)
		for k, w := range want {
			got := "NULL"
			if plain.IsValid(k) {
				got = plain.Value(k)
			}
			if got != w {
				t.Fatalf("row %d: %q, want %q", k, got, w)
			}
		}
	}
	check(out.Cols[0])
	sb.AppendValues([]string{"yy"}, nil)
	other := sb.NewArray()
	parts[1] = &vector.Batch{Cols: []arrow.Array{vector.TakeRef(other, []int32{0, 0})}, Rows: 2}
	if out, err = concatBatches(context.Background(), parts, 1); err != nil {
		t.Fatal(err)
	}
	if _, ok := out.Cols[0].(*array.String); !ok {
		t.Fatalf("concatenation over two dictionaries gave %T, want strings", out.Cols[0])
	}
	check(out.Cols[0])
}

// TestJoinBuildIndexedAsRead: a build side of many batches, with NULL keys among
// them, is indexed batch by batch as it is read; the join finds every pair a
// nested loop finds, and a probe row's partners come in build row order.
func TestJoinBuildIndexedAsRead(t *testing.T) {
	const n = 5*vector.BatchSize + 123
	kb, vb := array.NewInt64Builder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator)
	defer kb.Release()
	defer vb.Release()
	key := func(i int) (int64, bool) { return int64(i % 37), i%7 != 3 }
	for i := 0; i < n; i++ {
		if k, ok := key(i); ok {
			kb.Append(k)
		} else {
			kb.AppendNull()
		}
		vb.Append(int64(i))
	}
	ks, vs := kb.NewArray(), vb.NewArray()
	cols := []plan.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	// The build side comes as a UNION ALL of pieces, one batch each, in row order.
	var build plan.Node
	for lo := 0; lo < n; lo += 1000 {
		hi := min(lo+1000, n)
		piece := &plan.Stored{Cols: cols, Arrays: []arrow.Array{array.NewSlice(ks, int64(lo), int64(hi)), array.NewSlice(vs, int64(lo), int64(hi))}, Rows: hi - lo}
		if build == nil {
			build = piece
		} else {
			build = &plan.SetOp{Kind: plan.Union, All: true, Left: build, Right: piece, Cols: cols}
		}
	}
	var pk, pv []int64
	for i := 0; i < 40; i++ {
		pk, pv = append(pk, int64(i)), append(pv, int64(-i))
	}
	probe := stored(t, pk, pv)
	j := &plan.Join{Kind: plan.InnerJoin, Left: probe, Right: build, Cols: append(probe.Columns(), build.Columns()...),
		LeftKeys:  []plan.Expr{&plan.ColRef{Idx: 0, T: types.Int64}},
		RightKeys: []plan.Expr{&plan.ColRef{Idx: 0, T: types.Int64}}}
	recs, err := Run(context.Background(), &Env{Budget: NewBudget(1 << 30), Threads: 2}, j)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64][]int64{} // probe key: build v in output order
	rows := 0
	for _, rec := range recs {
		for r := 0; r < int(rec.NumRows()); r++ {
			k := rec.Column(0).(*array.Int64).Value(r)
			got[k] = append(got[k], rec.Column(3).(*array.Int64).Value(r))
			rows++
		}
	}
	want := 0
	for _, p := range pk {
		var vs []int64
		for i := 0; i < n; i++ {
			if k, ok := key(i); ok && k == p {
				vs = append(vs, int64(i))
			}
		}
		want += len(vs)
		if fmt.Sprint(got[p]) != fmt.Sprint(vs) {
			t.Errorf("key %d: partners %d, want %d in build order", p, len(got[p]), len(vs))
		}
	}
	if rows != want {
		t.Errorf("%d rows, want %d", rows, want)
	}
}
