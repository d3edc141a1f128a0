package iceberg

import (
	"math"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/types"
)

// partitionRange is the range of source column values (typed dt) a partition field
// with transform t holds when its results lie in [lo, hi]: an identity keeps them, a
// truncation of integers widens the top by the width less one, and the time
// transforms (year, month, day, hour, counted from 1970 in UTC) cover their whole
// periods. ok is false for a transform that orders nothing (bucket, void) or a type
// the range is not worked out for; such a field bounds nothing.
func partitionRange(t transform, dt arrow.DataType, lo, hi types.Value) (min, max types.Value, ok bool) {
	if lo.Null || hi.Null {
		return min, max, false
	}
	switch t.kind {
	case transformIdentity:
		if types.IsFloat(dt) {
			return min, max, false // NaN is no bound's
		}
		return lo, hi, true
	case transformTruncate:
		if t.n <= 0 || (dt.ID() != arrow.INT32 && dt.ID() != arrow.INT64) {
			return min, max, false
		}
		top := hi.I + int64(t.n-1)
		if top < hi.I || (dt.ID() == arrow.INT32 && top > math.MaxInt32) {
			return min, max, false
		}
		hi.I = top
		return lo, hi, true
	case transformYear, transformMonth, transformDay, transformHour:
		start, ok := periodStart(t, dt)
		if !ok {
			return min, max, false
		}
		a, okA := start(lo.I)
		b, okB := start(hi.I + 1)
		if !okA || !okB {
			return min, max, false
		}
		return types.Value{Type: dt, I: a}, types.Value{Type: dt, I: b - 1}, true
	}
	return min, max, false
}

// periodStart gives, for a time transform over a column of type dt, the column's
// value at the start of period n (years, months, days or hours since 1970, UTC).
func periodStart(t transform, dt arrow.DataType) (func(n int64) (int64, bool), bool) {
	var per int64 // column units per day; 1 for DATE
	switch dt := dt.(type) {
	case *arrow.Date32Type:
		if t.kind == transformHour {
			return nil, false
		}
		per = 1
	case *arrow.TimestampType:
		per = int64(24*time.Hour) / int64(dt.Unit.Multiplier())
	default:
		return nil, false
	}
	// A period number beyond these cannot be a real partition value, and products of
	// it stay in range.
	const limit = 1 << 31
	fromDays := func(d int64) (int64, bool) { return d * per, true }
	switch t.kind {
	case transformYear:
		return func(n int64) (int64, bool) {
			if n < -limit || n > limit {
				return 0, false
			}
			return fromDays(civilDays(1970+n, 1))
		}, true
	case transformMonth:
		return func(n int64) (int64, bool) {
			if n < -limit || n > limit {
				return 0, false
			}
			y, m := 1970+floorDiv(n, 12), n-floorDiv(n, 12)*12+1
			return fromDays(civilDays(y, m))
		}, true
	case transformDay:
		return func(n int64) (int64, bool) {
			if n < -limit || n > limit {
				return 0, false
			}
			return fromDays(n)
		}, true
	case transformHour:
		return func(n int64) (int64, bool) {
			if n < -limit*24 || n > limit*24 {
				return 0, false
			}
			return n * (per / 24), true
		}, true
	}
	return nil, false
}

// civilDays is the number of days from 1970-01-01 to the first of month m of year y
// (proleptic Gregorian).
func civilDays(y, m int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp + 2) / 5
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// transformType is the type a partition transform's results decode as for a source
// column of type dt: the source type for identity and truncate, INTEGER for the time
// transforms; nil for one whose results bound nothing.
func transformType(t transform, dt arrow.DataType) arrow.DataType {
	switch {
	case t.kind == transformIdentity, t.kind == transformTruncate:
		return dt
	case t.timeTransform():
		return arrow.PrimitiveTypes.Int32
	}
	return nil
}

// partitionBounds narrows cols, per Schema field the bounds and null count known of a
// set of rows, by what the partition fields of spec state of those rows: value(i) is
// the bounds of the results of spec's field i (lo == hi for one file's tuple), and
// whether any is NULL (a NULL source value has a NULL result under every transform
// that keeps a value). A column the partition says nothing of keeps what it had.
func (b *builder) partitionBounds(spec *partitionSpec, cols []parquet.ColumnStats, value func(i int, dt arrow.DataType) (lo, hi types.Value, nulls, ok bool)) {
	for i, pf := range spec.Fields {
		if len(pf.SourceIDs) != 1 || pf.Transform.kind == transformVoid {
			continue
		}
		col, ok := b.byID[pf.SourceIDs[0]]
		if !ok || col >= len(cols) || types.IsNested(b.dts[col]) {
			continue // a column since dropped, or inside a struct
		}
		if b.l != nil && col < len(b.l.Columns) && b.l.Columns[col].Unmapped {
			continue // read as NULL from files without field ids
		}
		dt := b.dts[col]
		rt := transformType(pf.Transform, dt)
		if rt == nil {
			rt = arrow.PrimitiveTypes.Int32 // a bucket: its NULLs still say something
		}
		lo, hi, nulls, ok := value(i, rt)
		if !ok {
			continue
		}
		cs := &cols[col]
		if !nulls && !cs.HasNullCount {
			cs.HasNullCount, cs.NullCount = true, 0
		}
		min, max, ok := partitionRange(pf.Transform, dt, lo, hi)
		if !ok || !boundsBound(dt, max) {
			continue
		}
		if cs.HasMinMax {
			if types.Compare(min, cs.Min) < 0 {
				min = cs.Min
			}
			if types.Compare(max, cs.Max) > 0 {
				max = cs.Max
			}
		}
		cs.HasMinMax, cs.Min, cs.Max = true, min, max
	}
}

// boundsBound reports whether an upper bound max of type dt read from a manifest
// bounds: a string or binary long enough to have been truncated by its writer may not
// (it need not have been rounded up).
func boundsBound(dt arrow.DataType, max types.Value) bool {
	switch {
	case types.IsString(dt):
		return utf8.RuneCountInString(max.S) < maxTruncatedBound
	case types.IsBinary(dt) && !types.IsUUID(dt):
		return len(max.S) < maxTruncatedBound
	}
	return true
}
