package exec

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// randomOrder is n rows shuffled into window order, cut into partitions of random
// sizes (a few large enough for the segment tree), with random peer groups.
func randomOrder(rng *rand.Rand, n int) *windowOrder {
	o := &windowOrder{perm: make([]int32, n), peerStart: make([]int32, n), peerEnd: make([]int32, n)}
	for i, r := range rng.Perm(n) {
		o.perm[i] = int32(r)
	}
	for p := 0; p < n; {
		size := 1 + rng.Intn(400)
		if rng.Intn(3) == 0 {
			size = 1 + rng.Intn(5)
		}
		end := min(p+size, n)
		o.parts = append(o.parts, int32(p))
		for q := p; q < end; {
			g := min(q+1+rng.Intn(3), end)
			for k := q; k < g; k++ {
				o.peerStart[k], o.peerEnd[k] = int32(q), int32(g)
			}
			q = g
		}
		p = end
	}
	o.parts = append(o.parts, int32(n))
	return o
}

// randomFrames gives each position a frame inside its partition: sliding ROWS
// frames of random widths, or arbitrary spans with holes when monotone is false.
func randomFrames(rng *rand.Rand, o *windowOrder, monotone bool) []frameSpans {
	fr := make([]frameSpans, len(o.perm))
	for pi := 0; pi+1 < len(o.parts); pi++ {
		ps, pe := o.parts[pi], o.parts[pi+1]
		before, after := int32(rng.Intn(200)), int32(rng.Intn(100))
		for p := ps; p < pe; p++ {
			if monotone {
				fr[p] = frameSpans{{max(ps, p-before), min(pe, p+after+1)}}
				continue
			}
			var cut [6]int32
			for k := range cut {
				cut[k] = ps + int32(rng.Intn(int(pe-ps+1)))
			}
			for i := range cut {
				for j := i + 1; j < len(cut); j++ {
					if cut[j] < cut[i] {
						cut[i], cut[j] = cut[j], cut[i]
					}
				}
			}
			fr[p] = frameSpans{{cut[0], cut[1]}, {cut[2], cut[3]}, {cut[4], cut[5]}}
		}
	}
	return fr
}

// bruteForce computes each position's frame with a fresh accumulator folding its
// rows one by one.
func bruteForce(t *testing.T, spec agg.Spec, arg arrow.Array, keep []bool, o *windowOrder, fr []frameSpans) []types.Value {
	out := make([]types.Value, len(o.perm))
	for p, f := range fr {
		a, err := agg.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		a.Resize(1)
		var sel []int32
		for _, sp := range f {
			for q := sp.s; q < sp.e; q++ {
				if r := o.perm[q]; keep == nil || keep[r] {
					sel = append(sel, r)
				}
			}
		}
		if len(sel) > 0 {
			if err := a.Update(arg, sel, nil); err != nil {
				t.Fatal(err)
			}
		}
		res, err := a.Final()
		if err != nil {
			t.Fatal(err)
		}
		out[o.perm[p]] = types.ValueAt(res, 0)
	}
	return out
}

func sameValue(a, b types.Value) bool {
	if a.Null || b.Null {
		return a.Null == b.Null
	}
	if types.IsFloat(types.Unwrap(a.Type)) {
		return math.Abs(a.F-b.F) <= 1e-9*math.Max(1, math.Abs(b.F))
	}
	return types.Compare(a, b) == 0
}

// TestWindowAggregateFrames computes aggregates over random frames — growing,
// sliding (through the segment tree of merged block states) and with holes — with
// and without a FILTER, and checks every row against a brute-force computation.
func TestWindowAggregateFrames(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const n = 3000
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	fb := array.NewFloat64Builder(memory.DefaultAllocator)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	for i := 0; i < n; i++ {
		if rng.Intn(10) == 0 {
			ib.AppendNull()
			fb.AppendNull()
			sb.AppendNull()
			continue
		}
		ib.Append(int64(rng.Intn(2000) - 1000))
		fb.Append(rng.Float64()*100 - 50)
		sb.Append(fmt.Sprintf("s%04d", rng.Intn(5000)))
	}
	ints, floats, strs := ib.NewArray(), fb.NewArray(), sb.NewArray()
	// The same values as decimals, dates and INTEGERs, on a slice.
	decb := array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: 18, Scale: 2})
	datb := array.NewDate32Builder(memory.DefaultAllocator)
	i32b := array.NewInt32Builder(memory.DefaultAllocator)
	decb.AppendNull()
	datb.AppendNull()
	i32b.AppendNull()
	for i := 0; i < n; i++ {
		if ints.IsNull(i) {
			decb.AppendNull()
			datb.AppendNull()
			i32b.AppendNull()
			continue
		}
		v := ints.(*array.Int64).Value(i)
		decb.Append(decimal128.FromI64(v * 1234567))
		datb.Append(arrow.Date32(v))
		i32b.Append(int32(v))
	}
	decs := array.NewSlice(decb.NewArray(), 1, n+1)
	dates := array.NewSlice(datb.NewArray(), 1, n+1)
	int32s := array.NewSlice(i32b.NewArray(), 1, n+1)
	keep := make([]bool, n)
	for i := range keep {
		keep[i] = rng.Intn(3) > 0
	}
	specs := []struct {
		spec agg.Spec
		arg  arrow.Array
	}{
		{agg.Spec{Name: "count_star"}, array.NewNull(n)},
		{agg.Spec{Name: "count", ArgType: types.Int64}, ints},
		{agg.Spec{Name: "sum", ArgType: types.Int64}, ints},
		{agg.Spec{Name: "sum", ArgType: types.Float64}, floats},
		{agg.Spec{Name: "avg", ArgType: types.Int64}, ints},
		{agg.Spec{Name: "min", ArgType: types.Int64}, ints},
		{agg.Spec{Name: "max", ArgType: types.String}, strs},
		{agg.Spec{Name: "sum", ArgType: decs.DataType()}, decs},
		{agg.Spec{Name: "avg", ArgType: decs.DataType()}, decs},
		{agg.Spec{Name: "min", ArgType: types.Date}, dates},
		{agg.Spec{Name: "max", ArgType: types.Int32}, int32s},
	}
	o := randomOrder(rng, n)
	for _, shape := range []string{"growing", "running", "lagging", "sliding", "holes"} {
		var fr []frameSpans
		switch shape {
		case "growing", "running", "lagging":
			// RANGE to the current row's peers, ROWS to the current row, ROWS to two
			// rows before it (empty at first).
			fr = make([]frameSpans, n)
			for pi := 0; pi+1 < len(o.parts); pi++ {
				ps := o.parts[pi]
				for p := ps; p < o.parts[pi+1]; p++ {
					switch shape {
					case "growing":
						fr[p] = frameSpans{{ps, o.peerEnd[p]}}
					case "running":
						fr[p] = frameSpans{{ps, p + 1}}
					default:
						fr[p] = frameSpans{{ps, max(ps, p-2)}}
					}
				}
			}
		case "sliding":
			fr = randomFrames(rng, o, true)
		case "holes":
			fr = randomFrames(rng, o, false)
		}
		for _, c := range specs {
			for _, filter := range [][]bool{nil, keep} {
				name := fmt.Sprintf("%s/%s/filter=%v", shape, c.spec, filter != nil)
				it := &interrupt{ctx: context.Background()}
				res := &reservation{budget: NewBudget(1 << 30)}
				got, err := windowAggregate(it, res, c.spec, []arrow.Array{c.arg}, filter, o, fr, shape != "sliding" && shape != "holes")
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				want := bruteForce(t, c.spec, c.arg, filter, o, fr)
				for r := range want {
					if g := types.ValueAt(got, r); !sameValue(g, want[r]) {
						t.Fatalf("%s: row %d: got %v, want %v", name, r, g, want[r])
					}
				}
				res.release()
			}
		}
	}
}

// TestAggTreeMerge checks the segment tree alone: the merged states of every run of
// blocks equal the blocks' rows folded one by one.
func TestAggTreeMerge(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	n := 37*windowBlock + 5
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	for i := 0; i < n; i++ {
		ib.Append(int64(rng.Intn(100)))
	}
	arg := ib.NewArray()
	perm := make([]int32, n)
	for i, r := range rng.Perm(n) {
		perm[i] = int32(r)
	}
	spec := agg.Spec{Name: "sum", ArgType: types.Int64}
	it := &interrupt{ctx: context.Background()}
	tree, err := buildAggTree(spec, []arrow.Array{arg}, nil, perm, it, func(int64) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	nb := (n + windowBlock - 1) / windowBlock
	vals := arg.(*array.Int64)
	for bs := 0; bs < nb; bs++ {
		for be := bs + 1; be <= nb; be++ {
			out, _ := agg.New(spec)
			out.Resize(1)
			if err := tree.merge(out, bs, be, []uint32{0}); err != nil {
				t.Fatal(err)
			}
			res, _ := out.Final()
			want := int64(0)
			for p := bs * windowBlock; p < min(be*windowBlock, n); p++ {
				want += vals.Value(int(perm[p]))
			}
			if got := res.(*array.Int64).Value(0); got != want {
				t.Fatalf("blocks [%d, %d): got %d, want %d", bs, be, got, want)
			}
		}
	}
}

// BenchmarkWindowSlidingSum is a sum over a sliding frame of 1,000 rows across 1M
// rows in one partition: the segment tree makes it O(n log w), not O(n·w).
func BenchmarkWindowSlidingSum(b *testing.B) {
	benchmarkWindowSum(b, plan.Frame{Rows: true, Start: plan.FrameBound{Kind: plan.Preceding, N: 999}, End: plan.FrameBound{Kind: plan.CurrentRow}})
}

// BenchmarkWindowRunningSum is a running sum over 1M rows: one state folds each row
// once and each row's result is a copy of it.
func BenchmarkWindowRunningSum(b *testing.B) {
	benchmarkWindowSum(b, plan.Frame{Rows: true, Start: plan.FrameBound{Kind: plan.UnboundedPreceding}, End: plan.FrameBound{Kind: plan.CurrentRow}})
}

func benchmarkWindowSum(b *testing.B, frame plan.Frame) {
	const n = 1_000_000
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = int64(i % 977)
	}
	col := array.NewInt64Builder(memory.DefaultAllocator)
	col.AppendValues(vals, nil)
	v := col.NewArray()
	rows := &plan.Stored{Cols: []plan.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}},
		Arrays: []arrow.Array{v, v}, Rows: n}
	call := plan.WindowCall{Func: "sum", Arg: &plan.ColRef{Idx: 1, T: types.Int64},
		Agg:   &plan.AggCall{Func: "sum", Arg: &plan.ColRef{Idx: 1, T: types.Int64}, T: types.Int64},
		Order: []plan.SortKey{{E: &plan.ColRef{Idx: 0, T: types.Int64}}},
		Frame: frame,
		T:     types.Int64}
	w := &plan.Window{Input: rows, Cols: append(rows.Columns(), plan.Column{Name: "s", Type: types.Int64}), Funcs: []plan.WindowCall{call}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), &Env{Budget: NewBudget(4 << 30), Threads: 1}, w); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWindowRangeAndGroupsFrames computes RANGE and GROUPS frames with offsets over
// random keys with duplicates and NULLs, ascending and descending, NULLs first and
// last, and checks each row's frame against its definition: the rows whose key lies
// within the offsets of the row's key (RANGE), or whose peer group lies within the
// offsets of the row's group (GROUPS); in a RANGE frame a row with a NULL key has
// its peers.
func TestWindowRangeAndGroupsFrames(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	const n = 300
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	keys := make([]int64, n)
	for i := range keys {
		if rng.Intn(8) == 0 {
			kb.AppendNull()
			continue
		}
		keys[i] = int64(rng.Intn(60))
		kb.Append(keys[i])
	}
	col := kb.NewArray()
	all := &vector.Batch{Cols: []arrow.Array{col}, Rows: n}
	key := &plan.ColRef{Idx: 0, T: types.Int64}
	lit := func(v int64) plan.Expr { return &plan.Literal{V: types.IntValue(v)} }
	w := &windowOp{bd: &builder{env: &Env{}}}
	ctx := context.Background()
	kinds := []plan.BoundKind{plan.Preceding, plan.Following}
	for trial := 0; trial < 200; trial++ {
		sk := plan.SortKey{E: key, Desc: rng.Intn(2) == 0, NullsFirst: rng.Intn(2) == 0}
		groups := rng.Intn(2) == 0
		start := plan.FrameBound{Kind: kinds[rng.Intn(2)], N: int64(rng.Intn(12))}
		end := plan.FrameBound{Kind: kinds[rng.Intn(2)], N: int64(rng.Intn(12))}
		fr := plan.Frame{Groups: groups, Start: start, End: end}
		// signed turns a bound into a distance along the ORDER BY direction.
		signed := func(b plan.FrameBound) int64 {
			if b.Kind == plan.Preceding {
				return -b.N
			}
			return b.N
		}
		if !groups {
			moved := func(b plan.FrameBound) plan.Expr {
				op := "+"
				if (b.Kind == plan.Preceding) != sk.Desc {
					op = "-"
				}
				return call(t, op, key, lit(b.N))
			}
			fr.Key, fr.StartVal, fr.EndVal = key, moved(start), moved(end)
		}
		f := plan.WindowCall{Func: "count_star", Order: []plan.SortKey{sk}, Frame: fr}
		it := &interrupt{ctx: ctx}
		o, err := w.order(ctx, it, all, f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := w.frames(ctx, it, all, f, o)
		if err != nil {
			t.Fatal(err)
		}
		// group numbers the peer groups in window order.
		group := make([]int64, n)
		for p := 1; p < n; p++ {
			group[p] = group[p-1]
			if o.peerStart[p] == int32(p) {
				group[p]++
			}
		}
		dir := int64(1)
		if sk.Desc {
			dir = -1
		}
		for p := 0; p < n; p++ {
			r := int(o.perm[p])
			var want []int32
			for q := 0; q < n; q++ {
				rq := int(o.perm[q])
				var in bool
				switch {
				case groups:
					d := group[q] - group[p]
					in = d >= signed(start) && d <= signed(end)
				case col.IsNull(r):
					in = o.peerStart[p] == o.peerStart[q]
				default:
					d := (keys[rq] - keys[r]) * dir
					in = !col.IsNull(rq) && d >= signed(start) && d <= signed(end)
				}
				if in {
					want = append(want, int32(q))
				}
			}
			sp := got[p][0]
			if len(want) == 0 {
				if sp.e > sp.s {
					t.Fatalf("trial %d (%+v, %+v): position %d key %v: frame [%d, %d), want empty", trial, sk, fr, p, col.GetOneForMarshal(r), sp.s, sp.e)
				}
				continue
			}
			if sp.s != want[0] || sp.e != want[len(want)-1]+1 || int(sp.e-sp.s) != len(want) {
				t.Fatalf("trial %d (%+v, groups %v, %+v %+v): position %d key %v: frame [%d, %d), want %v", trial, sk, groups, start, end, p, col.GetOneForMarshal(r), sp.s, sp.e, want)
			}
		}
	}
}

// BenchmarkRunningSum computes sum(x) OVER (PARTITION BY … ORDER BY … ROWS
// UNBOUNDED PRECEDING) over 500k decimal rows in partitions of 1 to 120 rows (q51's
// shape), and over one partition of them all.
func BenchmarkRunningSum(b *testing.B) {
	const n = 500_000
	rng := rand.New(rand.NewSource(1))
	db := array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: 18, Scale: 2})
	for range n {
		db.Append(decimal128.FromI64(rng.Int63n(1_000_000)))
	}
	arg := db.NewArray()
	spec := agg.Spec{Name: "sum", ArgType: arg.DataType()}
	it := &interrupt{ctx: context.Background()}
	for _, shape := range []string{"small", "one"} {
		o := &windowOrder{perm: vector.Identity(n)}
		fr := make([]frameSpans, n)
		for p := 0; p < n; {
			size := n
			if shape == "small" {
				size = 1 + rng.Intn(120)
			}
			end := min(p+size, n)
			o.parts = append(o.parts, int32(p))
			for q := p; q < end; q++ {
				fr[q] = frameSpans{{int32(p), int32(q + 1)}}
			}
			p = end
		}
		o.parts = append(o.parts, n)
		b.Run(shape, func(b *testing.B) {
			for range b.N {
				res := &reservation{budget: NewBudget(1 << 34)}
				if _, err := windowAggregate(it, res, spec, []arrow.Array{arg}, nil, o, fr, true); err != nil {
					b.Fatal(err)
				}
				res.release()
			}
		})
	}
}

// A window over several batches appends its results to the input's own batches: the
// columns no function reads (here a dictionary of strings) come out unchanged, row
// by row with the results computed over all the batches, which are slices.
func TestWindowKeepsInputBatches(t *testing.T) {
	n := 3*vector.BatchSize + 17
	rng := rand.New(rand.NewSource(5))
	mem := memory.DefaultAllocator
	kb := array.NewInt64Builder(mem)
	vb := array.NewInt64Builder(mem)
	ib := array.NewInt32Builder(mem)
	ks, vs := make([]int64, n), rng.Perm(n)
	for i := range n {
		ks[i] = int64(rng.Intn(7))
		kb.Append(ks[i])
		vb.Append(int64(vs[i]))
		if i%5 == 0 {
			ib.AppendNull()
		} else {
			ib.Append(int32(vs[i] % 10))
		}
	}
	db := array.NewStringBuilder(mem)
	for d := range 10 {
		db.Append(fmt.Sprintf("word %d", d))
	}
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	cols := []arrow.Array{kb.NewArray(), vb.NewArray(), array.NewDictionaryArray(dt, ib.NewArray(), db.NewArray())}
	var batches []*vector.Batch
	for lo := 0; lo < n; lo += vector.BatchSize {
		hi := min(lo+vector.BatchSize, n)
		b := &vector.Batch{Rows: hi - lo}
		for _, c := range cols {
			b.Cols = append(b.Cols, array.NewSlice(c, int64(lo), int64(hi)))
		}
		batches = append(batches, b)
	}
	in := &plan.Stored{Cols: []plan.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}, {Name: "s", Type: dt}}}
	k := &plan.ColRef{Idx: 0, T: types.Int64}
	v := &plan.ColRef{Idx: 1, T: types.Int64}
	node := &plan.Window{Input: in, Cols: append(in.Columns(), plan.Column{Name: "rn", Type: types.Int64}, plan.Column{Name: "r", Type: types.Int64}),
		Funcs: []plan.WindowCall{
			{Func: "row_number", Partition: []plan.Expr{k}, Order: []plan.SortKey{{E: v}}, T: types.Int64},
			{Func: "rank", Order: []plan.SortKey{{E: k}}, T: types.Int64},
		}}
	budget := NewBudget(1 << 30)
	w := &windowOp{bd: &builder{env: &Env{Budget: budget}}, node: node, in: &batchesOp{batches: batches}, res: reservation{budget: budget}}
	defer w.Close()
	// below[k] counts the rows of smaller keys; rowNumber[v] is v's place in its
	// partition.
	below := make([]int64, 8)
	byKey := make([][]int, 7)
	for i := range n {
		below[ks[i]+1]++
		byKey[ks[i]] = append(byKey[ks[i]], vs[i])
	}
	for i := 1; i < len(below); i++ {
		below[i] += below[i-1]
	}
	rowNumber := make([]int64, n)
	for _, vals := range byKey {
		sort.Ints(vals)
		for p, x := range vals {
			rowNumber[x] = int64(p) + 1
		}
	}
	rows, nb := 0, 0
	for {
		b, err := w.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			break
		}
		nb++
		kc, vc := b.Cols[0].(*array.Int64), b.Cols[1].(*array.Int64)
		sc := kernels.Decode(b.Cols[2]).(*array.String)
		rn, rk := b.Cols[3].(*array.Int64), b.Cols[4].(*array.Int64)
		for r := range b.Rows {
			i := rows + r
			if kc.Value(r) != ks[i] || vc.Value(r) != int64(vs[i]) {
				t.Fatalf("row %d: k %d v %d, want %d %d", i, kc.Value(r), vc.Value(r), ks[i], vs[i])
			}
			if want := fmt.Sprintf("word %d", vs[i]%10); sc.IsNull(r) != (i%5 == 0) || !sc.IsNull(r) && sc.Value(r) != want {
				t.Fatalf("row %d: s %q, want %q", i, sc.Value(r), want)
			}
			if rn.Value(r) != rowNumber[vs[i]] || rk.Value(r) != below[ks[i]]+1 {
				t.Fatalf("row %d: row_number %d rank %d, want %d %d", i, rn.Value(r), rk.Value(r), rowNumber[vs[i]], below[ks[i]]+1)
			}
		}
		rows += b.Rows
	}
	if rows != n || nb != len(batches) {
		t.Fatalf("%d rows in %d batches, want %d rows in %d", rows, nb, n, len(batches))
	}
}
