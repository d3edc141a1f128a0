package sql

import (
	"strings"
	"testing"

	"github.com/loredb/lore/errs"
)

// TestIgnoreNullsRewrite: IGNORE NULLS last in a call's arguments is recorded at the
// call's name and blanked; RESPECT NULLS is blanked; the words elsewhere are left
// to the grammar, and positions after them stay right.
func TestIgnoreNullsRewrite(t *testing.T) {
	const text = "SELECT lag(x, 1 IGNORE NULLS) OVER (ORDER BY y), first_value(coalesce(x, 0) ignore nulls) OVER w, " +
		"last_value(x RESPECT NULLS) OVER w, nth_value(x, 2) OVER w, ignore FROM t WINDOW w AS (ORDER BY y)"
	q := parseOne(t, text).(*Query)
	want := map[int]bool{strings.Index(text, "lag("): true, strings.Index(text, "first_value("): true}
	if len(q.IgnoreNulls) != len(want) {
		t.Fatalf("IgnoreNulls = %v, want %v", q.IgnoreNulls, want)
	}
	for pos := range want {
		if !q.IgnoreNulls[pos] {
			t.Errorf("IgnoreNulls = %v, want %v", q.IgnoreNulls, want)
		}
	}
	fc := q.Select.TargetList[2].GetResTarget().Val.GetFuncCall()
	if fc == nil || len(fc.Args) != 1 || int(fc.Location) != strings.Index(text, "last_value(") {
		t.Errorf("last_value(x RESPECT NULLS) parsed as %v", q.Select.TargetList[2])
	}
	if c := q.Select.TargetList[4].GetResTarget().Val.GetColumnRef(); c == nil {
		t.Errorf("the column named ignore parsed as %v", q.Select.TargetList[4])
	}
	if q.Text != text {
		t.Errorf("Text %q was rewritten", q.Text)
	}
	for _, bad := range []string{
		"SELECT lag(x) IGNORE NULLS OVER () FROM t",
		"SELECT lag(IGNORE NULLS) OVER () FROM t",
		"SELECT lag(x IGNORE NULLS) OVER () FROM t WHERE )",
	} {
		_, err := Parse(bad)
		at := strings.Index(bad, "NULLS")
		if strings.HasSuffix(bad, ")") && strings.Contains(bad, "WHERE") {
			at = strings.LastIndex(bad, ")")
		}
		if errs.CodeOf(err) != errs.Syntax || errs.PositionOf(err) != at {
			t.Errorf("Parse(%q): %v at %d, want SYNTAX_ERROR at %d", bad, err, errs.PositionOf(err), at)
		}
	}
}
