package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// relTol is the relative tolerance for floats and decimals. Values below 1 in
// magnitude are compared with the same bound as an absolute one, so that a sum that
// cancels to 1e-13 in one engine and to 0 in the other still agrees.
const relTol = 1e-9

// cell is one rendered value with its number, when it reads as a fractional one.
type cell struct {
	s    string
	f    float64
	frac bool    // rendered as a float or decimal: compared within relTol
	num  bool    // reads as a number: ordered numerically
	tol  float64 // an estimate's relative tolerance (integers too); 0 for none
}

type row []cell

func toRows(rs [][]string, tol float64) []row {
	out := make([]row, len(rs))
	for i, r := range rs {
		out[i] = make(row, len(r))
		for j, s := range r {
			c := cell{s: s, tol: tol}
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				c.f, c.num = f, true
				c.frac = strings.ContainsAny(s, ".eEni")
			}
			out[i][j] = c
		}
	}
	return out
}

func cellEqual(a, b cell) bool {
	if a.s == b.s {
		return true
	}
	// Integers are exact unless estimated; a float against a decimal or another
	// float is close.
	tol := max(relTol, a.tol, b.tol)
	if !a.num || !b.num || !(a.frac || b.frac || tol > relTol) {
		return false
	}
	if math.IsNaN(a.f) || math.IsNaN(b.f) {
		return math.IsNaN(a.f) && math.IsNaN(b.f)
	}
	if math.IsInf(a.f, 0) || math.IsInf(b.f, 0) {
		return a.f == b.f
	}
	scale := max(math.Abs(a.f), math.Abs(b.f), 1)
	return math.Abs(a.f-b.f) <= tol*scale
}

func cellCompare(a, b cell) int {
	if a.num && b.num {
		return cmp.Compare(a.f, b.f)
	}
	return strings.Compare(a.s, b.s)
}

func rowEqual(a, b row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !cellEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func rowCompare(a, b row) int {
	for i := range min(len(a), len(b)) {
		if c := cellCompare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func keysEqual(a, b row, keys []int) bool {
	for _, k := range keys {
		if k >= len(a) || k >= len(b) || !cellEqual(a[k], b[k]) {
			return false
		}
	}
	return true
}

func (r row) String() string {
	parts := make([]string, len(r))
	for i, c := range r {
		parts[i] = c.s
	}
	s := strings.Join(parts, " | ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// compareResults reports whether Lore's rows equal DuckDB's under the query's
// order, numbers within the relative tolerance tol when it is above relTol (for
// estimates), and when they do not, what differs first.
func compareResults(loreRows, duckRows [][]string, o Order, tol float64) (bool, string) {
	a, b := toRows(loreRows, tol), toRows(duckRows, tol)
	if len(a) != len(b) {
		return false, fmt.Sprintf("row counts differ: lore %d, duckdb %d", len(a), len(b))
	}
	if len(a) > 0 && len(a[0]) != len(b[0]) {
		return false, fmt.Sprintf("column counts differ: lore %d, duckdb %d", len(a[0]), len(b[0]))
	}
	if len(o.Keys) == 0 {
		return multisetEqual(a, b)
	}
	for i := range a {
		if !keysEqual(a[i], b[i], o.Keys) {
			return false, fmt.Sprintf("row %d: sort keys differ: lore [%s], duckdb [%s]", i+1, a[i], b[i])
		}
	}
	// Rows whose sort keys tie may come in any order.
	for start := 0; start < len(a); {
		end := start + 1
		for end < len(a) && keysEqual(a[end], a[start], o.Keys) {
			end++
		}
		// Under LIMIT the last tie group may have been cut differently.
		if !(o.Limited && end == len(a)) {
			if ok, diff := multisetEqual(a[start:end], b[start:end]); !ok {
				return false, fmt.Sprintf("rows %d-%d: %s", start+1, end, diff)
			}
		}
		start = end
	}
	return true, ""
}

// greedyLimit bounds the quadratic fallback of multisetEqual.
const greedyLimit = 5000

// multisetEqual compares two row sets regardless of order: sorted pairwise first,
// then, when floats that differ within the tolerance sorted the rows apart, by
// matching each row to any equal one.
func multisetEqual(a, b []row) (bool, string) {
	sa, sb := slices.Clone(a), slices.Clone(b)
	slices.SortFunc(sa, rowCompare)
	slices.SortFunc(sb, rowCompare)
	first := -1
	for i := range sa {
		if !rowEqual(sa[i], sb[i]) {
			first = i
			break
		}
	}
	if first < 0 {
		return true, ""
	}
	if len(sa) > greedyLimit {
		return false, fmt.Sprintf("lore has [%s] where duckdb has [%s]", sa[first], sb[first])
	}
	used := make([]bool, len(sb))
next:
	for _, ra := range sa {
		for j, rb := range sb {
			if !used[j] && rowEqual(ra, rb) {
				used[j] = true
				continue next
			}
		}
		for j, rb := range sb {
			if !used[j] {
				return false, fmt.Sprintf("lore has [%s], unmatched in duckdb (which has e.g. [%s])", ra, rb)
			}
		}
	}
	return true, ""
}

// withinIntervals checks a one-row estimate against one row of [low, high] pairs,
// one pair per estimated column.
func withinIntervals(loreRows, truth [][]string) (bool, string) {
	if len(loreRows) != 1 || len(truth) != 1 || 2*len(loreRows[0]) != len(truth[0]) {
		return false, fmt.Sprintf("want one row of %d values and one of bounds, got %d and %d rows", len(truth), len(loreRows), len(truth))
	}
	for j, s := range loreRows[0] {
		v, err1 := strconv.ParseFloat(s, 64)
		lo, err2 := strconv.ParseFloat(truth[0][2*j], 64)
		hi, err3 := strconv.ParseFloat(truth[0][2*j+1], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return false, fmt.Sprintf("column %d: not numbers: %q in [%q, %q]", j+1, s, truth[0][2*j], truth[0][2*j+1])
		}
		if v < lo || v > hi {
			return false, fmt.Sprintf("column %d: %s is outside [%s, %s]", j+1, s, truth[0][2*j], truth[0][2*j+1])
		}
	}
	return true, ""
}
