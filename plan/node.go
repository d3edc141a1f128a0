package plan

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/storage"
)

// Column is one output column of a node: its name, type, and the name of the table
// (or alias) it is qualified by, if any.
type Column struct {
	Name  string
	Type  arrow.DataType
	Table string
	// Hidden columns can be named but are not expanded by * (the right side of a
	// USING join, columns added to evaluate subqueries).
	Hidden bool
	// Merged marks the right side of a USING (or NATURAL) join's column: hidden from
	// *, which shows the merged column once, but expanded by its own table's t.*.
	Merged bool
}

// Node is a logical plan node.
type Node interface {
	Columns() []Column
	Inputs() []Node
}

// Catalog is what the binder needs from the catalog and the sources. Implementations
// are safe for concurrent use.
type Catalog interface {
	// Table resolves a registered table (errs.TableNotFound when there is none).
	Table(ctx context.Context, name string, at source.AsOf) (*TableRef, error)
	// Path resolves a location queried directly ('dir/*.parquet', read_parquet(…),
	// delta_scan(…)) in a format, as of a version (the latest when at is zero).
	Path(ctx context.Context, location, format string, at source.AsOf) (*TableRef, error)
}

// TableRef is a resolved table: a registered one (Name set) or a direct path.
type TableRef struct {
	Name     string
	Location string
	Listing  *source.Listing
	// Rows is the table's row count from its footers, or -1 when unknown; it
	// feeds estimates.
	Rows int64
	// Version is the source version the statement is pinned to (empty when it could
	// not be taken: then statistics never answer).
	Version source.Version
	// Stats is the table's statistics record, current or not, or nil.
	Stats *stats.Record
	// Footers, when set and Stats is nil, makes (once) a record of what the files'
	// footers say (rows, bounds, NULL counts) for the planner's estimates alone: it
	// never answers a query. nil when the footers cannot be read.
	Footers func() *stats.Record
	// Bounds, when set, asks the catalog's bounds index which of Stats' files can
	// match a scan's filters.
	Bounds stats.BoundsIndex
	// Store, when set, is the store the table's files are read through (a table
	// registered with its own storage options); nil is the statement's.
	Store storage.Store
}

// Scan reads a table. Required (set by column pruning) marks the columns that are
// read; the others are produced as nil arrays. Filters are conjuncts pushed down for
// pruning only; the Filter above the scan stays.
type Scan struct {
	Ref      *TableRef
	Alias    string
	Cols     []Column
	Required []bool
	Filters  []source.Predicate
	// Deferred are pruning predicates whose values the statement computes as it
	// runs (see DeferredPredicate); like Filters, they only skip work.
	Deferred []DeferredPredicate
	// Zones, when set, are the row groups the zone planner decided not to read:
	// none of their rows can match, or the aggregate above took their partials.
	Zones *ZoneSkip
}

// DeferredPredicate is a pruning predicate Column Op Value whose value is an
// expression over no column — an uncorrelated scalar subquery, or arithmetic on one —
// known only once the statement runs: the executor computes it before it plans the
// scan's reads and prunes with it as with a literal.
type DeferredPredicate struct {
	Column string
	Op     string
	Value  Expr
}

// Shared is a plan several parts of a statement read — a WITH query named more than
// once — computed once and replayed to each reader. The same *Shared appears in the
// tree once per reference.
type Shared struct {
	Input Node
	Refs  int // references to it in the statement
	// Recompute says each reader may compute Input on its own instead, as the
	// statement would without the sharing: the executor does when the rows do not
	// fit the memory budget (a subplan the rules found repeated, not a WITH query).
	Recompute bool
}

// ZoneSkip is the zone planner's decision for one scan (DESIGN.md §3), and why.
type ZoneSkip struct {
	// None and Answered hold zones by file (index into the listing's files) and row
	// group, or stats.WholeFile for a zone of a whole file (Settled looks for both).
	// Every other zone is read.
	None, Answered map[ZoneID]bool
	// Considered is the number of zones the record holds; Reasons counts them by the
	// reason for what was done with each, and adds up to Considered.
	Considered int
	Reasons    [NumZoneReasons]int
	// Stale says the record does not describe the statement's version of the table:
	// nothing was decided from it (the files' own footers still prune).
	Stale bool
	// Only, when set, holds the only zones read (a distributed statement's worker
	// reads the zones it was given): every other zone is settled as none.
	Only map[ZoneID]bool
}

// ZoneID names a zone of a listing: a row group of a file, or the whole file when
// RowGroup is stats.WholeFile.
type ZoneID struct{ File, RowGroup int }

// Settled says what was decided for row group g of file f: skipped (none) or answered
// from partials, by the zone of that row group or of the whole file.
func (z *ZoneSkip) Settled(f, g int) (none, answered bool) {
	rg, file := ZoneID{File: f, RowGroup: g}, ZoneID{File: f, RowGroup: stats.WholeFile}
	if z.Only != nil && !z.Only[rg] && !z.Only[file] {
		return true, false
	}
	return z.None[rg] || z.None[file], z.Answered[rg] || z.Answered[file]
}

// Values produces constant rows (SELECT without FROM is one row of no columns).
type Values struct {
	Cols []Column
	Rows [][]Expr
}

// Stored is rows computed from statistics instead of read: the result of an
// aggregate whose every state was derived from stored partials (DESIGN.md §3). Arrays
// are one column per Cols entry, all of Rows rows. Source names what answered.
type Stored struct {
	Cols   []Column
	Arrays []arrow.Array
	Rows   int
	Source string
	// Zones, when the rows were derived zone by zone, says what was done with each.
	Zones *ZoneSkip
}

// Batches is rows handed over from outside the plan, a record at a time, of the
// columns Cols: rows a worker of a distributed statement was handed (to sort them,
// say). Next returns the next record, nil after the last; it is called as the rows
// are consumed, so they need not all be in memory at once. The node runs once.
type Batches struct {
	Cols []Column
	Next func(context.Context) (arrow.Record, error)
}

// Filter keeps the rows where Cond is true.
type Filter struct {
	Input Node
	Cond  Expr
}

// Project computes Exprs over its input.
type Project struct {
	Input Node
	Exprs []Expr
	Cols  []Column
}

// AggCall is one aggregate: Func is an agg spec name ("count_star", "count", "sum",
// "avg", "min", "max", "count_distinct").
type AggCall struct {
	Func string
	Arg  Expr
	T    arrow.DataType
	// Quantiles and List are approx_percentile's fractions and whether they were
	// given as an ARRAY.
	Quantiles []float64
	List      bool
	// Written is the function as the statement wrote it, when it differs from Func
	// (COUNT computed as approx_count_distinct under approximate = true).
	Written string
	// Filter, when set, is the FILTER (WHERE …) condition: only rows where it is
	// true are aggregated.
	Filter Expr
	// Args are the arguments after Arg (corr's second); Sep is string_agg's
	// separator.
	Args []Expr
	Sep  string
	// FromTop counts the quantiles from the greatest value (WITHIN GROUP (ORDER BY
	// x DESC)).
	FromTop bool
	// Distinct and Order, when set, make the function read each group's distinct
	// argument values, or its rows in that order (ORDER BY inside the call).
	Distinct bool
	Order    []SortKey
}

// Spec is the aggregate's state-machine specification.
func (c *AggCall) Spec() agg.Spec {
	var argType arrow.DataType
	if c.Arg != nil {
		argType = c.Arg.Type()
	}
	s := agg.Spec{Name: c.Func, ArgType: argType, Quantiles: c.Quantiles, List: c.List, Sep: c.Sep, FromTop: c.FromTop}
	for _, a := range c.Args {
		s.ArgTypes = append(s.ArgTypes, a.Type())
	}
	s.Distinct = c.Distinct
	for _, k := range c.Order {
		s.Order = append(s.Order, agg.OrderKey{Type: k.E.Type(), Desc: k.Desc, NullsFirst: k.NullsFirst})
	}
	return s
}

// Inputs are the expressions the aggregate reads per row, in the order its
// accumulator takes them (agg.UpdateArgs): the arguments (none for COUNT(*)), then
// the ORDER BY keys.
func (c *AggCall) Inputs() []Expr {
	if c.Arg == nil {
		return nil
	}
	in := append([]Expr{c.Arg}, c.Args...)
	for _, k := range c.Order {
		in = append(in, k.E)
	}
	return in
}

// Aggregate groups by Groups and computes Aggs; its columns are the groups then the
// aggregates.
type Aggregate struct {
	Input  Node
	Groups []Expr
	Aggs   []AggCall
	Cols   []Column
	// Seeds, when set, are states of the aggregates built from the partials of zones
	// the scan below skips; they merge with the computed states. When grouping,
	// SeedKeys holds the key of each seed group, one array per group expression.
	Seeds    []agg.Accumulator
	SeedKeys []arrow.Array
	// Sets, when set, are grouping sets (GROUPING SETS, ROLLUP, CUBE): each a list of
	// indexes into Groups, and every set's groups are output in turn. The columns are
	// then every group (NULL where the row's set leaves it out), the aggregates, and
	// one BIGINT per entry of Groupings: the GROUPING() value of its arguments
	// (indexes into Groups) for the row's set, a bit per argument, set when the set
	// leaves it out. Every set is aggregated from the partial states of the finest
	// grouping (all of Groups), merged: the input is read once.
	Sets      [][]int
	Groupings [][]int
}

// JoinKind is the kind of a join.
type JoinKind int

// The join kinds. Semi and Anti output only the left columns.
const (
	InnerJoin JoinKind = iota
	LeftJoin
	RightJoin
	FullJoin
	CrossJoin
	SemiJoin
	AntiJoin
)

func (k JoinKind) String() string {
	return [...]string{"inner", "left", "right", "full", "cross", "semi", "anti"}[k]
}

// Join combines Left and Right. Equi-join keys are LeftKeys[i] = RightKeys[i]
// (evaluated over each side's own columns); Residual is evaluated over the left
// columns followed by the right ones. NullAwareAnti gives NOT IN semantics: a NULL on
// either side of the key makes the row fail.
type Join struct {
	Kind          JoinKind
	Left, Right   Node
	LeftKeys      []Expr
	RightKeys     []Expr
	Residual      Expr
	NullAwareAnti bool
	// BuildLeft asks the executor to build the hash table on the left input (chosen
	// by plan/rules from estimates); by default the right input is built.
	BuildLeft bool
	Cols      []Column
	// NullEq makes NULL keys equal to each other (IS NOT DISTINCT FROM): the join of
	// a decorrelated subquery back onto the outer values it ran for.
	NullEq bool
}

// SortKey orders by E.
type SortKey struct {
	E          Expr
	Desc       bool
	NullsFirst bool
}

// Sort orders its input.
type Sort struct {
	Input Node
	Keys  []SortKey
}

// Limit skips Offset rows then returns at most Count rows (Count < 0: no limit).
type Limit struct {
	Input  Node
	Count  int64
	Offset int64
}

// Distinct removes duplicate rows.
type Distinct struct{ Input Node }

// SetOpKind is UNION, INTERSECT or EXCEPT.
type SetOpKind int

const (
	Union SetOpKind = iota
	Intersect
	Except
)

func (k SetOpKind) String() string { return [...]string{"union", "intersect", "except"}[k] }

// SetOp combines two inputs with equal column types.
type SetOp struct {
	Kind        SetOpKind
	All         bool
	Left, Right Node
	Cols        []Column
}

// UnionInputs returns the inputs of the chain of UNIONs with x's ALL flag that x
// heads, in order: the grammar nests a UNION of n queries n deep on the left, and
// the chain is one list to run and to show. A link of the other kind or another
// operation ends the chain. Inputs of a x that is not a UNION are its own two.
func UnionInputs(x *SetOp) []Node {
	if x.Kind != Union {
		return []Node{x.Left, x.Right}
	}
	var rights []Node
	n := Node(x)
	for {
		s, ok := n.(*SetOp)
		if !ok || s.Kind != Union || s.All != x.All {
			break
		}
		rights = append(rights, s.Right)
		n = s.Left
	}
	out := make([]Node, 0, len(rights)+1)
	out = append(out, n)
	for i := len(rights) - 1; i >= 0; i-- {
		out = append(out, rights[i])
	}
	return out
}

// BoundKind is one end of a window frame.
type BoundKind int

const (
	UnboundedPreceding BoundKind = iota
	Preceding
	CurrentRow
	Following
	UnboundedFollowing
)

// FrameBound is a frame end; N is the offset of Preceding/Following.
type FrameBound struct {
	Kind BoundKind
	N    int64
}

// Frame is a window frame: ROWS (physical), GROUPS (offsets count peer groups) or
// RANGE (offsets are distances in the ORDER BY key; peers share a frame).
type Frame struct {
	Rows       bool
	Groups     bool
	Start, End FrameBound
	// Exclude takes rows out of every row's frame.
	Exclude Exclusion
	// Key, StartVal and EndVal serve a RANGE frame with an offset: the one ORDER BY
	// key and, for an offset bound, the key moved by the offset in the direction of
	// the bound, all three of one type so that they compare.
	Key, StartVal, EndVal Expr
}

// Exclusion is a frame's EXCLUDE clause.
type Exclusion int

const (
	ExcludeNoOthers Exclusion = iota
	ExcludeCurrentRow
	ExcludeGroup
	ExcludeTies
)

// WindowCall is one window function: a ranking function ("row_number", "rank",
// "dense_rank", "percent_rank", "cume_dist", "ntile"), a navigation function ("lead",
// "lag", "first_value", "last_value", "nth_value") over Arg, or an aggregate (Agg).
type WindowCall struct {
	Func string
	Arg  Expr
	// Args are the further arguments: lead and lag's offset and default, nth_value's
	// position, ntile's number of buckets.
	Args []Expr
	// IgnoreNulls makes a navigation function pass over NULL values.
	IgnoreNulls bool
	// Agg is the aggregate of an aggregate window function, bound as a grouped
	// aggregate is (its Func and Arg are the call's own); nil for the others.
	Agg       *AggCall
	Partition []Expr
	Order     []SortKey
	Frame     Frame
	T         arrow.DataType
}

// Exprs lists every expression the call reads from its input: arguments, FILTER,
// the aggregate's own ORDER BY keys, partition and order keys, and a RANGE frame's
// key and bounds.
func (c *WindowCall) Exprs() []Expr {
	out := append([]Expr{c.Arg}, c.Args...)
	if c.Agg != nil {
		out = append(out, c.Agg.Arg, c.Agg.Filter)
		out = append(out, c.Agg.Args...)
		for _, k := range c.Agg.Order {
			out = append(out, k.E)
		}
	}
	out = append(out, c.Partition...)
	for _, k := range c.Order {
		out = append(out, k.E)
	}
	out = append(out, c.Frame.Key, c.Frame.StartVal, c.Frame.EndVal)
	kept := out[:0]
	for _, e := range out {
		if e != nil {
			kept = append(kept, e)
		}
	}
	return kept
}

// Window appends one column per function to its input's columns.
type Window struct {
	Input Node
	Funcs []WindowCall
	Cols  []Column
}

func (n *Scan) Columns() []Column      { return n.Cols }
func (n *Values) Columns() []Column    { return n.Cols }
func (n *Stored) Columns() []Column    { return n.Cols }
func (n *Batches) Columns() []Column   { return n.Cols }
func (n *Filter) Columns() []Column    { return n.Input.Columns() }
func (n *Project) Columns() []Column   { return n.Cols }
func (n *Aggregate) Columns() []Column { return n.Cols }
func (n *Join) Columns() []Column      { return n.Cols }
func (n *Sort) Columns() []Column      { return n.Input.Columns() }
func (n *Limit) Columns() []Column     { return n.Input.Columns() }
func (n *Distinct) Columns() []Column  { return n.Input.Columns() }
func (n *SetOp) Columns() []Column     { return n.Cols }
func (n *Window) Columns() []Column    { return n.Cols }
func (n *Shared) Columns() []Column    { return n.Input.Columns() }

func (n *Scan) Inputs() []Node      { return nil }
func (n *Values) Inputs() []Node    { return nil }
func (n *Stored) Inputs() []Node    { return nil }
func (n *Batches) Inputs() []Node   { return nil }
func (n *Filter) Inputs() []Node    { return []Node{n.Input} }
func (n *Project) Inputs() []Node   { return []Node{n.Input} }
func (n *Aggregate) Inputs() []Node { return []Node{n.Input} }
func (n *Join) Inputs() []Node      { return []Node{n.Left, n.Right} }
func (n *Sort) Inputs() []Node      { return []Node{n.Input} }
func (n *Limit) Inputs() []Node     { return []Node{n.Input} }
func (n *Distinct) Inputs() []Node  { return []Node{n.Input} }
func (n *SetOp) Inputs() []Node     { return []Node{n.Left, n.Right} }
func (n *Window) Inputs() []Node    { return []Node{n.Input} }

// Inputs is none: a shared plan is a leaf to the rules, which optimize it once on its
// own (one rewrite seen from several parents would change them all).
func (n *Shared) Inputs() []Node { return nil }

// InputExprs are the expressions the aggregate evaluates over its input's rows: its
// groups, its aggregates' inputs and their FILTER conditions.
func (n *Aggregate) InputExprs() []Expr {
	out := append([]Expr(nil), n.Groups...)
	for _, a := range n.Aggs {
		out = append(out, a.Inputs()...)
		if a.Filter != nil {
			out = append(out, a.Filter)
		}
	}
	return out
}

// Schema is the Arrow schema of a node's output.
func Schema(n Node) *arrow.Schema {
	cols := n.Columns()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// ScanColumn follows e, an expression over n's columns, down through filters and
// projections that pass a column on unchanged, to a scan: it returns the scan and the
// scan's column e is, or ok false when e is not a column read from a scan.
func ScanColumn(n Node, e Expr) (scan *Scan, col int, ok bool) {
	return scanColumn(n, e, false)
}

// ScanColumnThroughJoins is ScanColumn that also follows a column through the
// joins on the way: the scan at the bottom of a chain of joins gives the columns
// the joins above it join on.
func ScanColumnThroughJoins(n Node, e Expr) (scan *Scan, col int, ok bool) {
	return scanColumn(n, e, true)
}

func scanColumn(n Node, e Expr, joins bool) (scan *Scan, col int, ok bool) {
	for {
		r, isRef := e.(*ColRef)
		if !isRef {
			return nil, 0, false
		}
		switch x := n.(type) {
		case *Scan:
			return x, r.Idx, r.Idx < len(x.Cols)
		case *Filter:
			n = x.Input
		case *Project:
			if r.Idx >= len(x.Exprs) {
				return nil, 0, false
			}
			e, n = x.Exprs[r.Idx], x.Input
		case *Join:
			if !joins {
				return nil, 0, false
			}
			if nl := len(x.Left.Columns()); r.Idx < nl {
				n = x.Left
			} else {
				n, e = x.Right, &ColRef{Idx: r.Idx - nl, T: r.T}
			}
		default:
			return nil, 0, false
		}
	}
}
