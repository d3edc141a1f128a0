package agg

import (
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// Zone is what statistics know of one zone's rows (DESIGN.md §3) for one aggregate:
// the zone's row count and, for an aggregate with an argument column, that column's
// stored partials. Fields not known are left at their "unknown" values.
type Zone struct {
	Rows int64
	// Nulls is the argument's null count, or -1 when unknown.
	Nulls int64
	// Min and Max are the argument's exact bounds when Bounded (values that occur in
	// the zone, not merely bounds on them).
	Min, Max types.Value
	Bounded  bool
	// DistinctExact is COUNT(DISTINCT arg) over the zone, or -1 when unknown.
	DistinctExact int64
	// Distinct and Quantiles are the argument's sketches, or nil.
	Distinct  *stats.HLL
	Quantiles *stats.KLL
}

// UnknownZone is a zone of rows rows of which nothing else is known.
func UnknownZone(rows int64) Zone { return Zone{Rows: rows, Nulls: -1, DistinctExact: -1} }

// allNull reports whether every row of the zone is NULL in the argument, by its null
// count.
func (z *Zone) allNull() bool { return z.Nulls >= 0 && z.Nulls == z.Rows }

// The FromZone methods fold a zone's stored partials into group g, as Update would fold
// the zone's rows; ok is false, with the state untouched, when the partials do not
// suffice (the zone must then be read). They are the "derive from zone" step of every
// aggregate's state machine: the same state serves scans, merges and answers from
// statistics.

func (a *countAcc) FromZone(z *Zone, g uint32) (bool, error) {
	n := z.Rows
	if !a.star {
		if z.Nulls < 0 {
			return false, nil
		}
		n -= z.Nulls
	}
	a.Resize(int(g) + 1)
	a.counts[g] += n
	return true, nil
}

// minMaxFromZone folds a zone's exact bounds into a MIN or MAX by updating it with the
// one value that decides it: the same code as a scan.
func minMaxFromZone(a Accumulator, z *Zone, g uint32, isMax bool) (bool, error) {
	switch {
	case z.allNull():
		a.Resize(int(g) + 1)
		return true, nil // no value to fold in
	case z.Nulls < 0 || !z.Bounded:
		return false, nil
	}
	v := z.Min
	if isMax {
		v = z.Max
	}
	arr := vector.FromValues(v.Type, []types.Value{v})
	a.Resize(int(g) + 1)
	if err := a.Update(arr, nil, []uint32{g}); err != nil {
		return false, err
	}
	return true, nil
}

func (a *mmInt[T]) FromZone(z *Zone, g uint32) (bool, error) { return minMaxFromZone(a, z, g, a.isMax) }
func (a *mmBool) FromZone(z *Zone, g uint32) (bool, error)   { return minMaxFromZone(a, z, g, a.isMax) }
func (a *mmFloat[T]) FromZone(z *Zone, g uint32) (bool, error) {
	return minMaxFromZone(a, z, g, a.isMax)
}
func (a *mmDecimal) FromZone(z *Zone, g uint32) (bool, error) {
	return minMaxFromZone(a, z, g, a.isMax)
}
func (a *mmString) FromZone(z *Zone, g uint32) (bool, error) { return minMaxFromZone(a, z, g, a.isMax) }

// FromZone folds a zone's HLL sketch in. An exact distinct count answers a group that
// has nothing else (exact counts do not merge); it is kept beside the sketch and
// dropped when anything else reaches the group.
func (a *hllAcc) FromZone(z *Zone, g uint32) (bool, error) {
	if z.DistinctExact < 0 && z.Distinct == nil && !z.allNull() {
		return false, nil
	}
	a.Resize(int(g) + 1)
	fresh := a.sketches[g] == nil && !a.hasExact(g)
	switch {
	case z.DistinctExact >= 0 && fresh:
		if z.Distinct != nil {
			a.sketch(g).Merge(z.Distinct)
		}
		a.setExact(g, z.DistinctExact, z.Distinct != nil)
		return true, nil
	case z.Distinct != nil:
		if err := a.touch(g); err != nil {
			return false, err
		}
		a.sketch(g).Merge(z.Distinct)
		return true, nil
	case z.allNull():
		return true, nil
	}
	return false, nil
}

// exactCount is an exact distinct count standing in for a group's sketch; whole says
// the group's sketch holds the same values, so the group can take more.
type exactCount struct {
	n     int64
	whole bool
}

func (a *hllAcc) hasExact(g uint32) bool {
	_, ok := a.exact[g]
	return ok
}

func (a *hllAcc) setExact(g uint32, n int64, whole bool) {
	if a.exact == nil {
		a.exact = map[uint32]exactCount{}
	}
	a.exact[g] = exactCount{n, whole}
}

// touch is called before anything else reaches group g: an exact count stops being the
// answer, and a group that had only the exact count cannot take more.
func (a *hllAcc) touch(g uint32) error {
	e, ok := a.exact[g]
	if !ok {
		return nil
	}
	delete(a.exact, g)
	if !e.whole {
		return errs.New(errs.Internal, "BUG: approx_count_distinct merged a zone known only by its exact count")
	}
	return nil
}

func (a *kllAcc) FromZone(z *Zone, g uint32) (bool, error) {
	if z.Quantiles == nil && !z.allNull() {
		return false, nil
	}
	a.Resize(int(g) + 1)
	if z.Quantiles != nil {
		a.sketch(g).Merge(z.Quantiles)
	}
	return true, nil
}

// Sums are recorded only by a full read; until an aggregate's zone carries one, SUM
// and AVG read their zones.
func (a *intSumAcc) FromZone(*Zone, uint32) (bool, error)   { return false, nil }
func (a *floatSumAcc) FromZone(*Zone, uint32) (bool, error) { return false, nil }
func (a *decSumAcc) FromZone(*Zone, uint32) (bool, error)   { return false, nil }

// Exact distinct aggregates have no partial a zone can store.
func (a *distinctAcc) FromZone(*Zone, uint32) (bool, error) { return false, nil }
func (a *distinctOf) FromZone(*Zone, uint32) (bool, error)  { return false, nil }
