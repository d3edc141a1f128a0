package exec

import (
	"bytes"
	"cmp"
	"context"
	"math"
	"math/bits"
	gosort "slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// sortOp holds its whole input, orders it and returns it in batches. With a limit
// (ORDER BY … LIMIT n) only the first n rows are returned.
type sortOp struct {
	bd    *builder
	node  *plan.Sort
	in    Operator
	keys  []evaluator
	limit int64
	res   reservation
	out   []*vector.Batch
	done  bool
	// merge, when the input did not fit the budget, merges its sorted runs.
	merge *merger
	runs  []sortedRun
	// chunk is the rows per batch of the first run written.
	chunk int
	// rowBytes is the input's bytes per row, once read.
	rowBytes int64
	// keyCols are, per key, the column of the rows a run's key is (a column key
	// is not written twice), or -1 for a key written after the rows' columns.
	keyCols []int
	// bound, when the first key is a column of the scan below, passes the top-N's
	// worst kept key to the scan, which then reads only rows that can beat it.
	bound *dynamicBound
	// share, when above 1, makes the sort's runs, and so its merge, hold a
	// share-th of what they would: a spilling window chains sorts, two of which
	// (one merging, the next writing runs) hold memory at once beside the window's
	// own partitions.
	share int64
}

func (bd *builder) buildSort(x *plan.Sort, limit int64) (Operator, error) {
	in, err := bd.build(x.Input)
	if err != nil {
		return nil, err
	}
	s, err := bd.newSort(x, limit, in)
	if err != nil {
		in.Close()
		return nil, err
	}
	if po, ok := in.(*pipelineOp); ok && limit >= 0 && limit <= topNMax && !x.Keys[0].NullsFirst && types.IsOrderable(x.Keys[0].E.Type()) {
		if scan, col, ok := plan.ScanColumn(x.Input, x.Keys[0].E); ok && scan == po.p.scan {
			s.bound = &dynamicBound{col: col, op: keepOp(x.Keys[0])}
			po.p.bounds = &dynamicBounds{list: []*dynamicBound{s.bound}, rows: true}
		}
	}
	return s, nil
}

// newSort returns the sort of in's rows by x's keys (x.Input describes in's
// columns), cut to limit rows unless limit is negative.
func (bd *builder) newSort(x *plan.Sort, limit int64, in Operator) (*sortOp, error) {
	s := &sortOp{bd: bd, node: x, limit: limit, res: reservation{budget: bd.env.Budget}, in: in}
	for _, k := range x.Keys {
		if !orderable(k.E.Type()) {
			return nil, errs.New(errs.Analysis, "cannot order by a value of type %s", types.Name(k.E.Type()))
		}
		ev, err := bd.compile(k.E)
		if err != nil {
			return nil, err
		}
		s.keys = append(s.keys, ev)
	}
	return s, nil
}

// orderable reports whether a sort can order by values of type t.
func orderable(t arrow.DataType) bool {
	return types.IsOrderable(t) || t.ID() == arrow.NULL || t.ID() == arrow.INTERVAL_MONTH_DAY_NANO || kernels.NestedOrderable(t)
}

// keepOp is the comparison with the worst kept key that a row's first sort key k
// must pass to stay a top-N candidate.
func keepOp(k plan.SortKey) string {
	if k.Desc {
		return ">="
	}
	return "<="
}

// topNMax is the largest LIMIT for which a sort keeps only its best rows as it reads.
const topNMax = 100_000

func (s *sortOp) Next(ctx context.Context) (*vector.Batch, error) {
	if !s.done {
		s.done = true
		if err := s.start(ctx); err != nil {
			return nil, err
		}
	}
	if s.merge != nil {
		b, err := s.merge.next(ctx)
		if b != nil {
			b.Cols = b.Cols[:s.merge.width]
		}
		return b, err
	}
	if len(s.out) == 0 {
		return nil, nil
	}
	b := s.out[0]
	s.out = s.out[1:]
	return b, nil
}

// start reads the whole input and orders it: in memory, into s.out, or, when it
// did not fit the budget, as sorted runs on disk merged by s.merge.
func (s *sortOp) start(ctx context.Context) error {
	var all *vector.Batch
	var err error
	if s.limit >= 0 && s.limit <= topNMax {
		all, err = s.topN(ctx)
	} else {
		all, s.runs, err = s.gather(ctx)
	}
	s.in.Close()
	if err != nil {
		return err
	}
	if s.runs != nil {
		runs := s.runs
		s.runs = nil
		s.merge, err = s.mergeRuns(ctx, runs, len(s.node.Input.Columns()))
		return err
	}
	if all.Rows == 0 {
		return nil
	}
	// The ordering and its normalized keys (two words, for most keys) and radix
	// buffers, then the sorted copy of the rows, are held with the rows.
	if err := s.res.resize(s.res.held + runKeyBytes*int64(all.Rows)); err != nil {
		return err
	}
	perm, _, err := s.order(ctx, all)
	if err != nil {
		return err
	}
	if err := s.res.resize(s.res.held + batchSize(all)*int64(len(perm))/int64(all.Rows)); err != nil {
		return err
	}
	// The rows are gathered in sort order a batch at a time: gathering millions
	// takes a while, and a canceled statement stops between batches.
	rows := s.batchRows()
	for lo := 0; lo < len(perm); lo += rows {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+rows, len(perm))
		s.out = append(s.out, (&vector.Batch{Cols: all.Cols, Rows: all.Rows, Sel: perm[lo:hi]}).Compact())
	}
	return nil
}

// batchRows is the rows per batch the sort hands on: vector.BatchSize, or more when
// Env.SortBatchRows asks and a batch of them is small beside the budget.
func (s *sortOp) batchRows() int {
	n := s.bd.env.SortBatchRows
	if n <= vector.BatchSize {
		return vector.BatchSize
	}
	if s.res.budget != nil && s.rowBytes > 0 {
		n = int(min(int64(n), s.res.budget.Limit()/(runShare*s.rowBytes)))
	}
	return max(n, vector.BatchSize)
}

// order returns the positions of b's rows in sort order, cut to the limit, and the
// first sort key's values. Ties keep their input order.
func (s *sortOp) order(ctx context.Context, b *vector.Batch) ([]int32, arrow.Array, error) {
	cols, err := s.keyColumns(ctx, b)
	if err != nil {
		return nil, nil, err
	}
	perm, err := s.orderKeys(ctx, cols, b.Rows)
	if err != nil {
		return nil, nil, err
	}
	return perm, cols[0], nil
}

// keyColumns evaluates the sort keys over b, dictionaries expanded.
func (s *sortOp) keyColumns(ctx context.Context, b *vector.Batch) ([]arrow.Array, error) {
	cols := make([]arrow.Array, len(s.keys))
	for i, k := range s.keys {
		a, err := k(ctx, b)
		if err != nil {
			return nil, err
		}
		cols[i] = kernels.Decode(a)
	}
	return cols, nil
}

// orderKeys returns the positions of rows rows in the order of their keys cols, cut
// to the limit. Ties keep their input order.
func (s *sortOp) orderKeys(ctx context.Context, cols []arrow.Array, rows int) ([]int32, error) {
	failPoint(PointSort)
	// Sorting millions of rows takes seconds: a canceled statement interrupts it.
	it := &interrupt{ctx: ctx}
	var perm []int32
	if err := it.run(func() {
		if sk := normalizeKeys(cols, s.node.Keys, len(cols), rows); sk != nil {
			perm = sk.sort(it, rows)
			return
		}
		cmps := make([]func(i, j int) int, len(cols))
		for i, a := range cols {
			cmps[i] = comparator(a, s.node.Keys[i])
		}
		// An unstable sort with the position as the last key is a stable sort, and
		// pattern-defeating quicksort is much faster than a merge-based stable sort.
		perm = vector.Identity(rows)
		gosort.SortFunc(perm, func(x, y int32) int {
			it.tick()
			for _, c := range cmps {
				if r := c(int(x), int(y)); r != 0 {
					return r
				}
			}
			return cmp.Compare(x, y)
		})
	}); err != nil {
		return nil, err
	}
	if s.limit >= 0 && int64(len(perm)) > s.limit {
		perm = perm[:s.limit]
	}
	return perm, nil
}

// topN reads the input keeping only candidates for the first limit rows: batches are
// buffered, and whenever limit rows have arrived since the last cut the buffer is
// ordered and cut to limit rows, so memory stays proportional to the limit and each
// row costs a logarithmic share of the sorting. Once limit rows are kept, the worst of
// them bounds the first sort key: rows that cannot reach it are dropped as they
// arrive, before they are copied, and the scan below drops them before decoding
// their other columns (a dynamic filter). Cutting as soon as limit rows arrived keeps
// that bound tight.
func (s *sortOp) topN(ctx context.Context) (*vector.Batch, error) {
	width := len(s.node.Input.Columns())
	every := max(int(s.limit), 1) // rows to arrive between cuts
	first := s.node.Keys[0]
	op := keepOp(first)
	var bound *types.Value
	var buf []*vector.Batch
	rows, rowsKept := 0, 0 // rows buffered, and of those the ones the last cut kept
	cut := func() error {
		all, err := concatBatches(ctx, buf, width)
		if err != nil {
			return err
		}
		perm, keys, err := s.order(ctx, all)
		if err != nil {
			return err
		}
		// With NULLS LAST a NULL never beats a value, so the worst kept value bounds
		// every later row; with NULLS FIRST (or a NULL worst value) there is no bound.
		bound = nil
		if s.limit > 0 && int64(len(perm)) == s.limit && !first.NullsFirst {
			if v := types.ValueAt(keys, int(perm[len(perm)-1])); !v.Null {
				bound = &v
				if s.bound != nil {
					s.bound.value.Store(bound)
				}
			}
		}
		// Keep the buffer in input order so that ties still resolve by arrival.
		gosort.Sort(perm)
		kept := (&vector.Batch{Cols: all.Cols, Rows: all.Rows, Sel: perm}).Compact()
		buf, rows, rowsKept = []*vector.Batch{kept}, kept.Rows, kept.Rows
		return s.res.resize(batchSize(kept))
	}
	for {
		b, err := s.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b == nil {
			break
		}
		if b.Len() == 0 {
			continue
		}
		if bound != nil {
			var k arrow.Array
			b, err = onKeptRows(b, func(b *vector.Batch) (err error) {
				k, err = s.keys[0](ctx, b)
				return err
			})
			if err != nil {
				return nil, err
			}
			mask, err := kernels.CompareConst(op, k, *bound)
			if err != nil {
				return nil, err
			}
			if b, err = selectTrue(ctx, b, mask); err != nil {
				return nil, err
			}
			if b.Len() == 0 {
				continue
			}
		}
		b = b.Compact()
		buf = append(buf, b)
		rows += b.Rows
		if rows-rowsKept >= every {
			if err := cut(); err != nil {
				return nil, err
			}
		}
	}
	return concatBatches(ctx, buf, width)
}

func batchSize(b *vector.Batch) int64 {
	var n int64
	for _, c := range b.Cols {
		if c != nil {
			n += heldSize(c)
		}
	}
	return n
}

func (s *sortOp) Close() {
	s.in.Close()
	s.out = nil
	for _, r := range s.runs {
		r.remove()
	}
	s.runs = nil
	if s.merge != nil {
		s.merge.close()
	}
	s.res.release()
}

// comparator orders rows i and j of a by key k, nulls placed as k asks.
func comparator(a arrow.Array, k plan.SortKey) func(i, j int) int {
	base := valueComparator(a)
	sign := 1
	if k.Desc {
		sign = -1
	}
	nullSign := 1
	if k.NullsFirst {
		nullSign = -1
	}
	return func(i, j int) int {
		ni, nj := a.IsNull(i), a.IsNull(j)
		switch {
		case ni && nj:
			return 0
		case ni:
			return nullSign
		case nj:
			return -nullSign
		}
		return sign * base(i, j)
	}
}

// valueComparator compares two non-null rows of a, typed once per column.
func valueComparator(a arrow.Array) func(i, j int) int {
	if kernels.NestedOrderable(a.DataType()) {
		// Nested values sort as their order-preserving encodings do.
		a = kernels.NestedKeys(a)
	}
	switch x := a.(type) {
	case *array.Int8:
		v := x.Int8Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Int16:
		v := x.Int16Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Int32:
		v := x.Int32Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Int64:
		v := x.Int64Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Uint8:
		v := x.Uint8Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Uint16:
		v := x.Uint16Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Uint32:
		v := x.Uint32Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Uint64:
		v := x.Uint64Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Float32:
		v := x.Float32Values()
		return func(i, j int) int { return types.CompareFloat(float64(v[i]), float64(v[j])) }
	case *array.Float64:
		v := x.Float64Values()
		return func(i, j int) int { return types.CompareFloat(v[i], v[j]) }
	case *array.Date32:
		v := x.Date32Values()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.Timestamp:
		v := x.TimestampValues()
		return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
	case *array.String:
		return func(i, j int) int { return cmp.Compare(x.Value(i), x.Value(j)) }
	case *array.Binary:
		return func(i, j int) int { return bytes.Compare(x.Value(i), x.Value(j)) }
	case *array.Boolean:
		return func(i, j int) int {
			bi, bj := x.Value(i), x.Value(j)
			switch {
			case bi == bj:
				return 0
			case bj:
				return -1
			}
			return 1
		}
	case *array.Decimal128:
		return func(i, j int) int { return x.Value(i).Cmp(x.Value(j)) }
	case *array.Decimal64:
		return func(i, j int) int { return cmp.Compare(x.Value(i), x.Value(j)) }
	case *array.MonthDayNanoInterval:
		v := x.MonthDayNanoIntervalValues()
		return func(i, j int) int { return types.CompareInterval(v[i], v[j]) }
	}
	return func(i, j int) int { return types.Compare(types.ValueAt(a, i), types.ValueAt(a, j)) }
}

// sortKeys are rows' sort keys normalized to unsigned words that order as the keys
// do: each key column becomes a code per row (NULLs, DESC and equal values already
// placed), and the codes of consecutive columns are packed, the first column in the
// highest bits, into as few words as they fit. Rows then sort by comparing words,
// or by a radix sort over the bits in use, instead of calling a comparator per
// column for each pair of rows, which dominated sorts and windows of many rows.
type sortKeys struct {
	// words[w][row] is word w of a row's key; the words compare in order.
	words [][]uint64
	// bits[w] is how many low bits of word w are in use.
	bits []int
	// split is the number of leading words that hold the first columns (a window's
	// partition keys); the columns after them start a new word.
	split int
}

// normalizeKeys encodes n rows of cols ordered by ks; the first split columns are
// packed apart from the others. It returns nil when a column's type has no
// encoding (nested values, intervals), which is then compared by comparators.
func normalizeKeys(cols []arrow.Array, ks []plan.SortKey, split, n int) *sortKeys {
	sk := &sortKeys{}
	var cur []uint64
	used := 0
	flush := func() {
		if cur != nil {
			sk.words = append(sk.words, cur)
			sk.bits = append(sk.bits, used)
		}
		cur, used = nil, 0
	}
	for i, a := range cols {
		if i == split {
			flush()
			sk.split = len(sk.words)
		}
		codes, width, ok := keyCodes(a, ks[i])
		if !ok {
			return nil
		}
		if width == 0 {
			continue // every row has the same code
		}
		if used+width > 64 {
			flush()
		}
		if cur == nil {
			cur = codes
		} else {
			for r, c := range codes {
				cur[r] = cur[r]<<width | c
			}
		}
		used += width
	}
	flush()
	if split >= len(cols) {
		sk.split = len(sk.words)
	}
	return sk
}

// keyCodes encodes each row of a as a code in [0, 2^width) such that codes order as
// k orders the rows (equal values share a code). ok is false for a type without an
// encoding.
func keyCodes(a arrow.Array, k plan.SortKey) (codes []uint64, width int, ok bool) {
	n := a.Len()
	codes, ok = orderedWords(a)
	if !ok {
		if codes, ok = denseRanks(a); !ok {
			return nil, 0, false
		}
	}
	nulls := a.NullN() > 0
	// Codes are made relative to the smallest non-NULL one so that they need as few
	// bits as the values' spread.
	lo, hi, seen := uint64(math.MaxUint64), uint64(0), false
	for r, c := range codes {
		if nulls && a.IsNull(r) {
			continue
		}
		lo, hi, seen = min(lo, c), max(hi, c), true
	}
	if !seen {
		// Every row is NULL: all equal.
		return make([]uint64, n), 0, true
	}
	span := hi - lo
	if nulls && span == math.MaxUint64 {
		// No code is left for NULL: rank the values instead.
		if codes, ok = denseRanks(a); !ok {
			return nil, 0, false
		}
		return keyCodes(&rankedArray{Array: a, codes: codes}, k)
	}
	top := span
	shift := uint64(0)
	if nulls {
		top++
		if k.NullsFirst {
			shift = 1
		}
	}
	for r, c := range codes {
		if nulls && a.IsNull(r) {
			if k.NullsFirst {
				codes[r] = 0
			} else {
				codes[r] = top
			}
			continue
		}
		c -= lo
		if k.Desc {
			c = span - c
		}
		codes[r] = c + shift
	}
	return codes, bits.Len64(top), true
}

// rankedArray is a column whose values' order is given by codes, one per row (the
// dense ranks of its values).
type rankedArray struct {
	arrow.Array
	codes []uint64
}

// orderedWords maps each row of a fixed-width column to a word that orders as the
// value does; NULL rows get any word. ok is false for other types and for decimals
// beyond 64 bits.
func orderedWords(a arrow.Array) ([]uint64, bool) {
	const sign = 1 << 63
	n := a.Len()
	out := make([]uint64, n)
	signed := func(v int64) uint64 { return uint64(v) ^ sign }
	switch x := a.(type) {
	case *rankedArray:
		copy(out, x.codes)
	case *array.Int8:
		for i, v := range x.Int8Values() {
			out[i] = signed(int64(v))
		}
	case *array.Int16:
		for i, v := range x.Int16Values() {
			out[i] = signed(int64(v))
		}
	case *array.Int32:
		for i, v := range x.Int32Values() {
			out[i] = signed(int64(v))
		}
	case *array.Int64:
		for i, v := range x.Int64Values() {
			out[i] = signed(v)
		}
	case *array.Decimal64:
		for i, v := range x.Values() {
			out[i] = signed(int64(v))
		}
	case *array.Uint8:
		for i, v := range x.Uint8Values() {
			out[i] = uint64(v)
		}
	case *array.Uint16:
		for i, v := range x.Uint16Values() {
			out[i] = uint64(v)
		}
	case *array.Uint32:
		for i, v := range x.Uint32Values() {
			out[i] = uint64(v)
		}
	case *array.Uint64:
		copy(out, x.Uint64Values())
	case *array.Date32:
		for i, v := range x.Date32Values() {
			out[i] = signed(int64(v))
		}
	case *array.Timestamp:
		for i, v := range x.TimestampValues() {
			out[i] = signed(int64(v))
		}
	case *array.Float32:
		for i, v := range x.Float32Values() {
			out[i] = floatWord(float64(v))
		}
	case *array.Float64:
		for i, v := range x.Float64Values() {
			out[i] = floatWord(v)
		}
	case *array.Boolean:
		for i := range out {
			if x.Value(i) {
				out[i] = 1
			}
		}
	case *array.Decimal128:
		for i := range out {
			if x.IsNull(i) {
				continue
			}
			v := x.Value(i)
			lo, hi := v.LowBits(), v.HighBits()
			// Only a value whose high half extends the low half's sign fits.
			if hi != int64(lo)>>63 {
				return nil, false
			}
			out[i] = signed(int64(lo))
		}
	default:
		return nil, false
	}
	return out, true
}

// floatWord maps a float to a word that orders as types.CompareFloat does: -0 as
// +0, and every NaN above +Inf.
func floatWord(f float64) uint64 {
	switch {
	case f != f:
		return math.MaxUint64
	case f == 0:
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

// denseRanks numbers the distinct values of a in their order (equal values share a
// number) and returns each row's number. The distinct values are found by hashing
// and only they are sorted. ok is false for a type that cannot be hashed.
func denseRanks(a arrow.Array) ([]uint64, bool) {
	if !kernels.ValidKeyType(a.DataType()) {
		return nil, false
	}
	n := a.Len()
	t := kernels.NewKeyTable([]arrow.DataType{a.DataType()})
	ids := make([]uint32, n)
	t.Insert([]arrow.Array{a}, nil, ids)
	// Ids are given in row order, so the first row of each value is found in one pass.
	first := make([]int32, 0, t.Len())
	for r, id := range ids {
		if int(id) == len(first) {
			first = append(first, int32(r))
		}
	}
	c := comparator(a, plan.SortKey{})
	keys := make([]int32, len(first))
	for k := range keys {
		keys[k] = int32(k)
	}
	gosort.SortFunc(keys, func(x, y int32) int { return c(int(first[x]), int(first[y])) })
	rank := make([]uint64, len(first))
	r := uint64(0)
	for k, key := range keys {
		if k > 0 && c(int(first[keys[k-1]]), int(first[key])) != 0 {
			r++
		}
		rank[key] = r
	}
	out := make([]uint64, n)
	for row, id := range ids {
		out[row] = rank[id]
	}
	return out, true
}

// sort returns the rows in key order, rows with equal keys in their input order: a
// least-significant-digit radix sort, stable, a byte of the words' used bits at a
// time, from the last word to the first. A byte in which every row agrees is
// skipped.
func (sk *sortKeys) sort(it *interrupt, n int) []int32 {
	rows := vector.Identity(n)
	if len(sk.words) == 0 || n < 2 {
		return rows
	}
	keys := make([]uint64, n)
	tmpKeys := make([]uint64, n)
	tmpRows := make([]int32, n)
	var count [256]int
	for w := len(sk.words) - 1; w >= 0; w-- {
		words := sk.words[w]
		for i, r := range rows {
			keys[i] = words[r]
		}
		for shift := 0; shift < sk.bits[w]; shift += 8 {
			it.check()
			count = [256]int{}
			for _, k := range keys {
				count[byte(k>>shift)]++
			}
			if count[byte(keys[0]>>shift)] == n {
				continue
			}
			sum := 0
			for d, c := range count {
				count[d] = sum
				sum += c
			}
			for i, k := range keys {
				d := byte(k >> shift)
				at := count[d]
				count[d]++
				tmpKeys[at], tmpRows[at] = k, rows[i]
			}
			keys, tmpKeys = tmpKeys, keys
			rows, tmpRows = tmpRows, rows
		}
	}
	return rows
}

// equal reports whether rows a and b have equal words in [from, to).
func (sk *sortKeys) equal(a, b int32, from, to int) bool {
	for _, w := range sk.words[from:to] {
		if w[a] != w[b] {
			return false
		}
	}
	return true
}
