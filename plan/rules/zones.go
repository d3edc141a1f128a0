package rules

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// Zones is what PlanZones decided for a statement.
type Zones struct {
	Ref                  *plan.TableRef
	None, Answered, Read int
	// Bypassed says the decision was not applied: use_statistics = false.
	Bypassed bool
}

// PlanZones is the zone planner of DESIGN.md §3 for one aggregate over a filtered
// scan (under any projections), or grouped by partition columns, whose table has a
// current record: every row group is classified against the filter (Classify) — none
// are skipped; all are answered from their partials when every aggregate's FromZone
// accepts them, and otherwise read; some are read. The answered partials become the
// aggregate's Seeds, merged with what the read zones compute. When no zone is left to
// read, the aggregate is replaced by its results and nothing is read. With use false
// the plan is left alone (the footers still prune) and the Zones say what would have
// been done. A nil Zones means the planner changed nothing.
//
// Whatever it decides, the scan's (or the stored result's) ZoneSkip counts every
// zone by the reason for what was done with it, for EXPLAIN; a stale record marks the
// scan Stale.
func PlanZones(n plan.Node, use bool) (plan.Node, *Zones, error) {
	a, replace := topAggregate(n)
	if a == nil {
		return n, nil, nil
	}
	var cond plan.Expr
	input := a.Input
	if f, ok := input.(*plan.Filter); ok {
		cond, input = f.Cond, f.Input
	}
	scan, ok := input.(*plan.Scan)
	if !ok || (cond == nil && len(a.Groups) == 0) {
		return n, nil, nil // an ungrouped aggregate without a filter is AnswerFromStatistics's
	}
	// Grouping is answered per partition: every key a partition column, whose value
	// is one per file.
	ref := scan.Ref
	keyCols := make([]int, len(a.Groups)) // the partition of each key
	keyIdx := make([]int, len(a.Groups))  // and its scan column
	for i, g := range a.Groups {
		c, ok := g.(*plan.ColRef)
		if !ok || c.Idx >= len(scan.Cols) || ref.Listing.Partition(c.Idx) < 0 {
			return n, nil, nil
		}
		keyCols[i], keyIdx[i] = ref.Listing.Partition(c.Idx), c.Idx
	}
	rec := ref.Stats
	if rec == nil {
		return n, nil, nil
	}
	if !stats.Current(rec, ref.Version, ref.Rows) {
		scan.Zones = &plan.ZoneSkip{Stale: true}
		return n, nil, nil
	}
	if rec.LoadDetail() != nil {
		return n, nil, nil // a detail that does not read decides nothing: every zone is read
	}
	// The record's column of each scan column, and its codec.
	recCol := make([]int, len(scan.Cols))
	codecs := make([]*stats.Codec, len(scan.Cols))
	for i, c := range scan.Cols {
		if recCol[i] = scanColumn(rec, scan, i); recCol[i] < 0 {
			continue
		}
		if codec, ok := stats.CodecFor(c.Type); ok {
			codecs[i] = &codec
		}
	}
	specs := make([]agg.Spec, len(a.Aggs))
	args := make([]zoneArg, len(a.Aggs))
	// usable says every aggregate can be derived from a zone's partials: its
	// argument is a column of the record, and it keeps no state a zone cannot hold.
	// Otherwise zones are still skipped, but none is answered.
	usable := true
	for i := range a.Aggs {
		specs[i] = a.Aggs[i].Spec()
		idx, dt, ok := argColumn(rec, scan, &a.Aggs[i])
		if ok {
			var err error
			if ok, err = takesPartials(specs[i]); err != nil {
				return n, nil, err
			}
		}
		if !ok {
			usable = false
			continue
		}
		args[i] = zoneArg{idx, dt, specs[i].Name == "min" || specs[i].Name == "max"}
	}
	seeds := make([]agg.Accumulator, len(a.Aggs))
	probe := make([]agg.Accumulator, len(a.Aggs)) // one group per zone tried
	for i := range seeds {
		acc, err := agg.New(specs[i])
		if err != nil {
			return n, nil, err
		}
		seeds[i] = acc
		if probe[i], err = agg.New(specs[i]); err != nil {
			return n, nil, err
		}
	}
	tried := uint32(0)
	// A zone a filter on partition columns alone excludes is told apart, for EXPLAIN.
	onPartitions := false
	if cond != nil {
		plan.WalkExpr(cond, func(e plan.Expr) {
			if c, ok := e.(*plan.ColRef); ok && ref.Listing.Partition(c.Idx) >= 0 {
				onPartitions = true
			}
		})
	}
	skip := &plan.ZoneSkip{None: map[plan.ZoneID]bool{}, Answered: map[plan.ZoneID]bool{}}
	groups := newSeedGroups(len(keyCols))
	for _, zone := range rec.Zones {
		id := plan.ZoneID{File: zone.File, RowGroup: zone.RowGroup}
		if zone.Rows == 0 {
			skip.None[id] = true // no row, no group
			skip.Count(plan.ZoneEmpty)
			continue
		}
		facts := func(col int) (ColumnFacts, bool) {
			j := recCol[col]
			if j < 0 || codecs[col] == nil {
				return ColumnFacts{}, false
			}
			return zoneFacts(zone.Rows, zone.Columns[j], *codecs[col], rec.Depth)
		}
		verdict := All
		if cond != nil {
			verdict = Classify(scan, cond, facts)
		}
		switch verdict {
		case None:
			skip.None[id] = true
			reason := plan.ZoneBoundsExclude
			if onPartitions && Classify(scan, cond, func(col int) (ColumnFacts, bool) {
				if ref.Listing.Partition(col) < 0 {
					return ColumnFacts{}, false
				}
				return facts(col)
			}) == None {
				reason = plan.ZonePartitionExcludes
			}
			skip.Count(reason)
			continue
		case Some:
			skip.Count(plan.ZoneStraddles)
			continue
		}
		switch {
		case !usable:
			skip.Count(plan.ZoneAggregateNeeds)
			continue
		case zone.File < 0 || zone.File >= len(ref.Listing.Files):
			skip.Count(plan.ZonePartialsMissing) // a record that does not match its listing
			continue
		}
		g := groups.id(ref.Listing.Files[zone.File].PartitionValues, keyCols)
		reason, err := answerZone(seeds, probe, tried, args, zone, g)
		if err != nil {
			return n, nil, err
		}
		tried++
		if reason == plan.ZoneAllMatch {
			skip.Answered[id] = true
		}
		skip.Count(reason)
	}
	out := &Zones{Ref: ref}
	out.None, out.Answered, out.Read = skip.Outcomes()
	if !use {
		bypassed := &plan.ZoneSkip{Considered: skip.Considered}
		bypassed.Reasons[plan.ZoneBypassed] = skip.Considered
		scan.Zones = bypassed
		if out.Answered == 0 {
			return n, nil, nil // the footers prune as well as the record would
		}
		out.Bypassed = true
		return n, out, nil
	}
	keys := groups.keys(scan, keyIdx)
	if out.Read > 0 {
		scan.Zones = skip
		if out.Answered == 0 && out.None == 0 {
			return n, nil, nil // nothing changed: every zone is read
		}
		if out.Answered > 0 {
			a.Seeds, a.SeedKeys = seeds, keys
		}
		return n, out, nil
	}
	// Nothing left to read: the results are the seeds' (the initial states when
	// every zone was skipped and nothing is grouped).
	rows := 1
	if len(keyCols) > 0 {
		rows = groups.n
	}
	arrays := append([]arrow.Array{}, keys...)
	for _, acc := range seeds {
		acc.Resize(rows)
		arr, err := acc.Final()
		if err != nil {
			return n, nil, err
		}
		arrays = append(arrays, arr)
	}
	stored := &plan.Stored{Cols: a.Cols, Arrays: arrays, Rows: rows, Source: "statistics at " + rec.SourceVersion.Label(), Zones: skip}
	return replace(stored), out, nil
}

// takesPartials reports whether an aggregate can be derived from a zone's partials at
// all: whether it accepts a zone of one non-null value whose every partial a zone can
// hold is known (an exact distinct aggregate, or a sketch, cannot be).
func takesPartials(spec agg.Spec) (bool, error) {
	acc, err := agg.New(spec)
	if err != nil {
		return false, err
	}
	z := agg.UnknownZone(1)
	z.Nulls, z.Sum = 0, "0"
	if spec.ArgType != nil {
		b := types.NewBuilder(memory.DefaultAllocator, spec.ArgType)
		b.AppendEmptyValue()
		arr := b.NewArray()
		b.Release()
		v := types.ValueAt(arr, 0)
		z.Min, z.Max, z.Bounded = v, v, true
	}
	return acc.FromZone(&z, 0)
}

// topAggregate finds the aggregate at the top of a statement, under projections,
// sorts and limits only, and a function that puts a node in its place and returns
// the statement's root.
func topAggregate(n plan.Node) (*plan.Aggregate, func(plan.Node) plan.Node) {
	var set func(plan.Node)
	cur := n
	for {
		switch x := cur.(type) {
		case *plan.Aggregate:
			if len(x.Sets) > 0 {
				// Grouping sets are computed from their input's rows.
				return nil, nil
			}
			if set == nil {
				return x, func(m plan.Node) plan.Node { return m }
			}
			return x, func(m plan.Node) plan.Node { set(m); return n }
		case *plan.Project:
			set, cur = func(m plan.Node) { x.Input = m }, x.Input
		case *plan.Sort:
			set, cur = func(m plan.Node) { x.Input = m }, x.Input
		case *plan.Limit:
			set, cur = func(m plan.Node) { x.Input = m }, x.Input
		default:
			return nil, nil
		}
	}
}

// seedGroups numbers the partition keys of answered zones.
type seedGroups struct {
	n    int
	ids  map[string]int
	vals [][]types.Value // per key column, the key of each group
}

func newSeedGroups(keys int) *seedGroups {
	return &seedGroups{ids: map[string]int{}, vals: make([][]types.Value, keys)}
}

// id returns the group of a file's partition values (group 0 when nothing is grouped).
func (g *seedGroups) id(partition []types.Value, keyCols []int) uint32 {
	if len(keyCols) == 0 {
		g.n = 1
		return 0
	}
	var key []byte
	for _, k := range keyCols {
		v := partition[k]
		if v.Null {
			key = append(key, 0)
		} else {
			key = append(key, 1)
			key = append(key, v.String()...)
		}
		key = append(key, 0xff)
	}
	if id, ok := g.ids[string(key)]; ok {
		return uint32(id)
	}
	id := g.n
	g.ids[string(key)] = id
	g.n++
	for i, k := range keyCols {
		g.vals[i] = append(g.vals[i], partition[k])
	}
	return uint32(id)
}

// keys are the group keys as arrays typed like the scan columns keyIdx.
func (g *seedGroups) keys(scan *plan.Scan, keyIdx []int) []arrow.Array {
	out := make([]arrow.Array, len(keyIdx))
	for i, k := range keyIdx {
		out[i] = vector.FromValues(scan.Cols[k].Type, g.vals[i])
	}
	return out
}

// zoneArg is an aggregate's argument: its record column (-1 for count_star) and type,
// and whether the aggregate takes the column's bounds (MIN, MAX).
type zoneArg struct {
	col    int
	dt     arrow.DataType
	bounds bool
}

// answerZone folds one zone's partials into group g of the seeds when every
// aggregate accepts them, and says ZoneAllMatch; otherwise the seeds are left as they
// were, and the reason names what the first aggregate to refuse lacked. Whether they
// all accept is tried first on group k of probe (a group no other zone uses), since
// an aggregate that accepts changes its state.
func answerZone(seeds, probe []agg.Accumulator, k uint32, args []zoneArg, zone stats.Zone, g uint32) (plan.ZoneReason, error) {
	zones := make([]agg.Zone, len(seeds))
	// Aggregates of one column share its partials, decoded once.
	for i, a := range args {
		zones[i] = agg.UnknownZone(zone.Rows)
		if a.col < 0 {
			continue
		}
		found := false
		for j := range i {
			if args[j].col == a.col && arrow.TypeEqual(args[j].dt, a.dt) {
				zones[i], found = zones[j], true
				break
			}
		}
		if !found {
			zones[i] = partials(zone.Rows, zone.Columns[a.col], a.dt)
		}
	}
	for i, acc := range probe {
		ok, err := acc.FromZone(&zones[i], k)
		if err != nil {
			return plan.ZonePartialsMissing, err
		}
		if !ok {
			if a := args[i]; a.bounds && a.col >= 0 && zone.Columns[a.col].Min != nil {
				return plan.ZoneBoundsInexact, nil // bounds on record, but not values
			}
			return plan.ZonePartialsMissing, nil
		}
	}
	for i, acc := range seeds {
		ok, err := acc.FromZone(&zones[i], g)
		if err != nil {
			return plan.ZonePartialsMissing, err
		}
		if !ok {
			return plan.ZonePartialsMissing, errs.New(errs.Internal, "BUG: %T took a zone's partials once and refused them twice", acc)
		}
	}
	return plan.ZoneAllMatch, nil
}

// zoneFacts turns a zone column of the record into what the classifier needs. Bounds
// need not be exact to classify, only true; a floating column's bounds leave NaN out
// unless a full read found none.
func zoneFacts(rows int64, zc stats.ZoneColumn, codec stats.Codec, depth string) (ColumnFacts, bool) {
	f := ColumnFacts{Rows: rows, Nulls: -1}
	if zc.NullCount != nil {
		f.Nulls = *zc.NullCount
	}
	if zc.Min != nil && zc.Max != nil {
		lo, err1 := codec.Decode(zc.Min)
		hi, err2 := codec.Decode(zc.Max)
		if err1 == nil && err2 == nil {
			f.Min, f.Max, f.Bounded = lo, hi, true
		}
	}
	f.MayHaveNaN = types.IsFloat(codec.Type()) && (depth != stats.DepthFull || zc.HasNaN)
	return f, true
}
