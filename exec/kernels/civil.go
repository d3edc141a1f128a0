package kernels

import "github.com/loredb/lore/types"

// Calendar arithmetic on days since 1970-01-01 in the proleptic Gregorian calendar,
// without time.Time: the kernels convert millions of values and these are a few
// integer operations each (the algorithms are the well-known era/day-of-era ones).

const (
	microsPerSecond = int64(1_000_000)
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
	microsPerDay    = 24 * microsPerHour
)

// daysFromCivil returns the days since the epoch of y-m-d.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := m + 9
	if m > 2 {
		mp = m - 3
	}
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) { return types.CivilFromDays(z) }

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// daysInMonth is the number of days of month m of year y.
func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// floorDiv divides rounding toward negative infinity (timestamps before 1970 belong
// to the earlier day).
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// floorMod is the remainder matching floorDiv, always in [0, b) for b > 0.
func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// addMonths adds months to a date, clamping the day to the end of the target month
// (2024-01-31 + 1 month = 2024-02-29), as DuckDB and PostgreSQL do.
func addMonths(days int64, months int64) int64 {
	if months == 0 {
		return days
	}
	y, m, d := civilFromDays(days)
	total := y*12 + (m - 1) + months
	ny, nm := floorDiv(total, 12), floorMod(total, 12)+1
	if dim := daysInMonth(ny, nm); d > dim {
		d = dim
	}
	return daysFromCivil(ny, nm, d)
}

// isoWeekday is 1 (Monday) … 7 (Sunday) of a day number; 1970-01-01 was a Thursday.
func isoWeekday(days int64) int64 { return floorMod(days+3, 7) + 1 }

// isoYearWeek returns the ISO-8601 year and week of a day number.
func isoYearWeek(days int64) (int64, int64) {
	// The Thursday of this ISO week decides the ISO year.
	thursday := days - isoWeekday(days) + 4
	y, _, _ := civilFromDays(thursday)
	jan1 := daysFromCivil(y, 1, 1)
	return y, (thursday-jan1)/7 + 1
}
