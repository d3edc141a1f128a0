package exec

import (
	"context"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// Windows larger than memory. The in-memory window holds its whole input, and per
// row of it the ordering, frames and results of a function. When that would not fit
// the statement's budget, the functions are evaluated in passes, one per ordering
// (functions ordering the rows alike share one): a pass sorts its input
// by the partition and order keys with the sort ORDER BY uses, which spills sorted
// runs and merges them, and then computes its functions over a few whole partitions
// at a time as they come out of the merge, with the same code as in memory. Only the
// partitions being computed are held, so a partition larger than the budget still
// fails with RESOURCE_EXHAUSTED.
//
// Every row is numbered as it is read, and each pass sorts by that number last:
// rows that tie on a window's keys keep their input order, as in memory, so every
// function's result is the in-memory one. The rows come out in the last pass's
// window order, not in input order (SQL gives a window's output no order).

// windowSpillShare: the window is computed in memory while its estimate fits a
// windowSpillShare-th of the budget; the operators around it hold their own.
const windowSpillShare = 2

// windowChunkShare: a pass computes its functions over a windowChunkShare-th of the
// budget's bytes of rows at a time (more when one partition is larger).
const windowChunkShare = 8

// read reads the input. It returns all of it, reserved, to be computed in memory,
// or, with spill true, what it has read when the window turned out too large for
// the budget and can spill (the rest is still to be read from w.in).
func (w *windowOp) read(ctx context.Context) (batches []*vector.Batch, spill bool, err error) {
	canSpill := w.bd.env.Spill != nil && w.res.budget != nil && windowSpillable(w.node.Funcs)
	var limit int64
	if canSpill {
		limit = w.res.budget.Limit() / windowSpillShare
	}
	perRow := windowRowBytes + 8*int64(len(w.node.Funcs))
	var held, rows int64
	for {
		b, err := w.in.Next(ctx)
		if err != nil {
			return nil, false, err
		}
		if b == nil {
			return batches, false, nil
		}
		if b.Len() == 0 {
			continue
		}
		b = b.Compact()
		batches = append(batches, b)
		held += batchSize(b)
		rows += int64(b.Rows)
		// In memory the rows are held, the columns the functions read copied
		// into one batch, and a function's work and results held per row.
		if canSpill && 2*held+rows*perRow > limit {
			return batches, true, nil
		}
		if err := w.res.resize(held); err != nil {
			if canSpill && errs.CodeOf(err) == errs.ResourceExhausted {
				return batches, true, nil
			}
			return nil, false, err
		}
	}
}

// windowSpillable reports whether funcs can be evaluated in sorted passes: each
// has partitions, and every partition and order key can be sorted by. A function
// without PARTITION BY has one partition of every row, which spilling would have to
// hold whole too, beside the sort's merge: it is computed in memory.
func windowSpillable(funcs []plan.WindowCall) bool {
	for _, f := range funcs {
		if len(f.Partition) == 0 {
			return false
		}
		for _, p := range f.Partition {
			if !orderable(p.Type()) {
				return false
			}
		}
		for _, k := range f.Order {
			if !orderable(k.E.Type()) {
				return false
			}
		}
	}
	return true
}

// windowSpill is the spilling evaluation: a chain of passes over the numbered
// input.
type windowSpill struct {
	last  Operator
	width int // the input's columns; the row number follows them
	// at are the columns of the last pass's batches that hold the functions'
	// results, in the functions' order.
	at []int
}

// startSpill chains the passes over the batches already read and the rest of the
// input.
func (w *windowOp) startSpill(read []*vector.Batch) (*windowSpill, error) {
	width := len(w.node.Input.Columns())
	cols := append(append([]plan.Column(nil), w.node.Input.Columns()...), plan.Column{Name: "#row", Type: types.Int64})
	var op Operator = &numberedOp{w: w, read: read}
	seq := &plan.ColRef{Idx: width, T: types.Int64, Name: "#row"}
	ws := &windowSpill{width: width, at: make([]int, len(w.node.Funcs))}
	for _, group := range orderingGroups(w.node.Funcs) {
		var funcs []plan.WindowCall
		for _, i := range group {
			ws.at[i] = len(cols)
			funcs = append(funcs, w.node.Funcs[i])
			cols = append(cols, w.node.Cols[width+i])
		}
		f := funcs[0]
		keys := make([]plan.SortKey, 0, len(f.Partition)+len(f.Order)+1)
		for _, p := range f.Partition {
			keys = append(keys, plan.SortKey{E: p})
		}
		keys = append(append(keys, f.Order...), plan.SortKey{E: seq})
		in := columnsNode(cols[:len(cols)-len(funcs)])
		s, err := w.bd.newSort(&plan.Sort{Input: in, Keys: keys}, -1, op)
		if err != nil {
			op.Close()
			return nil, err
		}
		s.share = 2
		pass := &windowPass{w: w, sort: s, funcs: funcs, width: len(in), res: reservation{budget: w.res.budget}}
		op = pass
		for _, p := range f.Partition {
			ev, err := w.bd.compile(p)
			if err != nil {
				pass.Close()
				return nil, err
			}
			pass.parts = append(pass.parts, ev)
		}
	}
	ws.last = op
	return ws, nil
}

// orderingGroups groups the functions (by index, in order of first appearance) that
// order the rows alike, each group to be computed by one pass: a function's result
// depends on its own ordering only, so functions of one ordering need not be
// neighbours to share a sort.
func orderingGroups(funcs []plan.WindowCall) [][]int {
	var groups [][]int
	for i, f := range funcs {
		k := 0
		for k < len(groups) && !sameOrdering(funcs[groups[k][0]], f) {
			k++
		}
		if k == len(groups) {
			groups = append(groups, nil)
		}
		groups[k] = append(groups[k], i)
	}
	return groups
}

// next returns the last pass's next batch: the input's columns, without the row
// numbers, and the functions' results in the functions' order.
func (ws *windowSpill) next(ctx context.Context) (*vector.Batch, error) {
	b, err := ws.last.Next(ctx)
	if b == nil || err != nil {
		return nil, err
	}
	cols := make([]arrow.Array, ws.width, ws.width+len(ws.at))
	copy(cols, b.Cols[:ws.width])
	for _, c := range ws.at {
		cols = append(cols, b.Cols[c])
	}
	return &vector.Batch{Cols: cols, Rows: b.Rows, Sel: b.Sel}, nil
}

func (ws *windowSpill) close() { ws.last.Close() }

// columnsNode describes a stream of batches by its columns alone.
type columnsNode []plan.Column

func (n columnsNode) Columns() []plan.Column { return n }
func (n columnsNode) Inputs() []plan.Node    { return nil }

// numberedOp returns the window's input, the batches read before it spilled first,
// each row with its number in the input appended.
type numberedOp struct {
	w    *windowOp
	read []*vector.Batch
	rows int64
}

func (n *numberedOp) Next(ctx context.Context) (*vector.Batch, error) {
	var b *vector.Batch
	if len(n.read) > 0 {
		b, n.read = n.read[0], n.read[1:]
		// The batch is the sort's to hold now.
		n.w.res.resize(max(n.w.res.held-batchSize(b), 0))
	} else {
		for b == nil || b.Len() == 0 {
			var err error
			if b, err = n.w.in.Next(ctx); b == nil || err != nil {
				return nil, err
			}
		}
		b = b.Compact()
	}
	seq := make([]int64, b.Rows)
	for i := range seq {
		seq[i] = n.rows + int64(i)
	}
	n.rows += int64(b.Rows)
	cols := append(b.Cols[:len(b.Cols):len(b.Cols)], fixedColumn(arrow.PrimitiveTypes.Int64, seq, nil))
	return &vector.Batch{Cols: cols, Rows: b.Rows}, nil
}

func (n *numberedOp) Close() {
	n.read = nil
	n.w.in.Close()
	n.w.res.release()
}

// windowPass computes functions that order the rows alike over its input sorted by
// their partition and order keys, a few whole partitions at a time, and returns the
// rows with the functions' results appended.
type windowPass struct {
	w     *windowOp
	sort  *sortOp
	funcs []plan.WindowCall
	parts []evaluator // the partition keys
	width int         // the columns of the input's batches
	res   reservation
	// pending are sorted rows not yet computed, the last partition in them perhaps
	// incomplete: rows rows in batches, holding held bytes. starts are the rows of
	// pending where partitions start, after the first.
	pending []*vector.Batch
	rows    int
	held    int64
	starts  []int
	// lastKeys are the partition keys of pending's last batch.
	lastKeys []arrow.Array
	// chunkRows is how many rows are computed at once, when partitions allow.
	chunkRows int
	ended     bool
	out       []*vector.Batch
}

func (p *windowPass) Next(ctx context.Context) (*vector.Batch, error) {
	for len(p.out) == 0 {
		// What the last chunk's work held beyond its rows is free again.
		p.res.resize(p.held)
		if p.ended && p.rows == 0 {
			return nil, nil
		}
		if err := p.fill(ctx); err != nil {
			return nil, err
		}
	}
	b := p.out[0]
	p.out = p.out[1:]
	// The batch is the consumer's to hold now.
	p.res.resize(max(p.res.held-batchSize(b), p.held))
	return b, nil
}

// fill reads sorted batches until a chunk of whole partitions is held, or the
// input ends, and computes it into out.
func (p *windowPass) fill(ctx context.Context) error {
	for {
		if cut := p.cut(); cut > 0 {
			return p.compute(ctx, cut)
		}
		if p.ended {
			return p.compute(ctx, p.rows)
		}
		b, err := p.sort.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			p.ended = true
			continue
		}
		if b.Rows > 0 {
			if err := p.add(ctx, b); err != nil {
				return err
			}
		}
	}
}

// cut returns how many of the pending rows to compute now: none while they are
// fewer than a chunk, else the whole partitions that fill a chunk best (the first
// partition alone when it is larger).
func (p *windowPass) cut() int {
	if p.rows < p.chunkRows || len(p.starts) == 0 {
		return 0
	}
	k := sort.SearchInts(p.starts, p.chunkRows+1)
	if k == 0 {
		return p.starts[0]
	}
	return p.starts[k-1]
}

// add holds sorted batch b and notes where its partitions start.
func (p *windowPass) add(ctx context.Context, b *vector.Batch) error {
	n := batchSize(b)
	if err := p.res.grow(n); err != nil {
		return tooLarge(err, p.rows+b.Rows)
	}
	if p.chunkRows == 0 {
		// A row is held, copied into the chunk, and computed over.
		perRow := 2*max(n/int64(b.Rows), 1) + windowRowBytes + 8*int64(len(p.funcs))
		p.chunkRows = int(max(p.res.budget.Limit()/windowChunkShare/perRow, 1))
	}
	keys := make([]arrow.Array, len(p.parts))
	for i, ev := range p.parts {
		a, err := ev(ctx, b)
		if err != nil {
			return err
		}
		keys[i] = kernels.Decode(a)
	}
	for _, r := range partitionStarts(keys, p.lastKeys) {
		if p.rows+r > 0 {
			p.starts = append(p.starts, p.rows+r)
		}
	}
	p.pending = append(p.pending, b)
	p.rows += b.Rows
	p.held += n
	p.lastKeys = keys
	return nil
}

// tooLarge explains a budget exceeded while rows rows of whole partitions (or of
// one partition still being read) are held: a window spills between partitions,
// so each partition must fit the budget.
func tooLarge(err error, rows int) error {
	if errs.CodeOf(err) != errs.ResourceExhausted {
		return err
	}
	return errs.New(errs.ResourceExhausted, "a window's partitions being computed, %d rows, do not fit the statement's memory limit "+
		"(a window spills between partitions, so each partition must fit): %w", rows, err)
}

// partitionStarts returns the rows of keys (one batch's partition keys) where a
// partition starts, 0 included when the first row's keys differ from prev's last
// (or there is no prev). Without keys there is one partition.
func partitionStarts(keys, prev []arrow.Array) []int {
	if len(keys) == 0 {
		return nil
	}
	var out []int
	if prev == nil {
		out = append(out, 0)
	} else {
		last := prev[0].Len() - 1
		for i, k := range keys {
			if crossComparator(k, plan.SortKey{})(0, prev[i], last) != 0 {
				out = append(out, 0)
				break
			}
		}
	}
	cmps := make([]func(i, j int) int, len(keys))
	for i, k := range keys {
		cmps[i] = comparator(k, plan.SortKey{})
	}
	for r := 1; r < keys[0].Len(); r++ {
		for _, c := range cmps {
			if c(r-1, r) != 0 {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// compute computes the functions over the first cut pending rows (whole
// partitions), and queues them with their results in out.
func (p *windowPass) compute(ctx context.Context, cut int) error {
	if cut == 0 {
		return nil
	}
	chunk, rest := splitBatches(p.pending, cut)
	var restHeld int64
	for _, b := range rest {
		restHeld += batchSize(b)
	}
	starts := p.starts[:0]
	for _, r := range p.starts {
		if r > cut {
			starts = append(starts, r-cut)
		}
	}
	p.pending, p.rows, p.held, p.starts = rest, p.rows-cut, restHeld, starts
	// As in memory, the functions read one batch of the columns they use, and
	// their results are appended to the rows' own batches: the other columns are
	// not copied.
	var chunkHeld int64
	for _, b := range chunk {
		chunkHeld += batchSize(b)
	}
	all, err := concatBatches(ctx, readColumns(chunk, windowColumns(p.funcs)), p.width)
	if err != nil {
		return err
	}
	if len(chunk) > 1 {
		chunkHeld += batchSize(all)
	}
	if err := p.res.resize(restHeld + chunkHeld); err != nil {
		return tooLarge(err, all.Rows)
	}
	results, err := p.w.results(ctx, all, p.funcs, &p.res)
	if err != nil {
		return tooLarge(err, all.Rows)
	}
	p.out = withResults(chunk, results)
	return nil
}

// splitBatches splits compacted batches at row n.
func splitBatches(batches []*vector.Batch, n int) (before, after []*vector.Batch) {
	for i, b := range batches {
		switch {
		case n >= b.Rows:
			before = append(before, b)
			n -= b.Rows
		case n == 0:
			return before, append(after, batches[i:]...)
		default:
			before = append(before, sliceBatch(b, 0, n))
			after = append(after, sliceBatch(b, n, b.Rows))
			n = 0
		}
	}
	return before, after
}

// sliceBatch is rows [lo, hi) of compacted batch b.
func sliceBatch(b *vector.Batch, lo, hi int) *vector.Batch {
	cols := make([]arrow.Array, len(b.Cols))
	for i, c := range b.Cols {
		if c != nil {
			cols[i] = array.NewSlice(c, int64(lo), int64(hi))
		}
	}
	return &vector.Batch{Cols: cols, Rows: hi - lo}
}

func (p *windowPass) Close() {
	p.sort.Close()
	p.pending, p.out = nil, nil
	p.res.release()
}
