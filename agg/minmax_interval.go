package agg

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/types"
)

// mmInterval is MIN/MAX of intervals, ordered as DuckDB orders them: a month as 30
// days, a day as 24 hours. Of two equal intervals written differently ('1 month',
// '30 days') the first one met is kept.
type mmInterval struct {
	spec  Spec
	dt    arrow.DataType
	isMax bool
	vals  []arrow.MonthDayNanoInterval
	has   []bool
	rows  rows
}

var _ Accumulator = (*mmInterval)(nil)

func (a *mmInterval) better(v, cur arrow.MonthDayNanoInterval) bool {
	c := types.CompareInterval(v, cur)
	if a.isMax {
		return c > 0
	}
	return c < 0
}

func (a *mmInterval) Resize(n int) { a.vals, a.has = extend(a.vals, n), extend(a.has, n) }

func (a *mmInterval) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	vals, s, g, n, err := mmPrepare(a, len(a.has), &a.rows, a.dt, a.spec, arg, sel, groups)
	if err != nil || n == 0 {
		return err
	}
	data := rawValues[arrow.MonthDayNanoInterval](vals)
	for k, i := range s[:n] {
		var grp uint32
		if g != nil {
			grp = g[k]
		}
		if v := data[i]; !a.has[grp] || a.better(v, a.vals[grp]) {
			a.vals[grp], a.has[grp] = v, true
		}
	}
	return nil
}

func (a *mmInterval) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*mmInterval](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, len(o.has), len(a.has)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.has)] {
		if o.has[j] && (!a.has[g] || a.better(o.vals[j], a.vals[g])) {
			a.vals[g], a.has[g] = o.vals[j], true
		}
	}
	return nil
}

func (a *mmInterval) Final() (arrow.Array, error) {
	return fixedArray(a.dt, append([]arrow.MonthDayNanoInterval(nil), a.vals...), a.has), nil
}

func (a *mmInterval) MemoryUsage() int64 {
	return int64(16*cap(a.vals)+cap(a.has)) + a.rows.memoryUsage()
}

// FromZone never answers: Parquet keeps no bounds of intervals.
func (a *mmInterval) FromZone(*Zone, uint32) (bool, error) { return false, nil }
