package plan

import "github.com/apache/arrow-go/v18/arrow"

// Series is the rows of the table functions range and generate_series: Start, then
// each value one step further, while it is before Stop (Inclusive: not past it). An
// integer series (BIGINT) steps by Step; a series of instants (TIMESTAMP or
// TIMESTAMP WITH TIME ZONE, in µs) adds Interval to the previous value each time, as
// DuckDB does (2024-01-31 plus a month is 2024-02-29, then 2024-03-29). Empty is a
// series of no rows (a NULL argument).
type Series struct {
	Col         Column
	Start, Stop int64
	Step        int64
	Interval    arrow.MonthDayNanoInterval
	Inclusive   bool
	Empty       bool
}

func (n *Series) Columns() []Column { return []Column{n.Col} }
func (n *Series) Inputs() []Node    { return nil }

// Temporal reports whether the series is of instants, stepped by Interval.
func (n *Series) Temporal() bool { return n.Col.Type.ID() == arrow.TIMESTAMP }

// Rows estimates the series' row count (exact for integers; for instants, from the
// interval's length with a month counted as 30 days).
func (n *Series) Rows() float64 {
	if n.Empty {
		return 0
	}
	span, step := float64(n.Stop)-float64(n.Start), float64(n.Step)
	if n.Temporal() {
		iv := n.Interval
		step = float64(iv.Months)*30*86_400e6 + float64(iv.Days)*86_400e6 + float64(iv.Nanoseconds)/1e3
	}
	if step == 0 || span/step < 0 {
		return 0
	}
	return span/step + 1
}

// LimitPercent skips Offset rows then returns the first Percent per cent of its
// input's rows (rounded down, counted over the whole input): LIMIT n% or
// LIMIT n PERCENT.
type LimitPercent struct {
	Input   Node
	Percent float64
	Offset  int64
}

func (n *LimitPercent) Columns() []Column { return n.Input.Columns() }
func (n *LimitPercent) Inputs() []Node    { return []Node{n.Input} }
