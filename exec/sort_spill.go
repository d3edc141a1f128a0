package exec

import (
	"bytes"
	"cmp"
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// External merge sort. A sort whose input does not fit its share of the statement's
// budget (memoryShare) sorts what it holds, in parts of runShare, and writes each to
// a spill file as a sorted run (the rows
// with their sort keys after them, so the merge need not evaluate them again),
// releases it and reads on; runs are sorted and written in the background while the
// input is read (runWriter). At the end the runs are merged, a batch at a time, into
// the output: runs come in input order and ties go to the earlier run, so the sort
// stays stable and its result is the in-memory sort's, row for row. When there are
// more runs than can be merged at once within the budget, groups of them are first
// merged into longer runs.

// runShare is the part of the statement's budget one run may hold: sorting a run
// also holds a copy, its keys and the ordering while the next run is read, the
// operators around the sort hold their own, and the garbage collector needs room
// above what is live under its soft limit. Smaller runs
// also sort faster: gathering a run's rows in key order reads it at random.
const runShare = 16

// memoryShare is the part of the statement's budget a sort's rows may hold for it to
// sort them in memory, without runs.
const memoryShare = 4

// chunksPerRun is how many batches a run is written as: the merge holds one batch of
// each run it merges, so smaller batches let it merge more runs at once.
const chunksPerRun = 16

// maxFanIn bounds the runs merged at once, whatever the budget.
const maxFanIn = 64

// gather reads the sort's input. When it fits memoryShare of the budget, it is
// returned whole (runs is nil), or, when it is large and the statement has more
// than one thread, as parts sorted in memory (sortPieces); else it is written as
// sorted runs of runShare of the budget, the last one included, and returned as them.
// Runs are sorted and written by background goroutines (as many as the statement's
// threads) while the input is read on, each run holding its own part of the budget.
func (s *sortOp) gather(ctx context.Context) (*vector.Batch, []sortedRun, error) {
	width := len(s.node.Input.Columns())
	var buf []*vector.Batch
	var held, allBytes, allRows int64
	defer func() {
		if allRows > 0 {
			s.rowBytes = max(1, allBytes/allRows)
		}
	}()
	spill := s.bd.env.Spill
	// The sort stays in memory while its rows fit memMax; past that it spills, in
	// runs of runMax.
	runMax, memMax := int64(-1), int64(-1)
	if spill != nil && s.res.budget != nil {
		runMax = s.res.budget.Limit() / (runShare * max(s.share, 1))
		memMax = s.res.budget.Limit() / (memoryShare * max(s.share, 1))
	}
	w := newRunWriter(s, s.writeRun)
	fail := func(err error) (*vector.Batch, []sortedRun, error) {
		runs, _ := w.wait()
		for _, r := range runs {
			r.remove()
		}
		return nil, nil, err
	}
	// flushRun hands part (bytes of what is held) to a run writer, its reservation
	// with it.
	flushRun := func(part []*vector.Batch, bytes int64) error {
		rows := 0
		for _, b := range part {
			rows += b.Rows
		}
		if s.chunk == 0 {
			s.chunk = runChunk(rows)
		}
		// The run's whole need is reserved here, before the input reads on: the
		// rows, their concatenated copy (of more than one batch), the keys and
		// their ordering.
		need := bytes + int64(runKeyBytes*rows)
		if len(part) > 1 {
			need += bytes
		}
		res := reservation{budget: s.res.budget}
		if err := s.res.resize(s.res.held - bytes); err != nil {
			return err
		}
		if err := res.grow(need); err != nil {
			if errs.CodeOf(err) != errs.ResourceExhausted {
				return err
			}
			if err := w.idle(); err != nil {
				return err
			}
			if err := res.grow(need); err != nil {
				return err
			}
		}
		return w.start(ctx, part, res)
	}
	// flush writes what is held as runs of at most runMax bytes.
	flush := func() error {
		var part []*vector.Batch
		var bytes int64
		for _, b := range buf {
			n := batchSize(b)
			if len(part) > 0 && bytes+n > runMax {
				if err := flushRun(part, bytes); err != nil {
					return err
				}
				part, bytes = nil, 0
			}
			part, bytes = append(part, b), bytes+n
		}
		buf, held = nil, 0
		if len(part) == 0 {
			return nil
		}
		return flushRun(part, bytes)
	}
	for {
		b, err := s.in.Next(ctx)
		if err != nil {
			return fail(err)
		}
		if b == nil {
			break
		}
		if b.Len() == 0 {
			continue
		}
		b = b.Compact()
		n := batchSize(b)
		allBytes, allRows = allBytes+n, allRows+int64(b.Rows)
		limit := memMax
		if w.count() > 0 {
			limit = runMax
		}
		if runMax >= 0 && held > 0 && held+n > limit {
			if err := flush(); err != nil {
				return fail(err)
			}
		}
		if err := s.res.grow(n); err != nil {
			if runMax < 0 || errs.CodeOf(err) != errs.ResourceExhausted {
				return fail(err)
			}
			// Out of budget: the runs being written give theirs back when done.
			if held > 0 {
				if err := flush(); err != nil {
					return fail(err)
				}
			}
			if err := w.idle(); err != nil {
				return fail(err)
			}
			if err := s.res.grow(n); err != nil {
				return fail(err)
			}
		}
		buf = append(buf, b)
		held += n
	}
	if w.count() == 0 {
		if s.bd.env.Threads > 1 && allRows >= 2*int64(pieceRows) {
			runs, err := s.sortPieces(ctx, buf, held, int(allRows))
			return nil, runs, err
		}
		if len(buf) < 2 {
			all, err := concatBatches(ctx, buf, width)
			return all, nil, err
		}
		// Concatenating copies the rows: both are held until the parts are dropped.
		if err := s.res.resize(2 * held); err != nil {
			return nil, nil, err
		}
		all, err := concatBatches(ctx, buf, width)
		if err != nil {
			return nil, nil, err
		}
		return all, nil, s.res.resize(held)
	}
	if held > 0 {
		if err := flush(); err != nil {
			return fail(err)
		}
	}
	runs, err := w.wait()
	if err != nil {
		for _, r := range runs {
			r.remove()
		}
		return nil, nil, err
	}
	return nil, runs, nil
}

// runKeyBytes is what sorting holds per row of a run besides the row: its keys,
// normalized, their ordering and the radix sort's buffers.
const runKeyBytes = 4 + 2*8 + 2*8 + 4

// runChunk is the rows per batch a run of rows rows is written in.
func runChunk(rows int) int { return max(128, min(vector.BatchSize, rows/chunksPerRun+1)) }

// runWriter sorts runs in background goroutines, as many at once as the statement
// has threads, each into a spill file or memory as write makes it, and keeps them in
// the order they were started: ties between runs go to the earlier one, so that
// order keeps the sort stable.
type runWriter struct {
	write func(ctx context.Context, buf []*vector.Batch, keyMu *sync.Mutex) (sortedRun, error)
	slot  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	runs  []sortedRun
	err   error
	// keys serializes the evaluation of the sort keys (see sortRun).
	keys sync.Mutex
}

func newRunWriter(s *sortOp, write func(context.Context, []*vector.Batch, *sync.Mutex) (sortedRun, error)) *runWriter {
	return &runWriter{write: write, slot: make(chan struct{}, max(1, s.bd.env.Threads))}
}

// start writes buf as the next run, once a slot is free, and then releases res,
// which holds what writing it needs. It returns the error of a run that failed
// before, without starting.
func (w *runWriter) start(ctx context.Context, buf []*vector.Batch, res reservation) error {
	w.slot <- struct{}{}
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		<-w.slot
		res.release()
		return err
	}
	i := len(w.runs)
	w.runs = append(w.runs, nil)
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		var run sortedRun
		err := errs.Safe(func() (err error) {
			run, err = w.write(ctx, buf, &w.keys)
			return err
		})()
		res.release()
		w.mu.Lock()
		w.runs[i] = run
		if err != nil && w.err == nil {
			w.err = err
		}
		w.mu.Unlock()
		<-w.slot
	}()
	return nil
}

// count is the runs started.
func (w *runWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.runs)
}

// idle waits until no run is being written and returns the first error of one.
func (w *runWriter) idle() error {
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// wait waits for every run and returns those written, in order.
func (w *runWriter) wait() ([]sortedRun, error) {
	err := w.idle()
	var runs []sortedRun
	for _, r := range w.runs {
		if r != nil {
			runs = append(runs, r)
		}
	}
	return runs, err
}

// writeRun sorts buf and writes it to a new spill file, its sort keys appended to
// each row, in batches of s.chunk rows. The caller has reserved what it holds
// meanwhile; the keys are evaluated under keyMu.
func (s *sortOp) writeRun(ctx context.Context, buf []*vector.Batch, keyMu *sync.Mutex) (sortedRun, error) {
	var run *spillFile
	err := s.sortRun(ctx, buf, keyMu, func(b *vector.Batch) error {
		if run == nil {
			var err error
			if run, err = s.bd.env.Spill.newSpillFile("sort", len(b.Cols)); err != nil {
				return err
			}
		}
		return run.write(b)
	})
	if err == nil && run != nil {
		err = run.finish()
	}
	if err != nil {
		if run != nil {
			run.remove()
		}
		return nil, err
	}
	if run == nil {
		return nil, nil // no rows
	}
	return spilledRun{run}, nil
}

// memoryRun sorts buf into batches held in memory (see writeRun).
func (s *sortOp) memoryRun(ctx context.Context, buf []*vector.Batch, keyMu *sync.Mutex) (sortedRun, error) {
	run := &memRun{}
	err := s.sortRun(ctx, buf, keyMu, func(b *vector.Batch) error {
		run.batches = append(run.batches, b.Compact())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return run, nil
}

// sortRun sorts buf and hands emit its rows in order, in batches of s.chunk rows
// (selections over the sorted rows), each with the sort keys that are not one of its
// columns after them. The keys are evaluated under keyMu.
func (s *sortOp) sortRun(ctx context.Context, buf []*vector.Batch, keyMu *sync.Mutex, emit func(*vector.Batch) error) error {
	width := len(s.node.Input.Columns())
	all, err := concatBatches(ctx, buf, width)
	if err != nil {
		return err
	}
	// Under keyMu: the keys' compiled expressions, and the first run's choice of
	// the keys it writes (s.keyCols), are not for concurrent use.
	keyMu.Lock()
	keys, err := s.keyColumns(ctx, all)
	var spilled []arrow.Array
	if err == nil {
		spilled = s.spilledKeys(all, mergeKeys(keys))
	}
	keyMu.Unlock()
	if err != nil {
		return err
	}
	perm, err := s.orderKeys(ctx, keys, all.Rows)
	if err != nil {
		return err
	}
	cols := append(append([]arrow.Array(nil), all.Cols...), spilled...)
	for lo := 0; lo < len(perm); lo += s.chunk {
		if err := ctx.Err(); err != nil {
			return errs.New(errs.Canceled, "statement canceled: %w", err)
		}
		hi := min(lo+s.chunk, len(perm))
		if err := emit(&vector.Batch{Cols: cols, Rows: all.Rows, Sel: perm[lo:hi]}); err != nil {
			return err
		}
	}
	return nil
}

// sortedRun is a sorted run the merge reads: a spill file (spilledRun), or sorted
// batches in memory (memRun).
type sortedRun interface {
	open() (runReader, error)
	remove()
}

// runReader reads a run's batches in order; nil at its end.
type runReader interface {
	next() (*vector.Batch, error)
}

// spilledRun is a run written to a spill file.
type spilledRun struct{ *spillFile }

func (r spilledRun) open() (runReader, error) { return r.reader() }

// memRun is a run sorted in memory: its batches, each dropped once read.
type memRun struct {
	batches []*vector.Batch
}

func (r *memRun) open() (runReader, error) { return r, nil }

func (r *memRun) next() (*vector.Batch, error) {
	if len(r.batches) == 0 {
		return nil, nil
	}
	b := r.batches[0]
	r.batches[0] = nil
	r.batches = r.batches[1:]
	return b, nil
}

func (r *memRun) remove() { r.batches = nil }

// pieceRows is the rows of each part an input that fits memory is cut into when
// the statement has more than one thread: the parts are sorted at once, each
// gathering its rows within its own small span of memory, and merged. Tests lower it.
var pieceRows = 1 << 20

// sortPieces sorts buf (rows rows, held bytes, reserved) in parts of about pieceRows
// rows (at most maxFanIn parts), one goroutine a thread, and returns them as runs in
// memory, in input order.
func (s *sortOp) sortPieces(ctx context.Context, buf []*vector.Batch, held int64, rows int) ([]sortedRun, error) {
	per := max(pieceRows, rows/maxFanIn+1)
	var parts [][]*vector.Batch
	n := 0
	for _, b := range buf {
		if len(parts) == 0 || n >= per {
			parts, n = append(parts, nil), 0
		}
		parts[len(parts)-1] = append(parts[len(parts)-1], b)
		n += b.Rows
	}
	// The parts' concatenated copies, keys and orderings, then their sorted rows.
	if err := s.res.resize(2*held + runKeyBytes*int64(rows)); err != nil {
		return nil, err
	}
	s.chunk = runChunk(per)
	// The parts' memory is reserved above, not by each run.
	w := newRunWriter(s, s.memoryRun)
	for _, part := range parts {
		if err := w.start(ctx, part, reservation{}); err != nil {
			break
		}
	}
	runs, err := w.wait()
	if err != nil {
		return nil, err
	}
	return runs, s.res.resize(held)
}

// spilledKeys returns the key columns a run is written with after the rows'
// columns: the keys that are not one of those columns. The first run decides which
// are (s.keyCols), for every run.
func (s *sortOp) spilledKeys(all *vector.Batch, keys []arrow.Array) []arrow.Array {
	if s.keyCols == nil {
		s.keyCols = make([]int, len(keys))
		for i, k := range s.node.Keys {
			s.keyCols[i] = -1
			// A column key is the column itself, which the run holds already, unless
			// the merge compares an encoding of its values.
			if c, ok := k.E.(*plan.ColRef); ok && c.Idx < len(all.Cols) && all.Cols[c.Idx] != nil && !kernels.NestedOrderable(c.T) {
				s.keyCols[i] = c.Idx
			}
		}
	}
	var out []arrow.Array
	for i, k := range keys {
		if s.keyCols[i] < 0 {
			out = append(out, k)
		}
	}
	return out
}

// runKeys returns the key columns of a batch of a run: the rows' own columns for
// column keys, the columns after the rows' (width of them) for the others.
func (s *sortOp) runKeys(b *vector.Batch, width int) []arrow.Array {
	out := make([]arrow.Array, len(s.keyCols))
	j := width
	for i, c := range s.keyCols {
		if c >= 0 {
			out[i] = b.Cols[c]
			continue
		}
		out[i] = b.Cols[j]
		j++
	}
	return out
}

// mergeKeys are sort key columns as the merge compares them: nested values as their
// order-preserving encodings.
func mergeKeys(keys []arrow.Array) []arrow.Array {
	out := make([]arrow.Array, len(keys))
	for i, k := range keys {
		if kernels.NestedOrderable(k.DataType()) {
			k = kernels.NestedKeys(k)
		}
		out[i] = k
	}
	return out
}

// merger merges sorted runs: each source holds the batch of its run being read and
// the position of its next row; a heap orders the sources by that row.
type merger struct {
	s       *sortOp
	width   int // columns of the rows; the sort keys follow them
	sources []*mergeSource
	heap    []int
	res     reservation
	limit   int64 // rows still to return, or -1
	// rows is the most rows an output batch has.
	rows int
}

type mergeSource struct {
	run  sortedRun
	r    runReader
	b    *vector.Batch
	row  int
	size int64
	keys []arrow.Array
	cmps []func(i int, o arrow.Array, j int) int
}

// load reads the source's next batch; b is nil at the end of its run.
func (m *merger) load(src *mergeSource) error {
	m.res.resize(m.res.held - src.size)
	src.b, src.row, src.size = nil, 0, 0
	b, err := src.r.next()
	if err != nil || b == nil {
		return err
	}
	src.size = batchSize(b)
	if err := m.res.grow(src.size); err != nil {
		return err
	}
	src.b = b
	src.keys = m.s.runKeys(b, m.width)
	src.cmps = src.cmps[:0]
	for i, k := range src.keys {
		src.cmps = append(src.cmps, crossComparator(k, m.s.node.Keys[i]))
	}
	return nil
}

// less orders sources x and y by their next rows, ties by run (input) order.
func (m *merger) less(x, y int) bool {
	a, b := m.sources[x], m.sources[y]
	for i, c := range a.cmps {
		if r := c(a.row, b.keys[i], b.row); r != 0 {
			return r < 0
		}
	}
	return x < y
}

// newMerger opens runs for merging.
func (s *sortOp) newMerger(runs []sortedRun, width int, limit int64) (*merger, error) {
	m := &merger{s: s, width: width, res: reservation{budget: s.res.budget}, limit: limit, rows: s.batchRows()}
	for _, run := range runs {
		r, err := run.open()
		if err != nil {
			m.close()
			return nil, err
		}
		src := &mergeSource{run: run, r: r}
		m.sources = append(m.sources, src)
		if err := m.load(src); err != nil {
			m.close()
			return nil, err
		}
		if src.b != nil {
			m.push(len(m.sources) - 1)
		}
	}
	return m, nil
}

func (m *merger) push(x int) {
	m.heap = append(m.heap, x)
	i := len(m.heap) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !m.less(m.heap[i], m.heap[p]) {
			break
		}
		m.heap[i], m.heap[p] = m.heap[p], m.heap[i]
		i = p
	}
}

// down restores the heap after its top changed.
func (m *merger) down() {
	h := m.heap
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			c = r
		}
		if !m.less(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// segment is consecutive rows [lo, hi) of one source batch taken into an output
// batch.
type segment struct {
	b      *vector.Batch
	lo, hi int
}

// next returns the next up to m.rows merged rows with all their columns (keys
// included), or nil when every run is read.
func (m *merger) next(ctx context.Context) (*vector.Batch, error) {
	if err := ctx.Err(); err != nil {
		return nil, errs.New(errs.Canceled, "statement canceled: %w", err)
	}
	want := m.rows
	if m.limit >= 0 {
		want = int(min(int64(want), m.limit))
	}
	var segs []segment
	open := make(map[int]int) // source -> its segment in segs, for its current batch
	segOf := make([]int32, 0, want)
	offOf := make([]int32, 0, want)
	for len(segOf) < want && len(m.heap) > 0 {
		x := m.heap[0]
		src := m.sources[x]
		si, ok := open[x]
		if !ok || segs[si].b != src.b {
			si = len(segs)
			segs = append(segs, segment{b: src.b, lo: src.row, hi: src.row})
			open[x] = si
		}
		segOf = append(segOf, int32(si))
		offOf = append(offOf, int32(segs[si].hi-segs[si].lo))
		segs[si].hi++
		src.row++
		if src.row == src.b.Rows {
			if err := m.load(src); err != nil {
				return nil, err
			}
			if src.b == nil {
				m.heap[0] = m.heap[len(m.heap)-1]
				m.heap = m.heap[:len(m.heap)-1]
			}
		}
		if len(m.heap) > 0 {
			m.down()
		}
	}
	if len(segOf) == 0 {
		return nil, nil
	}
	if m.limit >= 0 {
		m.limit -= int64(len(segOf))
	}
	parts := make([]*vector.Batch, len(segs))
	base := make([]int32, len(segs))
	at := int32(0)
	for i, sg := range segs {
		cols := make([]arrow.Array, len(sg.b.Cols))
		for c, a := range sg.b.Cols {
			if a != nil {
				cols[c] = array.NewSlice(a, int64(sg.lo), int64(sg.hi))
			}
		}
		parts[i] = &vector.Batch{Cols: cols, Rows: sg.hi - sg.lo}
		base[i] = at
		at += int32(sg.hi - sg.lo)
	}
	all, err := concatBatches(ctx, parts, len(segs[0].b.Cols))
	if err != nil {
		return nil, err
	}
	sel := make([]int32, len(segOf))
	for t, si := range segOf {
		sel[t] = base[si] + offOf[t]
	}
	return (&vector.Batch{Cols: all.Cols, Rows: all.Rows, Sel: sel}).Compact(), nil
}

// close removes the merged runs.
func (m *merger) close() {
	for _, src := range m.sources {
		src.run.remove()
	}
	m.sources, m.heap = nil, nil
	m.res.release()
}

// mergeRuns merges runs until at most fanIn remain, each merge of fanIn runs writing
// one longer run, and returns the merger of what remains.
func (s *sortOp) mergeRuns(ctx context.Context, runs []sortedRun, width int) (*merger, error) {
	// The merge holds one batch of each run (its rows and their keys): as many as
	// fill half the budget, or half its share of it, at least two.
	fanIn := maxFanIn
	if b := s.res.budget; b != nil && s.rowBytes > 0 {
		batch := 2 * int64(s.chunk) * s.rowBytes
		fanIn = int(max(2, min(int64(maxFanIn), b.Limit()/2/int64(max(s.share, 1))/batch)))
	}
	if _, ok := runs[0].(*memRun); ok {
		// Parts sorted in memory (sortPieces, at most maxFanIn) are held already.
		fanIn = len(runs)
	}
	keyed := width
	for _, c := range s.keyCols {
		if c < 0 {
			keyed++
		}
	}
	for len(runs) > fanIn {
		m, err := s.newMerger(runs[:fanIn], width, -1)
		if err != nil {
			return nil, err
		}
		// Longer runs are written in batches as small as the first runs'.
		m.rows = s.chunk
		out, err := s.bd.env.Spill.newSpillFile("merge", keyed)
		if err == nil {
			err = copyMerged(ctx, m, out)
		}
		m.close()
		if err != nil {
			if out != nil {
				out.remove()
			}
			for _, r := range runs[fanIn:] {
				r.remove()
			}
			return nil, err
		}
		runs = append(runs[fanIn:], spilledRun{out})
	}
	limit := int64(-1)
	if s.limit >= 0 {
		limit = s.limit
	}
	return s.newMerger(runs, width, limit)
}

// copyMerged writes m's rows to out.
func copyMerged(ctx context.Context, m *merger, out *spillFile) error {
	for {
		b, err := m.next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			return out.finish()
		}
		if err := out.write(b); err != nil {
			return err
		}
	}
}

// crossComparator compares row i of a with row j of another array of a's type, by
// key k, NULLs placed as k asks.
func crossComparator(a arrow.Array, k plan.SortKey) func(i int, o arrow.Array, j int) int {
	base := crossValues(a)
	sign, nullSign := 1, 1
	if k.Desc {
		sign = -1
	}
	if k.NullsFirst {
		nullSign = -1
	}
	return func(i int, o arrow.Array, j int) int {
		ni, nj := a.IsNull(i), o.IsNull(j)
		switch {
		case ni && nj:
			return 0
		case ni:
			return nullSign
		case nj:
			return -nullSign
		}
		return sign * base(i, o, j)
	}
}

// crossValues compares non-NULL row i of a with row j of o, typed once per column.
// The array a is fixed (a source's batch); o varies.
func crossValues(a arrow.Array) func(i int, o arrow.Array, j int) int {
	switch x := a.(type) {
	case *array.Int32:
		return func(i int, o arrow.Array, j int) int { return cmp.Compare(x.Value(i), o.(*array.Int32).Value(j)) }
	case *array.Int64:
		return func(i int, o arrow.Array, j int) int { return cmp.Compare(x.Value(i), o.(*array.Int64).Value(j)) }
	case *array.Float64:
		return func(i int, o arrow.Array, j int) int {
			return types.CompareFloat(x.Value(i), o.(*array.Float64).Value(j))
		}
	case *array.Date32:
		return func(i int, o arrow.Array, j int) int { return cmp.Compare(x.Value(i), o.(*array.Date32).Value(j)) }
	case *array.Timestamp:
		return func(i int, o arrow.Array, j int) int { return cmp.Compare(x.Value(i), o.(*array.Timestamp).Value(j)) }
	case *array.String:
		return func(i int, o arrow.Array, j int) int { return cmp.Compare(x.Value(i), o.(*array.String).Value(j)) }
	case *array.Binary:
		return func(i int, o arrow.Array, j int) int { return bytes.Compare(x.Value(i), o.(*array.Binary).Value(j)) }
	case *array.Decimal128:
		return func(i int, o arrow.Array, j int) int { return x.Value(i).Cmp(o.(*array.Decimal128).Value(j)) }
	case *array.Decimal64:
		return func(i int, o arrow.Array, j int) int { return cmp.Compare(x.Value(i), o.(*array.Decimal64).Value(j)) }
	}
	return func(i int, o arrow.Array, j int) int {
		return types.Compare(types.ValueAt(a, i), types.ValueAt(o, j))
	}
}
