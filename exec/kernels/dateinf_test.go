package kernels

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/loredb/lore/types"
)

// Infinite dates and timestamps keep their meaning through parsing, casts,
// truncation, arithmetic and date parts (all NULL), as in DuckDB.
func TestInfiniteDates(t *testing.T) {
	d := mk(t, types.String, "infinity", "-infinity", "2024-05-17", nil)
	dates, err := Cast(d, types.Date)
	if err != nil {
		t.Fatal(err)
	}
	if got := joined(dates); got != "infinity,-infinity,2024-05-17,NULL" {
		t.Errorf("dates: %s", got)
	}
	ts, err := Cast(dates, types.Timestamp)
	if err != nil {
		t.Fatal(err)
	}
	if got := joined(ts); got != "infinity,-infinity,2024-05-17 00:00:00,NULL" {
		t.Errorf("date to timestamp: %s", got)
	}
	back, err := Cast(ts, types.Date)
	if err != nil || joined(back) != "infinity,-infinity,2024-05-17,NULL" {
		t.Errorf("timestamp to date: %s %v", joined(back), err)
	}
	if got := mustCall(t, "year", dates); got != "NULL,NULL,2024,NULL" {
		t.Errorf("year: %s", got)
	}
	if got := mustCall(t, "date_part", constStr("epoch", 4), ts); got != "NULL,NULL,1715904000,NULL" {
		t.Errorf("date_part(epoch): %s", got)
	}
	if got := mustCall(t, "date_trunc", constStr("year", 4), ts); got != "infinity,-infinity,2024-01-01 00:00:00,NULL" {
		t.Errorf("date_trunc(year): %s", got)
	}
	if got := mustCall(t, "date_trunc", constStr("hour", 4), ts); got != "infinity,-infinity,2024-05-17 00:00:00,NULL" {
		t.Errorf("date_trunc(hour): %s", got)
	}
	if got := mustCall(t, "isinf", dates); got != "true,true,false,NULL" {
		t.Errorf("isinf: %s", got)
	}
	if got := mustCall(t, "isfinite", ts); got != "false,false,true,NULL" {
		t.Errorf("isfinite: %s", got)
	}
	if got := mustCall(t, "+", dates, mk(t, types.Int64, 1, -1, 1, 1)); got != "infinity,-infinity,2024-05-18,NULL" {
		t.Errorf("date + 1: %s", got)
	}
	if got := mustCall(t, "+", ts, ConstArray(types.Value{Type: types.Interval, Iv: mustInterval(t, "1 month")}, 4)); got != "infinity,-infinity,2024-06-17 00:00:00,NULL" {
		t.Errorf("timestamp + interval: %s", got)
	}
	if got := mustCall(t, "date_diff", constStr("day", 4), dates, mk(t, types.Date, "2024-01-01", "2024-01-01", "2024-01-01", "2024-01-01")); got != "NULL,NULL,-137,NULL" {
		t.Errorf("date_diff: %s", got)
	}
	_, _, err = evalCall(t, "-", ts, mk(t, types.Timestamp, "2024-01-01 00:00:00", "2024-01-01 00:00:00", "2024-01-01 00:00:00", nil))
	if err == nil || !strings.Contains(err.Error(), "infinite") {
		t.Errorf("infinite timestamp - timestamp: %v", err)
	}
	// A finite result that would land on an infinity is out of range.
	wantErr(t, "+", "out of range", mk(t, types.Date, "2024-01-01"), mk(t, types.Int64, int64(types.DateInfinity)-19723))
}

func mustInterval(t *testing.T, s string) arrow.MonthDayNanoInterval {
	t.Helper()
	v, ok := parseInterval(s)
	if !ok {
		t.Fatalf("interval %q", s)
	}
	return v
}

// Dates before year 1 read and render with (BC), counted from 1 BC.
func TestBCDates(t *testing.T) {
	d, err := Cast(mk(t, types.String, "0044-03-15 (BC)", "-0044-03-15", "0000-12-31", "0001-01-01"), types.Date)
	if err != nil {
		t.Fatal(err)
	}
	if got := joined(d); got != "0044-03-15 (BC),0045-03-15 (BC),0001-12-31 (BC),0001-01-01" {
		t.Errorf("BC dates: %s", got)
	}
	if got := mustCall(t, "year", d); got != "-43,-44,0,1" {
		t.Errorf("year: %s", got)
	}
	ts, err := Cast(mk(t, types.String, "0044-03-15 (BC) 10:00:00.5"), types.Timestamp)
	if err != nil || joined(ts) != "0044-03-15 (BC) 10:00:00.5" {
		t.Errorf("BC timestamp: %s %v", joined(ts), err)
	}
	if _, err := Cast(mk(t, types.String, "0000-01-01 (BC)"), types.Date); err == nil {
		t.Error("year 0 BC accepted")
	}
}

// date_trunc to a decade, century or millennium truncates the year toward zero,
// as DuckDB does; decade() does too.
func TestTruncLongParts(t *testing.T) {
	d := mk(t, types.Date, "2000-05-05", "2001-05-05", "1999-12-31", "-0044-03-15", "-0101-01-01")
	cases := []struct{ part, want string }{
		{"millennium", "2000-01-01 00:00:00,2000-01-01 00:00:00,1000-01-01 00:00:00,0001-01-01 (BC) 00:00:00,0001-01-01 (BC) 00:00:00"},
		{"century", "2000-01-01 00:00:00,2000-01-01 00:00:00,1900-01-01 00:00:00,0001-01-01 (BC) 00:00:00,0101-01-01 (BC) 00:00:00"},
		{"decade", "2000-01-01 00:00:00,2000-01-01 00:00:00,1990-01-01 00:00:00,0041-01-01 (BC) 00:00:00,0101-01-01 (BC) 00:00:00"},
	}
	for _, c := range cases {
		if got := mustCall(t, "date_trunc", constStr(c.part, 5), d); got != c.want {
			t.Errorf("date_trunc(%s) = %s, want %s", c.part, got, c.want)
		}
	}
	if got := mustCall(t, "decade", d); got != "200,200,199,-4,-10" {
		t.Errorf("decade: %s", got)
	}
}

// Differences and constructions that do not fit are errors, not wrapped values.
func TestDateOverflow(t *testing.T) {
	a := mk(t, types.Timestamp, "0001-01-01 00:00:00")
	b := mk(t, types.Timestamp, "9999-01-01 00:00:00")
	if got := mustCall(t, "date_diff", constStr("microsecond", 1), a, b); got != "315506361600000000" {
		t.Errorf("date_diff(microsecond) over 9998 years: %s", got)
	}
	if got := mustCall(t, "date_diff", constStr("millennium", 1), mk(t, types.Date, "1999-01-01"), mk(t, types.Date, "2000-06-01")); got != "1" {
		t.Errorf("date_diff(millennium): %s", got)
	}
	far := mk(t, types.Timestamp, "290000-01-01 00:00:00")
	near := mk(t, types.Timestamp, "-290000-01-01 00:00:00")
	wantErr(t, "-", "out of range", far, near)
	wantErr(t, "make_date", "out of range", mk(t, types.Int64, 5881580), mk(t, types.Int64, 7), mk(t, types.Int64, 11))
	if got := mustCall(t, "make_date", mk(t, types.Int64, 5881580), mk(t, types.Int64, 7), mk(t, types.Int64, 10)); got != "5881580-07-10" {
		t.Errorf("make_date at the end of DATE: %s", got)
	}
}
