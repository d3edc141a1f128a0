package exec

import (
	"context"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/plan/rules"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/vector"
)

// Operator produces batches. Next returns nil at the end. Close releases what the
// operator holds and stops its inputs; it is safe to call more than once and after
// an error. An operator is used by one goroutine.
type Operator interface {
	Next(ctx context.Context) (*vector.Batch, error)
	Close()
}

// Env is what the operators of one statement share.
type Env struct {
	Budget  *Budget
	Threads int
	Store   storage.Store
	// IgnoreStatistics keeps statistics records from skipping files (the statement
	// set use_statistics = false): only the files' own metadata and footers prune.
	IgnoreStatistics bool
	// LateMaterialisation is the late_materialisation setting: "always" runs the row
	// filter (a scan's filter columns decoded first, the rest only for the rows they
	// admit) wherever a filter can, "never" decodes every column of every row, and
	// "auto" (or "") runs it on a row group when the rest of the projection holds at
	// least LateRatio times the compressed bytes of the filter's columns.
	LateMaterialisation string
	// Scans receives one entry per table scan the statement runs, in plan order.
	Scans []*ScanStats
	// OnScan, when set, is told of each scan as it is added to Scans, so that a
	// statement's live progress can read its counters while it runs.
	OnScan func(*ScanStats)
	// RowLimit, when set, is the statement's max_rows_scanned breaker: every scan
	// charges the rows it reads to it.
	RowLimit *source.RowLimit
	// MaxResultRows and MaxResultBytes, when positive, bound the statement's result
	// (max_result_rows, max_result_bytes): the batch that goes past either fails the
	// statement, which stops there rather than return a truncated result. Bytes are
	// counted as the result holds them (dictionaries expanded).
	MaxResultRows, MaxResultBytes int64
	// KeepResult says Stream's caller keeps every batch it is handed until the
	// statement ends (it collects the result): each stays reserved until Stream
	// returns, as Run's do, rather than being given back when its sink returns.
	KeepResult bool
	// Spill, when set, is where the statement's sorts, windows, grouped aggregates
	// and hash joins write what does not fit its budget (sort_spill.go,
	// window_spill.go, aggregate_spill.go, join_spill.go). Without it they fail
	// with RESOURCE_EXHAUSTED instead. The caller closes it when the statement
	// ends, which removes every file.
	Spill *Spill
	// SortBatchRows, when positive, is the rows per batch a sort hands on instead of
	// vector.BatchSize: OPTIMIZE asks for its writer's page length, so that each
	// batch is encoded as one page without being joined with the next.
	SortBatchRows int
}

// ScanStats are one scan's counters, for the query record.
type ScanStats struct {
	Node     *plan.Scan
	Counters source.Counters
}

type builder struct {
	env *Env

	mu     sync.Mutex
	shared map[*plan.Shared]*sharedRows
	// work holds each running recursive query's work table.
	work map[*plan.WorkTable]*vector.Batch
	// subqueries holds the evaluator of each scalar subquery compiled, so that one
	// read in several places (a filter and its scan's pruning) runs once.
	subqueries map[*plan.Subquery]evaluator
}

// Run executes n to completion and returns its rows as records with n's schema. It
// is Stream into a slice: the result is reserved from env.Budget as it grows and held
// until Run returns.
func Run(ctx context.Context, env *Env, n plan.Node) ([]arrow.Record, error) {
	bd := &builder{env: env}
	defer bd.releaseShared()
	return bd.run(ctx, n, true)
}

// Stream executes n to completion and hands its rows to sink one record at a time,
// with n's schema, as the root operator produces them. The next batch is made only
// after sink returns, so a slow sink slows the statement (backpressure) and the
// engine holds at most one result batch: each is reserved from env.Budget while it
// is made and handed over, and given back when sink returns. The result limits
// (MaxResultRows, MaxResultBytes) count every batch handed over; the batch that goes
// past one fails the statement before it reaches sink.
//
// sink owns the record it is given: the engine keeps no reference to it or its rows
// once sink returns. Records are Go memory, collected when unreferenced: sink may keep
// one (and call Retain/Release as Arrow's own users do) but need not release it. An
// error from sink stops the statement and is Stream's error.
func Stream(ctx context.Context, env *Env, n plan.Node, sink func(arrow.Record) error) error {
	bd := &builder{env: env}
	defer bd.releaseShared()
	return bd.stream(ctx, n, true, env.KeepResult, sink)
}

// run runs n to completion; top says n is the statement's root, whose rows are the
// result and count against the result limits (a subquery's do not).
func (bd *builder) run(ctx context.Context, n plan.Node, top bool) ([]arrow.Record, error) {
	var out []arrow.Record
	err := bd.stream(ctx, n, top, true, func(r arrow.Record) error {
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// stream runs n to completion and hands each non-empty batch to sink as a record,
// dictionaries expanded. Each batch is reserved, at the size its columns have once
// expanded, before it is expanded; keep holds every reservation until stream returns
// (the caller keeps the batches), else each is given back when sink returns.
func (bd *builder) stream(ctx context.Context, n plan.Node, top, keep bool, sink func(arrow.Record) error) error {
	// A plan run from within an expression (a subquery) keeps what it computes: it
	// does not use the scratch of the evaluation that runs it.
	ctx = withScratch(ctx, nil)
	op, err := bd.build(n)
	if err != nil {
		return err
	}
	defer op.Close()
	schema := plan.Schema(n)
	res := reservation{budget: bd.env.Budget}
	defer res.release()
	var rows, size int64
	for {
		if err := ctx.Err(); err != nil {
			return errs.New(errs.Canceled, "statement canceled: %w", err)
		}
		failPoint(PointRoot)
		b, err := op.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			return nil
		}
		if b.Len() == 0 {
			continue
		}
		b = b.Compact()
		held := batchSize(b)
		if err := res.grow(held); err != nil {
			return err
		}
		rows, size = rows+int64(b.Rows), size+held
		if top {
			if err := bd.env.resultLimits(rows, size); err != nil {
				return err
			}
		}
		for i, c := range b.Cols {
			if c == nil {
				panic(fmt.Sprintf("BUG: result column %d was pruned", i))
			}
			// Results carry the logical types: dictionaries are expanded here.
			b.Cols[i] = kernels.Decode(c)
		}
		if err := sink(array.NewRecord(schema, b.Cols, int64(b.Rows))); err != nil {
			return err
		}
		if !keep {
			res.release()
		}
	}
}

// resultLimits fails a statement whose result has grown to rows and size bytes
// past MaxResultRows or MaxResultBytes.
func (env *Env) resultLimits(rows, size int64) error {
	if env.MaxResultRows > 0 && rows > env.MaxResultRows {
		return errs.Exceeded("max_result_rows", env.MaxResultRows, "the result has more than %d rows", env.MaxResultRows)
	}
	if env.MaxResultBytes > 0 && size > env.MaxResultBytes {
		return errs.Exceeded("max_result_bytes", env.MaxResultBytes, "the result holds more than %d bytes", env.MaxResultBytes)
	}
	return nil
}

func (bd *builder) build(n plan.Node) (Operator, error) {
	if p, ok, err := bd.pipelineOf(n); err != nil {
		return nil, err
	} else if ok {
		return p.operator(), nil
	}
	switch x := n.(type) {
	case *plan.Values:
		return bd.buildValues(x)
	case *plan.LimitPercent:
		return bd.buildLimitPercent(x)
	case *plan.Series:
		return newSeriesOp(x), nil
	case *plan.Stored:
		return &batchesOp{batches: []*vector.Batch{{Cols: x.Arrays, Rows: x.Rows}}}, nil
	case *plan.Batches:
		return handedOp{x.Next}, nil
	case *plan.Filter:
		in, err := bd.build(x.Input)
		if err != nil {
			return nil, err
		}
		st, err := bd.filterStage(x.Cond)
		if err != nil {
			in.Close()
			return nil, err
		}
		return &stageOp{in: in, stage: st, filter: true}, nil
	case *plan.Project:
		in, err := bd.build(x.Input)
		if err != nil {
			return nil, err
		}
		readsOnly(in, x.Exprs...)
		st, err := bd.projectStage(x.Exprs)
		if err != nil {
			in.Close()
			return nil, err
		}
		return &stageOp{in: in, stage: st, proj: x.Exprs}, nil
	case *plan.Aggregate:
		return bd.buildAggregate(x)
	case *plan.Distinct:
		cols := x.Input.Columns()
		groups := make([]plan.Expr, len(cols))
		for i, c := range cols {
			groups[i] = &plan.ColRef{Idx: i, T: c.Type, Name: c.Name}
		}
		return bd.buildAggregate(&plan.Aggregate{Input: x.Input, Groups: groups, Cols: cols})
	case *plan.Join:
		return bd.buildJoin(x)
	case *plan.Sort:
		return bd.buildSort(x, -1)
	case *plan.Limit:
		if s, ok := x.Input.(*plan.Sort); ok && x.Count >= 0 {
			in, err := bd.buildSort(s, x.Count+x.Offset)
			if err != nil {
				return nil, err
			}
			return &limitOp{in: in, count: x.Count, offset: x.Offset}, nil
		}
		in, err := bd.build(x.Input)
		if err != nil {
			return nil, err
		}
		return &limitOp{in: in, count: x.Count, offset: x.Offset}, nil
	case *plan.SetOp:
		return bd.buildSetOp(x)
	case *plan.Window:
		return bd.buildWindow(x)
	case *plan.Unnest:
		return bd.buildUnnest(x)
	case *plan.Shared:
		return bd.buildShared(x), nil
	case *plan.RecursiveCTE:
		return &recursiveOp{bd: bd, node: x, res: reservation{budget: bd.env.Budget}}, nil
	case *plan.WorkTable:
		return bd.buildWorkTable(x), nil
	}
	return nil, errs.New(errs.Internal, "no operator for %T", n)
}

// stage is a per-batch transformation safe for concurrent use.
type stage func(ctx context.Context, b *vector.Batch) (*vector.Batch, error)

// filterStage keeps the rows where cond is true. Its conjuncts are evaluated one
// after the other, each on the rows the ones before kept (keep compacts a
// sparse selection), so a selective conjunct first spares the later ones most rows:
// a disjunction implied for a join input runs on the few rows the cheap equalities
// before it leave.
func (bd *builder) filterStage(cond plan.Expr) (stage, error) {
	steps, err := bd.conjunctSteps(cond)
	if err != nil {
		return nil, err
	}
	return stepsStage(steps), nil
}

// stepsStage runs steps in order while rows are left.
func stepsStage(steps []stage) stage {
	return func(ctx context.Context, b *vector.Batch) (*vector.Batch, error) {
		for _, st := range steps {
			if b.Len() == 0 {
				return b, nil
			}
			var err error
			if b, err = st(ctx, b); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
}

// conjunctSteps returns a stage per conjunct of cond, in order, each keeping the rows
// its conjunct is true on (a fallible one evaluated on the selected rows alone). A
// column compared with a constant selects its rows in one pass (selectCompare).
func (bd *builder) conjunctSteps(cond plan.Expr) ([]stage, error) {
	conjuncts := plan.Conjuncts(cond)
	steps := make([]stage, len(conjuncts))
	for i, c := range conjuncts {
		if call, ok := c.(*plan.Call); ok && comparisons[call.Fn.Name] && len(call.Args) == 2 {
			col, isCol := call.Args[0].(*plan.ColRef)
			lit, isLit := call.Args[1].(*plan.Literal)
			if isCol && isLit && !lit.V.Null {
				op, v, idx := call.Fn.Name, lit.V, col.Idx
				steps[i] = func(ctx context.Context, b *vector.Batch) (*vector.Batch, error) {
					return selectCompare(ctx, b, idx, op, v)
				}
				continue
			}
		}
		ev, err := bd.compile(c)
		if err != nil {
			return nil, err
		}
		fallible := mayFail(c)
		// A conjunct of one column that cannot fail is judged once per entry where
		// that column is a dictionary (l_shipmode IN ('MAIL', 'SHIP')).
		only := -1
		if cols := map[int]bool{}; !fallible && !rules.HasSubquery(c) {
			if plan.ColumnsUsed(c, cols); len(cols) == 1 {
				for col := range cols {
					only = col
				}
			}
		}
		steps[i] = func(ctx context.Context, b *vector.Batch) (*vector.Batch, error) {
			if fallible {
				b = b.Compact()
			}
			if only >= 0 && only < len(b.Cols) {
				out, ok, err := selectPerEntry(ctx, b, only, func(dict arrow.Array) (arrow.Array, error) {
					cols := make([]arrow.Array, len(b.Cols))
					cols[only] = dict
					return ev(ctx, &vector.Batch{Cols: cols, Rows: dict.Len()})
				})
				if ok || err != nil {
					return out, err
				}
			}
			m, err := ev(ctx, b)
			if err != nil {
				return nil, err
			}
			return selectTrue(ctx, b, m)
		}
	}
	return steps, nil
}

func (bd *builder) projectStage(exprs []plan.Expr) (stage, error) {
	list, err := bd.compileList(exprs)
	if err != nil {
		return nil, err
	}
	fallible := false
	for _, e := range exprs {
		fallible = fallible || mayFail(e)
	}
	return func(ctx context.Context, b *vector.Batch) (*vector.Batch, error) {
		if fallible {
			b = b.Compact()
		}
		eb, err := list.extend(ctx, b)
		if err != nil {
			return nil, err
		}
		cols := make([]arrow.Array, len(list.exprs))
		for i, ev := range list.exprs {
			c, err := ev(ctx, eb)
			if err != nil {
				return nil, err
			}
			cols[i] = c
		}
		return &vector.Batch{Cols: cols, Rows: b.Rows, Sel: b.Sel}, nil
	}, nil
}

type stageOp struct {
	in    Operator
	stage stage
	// What the stage is, for operators that look through it: the expressions of a
	// projection, or filter set for a filter.
	proj   []plan.Expr
	filter bool
}

func (o *stageOp) Next(ctx context.Context) (*vector.Batch, error) {
	for {
		b, err := o.in.Next(ctx)
		if err != nil || b == nil {
			return nil, err
		}
		out, err := o.stage(ctx, b)
		if err != nil {
			return nil, err
		}
		if out.Len() > 0 {
			return out, nil
		}
	}
}

func (o *stageOp) Close() { o.in.Close() }

func (bd *builder) buildValues(x *plan.Values) (Operator, error) {
	one := &vector.Batch{Rows: 1}
	cols := make([][]arrow.Array, len(x.Cols))
	for _, row := range x.Rows {
		for j, e := range row {
			ev, err := bd.compile(e)
			if err != nil {
				return nil, err
			}
			a, err := ev(context.Background(), one)
			if err != nil {
				return nil, err
			}
			cols[j] = append(cols[j], a)
		}
	}
	if len(x.Rows) == 0 {
		return &batchesOp{}, nil // no row: no batch
	}
	out := &vector.Batch{Rows: len(x.Rows), Cols: make([]arrow.Array, len(x.Cols))}
	for j, parts := range cols {
		c, err := array.Concatenate(parts, vector.Allocator)
		if err != nil {
			return nil, errs.New(errs.Internal, "cannot build VALUES column %d: %w", j, err)
		}
		out.Cols[j] = c
	}
	return &batchesOp{batches: []*vector.Batch{out}}, nil
}

// batchesOp returns batches it already holds.
type batchesOp struct {
	batches []*vector.Batch
	res     reservation
}

func (o *batchesOp) Next(ctx context.Context) (*vector.Batch, error) {
	if len(o.batches) == 0 {
		return nil, nil
	}
	b := o.batches[0]
	o.batches = o.batches[1:]
	return b, nil
}

func (o *batchesOp) Close() {
	o.batches = nil
	o.res.release()
}

// handedOp produces the records handed to a plan.Batches node.
type handedOp struct {
	next func(context.Context) (arrow.Record, error)
}

func (o handedOp) Next(ctx context.Context) (*vector.Batch, error) {
	r, err := o.next(ctx)
	if r == nil || err != nil {
		return nil, err
	}
	return &vector.Batch{Cols: r.Columns(), Rows: int(r.NumRows())}, nil
}

func (o handedOp) Close() {}

type limitOp struct {
	in            Operator
	count, offset int64
	done          bool
}

func (o *limitOp) Next(ctx context.Context) (*vector.Batch, error) {
	for !o.done {
		if o.count == 0 {
			o.done = true
			o.in.Close()
			return nil, nil
		}
		b, err := o.in.Next(ctx)
		if err != nil || b == nil {
			return nil, err
		}
		sel := b.Selection()
		if o.offset > 0 {
			skip := min(o.offset, int64(len(sel)))
			o.offset -= skip
			sel = sel[skip:]
		}
		if o.count >= 0 && int64(len(sel)) > o.count {
			sel = sel[:o.count]
		}
		if o.count > 0 {
			o.count -= int64(len(sel))
		}
		if len(sel) > 0 {
			return &vector.Batch{Cols: b.Cols, Rows: b.Rows, Sel: sel}, nil
		}
	}
	return nil, nil
}

func (o *limitOp) Close() { o.in.Close() }

// drain reads every batch of op into one compacted batch with columns concatenated.
// ncols is the width of op's batches. Memory is reserved in res.
func drain(ctx context.Context, op Operator, ncols int, res *reservation) (*vector.Batch, error) {
	return drainEach(ctx, op, ncols, res, nil)
}

// drainEach is drain handing each batch, compacted, to each (when not nil) as it
// arrives, before the next is read.
func drainEach(ctx context.Context, op Operator, ncols int, res *reservation, each func(*vector.Batch) error) (*vector.Batch, error) {
	batches, held, err := collect(ctx, op, ncols, res, each)
	if err != nil {
		return nil, err
	}
	if len(batches) < 2 {
		return concatBatches(ctx, batches, ncols)
	}
	// Concatenating copies the rows: both are held until the parts are dropped.
	if err := res.resize(2 * held); err != nil {
		return nil, err
	}
	out, err := concatBatches(ctx, batches, ncols)
	if err != nil {
		return nil, err
	}
	return out, res.resize(held)
}

// collect reads every batch of op, compacted, holding them under res; it returns them
// and the bytes they hold. each, when not nil, is handed every batch kept.
func collect(ctx context.Context, op Operator, ncols int, res *reservation, each func(*vector.Batch) error) ([]*vector.Batch, int64, error) {
	var batches []*vector.Batch
	var held int64
	err := eachKept(ctx, op, ncols, func(b *vector.Batch) error {
		batches = append(batches, b)
		held += batchSize(b)
		if err := res.resize(held); err != nil {
			return err
		}
		if each != nil {
			return each(b)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return batches, held, nil
}

// eachKept reads op to its end and hands keep its batches compacted, the small ones
// joined (smallBatches), for a consumer that keeps them all.
func eachKept(ctx context.Context, op Operator, width int, keep func(*vector.Batch) error) error {
	compactAtSource(op)
	small := smallBatches{width: width}
	for {
		b, err := op.Next(ctx)
		if err != nil {
			return err
		}
		var ready []*vector.Batch
		switch {
		case b == nil:
			ready, err = small.flush(ctx)
		case b.Len() > 0:
			ready, err = small.add(ctx, b.Compact())
		}
		for _, r := range ready {
			if err == nil {
				err = keep(r)
			}
		}
		if err != nil || b == nil {
			return err
		}
	}
}

// smallBatches joins compacted batches of few rows — what a selective filter leaves
// of each page's rows — into batches of at least smallBatchRows, so that rows kept
// whole (a join's build side, a sort's input) are not held as thousands of arrays
// of a few dozen values, each with its own headers and dictionary. Order is kept.
type smallBatches struct {
	width int
	parts []*vector.Batch
	rows  int
}

// smallBatchRows is the least rows of a batch kept as it comes.
const smallBatchRows = 4096

// add takes the next compacted batch and returns those to keep: none while the
// small ones gathered are too few.
func (s *smallBatches) add(ctx context.Context, b *vector.Batch) ([]*vector.Batch, error) {
	if b.Rows >= smallBatchRows && len(s.parts) == 0 {
		return []*vector.Batch{b}, nil
	}
	s.parts = append(s.parts, b)
	s.rows += b.Rows
	if s.rows < smallBatchRows {
		return nil, nil
	}
	return s.flush(ctx)
}

// flush returns the batches gathered, joined into one unless that would turn a
// column of dictionaries into their values: the batches are then kept as they are,
// so that the rows kept whole still share dictionaries (see unifiedDictionary).
func (s *smallBatches) flush(ctx context.Context) ([]*vector.Batch, error) {
	parts := s.parts
	s.parts, s.rows = nil, 0
	if len(parts) < 2 {
		return parts, nil
	}
	out, err := concatBatches(ctx, parts, s.width)
	if err != nil {
		return nil, err
	}
	for i, c := range out.Cols {
		if _, ok := c.(*array.Dictionary); ok || c == nil {
			continue
		}
		if _, ok := parts[0].Cols[i].(*array.Dictionary); ok {
			return parts, nil
		}
	}
	return []*vector.Batch{out}, nil
}

// compactAtSource tells op, when it is a pipeline run by workers and not yet
// started, that its consumer compacts every batch to keep it: the workers then hand
// them on compacted, so that the copying is done in parallel rather than by the
// consumer alone.
func compactAtSource(op Operator) {
	if o, ok := op.(*pipelineOp); ok && !o.started {
		o.p.compact = true
	}
}

// concatBatches concatenates compacted batches of width ncols into one; nil
// (pruned) columns stay nil. Expanding the dictionaries of many batches takes a
// while: a canceled statement stops between batches.
func concatBatches(ctx context.Context, batches []*vector.Batch, ncols int) (*vector.Batch, error) {
	parts := make([][]arrow.Array, ncols)
	rows := 0
	for _, b := range batches {
		for i, c := range b.Cols {
			if c != nil {
				parts[i] = append(parts[i], c)
			}
		}
		rows += b.Rows
	}
	out := &vector.Batch{Rows: rows, Cols: make([]arrow.Array, ncols)}
	for i, p := range parts {
		if c := sharedDictionary(p, rows); c != nil {
			out.Cols[i] = c
			continue
		}
		if c := unifiedDictionary(p, rows); c != nil {
			out.Cols[i] = c
			continue
		}
		// Dictionaries are expanded where rows are materialised: each part may carry
		// its own (or its whole column chunk's) dictionary, and unifying large ones
		// costs more than the strings they stand for.
		for j := range p {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			p[j] = kernels.Decode(p[j])
		}
		switch len(p) {
		case 0:
		case 1:
			out.Cols[i] = p[0]
		default:
			c, err := array.Concatenate(p, vector.Allocator)
			if err != nil {
				return nil, errs.New(errs.Internal, "cannot concatenate column %d: %w", i, err)
			}
			out.Cols[i] = c
		}
	}
	return out, nil
}

// sharedDictionary concatenates parts that are dictionaries over one and the same
// dictionary array (the rows a join gathered from its build side) by their indices
// alone, when the dictionary is no larger than the rows: the result stays a
// dictionary. It returns nil when the parts do not qualify.
func sharedDictionary(parts []arrow.Array, rows int) arrow.Array {
	if len(parts) < 2 {
		return nil
	}
	first, ok := parts[0].(*array.Dictionary)
	if !ok || first.Dictionary().Len() > rows {
		return nil
	}
	dict := first.Dictionary().Data()
	indices := make([]arrow.Array, len(parts))
	for k, p := range parts {
		d, ok := p.(*array.Dictionary)
		if !ok || d.Dictionary().Data() != dict || !arrow.TypeEqual(d.DataType(), first.DataType()) {
			return nil
		}
		indices[k] = d.Indices()
	}
	ind, err := array.Concatenate(indices, vector.Allocator)
	if err != nil {
		return nil
	}
	defer ind.Release()
	return warmDictionary(array.NewDictionaryArray(first.DataType(), ind, first.Dictionary()))
}

// unifiedDictionary concatenates string dictionaries whose distinct entries are
// together small beside the rows (at most one per 16 rows, as a column chunk's
// dictionary of a low-cardinality column is; the distinct dictionaries' entries, with
// their repeats, at most one per row): the result is a dictionary over their
// union, its indices remapped. Gathering the rows later (a sort's output) then moves
// four-byte indices instead of strings scattered over the whole input. It returns nil
// when the parts do not qualify.
func unifiedDictionary(parts []arrow.Array, rows int) arrow.Array {
	if len(parts) < 2 {
		return nil
	}
	first, ok := parts[0].(*array.Dictionary)
	if !ok || first.Dictionary().DataType().ID() != arrow.STRING || first.Indices().DataType().ID() != arrow.INT32 {
		return nil
	}
	// The distinct dictionaries (by their data: parts over one dictionary are
	// different arrays), each with its indices' new values.
	remap := map[arrow.ArrayData][]int32{}
	var dicts []*array.String
	entries := 0
	for _, p := range parts {
		d, ok := p.(*array.Dictionary)
		if !ok || !arrow.TypeEqual(d.DataType(), first.DataType()) {
			return nil
		}
		dict := d.Dictionary()
		if _, seen := remap[dict.Data()]; !seen {
			remap[dict.Data()] = nil
			dicts = append(dicts, dict.(*array.String))
			if entries += dict.Len(); entries > rows {
				return nil
			}
		}
	}
	at := map[string]int32{}
	b := array.NewStringBuilder(vector.Allocator)
	defer b.Release()
	for _, dict := range dicts {
		to := make([]int32, dict.Len())
		for j := range to {
			if dict.IsNull(j) {
				to[j] = -1
				continue
			}
			v := dict.Value(j)
			k, ok := at[v]
			if !ok {
				k = int32(len(at))
				at[v] = k
				b.Append(v)
			}
			to[j] = k
		}
		remap[dict.Data()] = to
	}
	if len(at)*16 > rows {
		// Counted before the repeats were dropped, the dictionaries of the parts
		// of several column chunks (batches joined as they were kept, each over
		// its chunks' entries) may be far more than their union.
		return nil
	}
	values := make([]int32, rows)
	var validity []byte
	nulls, row := 0, 0
	for _, p := range parts {
		d := p.(*array.Dictionary)
		to := remap[d.Dictionary().Data()]
		ind := d.Indices().(*array.Int32).Int32Values()
		for j, v := range ind {
			k := int32(-1)
			if d.IsValid(j) {
				k = to[v]
			}
			if k < 0 {
				// A NULL row, or a row whose dictionary entry is NULL.
				if validity == nil {
					validity = make([]byte, bitutil.BytesForBits(int64(rows)))
					bitutil.SetBitsTo(validity, 0, int64(row), true)
				}
				nulls++
				k = 0
			} else if validity != nil {
				bitutil.SetBit(validity, row)
			}
			values[row] = k
			row++
		}
	}
	dict := b.NewArray()
	defer dict.Release()
	var vbuf *memory.Buffer
	if validity != nil {
		vbuf = memory.NewBufferBytes(validity)
	}
	data := array.NewData(arrow.PrimitiveTypes.Int32, rows,
		[]*memory.Buffer{vbuf, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(values))}, nil, nulls, 0)
	defer data.Release()
	ind := array.MakeFromData(data)
	defer ind.Release()
	return warmDictionary(array.NewDictionaryArray(first.DataType(), ind, dict))
}

// warmDictionary makes d's dictionary array, which arrow-go otherwise makes on the
// first call of Dictionary: a concatenated column may be read by many goroutines at
// once (a join's build side by its probe workers), and that first call is not safe
// for them to race on.
func warmDictionary(d *array.Dictionary) *array.Dictionary {
	d.Dictionary()
	return d
}

// heldSize estimates the bytes the rows of a hold, as a plain array: a slice
// counts its own rows (not the buffers it shares with other slices) and a dictionary
// its values once per row, as they are when it is expanded.
func heldSize(a arrow.Array) int64 {
	n := int64(a.Len())
	if n == 0 {
		return 0
	}
	validity := (n + 7) / 8
	switch x := a.(type) {
	case *array.Dictionary:
		if bytes, ok := kernels.ExpandedStringBytes(x); ok {
			return bytes + 4*n + validity
		}
		d := x.Dictionary()
		if d.Len() == 0 {
			return validity
		}
		return n*heldSize(d)/int64(d.Len()) + validity
	case *array.String:
		offs := x.ValueOffsets()
		return int64(offs[len(offs)-1]-offs[0]) + 4*n + validity
	case *array.Binary:
		offs := x.ValueOffsets()
		return int64(offs[len(offs)-1]-offs[0]) + 4*n + validity
	}
	if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok {
		return n*int64(fw.BitWidth())/8 + validity
	}
	return arraySize(a)
}

// arraySize estimates the bytes an array holds.
func arraySize(a arrow.Array) int64 {
	var n int64
	for _, buf := range a.Data().Buffers() {
		if buf != nil {
			n += int64(buf.Len())
		}
	}
	return n
}

// slices splits a compacted batch into batches of at most vector.BatchSize rows.
func slices(b *vector.Batch) []*vector.Batch {
	if b.Rows <= vector.BatchSize {
		return []*vector.Batch{b}
	}
	var out []*vector.Batch
	for lo := 0; lo < b.Rows; lo += vector.BatchSize {
		hi := min(lo+vector.BatchSize, b.Rows)
		cols := make([]arrow.Array, len(b.Cols))
		for i, c := range b.Cols {
			if c != nil {
				cols[i] = array.NewSlice(c, int64(lo), int64(hi))
			}
		}
		out = append(out, &vector.Batch{Cols: cols, Rows: hi - lo})
	}
	return out
}

// infallible are the functions that cannot fail on any input row.
var infallible = map[string]bool{
	"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true, "and": true, "or": true,
	"not": true, "is_null": true, "is_not_null": true, "is_distinct_from": true,
	"is_not_distinct_from": true, "like": true, "not_like": true, "ilike": true, "not_ilike": true,
	"coalesce": true, "lower": true, "upper": true, "length": true,
}

// mayFail reports whether evaluating e on a row could raise an error (a cast that
// does not fit, an overflow). Such expressions only see the selected rows, since
// evaluating them on rows a filter removed could fail a statement that should not.
func mayFail(e plan.Expr) bool {
	fails := false
	plan.WalkExpr(e, func(x plan.Expr) {
		switch c := x.(type) {
		case *plan.Cast, *plan.Subquery, *plan.InSubquery:
			fails = true
		case *plan.Call:
			if !infallible[c.Fn.Name] {
				fails = true
			}
		}
	})
	return fails
}

// onKeptRows runs eval on b and, when that fails while b has a selection, once more on
// the selected rows alone, which it returns: an error from a row a filter removed
// must not fail the statement. Evaluating the whole batch first spares the gather
// when nothing fails.
func onKeptRows(b *vector.Batch, eval func(*vector.Batch) error) (*vector.Batch, error) {
	err := eval(b)
	if err != nil && b.Sel != nil {
		b = b.Compact()
		err = eval(b)
	}
	return b, err
}

// sharedRows are the rows of a shared plan, computed by whichever reader asks first
// and held, under the memory budget, until the statement ends.
type sharedRows struct {
	once  sync.Once
	parts []*vector.Batch
	err   error
	res   reservation
	// apart says the rows did not fit the memory budget and the plan may be
	// computed again (plan.Shared.Recompute): each reader computes its own.
	apart bool
}

func (bd *builder) buildShared(x *plan.Shared) Operator {
	bd.mu.Lock()
	defer bd.mu.Unlock()
	if bd.shared == nil {
		bd.shared = map[*plan.Shared]*sharedRows{}
	}
	rows := bd.shared[x]
	if rows == nil {
		rows = &sharedRows{res: reservation{budget: bd.env.Budget}}
		bd.shared[x] = rows
	}
	return &sharedOp{bd: bd, node: x, rows: rows}
}

// releaseShared gives back the memory the statement's shared plans held.
func (bd *builder) releaseShared() {
	bd.mu.Lock()
	defer bd.mu.Unlock()
	for _, r := range bd.shared {
		r.res.release()
	}
	bd.shared = nil
}

// sharedOp replays a shared plan's rows to one reader.
type sharedOp struct {
	bd   *builder
	node *plan.Shared
	rows *sharedRows
	next int
	own  Operator // the reader's own computation, when the rows are apart
}

func (o *sharedOp) Next(ctx context.Context) (*vector.Batch, error) {
	r := o.rows
	r.once.Do(func() {
		op, err := o.bd.build(o.node.Input)
		if err != nil {
			r.err = err
			return
		}
		defer op.Close()
		all, err := drain(ctx, op, len(o.node.Columns()), &r.res)
		if err != nil {
			if o.node.Recompute && errs.CodeOf(err) == errs.ResourceExhausted {
				r.res.release()
				r.apart = true
				return
			}
			r.err = err
			return
		}
		if all.Rows > 0 {
			r.parts = slices(all)
		}
	})
	if r.err != nil {
		return nil, r.err
	}
	if r.apart {
		// Nothing was handed to this reader yet: it reads its own copy from the start.
		if o.own == nil {
			op, err := o.bd.build(o.node.Input)
			if err != nil {
				return nil, err
			}
			o.own = op
		}
		return o.own.Next(ctx)
	}
	if o.next >= len(r.parts) {
		return nil, nil
	}
	b := r.parts[o.next]
	o.next++
	// Each reader gets its own batch: operators may rewrite a batch's columns.
	return &vector.Batch{Cols: append([]arrow.Array(nil), b.Cols...), Rows: b.Rows}, nil
}

func (o *sharedOp) Close() {
	if o.own != nil {
		o.own.Close()
	}
}
