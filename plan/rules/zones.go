package rules

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/types"
)

// Zones is what PlanZones decided for a statement.
type Zones struct {
	Ref                  *plan.TableRef
	None, Answered, Read int
	// Bypassed says the decision was not applied: use_statistics = false.
	Bypassed bool
}

// PlanZones is the zone planner of DESIGN.md §3 for one ungrouped aggregate over a
// filtered scan (under any projections) whose table has a current record: every row
// group is classified against the filter (Classify) — none are skipped; all are
// answered from their partials when every aggregate's FromZone accepts them, and
// otherwise read; some are read. The answered partials become the aggregate's Seeds,
// merged with what the read zones compute. When no zone is left to read, the
// aggregate is replaced by its results and nothing is read. With use false the plan
// is left alone (the footers still prune) and the Zones say what would have been
// done. A nil Zones means the planner did not apply.
func PlanZones(n plan.Node, use bool) (plan.Node, *Zones, error) {
	var parent *plan.Project
	cur := n
	for {
		p, ok := cur.(*plan.Project)
		if !ok {
			break
		}
		parent, cur = p, p.Input
	}
	a, ok := cur.(*plan.Aggregate)
	if !ok || len(a.Groups) > 0 {
		return n, nil, nil
	}
	f, ok := a.Input.(*plan.Filter)
	if !ok {
		return n, nil, nil
	}
	scan, ok := f.Input.(*plan.Scan)
	if !ok {
		return n, nil, nil
	}
	ref := scan.Ref
	rec := ref.Stats
	if !stats.Current(rec, ref.Version, ref.Rows) {
		return n, nil, nil
	}
	// The record's column of each scan column, and its codec.
	recCol := make([]int, len(scan.Cols))
	codecs := make([]*stats.Codec, len(scan.Cols))
	for i, c := range scan.Cols {
		recCol[i] = -1
		rc := rec.Column(c.Name)
		if rc == nil || rc.DataType != types.Name(c.Type) {
			continue
		}
		for j := range rec.Columns {
			if &rec.Columns[j] == rc {
				recCol[i] = j
			}
		}
		if codec, ok := stats.CodecFor(c.Type); ok {
			codecs[i] = &codec
		}
	}
	specs := make([]agg.Spec, len(a.Aggs))
	argCols := make([]int, len(a.Aggs)) // record column of each argument, -1 for count_star
	for i := range a.Aggs {
		specs[i] = a.Aggs[i].Spec()
		idx, _, ok := argColumn(rec, scan, &a.Aggs[i])
		if !ok {
			return n, nil, nil // an argument that is not a column: every zone must be read
		}
		argCols[i] = idx
	}
	seeds := make([]agg.Accumulator, len(a.Aggs))
	for i := range seeds {
		acc, err := agg.New(specs[i])
		if err != nil {
			return n, nil, err
		}
		seeds[i] = acc
	}
	skip := &plan.ZoneSkip{None: map[plan.ZoneID]bool{}, Answered: map[plan.ZoneID]bool{}}
	out := &Zones{Ref: ref}
	for _, zone := range rec.Zones {
		id := plan.ZoneID{File: zone.File, RowGroup: zone.RowGroup}
		facts := func(col int) (ColumnFacts, bool) {
			j := recCol[col]
			if j < 0 || codecs[col] == nil {
				return ColumnFacts{}, false
			}
			return zoneFacts(zone.Rows, zone.Columns[j], *codecs[col], rec.Depth)
		}
		switch Classify(scan, f.Cond, facts) {
		case None:
			skip.None[id] = true
			out.None++
			continue
		case All:
			ok, err := answerZone(seeds, specs, argCols, zone, scan, rec)
			if err != nil {
				return n, nil, err
			}
			if ok {
				skip.Answered[id] = true
				out.Answered++
				continue
			}
		}
		out.Read++
	}
	if out.Answered == 0 && (out.None == 0 || !use) {
		return n, nil, nil // the footers prune as well as the record would
	}
	if !use {
		out.Bypassed = true
		return n, out, nil
	}
	if out.Read > 0 {
		scan.Zones = skip
		if out.Answered > 0 {
			a.Seeds = seeds
		}
		return n, out, nil
	}
	// Nothing left to read: the results are the seeds' (the initial states when
	// every zone was skipped).
	arrays := make([]arrow.Array, len(seeds))
	for i, acc := range seeds {
		acc.Resize(1)
		arr, err := acc.Final()
		if err != nil {
			return n, nil, err
		}
		arrays[i] = arr
	}
	stored := &plan.Stored{Cols: a.Cols, Arrays: arrays, Rows: 1, Source: "statistics at " + rec.SourceVersion.Label()}
	if parent == nil {
		return stored, out, nil
	}
	parent.Input = stored
	return n, out, nil
}

// answerZone folds one zone's partials into the seeds when every aggregate accepts
// them; otherwise the seeds are left as they were.
func answerZone(seeds []agg.Accumulator, specs []agg.Spec, argCols []int, zone stats.Zone, scan *plan.Scan, rec *stats.Record) (bool, error) {
	trial := make([]agg.Accumulator, len(seeds))
	for i := range seeds {
		acc, err := agg.New(specs[i])
		if err != nil {
			return false, err
		}
		z := agg.UnknownZone(zone.Rows)
		if j := argCols[i]; j >= 0 {
			dt, err := types.Parse(rec.Columns[j].DataType)
			if err != nil {
				return false, nil
			}
			z = partials(zone.Rows, zone.Columns[j], dt)
		}
		if ok, err := acc.FromZone(&z, 0); err != nil || !ok {
			return false, err
		}
		trial[i] = acc
	}
	for i, acc := range seeds {
		acc.Resize(1)
		if err := acc.Merge(trial[i], []uint32{0}); err != nil {
			return false, err
		}
	}
	return true, nil
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
