package agg

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/types"
)

// mmInterval is MIN/MAX of intervals, ordered as DuckDB orders them: a month as 30
// days, a day as 24 hours. Of two equal intervals written differently ('1 month',
// '30 days') the first one met is kept.
type mmInterval struct {
	mmOrdered[arrow.MonthDayNanoInterval]
}

func newMMInterval(s Spec, dt arrow.DataType, isMax bool) *mmInterval {
	return &mmInterval{mmOrdered[arrow.MonthDayNanoInterval]{spec: s, dt: dt, isMax: isMax, cmp: types.CompareInterval}}
}

var _ Accumulator = (*mmInterval)(nil)
