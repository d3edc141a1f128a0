package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// hashJoin builds a hash table on one input (the build side, all rows held) and
// streams the other (the probe side) through it. Without equi-join keys every pair
// is a candidate (a nested-loop join). Candidate pairs are checked against the
// residual condition; what is emitted depends on the join kind.
//
// The build side is the right input, or the left one when the plan asks (BuildLeft)
// for an inner, left, semi or anti join with keys. Right and full joins, and left,
// semi and anti joins built on the left, track which build rows found a partner and
// emit the rows that depend on it once the probe side is done: unmatched build rows
// with NULLs (right, full, left), matched ones (semi) or unmatched ones (anti). A
// semi or anti join built on its smaller left input thus streams the large right
// input through a small table instead of holding it. Workers probing in parallel
// track matches in their own slices, merged at the end.
type hashJoin struct {
	bd   *builder
	node *plan.Join
	// swapped: the left input is the build side.
	swapped bool
	// tracks: build rows that find a partner are recorded in matched.
	tracks bool

	probeKeys, buildKeys []evaluator
	residual             evaluator
	// residualCols marks the output columns the residual reads (only those are
	// gathered for it).
	residualCols []bool
	// outputCols marks the output columns the consumer reads (nil: all); the others
	// are left nil instead of gathered.
	outputCols []bool
	// probeCols marks the probe columns the join reads (keys, residual, output): a
	// probe batch with a selection is compacted to those only.
	probeCols  []bool
	probeWidth int
	buildWidth int
	buildTypes []arrow.DataType

	probe           Operator
	build           *vector.Batch
	table           *kernels.KeyTable
	first           []int32 // per key id: first build row, -1 none
	next            []int32 // per build row: next build row with the same key
	matched         []bool  // build rows matched (when tracks)
	buildHasNullKey bool
	// unique says whether every key of the table has one build row, and whether that
	// row is the key's id.
	unique uniqueKeys
	// buildKeyCols are the build side's key columns and buildValid its rows with
	// no NULL key, for narrowing the probe side's scan (narrowProbe).
	buildKeyCols []arrow.Array
	buildValid   []int32

	pendingBuild Operator
	// spent is the probe side once its workers make the batches (parallelSource):
	// kept only to be closed.
	spent Operator

	// The parallel probe: output batches and the pipeline's final error.
	ch     chan *vector.Batch
	errc   chan error
	cancel context.CancelFunc

	res      reservation
	started  bool
	tailDone bool
	pending  []*vector.Batch
	// cur is the probe batch whose pairs are being made (the serial probe), and
	// tailRows the build rows its tail has still to emit.
	cur      *probeState
	tailRows []int32
	// spare is the serial probe's last finished batch, whose buffers the next reuses.
	spare *probeState
	// grace, when the build side did not fit the budget, holds both sides split
	// into partition files (join_spill.go); depth is how many times the rows this
	// join reads were split already.
	grace *graceJoin
	depth int
}

func (bd *builder) buildJoin(x *plan.Join) (Operator, error) {
	if x.NullAwareAnti && x.Residual != nil {
		return nil, errs.New(errs.Analysis, "NOT IN with a correlated subquery is not supported; write NOT EXISTS")
	}
	j := &hashJoin{bd: bd, node: x, res: reservation{budget: bd.env.Budget}}
	switch x.Kind {
	case plan.InnerJoin, plan.LeftJoin, plan.SemiJoin, plan.AntiJoin:
		j.swapped = x.BuildLeft && len(x.LeftKeys) > 0 && !x.NullAwareAnti
	}
	j.tracks = x.Kind == plan.RightJoin || x.Kind == plan.FullJoin || (j.swapped && x.Kind != plan.InnerJoin)
	probeNode, buildNode := x.Left, x.Right
	probeKeys, buildKeys := x.LeftKeys, x.RightKeys
	if j.swapped {
		probeNode, buildNode = x.Right, x.Left
		probeKeys, buildKeys = x.RightKeys, x.LeftKeys
	}
	j.probeWidth, j.buildWidth = len(probeNode.Columns()), len(buildNode.Columns())
	for _, c := range buildNode.Columns() {
		j.buildTypes = append(j.buildTypes, c.Type)
	}
	for i := range probeKeys {
		pe, err := bd.compile(probeKeys[i])
		if err != nil {
			return nil, err
		}
		be, err := bd.compile(buildKeys[i])
		if err != nil {
			return nil, err
		}
		j.probeKeys = append(j.probeKeys, pe)
		j.buildKeys = append(j.buildKeys, be)
	}
	if x.Residual != nil {
		r, err := bd.compile(x.Residual)
		if err != nil {
			return nil, err
		}
		j.residual = r
		used := map[int]bool{}
		plan.ColumnsUsed(x.Residual, used)
		j.residualCols = make([]bool, len(x.Left.Columns())+len(x.Right.Columns()))
		for c := range used {
			j.residualCols[c] = true
		}
	}
	var err error
	if j.probe, err = bd.build(probeNode); err != nil {
		return nil, err
	}
	buildOp, err := bd.build(buildNode)
	if err != nil {
		j.probe.Close()
		return nil, err
	}
	j.pendingBuild = buildOp
	return j, nil
}

// uniqueKeys is what a join knows of its build keys' rows (hashJoin.unique).
type uniqueKeys uint8

const (
	uniqueNo   uniqueKeys = iota // some key has several build rows
	uniqueRows                   // every key has one build row, first[id]
	uniqueIDs                    // every key has one build row, and it is row id (no NULL keys)
)

func (j *hashJoin) prepare(ctx context.Context) error {
	op := j.pendingBuild
	j.pendingBuild = nil
	defer op.Close()
	if o, ok := op.(*pipelineOp); ok && !o.started {
		// The scan's workers then compact only the columns the join reads: a
		// filter's own columns are not kept with the build rows.
		o.p.consumed = map[int]bool{}
		for c, need := range j.buildColumns() {
			if need {
				o.p.consumed[c] = true
			}
		}
	}
	var idx *buildIndex
	var each func(*vector.Batch) error
	if len(j.buildKeys) > 0 {
		idx = &buildIndex{j: j, src: op}
		each = func(b *vector.Batch) error { return idx.add(ctx, b) }
	}
	b, err := j.drainBuild(ctx, op, each)
	if err != nil || j.grace != nil {
		return err
	}
	j.build = b
	if j.tracks {
		j.matched = make([]bool, b.Rows)
	}
	if len(j.buildKeys) == 0 || b.Rows == 0 {
		return nil
	}
	if idx.rows != b.Rows {
		return errs.New(errs.Internal, "BUG: join build side of %d rows, %d indexed", b.Rows, idx.rows)
	}
	keys := make([]arrow.Array, len(j.buildKeys))
	for i, k := range j.buildKeys {
		a, err := k(ctx, b)
		if err != nil {
			return err
		}
		keys[i] = a
	}
	// Rows with a NULL key never match; they are not in the table. Keys get ids in
	// the order of their first rows, so with one row per key and none without a key,
	// row r has id r: checked rather than assumed.
	valid := make([]int32, 0, b.Rows-idx.nullKeys)
	inOrder := true
	for r, id := range idx.ids {
		if id != kernels.NotFound {
			valid = append(valid, int32(r))
		}
		inOrder = inOrder && id == uint32(r)
	}
	j.first = make([]int32, idx.table.Len())
	for i := range j.first {
		j.first[i] = -1
	}
	j.next = make([]int32, b.Rows)
	// Linked in reverse so each chain lists build rows in their original order.
	for r := b.Rows - 1; r >= 0; r-- {
		if r%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if id := idx.ids[r]; id != kernels.NotFound {
			j.next[r] = j.first[id]
			j.first[id] = int32(r)
		}
	}
	j.table, j.buildHasNullKey = idx.table, idx.nullKeys > 0
	switch {
	case j.table.Len() < len(valid):
		j.unique = uniqueNo
	case inOrder:
		j.unique = uniqueIDs
	default:
		j.unique = uniqueRows
	}
	j.buildKeyCols, j.buildValid = keys, valid
	err = j.res.resize(j.res.held + j.table.MemoryUsage() + int64(8*b.Rows))
	if errs.CodeOf(err) == errs.ResourceExhausted && j.canSpill() {
		// The rows fit but not with their table: they are split after all.
		return j.spillBuilt(ctx)
	}
	return err
}

// buildIndex is the key table of a join's build side, filled batch by batch as the
// side is read: inserting a batch's keys overlaps the workers reading the next
// batches, rather than following the whole side on one goroutine.
type buildIndex struct {
	j   *hashJoin
	src Operator // the build side
	// reserved is set once the table was sized for the rows the build side is
	// expected to hand on (a scan's, extrapolated from its first rows).
	reserved bool
	table    *kernels.KeyTable
	// ids holds per build row the id of its key, or NotFound for a row with a NULL
	// key (which never matches).
	ids      []uint32
	rows     int
	nullKeys int
	keys     []arrow.Array
	sel      []int32
	found    []uint32
}

// reserveAfterRows is how many rows of a build side's scan are read before the
// join's table is sized by extrapolation.
const reserveAfterRows = 1 << 15

// add indexes the keys of b, the build side's next compacted batch.
func (x *buildIndex) add(ctx context.Context, b *vector.Batch) error {
	if x.keys == nil {
		x.keys = make([]arrow.Array, len(x.j.buildKeys))
	}
	for i, k := range x.j.buildKeys {
		a, err := k(ctx, b)
		if err != nil {
			return err
		}
		x.keys[i] = a
	}
	if x.table == nil {
		failPoint(PointJoinBuild)
		types := make([]arrow.DataType, len(x.keys))
		for i, k := range x.keys {
			types[i] = k.DataType()
			if d, ok := types[i].(*arrow.DictionaryType); ok {
				types[i] = d.ValueType
			}
		}
		x.table = kernels.NewKeyTable(types)
	}
	if !x.reserved {
		// Growing a large table step by step rehashes it each time: once a scan has
		// read enough rows to tell, the table is sized for what it will hand on.
		if o, ok := x.src.(*pipelineOp); !ok {
			x.reserved = true
		} else if n, ok := o.p.expectRows(reserveAfterRows); ok {
			x.table.Reserve(int(min(n+n/8, o.p.total.Load())))
			x.reserved = true
		}
	}
	nulls := hasNull(x.keys)
	x.sel = x.sel[:0]
	if nulls && !x.j.node.NullEq {
		for r := 0; r < b.Rows; r++ {
			ok := true
			for _, k := range x.keys {
				if k.IsNull(r) {
					ok = false
					break
				}
			}
			if ok {
				x.sel = append(x.sel, int32(r))
			}
		}
	}
	at := len(x.ids)
	x.ids = append(x.ids, make([]uint32, b.Rows)...)
	ids := x.ids[at:]
	if !nulls || x.j.node.NullEq {
		x.table.Insert(x.keys, nil, ids)
	} else {
		for r := range ids {
			ids[r] = kernels.NotFound
		}
		if cap(x.found) < len(x.sel) {
			x.found = make([]uint32, len(x.sel))
		}
		x.found = x.found[:len(x.sel)]
		x.table.Insert(x.keys, x.sel, x.found)
		for k, r := range x.sel {
			ids[r] = x.found[k]
		}
		x.nullKeys += b.Rows - len(x.sel)
	}
	x.rows += b.Rows
	clear(x.keys)
	return nil
}

func (j *hashJoin) Next(ctx context.Context) (*vector.Batch, error) {
	if !j.started {
		j.started = true
		if err := j.prepare(ctx); err != nil {
			return nil, err
		}
		j.probeCols = j.probeColumns()
		if j.grace != nil {
			err := j.grace.partitionProbe(ctx, j.probe)
			j.probe.Close()
			j.probe = nil
			if err != nil {
				return nil, err
			}
			return j.grace.nextBatch(ctx)
		}
		j.filterProbeAggregate()
		// A probe side whose batches the workers make (a pipeline, a join probed by
		// them) is probed by those workers, each with a reader of the build table.
		run, p, ok, err := parallelSource(ctx, j.probe)
		if err != nil {
			return nil, err
		}
		if ok {
			j.spent, j.probe = j.probe, nil
			j.probeInParallel(ctx, run, p)
		}
	}
	if j.grace != nil {
		return j.grace.nextBatch(ctx)
	}
	if j.ch != nil {
		select {
		case b, ok := <-j.ch:
			if ok {
				return b, nil
			}
			j.ch = nil
			return nil, <-j.errc
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	for {
		if len(j.pending) > 0 {
			b := j.pending[0]
			j.pending = j.pending[1:]
			return b, nil
		}
		if j.cur != nil {
			// One chunk of the current probe batch's pairs at a time: its output is
			// produced only as it is read.
			if _, err := j.probeStep(ctx, j.cur, j.matched, func(b *vector.Batch) bool { j.queue(b); return true }); err != nil {
				return nil, err
			}
			if j.cur.done {
				j.cur, j.spare = nil, j.cur.retire()
			}
			continue
		}
		if len(j.tailRows) > 0 {
			part := j.tailRows[:min(vector.BatchSize, len(j.tailRows))]
			j.tailRows = j.tailRows[len(part):]
			return j.tailBatch(part), nil
		}
		if j.probe == nil {
			return nil, nil
		}
		b, err := j.probe.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b == nil {
			j.probe.Close()
			j.probe = nil
			if j.tracks && !j.tailDone {
				j.tailDone = true
				j.tailRows = j.tailIndexes()
			}
			continue
		}
		if b.Len() == 0 {
			continue
		}
		if j.cur, err = j.startProbe(ctx, j.compactProbe(b), j.table, j.spare); err != nil {
			return nil, err
		}
		j.spare = nil
		if j.node.NullAwareAnti {
			j.nullAwareAnti(j.cur.pb, j.cur.keys, j.cur.ids, j.queue)
			j.cur, j.spare = nil, j.cur.retire()
		}
	}
}

// queue adds an output batch to those Next returns next.
func (j *hashJoin) queue(b *vector.Batch) { j.pending = append(j.pending, b) }

// probeInParallel runs the probe side on its workers (see probeWorkers) and
// queues their output for Next.
func (j *hashJoin) probeInParallel(ctx context.Context, run parallelRun, p *pipeline) {
	// The workers hand on gathered copies of the probe rows: once a batch is probed,
	// its scan may reuse all of its buffers, whatever the consumer keeps.
	if p != nil && j.gathersProbe() {
		p.recycle = true
	}
	rctx, cancel := context.WithCancel(ctx)
	j.cancel = cancel
	j.ch = make(chan *vector.Batch, 2*max(1, j.bd.env.Threads))
	j.errc = make(chan error, 1)
	probe := errs.Safe(func() error {
		return j.probeWorkers(rctx, run, p, func(_ int, out *vector.Batch) error {
			select {
			case j.ch <- out:
				return nil
			case <-rctx.Done():
				return rctx.Err()
			}
		})
	})
	go func() {
		j.errc <- probe()
		close(j.ch)
	}()
}

// gathersProbe reports whether everything the join makes of a probe batch is a copy:
// an in-memory join that gathers its probe rows (every kind but semi and anti joins,
// which select them) of flat types, whose gathers copy the values (a dictionary's
// values are the column's own, never a scan's lent buffers).
func (j *hashJoin) gathersProbe() bool {
	if j.grace != nil || j.node.NullAwareAnti || j.node.Kind == plan.SemiJoin || j.node.Kind == plan.AntiJoin {
		return false
	}
	for _, t := range j.probeTypes() {
		if d, ok := t.(*arrow.DictionaryType); ok {
			t = d.ValueType
		}
		switch t.(type) {
		case arrow.FixedWidthDataType, *arrow.StringType, *arrow.BinaryType:
		default:
			return false
		}
	}
	return true
}

// probeWorkers runs the probe side on its workers (run), each probing its own
// batches with its own reader of the build table (and its own record of matched
// build rows), and hands every output batch to sink with the worker's number; then,
// for a join that tracks matches, the batches of its tail (as worker 0). The build
// side must be prepared. p is the pipeline at the bottom of the probe side (a chain
// of joins' lowest probe side), whose scan the build keys narrow where they are its
// columns, or nil.
func (j *hashJoin) probeWorkers(ctx context.Context, run parallelRun, p *pipeline, sink func(w int, b *vector.Batch) error) error {
	readers := make([]*kernels.KeyTable, max(1, j.bd.env.Threads))
	matched := make([][]bool, len(readers))
	for i := range readers {
		if j.table != nil {
			readers[i] = j.table.Reader()
		}
		if j.tracks {
			matched[i] = make([]bool, len(j.matched))
		}
	}
	if err := j.res.resize(j.res.held + int64(len(readers)*len(j.matched))); err != nil {
		return err
	}
	if p != nil {
		size := j.narrowProbe(ctx, p, j.buildKeyCols, j.buildValid)
		if size > 0 {
			if err := j.res.resize(j.res.held + size); err != nil {
				return err
			}
		}
	}
	j.buildKeyCols, j.buildValid = nil, nil
	spares := make([]*probeState, len(readers))
	err := run(ctx, func(w int, b *vector.Batch) error {
		var sinkErr error
		err := j.probeBatch(ctx, j.compactProbe(b), readers[w], matched[w], &spares[w], func(out *vector.Batch) bool {
			sinkErr = sink(w, out)
			return sinkErr == nil
		})
		if err != nil {
			return err
		}
		return sinkErr
	})
	if err != nil || !j.tracks {
		return err
	}
	for _, m := range matched {
		for r, hit := range m {
			if hit {
				j.matched[r] = true
			}
		}
	}
	rows := j.tailIndexes()
	for lo := 0; lo < len(rows); lo += vector.BatchSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := sink(0, j.tailBatch(rows[lo:min(lo+vector.BatchSize, len(rows))])); err != nil {
			return err
		}
	}
	return nil
}

// parallelRun makes batches on the env's workers and hands each to sink with the
// number of the worker that made it; it returns the first error.
type parallelRun func(ctx context.Context, sink func(w int, b *vector.Batch) error) error

// parallelSource returns how op's batches can be made by the env's workers instead
// of read one at a time: op is a pipeline that has not started, a join whose probe
// side is such a source (its workers probe the batches they make, so a chain of
// joins runs on every worker), a UNION ALL of such sources, or a filter or
// projection over one. p is the
// pipeline at the bottom, whose scan the joins above narrow by their build keys
// (narrowProbe). When ok, op is spent: only the returned run and op's Close may
// follow. When not, op is untouched.
func parallelSource(ctx context.Context, op Operator) (run parallelRun, p *pipeline, ok bool, err error) {
	if !parallelizable(op) {
		return nil, nil, false, nil
	}
	switch x := op.(type) {
	case *pipelineOp:
		if x.started {
			return nil, nil, false, nil
		}
		x.started, x.done = true, true
		return x.p.run, x.p, true, nil
	case *stageOp:
		in, p, ok, err := parallelSource(ctx, x.in)
		if !ok || err != nil {
			return nil, nil, ok, err
		}
		return func(ctx context.Context, sink func(w int, b *vector.Batch) error) error {
			return in(ctx, func(w int, b *vector.Batch) error {
				out, err := x.stage(ctx, b)
				if err != nil || out.Len() == 0 {
					return err
				}
				return sink(w, out)
			})
		}, p, true, nil
	case *hashJoin:
		return x.parallelProbe(ctx)
	case *unionAll:
		// The inputs one after the other, each on every worker.
		runs := make([]parallelRun, len(x.ins))
		for i, in := range x.ins {
			if runs[i], _, _, err = parallelSource(ctx, in); err != nil {
				return nil, nil, false, err
			}
		}
		return func(ctx context.Context, sink func(w int, b *vector.Batch) error) error {
			for _, r := range runs {
				if err := r(ctx, sink); err != nil {
					return err
				}
			}
			return nil
		}, nil, true, nil
	}
	return nil, nil, false, nil
}

// handsOnOnly reports whether op, spent by parallelSource, keeps nothing of the
// batches its bottom pipeline makes once it has handed on what it makes of them:
// filters, projections and joins probed in memory (their output gathers the probe
// rows, or selects them for a semi or anti join, and goes to the sink at once). A
// join that spilled its build side keeps its probe side's batches in its partitions.
func handsOnOnly(op Operator) bool {
	switch x := op.(type) {
	case *pipelineOp:
		return true
	case *stageOp:
		return handsOnOnly(x.in)
	case *hashJoin:
		return x.grace == nil && x.spent != nil && handsOnOnly(x.spent)
	}
	return false
}

// parallelizable reports whether parallelSource can have op's batches made by the
// workers, without touching op.
func parallelizable(op Operator) bool {
	switch x := op.(type) {
	case *pipelineOp:
		return !x.started
	case *stageOp:
		return parallelizable(x.in)
	case *hashJoin:
		return !x.started && parallelizable(x.probe)
	case *unionAll:
		if x.i > 0 || len(x.ins) == 0 {
			return false
		}
		for _, in := range x.ins {
			if !parallelizable(in) {
				return false
			}
		}
		return true
	}
	return false
}

// parallelProbe returns the join's output as made by the workers of its probe side
// (see probeWorkers), when that side is a parallel source and the join has not
// started. The build side is prepared first. The join is then spent: only the run
// and Close may follow.
func (j *hashJoin) parallelProbe(ctx context.Context) (parallelRun, *pipeline, bool, error) {
	if j.started {
		return nil, nil, false, nil
	}
	run, p, ok, err := parallelSource(ctx, j.probe)
	if !ok || err != nil {
		return nil, nil, false, err
	}
	j.started = true
	j.spent, j.probe = j.probe, nil
	if err := j.prepare(ctx); err != nil {
		return nil, nil, false, err
	}
	j.probeCols = j.probeColumns()
	if j.grace != nil {
		return j.graceRun(run), p, true, nil
	}
	return func(ctx context.Context, sink func(w int, b *vector.Batch) error) error {
		return j.probeWorkers(ctx, run, p, sink)
	}, p, true, nil
}

// pairChunk is the most candidate pairs a join makes at once: a probe row may have
// any number of partners (a skewed key, a join without keys), so a probe batch's
// pairs are made, checked and emitted a chunk at a time, and a consumer that stops
// reading (a LIMIT) stops the join.
const pairChunk = vector.BatchSize

// probeState is where the join is in the candidate pairs of one compacted probe
// batch.
type probeState struct {
	pb   *vector.Batch
	keys []arrow.Array
	// ids are the probe rows' key ids in the build table (NotFound: no partner); nil
	// for a join without keys.
	ids []uint32
	// row is the probe row whose pairs come next; inRow says its first pair was made
	// and br is its next partner (-1: none left).
	row   int
	inRow bool
	br    int32
	// hit marks probe rows with an admitted pair (semi, anti, left and full joins);
	// flushed is the probe row up to which a left or full join has emitted.
	hit     []bool
	flushed int
	done    bool
	// pBuf and bBuf hold a chunk's pairs, reused from chunk to chunk (the output
	// batches gather from them, they do not keep them); p2 and b2 the pairs of a
	// left or full join's chunk with its unmatched rows.
	pBuf, bBuf, p2, b2 []int32
}

// retire lets go of a finished state's batch and keys, keeping its buffers for
// the next batch (startProbe).
func (st *probeState) retire() *probeState {
	st.pb, st.keys = nil, nil
	return st
}

// startProbe computes a compacted probe batch's keys and their ids in table (the
// build table or a reader of it).
//
// spare is the state of the caller's previous batch, done with, which becomes the
// new one with its buffers, or nil: the pairs of a batch of many rows would
// otherwise grow their buffers from nothing batch after batch. (A join's kind and
// keys are the same for every batch, so a spare has hit marks and ids where the
// new state needs them, and none where it does not.)
func (j *hashJoin) startProbe(ctx context.Context, pb *vector.Batch, table *kernels.KeyTable, spare *probeState) (*probeState, error) {
	st := spare
	if st == nil {
		st = &probeState{}
	}
	*st = probeState{pb: pb, pBuf: st.pBuf, bBuf: st.bBuf, p2: st.p2, b2: st.b2, hit: st.hit, ids: st.ids}
	kind := j.node.Kind
	if kind == plan.SemiJoin || kind == plan.AntiJoin || kind == plan.LeftJoin || kind == plan.FullJoin {
		st.hit = grow(st.hit, pb.Rows)
		clear(st.hit)
	}
	if len(j.probeKeys) == 0 {
		return st, nil
	}
	st.keys = make([]arrow.Array, len(j.probeKeys))
	for i, k := range j.probeKeys {
		a, err := k(ctx, pb)
		if err != nil {
			return nil, err
		}
		st.keys[i] = a
	}
	st.ids = grow(st.ids, pb.Rows)
	if table != nil {
		table.Find(st.keys, nil, st.ids)
	} else {
		for i := range st.ids {
			st.ids[i] = kernels.NotFound
		}
	}
	if !hasNull(st.keys) || j.node.NullEq {
		return st, nil
	}
	for r := range st.ids {
		if st.ids[r] == kernels.NotFound {
			continue
		}
		for _, k := range st.keys {
			if k.IsNull(r) {
				st.ids[r] = kernels.NotFound
				break
			}
		}
	}
	return st, nil
}

// nextPairs makes up to limit more candidate pairs of st, in probe row order and,
// for each probe row, in build row order. A semi or anti join built on the right
// skips the rest of a probe row that has a partner already, and without a residual
// takes one pair per probe row. One built on the left, without a residual, settles
// all the build rows of a key at its first probe row: the key's later probe rows,
// whose first build row matched already (in this worker's matched), make no pairs.
func (j *hashJoin) nextPairs(st *probeState, matched []bool, limit int) (pIdx, bIdx []int32) {
	n := st.pb.Rows
	pIdx, bIdx = st.pBuf[:0], st.bBuf[:0]
	defer func() { st.pBuf, st.bBuf = pIdx, bIdx }()
	semiAnti := !j.swapped && (j.node.Kind == plan.SemiJoin || j.node.Kind == plan.AntiJoin)
	settled := j.swapped && (j.node.Kind == plan.SemiJoin || j.node.Kind == plan.AntiJoin) &&
		j.residual == nil && st.ids != nil && matched != nil
	if j.unique != uniqueNo && st.ids != nil && !settled && !st.inRow {
		// Every key has one build row: a probe row makes at most one pair, its key's
		// row (the key's id itself when every build row has a key).
		for st.row < n && len(pIdx) < limit {
			r := st.row
			st.row++
			id := st.ids[r]
			if id == kernels.NotFound {
				continue
			}
			br := int32(id)
			if j.unique == uniqueRows {
				br = j.first[id]
			}
			pIdx = append(pIdx, int32(r))
			bIdx = append(bIdx, br)
		}
		st.done = st.row >= n
		return pIdx, bIdx
	}
	for st.row < n && len(pIdx) < limit {
		r := st.row
		if !st.inRow {
			switch {
			case st.ids != nil && st.ids[r] == kernels.NotFound:
				st.row++
				continue
			case settled && matched[j.first[st.ids[r]]]:
				st.row++
				continue
			case st.ids != nil:
				st.br = j.first[st.ids[r]]
			case j.build.Rows == 0:
				st.row++
				continue
			default:
				st.br = 0
			}
			st.inRow = true
		}
		if semiAnti && st.hit[r] {
			st.br = -1
		}
		for st.br >= 0 && len(pIdx) < limit {
			pIdx = append(pIdx, int32(r))
			bIdx = append(bIdx, st.br)
			switch {
			case semiAnti && j.residual == nil:
				st.br = -1
			case st.ids != nil:
				st.br = j.next[st.br]
			case int(st.br)+1 < j.build.Rows:
				st.br++
			default:
				st.br = -1
			}
		}
		if st.br < 0 {
			st.inRow = false
			st.row++
		}
	}
	if st.row >= n {
		st.done = true
	}
	return pIdx, bIdx
}

// probeBatch finds the candidate pairs of a compacted probe batch in table (the
// build table or a reader of it), keeps those the residual admits, records their
// build rows in matched (when the join tracks matches), and hands the output batches
// to emit, a chunk of pairs at a time. emit returns false to stop early (its
// consumer needs no more rows). It is safe to call from several goroutines with
// their own readers, matched slices and spares: *spare is the state of the
// caller's previous batch, whose buffers this one reuses, and becomes this one's.
func (j *hashJoin) probeBatch(ctx context.Context, pb *vector.Batch, table *kernels.KeyTable, matched []bool, spare **probeState, emit func(*vector.Batch) bool) error {
	failPoint(PointJoinProbe)
	st, err := j.startProbe(ctx, pb, table, *spare)
	if err != nil {
		return err
	}
	defer func() { *spare = st.retire() }()
	if j.node.NullAwareAnti {
		j.nullAwareAnti(pb, st.keys, st.ids, func(b *vector.Batch) { emit(b) })
		return nil
	}
	for !st.done {
		more, err := j.probeStep(ctx, st, matched, emit)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// probeStep makes, checks and emits one chunk of st's pairs. It returns false when
// emit asked to stop.
func (j *hashJoin) probeStep(ctx context.Context, st *probeState, matched []bool, emit func(*vector.Batch) bool) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	kind := j.node.Kind
	pb := st.pb
	n := pb.Rows
	pIdx, bIdx := j.nextPairs(st, matched, pairChunk)
	semiAnti := kind == plan.SemiJoin || kind == plan.AntiJoin
	if j.swapped && semiAnti && j.residual != nil {
		// A build row already matched needs no more pairs checked.
		keep := 0
		for k, br := range bIdx {
			if !matched[br] {
				pIdx[keep], bIdx[keep] = pIdx[k], bIdx[k]
				keep++
			}
		}
		pIdx, bIdx = pIdx[:keep], bIdx[:keep]
	}
	// Check the residual over the candidate pairs, a batch at a time.
	if j.residual != nil && len(pIdx) > 0 {
		keep := 0
		for lo := 0; lo < len(pIdx); lo += vector.BatchSize {
			hi := min(lo+vector.BatchSize, len(pIdx))
			pair := j.outputBatch(pb, pIdx[lo:hi], bIdx[lo:hi], j.residualCols)
			m, err := j.residual(ctx, pair)
			if err != nil {
				return false, err
			}
			mb := m.(*array.Boolean)
			for k := lo; k < hi; k++ {
				if mb.IsValid(k-lo) && mb.Value(k-lo) {
					pIdx[keep], bIdx[keep] = pIdx[k], bIdx[k]
					keep++
				}
			}
		}
		pIdx, bIdx = pIdx[:keep], bIdx[:keep]
	}
	if j.tracks {
		for _, br := range bIdx {
			matched[br] = true
		}
		if semiAnti {
			return true, nil // the tail emits the build rows
		}
	}
	if st.hit != nil {
		for _, r := range pIdx {
			st.hit[r] = true
		}
	}
	switch {
	case semiAnti:
		if !st.done {
			return true, nil
		}
		var sel []int32
		for r := 0; r < n; r++ {
			if st.hit[r] == (kind == plan.SemiJoin) {
				sel = append(sel, int32(r))
			}
		}
		if len(sel) > 0 {
			return emit(&vector.Batch{Cols: pb.Cols, Rows: pb.Rows, Sel: sel}), nil
		}
		return true, nil
	case (kind == plan.LeftJoin && !j.swapped) || kind == plan.FullJoin:
		// Probe rows without a match get NULLs on the build side, in probe order; a
		// probe row is settled once all its pairs were made.
		upto := st.row
		if st.done {
			upto = n
		}
		p2, b2 := st.p2[:0], st.b2[:0]
		defer func() { st.p2, st.b2 = p2, b2 }()
		k := 0
		for r := st.flushed; r < upto; r++ {
			if !st.hit[r] {
				p2 = append(p2, int32(r))
				b2 = append(b2, -1)
				continue
			}
			for k < len(pIdx) && pIdx[k] == int32(r) {
				p2 = append(p2, pIdx[k])
				b2 = append(b2, bIdx[k])
				k++
			}
		}
		p2 = append(p2, pIdx[k:]...)
		b2 = append(b2, bIdx[k:]...)
		st.flushed = upto
		pIdx, bIdx = p2, b2
	}
	for lo := 0; lo < len(pIdx); lo += vector.BatchSize {
		hi := min(lo+vector.BatchSize, len(pIdx))
		if !emit(j.outputBatch(pb, pIdx[lo:hi], bIdx[lo:hi], j.outputCols)) {
			return false, nil
		}
	}
	return true, nil
}

// nullAwareAnti implements x NOT IN (build keys): a row passes when the build side is
// empty, or when its key is not NULL, not found, and the build side has no NULL key.
func (j *hashJoin) nullAwareAnti(pb *vector.Batch, keys []arrow.Array, ids []uint32, emit func(*vector.Batch)) {
	var sel []int32
	empty := j.build.Rows == 0
	for r := 0; r < pb.Rows; r++ {
		pass := empty
		if !empty && !j.buildHasNullKey && ids[r] == kernels.NotFound {
			pass = true
			for _, k := range keys {
				if k.IsNull(r) {
					pass = false
				}
			}
		}
		if pass {
			sel = append(sel, int32(r))
		}
	}
	if len(sel) > 0 {
		emit(&vector.Batch{Cols: pb.Cols, Rows: pb.Rows, Sel: sel})
	}
}

// outputBatch gathers probe rows pIdx and build rows bIdx (-1: NULLs) into a batch
// with the join's column order (left columns, then right ones); with need, only the
// output columns it marks (the others stay nil).
func (j *hashJoin) outputBatch(pb *vector.Batch, pIdx, bIdx []int32, need []bool) *vector.Batch {
	probeAt, buildAt := 0, j.probeWidth
	if j.swapped {
		probeAt, buildAt = j.buildWidth, 0
	}
	cols := make([]arrow.Array, j.probeWidth+j.buildWidth)
	for i, c := range pb.Cols {
		if c != nil && (need == nil || need[probeAt+i]) {
			cols[probeAt+i] = vector.Take(c, pIdx)
		}
	}
	for i, c := range j.build.Cols {
		if need != nil && !need[buildAt+i] {
			continue
		}
		switch {
		case j.build.Rows == 0:
			// An empty build side has no arrays to gather from: only NULLs.
			cols[buildAt+i] = array.MakeArrayOfNull(vector.Allocator, j.buildTypes[i], len(bIdx))
		case c != nil:
			cols[buildAt+i] = vector.TakeRef(c, bIdx)
		}
	}
	return &vector.Batch{Cols: cols, Rows: len(pIdx)}
}

// tailIndexes returns the build rows a join that tracks matches emits after its
// probe side: the matched build rows of a semi join, the unmatched ones of an anti
// join, and the unmatched ones (with NULL probe columns) of right, full and (built
// on the left) left joins. tailBatch makes their batches one at a time, as read.
func (j *hashJoin) tailIndexes() []int32 {
	wantMatched := j.node.Kind == plan.SemiJoin
	var bIdx []int32
	for r, m := range j.matched {
		if m == wantMatched {
			bIdx = append(bIdx, int32(r))
		}
	}
	return bIdx
}

// tailBatch is the output batch of tail rows part (see tailIndexes).
func (j *hashJoin) tailBatch(part []int32) *vector.Batch {
	kind := j.node.Kind
	if kind == plan.SemiJoin || kind == plan.AntiJoin {
		return &vector.Batch{Cols: j.build.Cols, Rows: j.build.Rows, Sel: part}
	}
	probeAt, buildAt := 0, j.probeWidth
	if j.swapped {
		probeAt, buildAt = j.buildWidth, 0
	}
	cols := make([]arrow.Array, j.probeWidth+j.buildWidth)
	for i, t := range j.probeTypes() {
		if j.outputCols == nil || j.outputCols[probeAt+i] {
			cols[probeAt+i] = array.MakeArrayOfNull(vector.Allocator, t, len(part))
		}
	}
	for i, c := range j.build.Cols {
		if c != nil && (j.outputCols == nil || j.outputCols[buildAt+i]) {
			cols[buildAt+i] = vector.TakeRef(c, part)
		}
	}
	return &vector.Batch{Cols: cols, Rows: len(part)}
}

// filterProbeAggregate hands the build table to a probe side that is an aggregate
// grouped by (among others) the probe keys, seen through projections of plain
// columns and filters, when probe rows without a partner add nothing to the output:
// the aggregate then skips the rows of groups no build row can match (a filter above
// it would only drop more groups). A correlated subquery decorrelated into a join
// with an aggregate over a whole table (TPC-H Q17's average quantity per part, Q20's
// sum per part and supplier) so aggregates only the groups the outer rows ask for.
func (j *hashJoin) filterProbeAggregate() {
	kind := j.node.Kind
	dropsUnmatched := kind == plan.InnerJoin || (j.swapped && kind != plan.FullJoin) ||
		(!j.swapped && (kind == plan.SemiJoin || kind == plan.RightJoin))
	if !dropsUnmatched || j.table == nil || j.node.NullAwareAnti {
		return
	}
	probeKeys, buildKeys := j.node.LeftKeys, j.node.RightKeys
	if j.swapped {
		probeKeys, buildKeys = j.node.RightKeys, j.node.LeftKeys
	}
	// cols[k] is probe key k's column, followed down through the projections and
	// filters to the aggregate; -1 where it is not a plain column.
	cols := make([]int, len(probeKeys))
	for k, e := range probeKeys {
		cols[k] = -1
		if c, ok := e.(*plan.ColRef); ok {
			cols[k] = c.Idx
		}
	}
	op := j.probe
	for {
		st, ok := op.(*stageOp)
		if !ok {
			break
		}
		if st.proj != nil {
			for k, c := range cols {
				cols[k] = -1
				if c < 0 {
					continue
				}
				if r, ok := st.proj[c].(*plan.ColRef); ok {
					cols[k] = r.Idx
				}
			}
		} else if !st.filter {
			return
		}
		op = st.in
	}
	a, ok := op.(*hashAggregate)
	if !ok || a.started || len(a.node.Groups) == 0 || len(a.node.Sets) > 0 {
		return
	}
	// The keys that are groups of the aggregate: a group no build row has them for
	// cannot be joined (the others, an aggregate's result, are checked by the join).
	var keys []int
	for k, c := range cols {
		if c >= 0 && c < len(a.node.Groups) && arrow.TypeEqual(types.Unwrap(a.keyTypes[c]), types.Unwrap(buildKeys[k].Type())) {
			keys = append(keys, k)
		}
	}
	switch {
	case len(keys) == len(cols):
		a.keyFilter, a.filterCols = j.table, cols
	case len(keys) > 0 && len(j.buildKeyCols) == len(cols):
		// A table of those keys alone, from the build rows.
		in := make([]arrow.Array, len(keys))
		ts := make([]arrow.DataType, len(keys))
		sub := make([]int, len(keys))
		for i, k := range keys {
			in[i], sub[i] = j.buildKeyCols[k], cols[k]
			ts[i] = types.Unwrap(in[i].DataType())
		}
		t := kernels.NewKeyTable(ts)
		t.Insert(in, j.buildValid, make([]uint32, len(j.buildValid)))
		if err := j.res.resize(j.res.held + t.MemoryUsage()); err != nil {
			return // no filter: the aggregate then reads every group
		}
		a.keyFilter, a.filterCols = t, sub
	}
}

// probeColumns returns which probe columns the join reads.
func (j *hashJoin) probeColumns() []bool {
	need := make([]bool, j.probeWidth)
	kind := j.node.Kind
	probeAt := 0
	if j.swapped {
		probeAt = j.buildWidth
	}
	switch {
	case (kind == plan.SemiJoin || kind == plan.AntiJoin) && !j.swapped:
		// The probe rows themselves are the output.
		for i := range need {
			need[i] = j.outputCols == nil || j.outputCols[i]
		}
	case kind == plan.SemiJoin || kind == plan.AntiJoin:
	default:
		for i := range need {
			need[i] = j.outputCols == nil || j.outputCols[probeAt+i]
		}
	}
	keys := j.node.LeftKeys
	if j.swapped {
		keys = j.node.RightKeys
	}
	j.needKeysAndResidual(need, keys, probeAt)
	return need
}

// compactProbe returns b without a selection, gathering only the columns the join
// reads (the others nil).
func (j *hashJoin) compactProbe(b *vector.Batch) *vector.Batch {
	if b.Sel == nil {
		return b
	}
	cols := make([]arrow.Array, len(b.Cols))
	for i, c := range b.Cols {
		if c != nil && (j.probeCols == nil || j.probeCols[i]) {
			cols[i] = vector.Take(c, b.Sel)
		}
	}
	return &vector.Batch{Cols: cols, Rows: len(b.Sel)}
}

// readsOnly tells op, when it is a join, that its consumer reads only the columns
// that exprs use, so the others need not be gathered.
func readsOnly(op Operator, exprs ...plan.Expr) {
	j, ok := op.(*hashJoin)
	if !ok {
		return
	}
	used := map[int]bool{}
	for _, e := range exprs {
		if e != nil {
			plan.ColumnsUsed(e, used)
		}
	}
	need := make([]bool, len(j.node.Cols))
	for c := range used {
		need[c] = true
	}
	j.narrow(need)
}

// narrow records that the consumer reads only the output columns need marks, and
// passes on to inputs that are joins themselves what this join reads of them.
func (j *hashJoin) narrow(need []bool) {
	j.outputCols = need
	if j.started {
		return
	}
	probeNeed := j.probeColumns()
	buildNeed := j.buildColumns()
	if p, ok := j.probe.(*hashJoin); ok {
		p.narrow(probeNeed)
	}
	if b, ok := j.pendingBuild.(*hashJoin); ok {
		b.narrow(buildNeed)
	}
}

// buildColumns marks the build side's columns the join reads: its keys, those of
// the residual condition, and those of its output that the consumer reads.
func (j *hashJoin) buildColumns() []bool {
	kind := j.node.Kind
	need := make([]bool, j.buildWidth)
	buildAt := j.probeWidth
	if j.swapped {
		buildAt = 0
	}
	switch {
	case (kind == plan.SemiJoin || kind == plan.AntiJoin) && j.swapped:
		// The build rows are the output.
		for i := range need {
			need[i] = j.outputCols == nil || j.outputCols[i]
		}
	case kind == plan.SemiJoin || kind == plan.AntiJoin:
	default:
		for i := range need {
			need[i] = j.outputCols == nil || j.outputCols[buildAt+i]
		}
	}
	keys := j.node.RightKeys
	if j.swapped {
		keys = j.node.LeftKeys
	}
	j.needKeysAndResidual(need, keys, buildAt)
	return need
}

func (j *hashJoin) probeTypes() []arrow.DataType {
	cols := j.node.Left.Columns()
	if j.swapped {
		cols = j.node.Right.Columns()
	}
	out := make([]arrow.DataType, len(cols))
	for i, c := range cols {
		out[i] = c.Type
	}
	return out
}

func (j *hashJoin) Close() {
	if j.cancel != nil {
		j.cancel()
		if j.ch != nil {
			for range j.ch {
			}
			<-j.errc
			j.ch = nil
		}
		j.cancel = nil
	}
	if j.probe != nil {
		j.probe.Close()
		j.probe = nil
	}
	if j.spent != nil {
		j.spent.Close()
		j.spent = nil
	}
	if j.pendingBuild != nil {
		j.pendingBuild.Close()
		j.pendingBuild = nil
	}
	j.build = nil
	j.table = nil
	j.cur = nil
	j.pending = nil
	j.tailRows = nil
	if j.grace != nil {
		j.grace.close()
	}
	j.res.release()
}

// needKeysAndResidual marks, in need (the columns of one input, which starts at
// output column at), the columns its join keys and the residual condition read.
func (j *hashJoin) needKeysAndResidual(need []bool, keys []plan.Expr, at int) {
	used := map[int]bool{}
	for _, k := range keys {
		plan.ColumnsUsed(k, used)
	}
	for c := range used {
		need[c] = true
	}
	for i := range need {
		if j.residualCols != nil && j.residualCols[at+i] {
			need[i] = true
		}
	}
}
