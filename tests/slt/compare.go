package slt

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Null and Empty are how a NULL and an empty string are written in results.
const (
	Null  = "NULL"
	Empty = "(empty)"
)

// FloatTolerance is the relative difference under which two R values are equal.
const FloatTolerance = 1e-9

// Cell maps a rendered value to its form in a result line: the empty string
// becomes (empty). A NULL must already be rendered as NULL.
func Cell(s string) string {
	if s == "" {
		return Empty
	}
	return s
}

// Lines joins rendered rows into result lines, ordered as the sort mode requires
// (so that rewritten expectations are stable).
func Lines(rows [][]string, mode SortMode) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.Join(r, "\t")
	}
	if mode == RowSort || mode == ValueSort {
		sort.Strings(out)
	}
	return out
}

// Compare checks rendered rows (cells already passed through Cell) against a query
// record's expectation. It returns "" when they match, else a description of the
// difference with both sides in full.
func Compare(rec *Record, rows [][]string) string {
	for i, r := range rows {
		if len(r) != len(rec.Types) {
			return fmt.Sprintf("row %d has %d columns, the query declares %d (%s)", i+1, len(r), len(rec.Types), rec.Types)
		}
	}
	var want, got [][]string
	for _, l := range rec.Expected {
		want = append(want, strings.Split(l, "\t"))
	}
	got = rows
	floatCol := func(int) bool { return false }
	switch rec.Sort {
	case RowSort:
		floatCol = func(c int) bool { return c < len(rec.Types) && rec.Types[c] == 'R' }
		want, got = sortRows(want, floatCol), sortRows(got, floatCol)
	case ValueSort:
		// Columns are lost; any value that reads as a number compares as one
		// when the query has a float column.
		floatCol = func(int) bool { return strings.Contains(rec.Types, "R") }
		want, got = flatten(want, floatCol(0)), flatten(got, floatCol(0))
	default:
		floatCol = func(c int) bool { return c < len(rec.Types) && rec.Types[c] == 'R' }
	}
	if len(want) != len(got) {
		return mismatch(rec, fmt.Sprintf("expected %d rows, got %d", len(want), len(got)), rows)
	}
	for i := range want {
		if len(want[i]) != len(got[i]) {
			return mismatch(rec, fmt.Sprintf("row %d: expected %d columns, got %d", i+1, len(want[i]), len(got[i])), rows)
		}
		for c := range want[i] {
			if !equalCell(want[i][c], got[i][c], floatCol(c)) {
				return mismatch(rec, fmt.Sprintf("row %d column %d: expected %q, got %q", i+1, c+1, want[i][c], got[i][c]), rows)
			}
		}
	}
	return ""
}

func mismatch(rec *Record, what string, rows [][]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s\n--- expected\n", what, rec.SQL)
	for _, l := range rec.Expected {
		b.WriteString(l + "\n")
	}
	b.WriteString("--- actual\n")
	for _, l := range Lines(rows, rec.Sort) {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// sortRows orders rows cell by cell; float cells compare as numbers, so that two
// renderings of the same values ("1.50" and "1.5") sort alike.
func sortRows(rows [][]string, floatCol func(int) bool) [][]string {
	out := append([][]string(nil), rows...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		for c := 0; c < len(a) && c < len(b); c++ {
			if d := compareCell(a[c], b[c], floatCol(c)); d != 0 {
				return d < 0
			}
		}
		return len(a) < len(b)
	})
	return out
}

func flatten(rows [][]string, float bool) [][]string {
	var vals []string
	for _, r := range rows {
		vals = append(vals, r...)
	}
	sort.SliceStable(vals, func(i, j int) bool { return compareCell(vals[i], vals[j], float) < 0 })
	out := make([][]string, len(vals))
	for i, v := range vals {
		out[i] = []string{v}
	}
	return out
}

// compareCell orders two cells: as numbers when float and both read as numbers
// (NaN last among numbers), numbers before other text, else as strings.
func compareCell(a, b string, float bool) int {
	if float {
		x, errA := strconv.ParseFloat(a, 64)
		y, errB := strconv.ParseFloat(b, 64)
		switch {
		case errA == nil && errB == nil:
			switch {
			case math.IsNaN(x) && math.IsNaN(y):
				return 0
			case math.IsNaN(x):
				return 1
			case math.IsNaN(y):
				return -1
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		case errA == nil:
			return -1
		case errB == nil:
			return 1
		}
	}
	return strings.Compare(a, b)
}

func equalCell(want, got string, float bool) bool {
	if want == got {
		return true
	}
	if !float {
		return false
	}
	a, err1 := strconv.ParseFloat(want, 64)
	b, err2 := strconv.ParseFloat(got, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	return FloatsEqual(a, b)
}

// FloatsEqual compares with FloatTolerance; NaN equals NaN, infinities equal
// themselves, and -0 equals 0.
func FloatsEqual(a, b float64) bool {
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		return math.IsNaN(a) && math.IsNaN(b)
	case a == b:
		return true
	case math.IsInf(a, 0) || math.IsInf(b, 0):
		return false
	}
	return math.Abs(a-b) <= FloatTolerance*math.Max(math.Abs(a), math.Abs(b))
}
