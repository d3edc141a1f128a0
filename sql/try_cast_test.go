package sql

import (
	"errors"
	"strings"
	"testing"

	"github.com/loredb/lore/errs"
)

// TRY_CAST parses as a cast whose location is recorded, a column named try_cast is
// left alone, and error positions after a TRY_CAST stay where they were written.
func TestTryCast(t *testing.T) {
	const text = "SELECT 1; SELECT TRY_CAST(a AS INT), try_cast (b AS INT), CAST(c AS INT), try_cast FROM t"
	sts, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	q := sts[1].(*Query)
	want := map[int]bool{strings.Index(text, "TRY_CAST") + 4: true, strings.Index(text, "try_cast (") + 4: true}
	if len(q.TryCasts) != len(want) {
		t.Fatalf("TryCasts %v, want %v", q.TryCasts, want)
	}
	for _, rt := range q.Select.TargetList[:3] {
		tc := rt.GetResTarget().Val.GetTypeCast()
		if tc == nil {
			t.Fatalf("%v is not a cast", rt)
		}
		if q.TryCasts[int(tc.Location)] != want[int(tc.Location)] {
			t.Errorf("cast at %d: TRY %v, want %v", tc.Location, q.TryCasts[int(tc.Location)], want[int(tc.Location)])
		}
	}
	if cr := q.Select.TargetList[3].GetResTarget().Val.GetColumnRef(); cr == nil {
		t.Errorf("try_cast without a parenthesis is not a column: %v", q.Select.TargetList[3])
	}

	const bad = "SELECT TRY_CAST(a AS INT) FROM t WHERE )"
	_, err = Parse(bad)
	var e *errs.Error
	if !errors.As(err, &e) || e.Code != errs.Syntax || e.Pos != strings.LastIndex(bad, ")") {
		t.Errorf("error %v, want SYNTAX_ERROR at %d", err, strings.LastIndex(bad, ")"))
	}
}
