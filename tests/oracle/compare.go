package oracle

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	lore "github.com/loredb/lore"
	"github.com/loredb/lore/types"
)

// An Outcome is how one statement of the corpus fared.
type Outcome int

const (
	Equal     Outcome = iota // both engines answer, with the same rows
	Wrong                    // both answer, with different rows
	Refused                  // DuckDB answers, Lore refuses
	Lenient                  // Lore answers, DuckDB refuses
	BothError                // both refuse
)

// Names are the outcomes' names, for reports.
var Names = [...]string{"equal", "WRONG", "refused", "lenient", "both-error"}

// Compare runs one query in both engines, each under the time limit, and classifies
// the result; the detail says what differed or failed. Rows compare as bags, numbers
// within a relative 1e-9.
func Compare(ctx context.Context, eng *lore.Engine, duck *DB, text string, limit time.Duration) (Outcome, string) {
	dctx, cancel := context.WithTimeout(ctx, limit)
	_, want, derr := duck.Query(dctx, text)
	cancel()
	lctx, cancel := context.WithTimeout(ctx, limit)
	res, lerr := eng.Query(lctx, text, nil)
	cancel()
	switch {
	case derr != nil && lerr != nil:
		return BothError, fmt.Sprintf("lore: %v\nduckdb: %v", lerr, derr)
	case derr != nil:
		return Lenient, fmt.Sprintf("duckdb: %v", derr)
	case lerr != nil:
		return Refused, fmt.Sprintf("lore: %v", lerr)
	}
	got := renderResult(res)
	if len(got) != len(want) {
		return Wrong, fmt.Sprintf("lore returns %d rows, duckdb %d; first rows:\nlore:   %v\nduckdb: %v",
			len(got), len(want), head(got), head(want))
	}
	if len(got) > 0 && len(got[0]) != len(want[0]) {
		return Wrong, fmt.Sprintf("lore returns %d columns, duckdb %d", len(got[0]), len(want[0]))
	}
	if msg := compareBags(got, want); msg != "" {
		return Wrong, msg
	}
	return Equal, ""
}

// tolerance is the relative difference allowed between two numbers.
const tolerance = 1e-9

// renderResult renders Lore's rows as the oracle renders DuckDB's.
func renderResult(res *lore.Result) [][]string {
	var out [][]string
	for _, rec := range res.Batches {
		for i := range int(rec.NumRows()) {
			row := make([]string, rec.NumCols())
			for c := range row {
				s := types.ValueAt(rec.Column(c), i).String()
				if s == "" {
					s = "(empty)"
				}
				row[c] = s
			}
			out = append(out, row)
		}
	}
	return out
}

func head(rows [][]string) [][]string { return rows[:min(3, len(rows))] }

// compareBags compares two row sets regardless of order.
func compareBags(got, want [][]string) string {
	sortRows := func(rows [][]string) [][]string {
		rows = slices.Clone(rows)
		slices.SortFunc(rows, func(a, b []string) int {
			for i := range a {
				if c := compareCells(a[i], b[i]); c != 0 {
					return c
				}
			}
			return 0
		})
		return rows
	}
	g, w := sortRows(got), sortRows(want)
	for i := range g {
		for c := range g[i] {
			if !cellsEqual(g[i][c], w[i][c]) {
				return fmt.Sprintf("row %d (in sorted order), column %d: lore %q, duckdb %q\nlore:   %v\nduckdb: %v",
					i+1, c+1, g[i][c], w[i][c], g[i], w[i])
			}
		}
	}
	return ""
}

// cellsEqual compares two rendered values; numbers within the relative tolerance.
// Lore may type a computed column differently (DOUBLE for DECIMAL), so any two
// values that read as numbers compare as numbers.
func cellsEqual(a, b string) bool {
	if a == b {
		return true
	}
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA != nil || errB != nil {
		return false
	}
	return math.Abs(x-y) <= tolerance*max(math.Abs(x), math.Abs(y))
}

// compareCells orders rendered values: numerically when both are numbers (within
// the tolerance they are equal), else as strings (dates sort as their text).
func compareCells(a, b string) int {
	if a == b {
		return 0
	}
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA == nil && errB == nil {
		if math.Abs(x-y) <= tolerance*max(math.Abs(x), math.Abs(y)) {
			return 0
		}
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}
