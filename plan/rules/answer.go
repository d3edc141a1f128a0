package rules

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/types"
)

// Answer is what AnswerFromStatistics found for a statement.
type Answer struct {
	// Ref is the table whose statistics answered, or would have.
	Ref *plan.TableRef
	// Answered says the plan no longer reads the table; Bypassed that statistics
	// would have answered but the statement set use_statistics = false.
	Answered, Bypassed bool
	// Sketches names the sketches the answer read ("hyperloglog p=12", "kll k=200").
	Sketches []string
	// ExactDistinct are the APPROX_COUNT_DISTINCT calls answered by an exact count.
	ExactDistinct map[*plan.AggCall]bool
}

// AnswerFromStatistics answers a statement from its table's statistics record when
// the statement is one ungrouped aggregate over one scan with no predicate (under
// any projections, sorts and limits), the record is current (stats.Current), and
// every aggregate's state can be derived from the table's stored partials
// (agg.Accumulator.FromZone). The aggregate is then replaced by the rows those states
// give, and the plan reads nothing. With use false the plan is left alone, and the
// answer says whether statistics would have answered. A nil Answer means statistics
// could not answer.
func AnswerFromStatistics(n plan.Node, use bool) (plan.Node, *Answer, error) {
	a, replace := topAggregate(n)
	if a == nil || len(a.Groups) > 0 {
		return n, nil, nil
	}
	scan, ok := a.Input.(*plan.Scan)
	if !ok || len(scan.Filters) > 0 {
		return n, nil, nil
	}
	ref := scan.Ref
	if !stats.Current(ref.Stats, ref.Version, ref.Rows) {
		return n, nil, nil
	}
	ans := &Answer{Ref: ref, ExactDistinct: map[*plan.AggCall]bool{}}
	arrays := make([]arrow.Array, len(a.Aggs))
	sketches := map[string]bool{}
	for i := range a.Aggs {
		c := &a.Aggs[i]
		z, ok, err := tableZone(ref.Stats, scan, c)
		if err != nil || !ok {
			return n, nil, err
		}
		acc, err := agg.New(c.Spec())
		if err != nil {
			return n, nil, err
		}
		// The table's partials first; failing them (SUM and AVG keep their partials
		// per row group only), every row group's.
		ok, err = acc.FromZone(&z, 0)
		if err != nil {
			return n, nil, err
		}
		if !ok {
			if acc, err = agg.New(c.Spec()); err != nil {
				return n, nil, err
			}
			if ok, err = foldZones(acc, ref.Stats, scan, c); err != nil || !ok {
				return n, nil, err
			}
		}
		if arrays[i], err = acc.Final(); err != nil {
			return n, nil, err
		}
		switch c.Func {
		case "approx_count_distinct":
			if z.DistinctExact >= 0 {
				ans.ExactDistinct[c] = true
			} else {
				sketches[stats.HLLName] = true
			}
		case "approx_percentile":
			sketches[stats.KLLName] = true
		}
	}
	for _, s := range []string{stats.HLLName, stats.KLLName} {
		if sketches[s] {
			ans.Sketches = append(ans.Sketches, s)
		}
	}
	if !use {
		ans.Bypassed = true
		return n, ans, nil
	}
	ans.Answered = true
	stored := &plan.Stored{Cols: a.Cols, Arrays: arrays, Rows: 1, Source: "statistics at " + ref.Stats.SourceVersion.Label()}
	return replace(stored), ans, nil
}

// argColumn finds the record's column an aggregate's argument reads; ok is false
// when the argument is not a plain column of the record (of the same type), or when
// the aggregate has a FILTER, which the stored partials know nothing of. A
// count_star has no column (index -1).
func argColumn(r *stats.Record, scan *plan.Scan, c *plan.AggCall) (idx int, dt arrow.DataType, ok bool) {
	if c.Filter != nil || len(c.Args) > 0 || c.Distinct || len(c.Order) > 0 {
		return 0, nil, false
	}
	if c.Arg == nil {
		return -1, nil, true
	}
	ref, ok := c.Arg.(*plan.ColRef)
	if !ok || ref.Idx < 0 || ref.Idx >= len(scan.Cols) {
		return 0, nil, false
	}
	if idx = scanColumn(r, scan, ref.Idx); idx < 0 {
		return 0, nil, false
	}
	return idx, scan.Cols[ref.Idx].Type, true
}

// scanColumn is the position in the record of scan column i, or -1 when the record
// has no such column of the same type.
func scanColumn(r *stats.Record, scan *plan.Scan, i int) int {
	j := r.ColumnIndex(scan.Cols[i].Name)
	if j < 0 || r.Columns[j].DataType != types.Name(scan.Cols[i].Type) {
		return -1
	}
	return j
}

// partials turns a zone column of the record into an aggregate's zone.
func partials(rows int64, zc stats.ZoneColumn, dt arrow.DataType) agg.Zone {
	z := agg.UnknownZone(rows)
	if zc.NullCount != nil {
		z.Nulls = *zc.NullCount
	}
	if zc.Min != nil && zc.Max != nil && zc.BoundsExact && !zc.HasNaN {
		if codec, ok := stats.CodecFor(dt); ok {
			lo, err1 := codec.Decode(zc.Min)
			hi, err2 := codec.Decode(zc.Max)
			if err1 == nil && err2 == nil {
				z.Min, z.Max, z.Bounded = lo, hi, true
			}
		}
	}
	z.Sum = zc.Sum
	return z
}

// foldZones folds every row group's partials into acc; ok is false when one of them
// does not suffice.
func foldZones(acc agg.Accumulator, r *stats.Record, scan *plan.Scan, c *plan.AggCall) (bool, error) {
	idx, dt, ok := argColumn(r, scan, c)
	if !ok || r.LoadDetail() != nil {
		return false, nil // a detail that does not read answers nothing
	}
	for _, zone := range r.Zones {
		z := agg.UnknownZone(zone.Rows)
		if idx >= 0 {
			z = partials(zone.Rows, zone.Columns[idx], dt)
		}
		if ok, err := acc.FromZone(&z, 0); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// tableZone gathers the record's partials over the whole table for one aggregate's
// argument; ok is false when the argument is not a plain column of the record.
func tableZone(r *stats.Record, scan *plan.Scan, c *plan.AggCall) (agg.Zone, bool, error) {
	idx, dt, ok := argColumn(r, scan, c)
	if !ok {
		return agg.Zone{}, false, nil
	}
	if idx < 0 {
		return agg.UnknownZone(r.Rows), true, nil
	}
	col := &r.Columns[idx]
	z := partials(r.Rows, col.Partials(), dt)
	if col.DistinctExact != nil {
		z.DistinctExact = *col.DistinctExact
	}
	wantDistinct, wantQuantiles := agg.ZoneSketches(c.Func)
	if col.Distinct != nil && wantDistinct {
		h := stats.NewHLL()
		if err := h.UnmarshalBinary(col.Distinct); err == nil {
			z.Distinct = h
		}
	}
	if col.Quantiles != nil && wantQuantiles {
		k := stats.NewKLL()
		if err := k.UnmarshalBinary(col.Quantiles); err == nil {
			z.Quantiles = k
		}
	}
	return z, true, nil
}
