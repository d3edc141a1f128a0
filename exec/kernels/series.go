package kernels

import "github.com/apache/arrow-go/v18/arrow"

// AddIntervalMicros adds iv to t, an instant in µs, as TIMESTAMP + INTERVAL does:
// months first (clamping the day to the month's end), then days, then the time part.
// ok is false when the result is out of range.
func AddIntervalMicros(t int64, iv arrow.MonthDayNanoInterval) (v int64, ok bool) {
	const dayMicros = 86_400_000_000
	v, ok = t, true
	if iv.Months != 0 {
		day, rem := floorDiv(v, dayMicros), floorMod(v, dayMicros)
		nd := addMonths(day, int64(iv.Months))
		if mulOverflows(nd, dayMicros) {
			return 0, false
		}
		v = nd*dayMicros + rem
	}
	var o1, o2 bool
	v, o1 = addChecked(v, int64(iv.Days)*dayMicros)
	v, o2 = addChecked(v, iv.Nanoseconds/1000)
	return v, !o1 && !o2
}

// Int64Array wraps vals, without copying, as an array of dt, an integer or
// timestamp type of 64 bits, with no NULLs.
func Int64Array(dt arrow.DataType, vals []int64) arrow.Array {
	return fixedArray(dt, vals, nil, 0)
}
