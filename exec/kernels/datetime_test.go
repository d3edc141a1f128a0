package kernels

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/loredb/lore/types"
)

func TestCivilCalendar(t *testing.T) {
	// Against the standard library over a wide range, including negative days.
	for d := int64(-800000); d <= 800000; d += 997 {
		tm := time.Unix(d*86400, 0).UTC()
		y, m, day := civilFromDays(d)
		if y != int64(tm.Year()) || m != int64(tm.Month()) || day != int64(tm.Day()) {
			t.Fatalf("civilFromDays(%d) = %d-%d-%d, want %s", d, y, m, day, tm.Format("2006-01-02"))
		}
		if back := daysFromCivil(y, m, day); back != d {
			t.Fatalf("daysFromCivil(%d-%d-%d) = %d, want %d", y, m, day, back, d)
		}
		if wd := isoWeekday(d); wd%7 != int64(tm.Weekday()) {
			t.Fatalf("isoWeekday(%d) = %d, want %d", d, wd, tm.Weekday())
		}
		iy, iw := tm.ISOWeek()
		if gy, gw := isoYearWeek(d); gy != int64(iy) || gw != int64(iw) {
			t.Fatalf("isoYearWeek(%s) = %d-W%d, want %d-W%d", tm.Format("2006-01-02"), gy, gw, iy, iw)
		}
	}
	if got := addMonths(mustDays(t, "2024-01-31"), 1); got != mustDays(t, "2024-02-29") {
		t.Errorf("2024-01-31 + 1 month = %s", types.FormatDate(int32(got)))
	}
	if got := addMonths(mustDays(t, "2024-03-31"), -13); got != mustDays(t, "2023-02-28") {
		t.Errorf("2024-03-31 - 13 months = %s", types.FormatDate(int32(got)))
	}
}

func mustDays(t *testing.T, s string) int64 {
	d, ok := parseDate(s)
	if !ok {
		t.Fatalf("bad date %q", s)
	}
	return d
}

func TestDatePart(t *testing.T) {
	ts := mk(t, types.Timestamp, "2021-08-03 11:59:44.123456", "1969-12-31 23:59:59.5", "2024-02-29 00:00:00", nil)
	n := ts.Len()
	cases := []struct{ part, want string }{
		{"year", "2021,1969,2024,NULL"},
		{"month", "8,12,2,NULL"},
		{"day", "3,31,29,NULL"},
		{"hour", "11,23,0,NULL"},
		{"minute", "59,59,0,NULL"},
		{"second", "44,59,0,NULL"},
		{"millisecond", "44123,59500,0,NULL"},
		{"microsecond", "44123456,59500000,0,NULL"},
		{"quarter", "3,4,1,NULL"},
		{"dow", "2,3,4,NULL"},
		{"isodow", "2,3,4,NULL"},
		{"doy", "215,365,60,NULL"},
		{"week", "31,1,9,NULL"},
		{"isoyear", "2021,1970,2024,NULL"},
		{"decade", "202,196,202,NULL"},
		{"century", "21,20,21,NULL"},
		{"epoch", "1627991984,-1,1709164800,NULL"},
		{"YEARS", "2021,1969,2024,NULL"},
	}
	for _, c := range cases {
		if got := mustCall(t, "date_part", constStr(c.part, n), ts); got != c.want {
			t.Errorf("date_part(%q) = %s, want %s", c.part, got, c.want)
		}
	}
	// Dates and the shorthands.
	d := mk(t, types.Date, "2024-02-29", "1900-01-01", nil)
	if got := mustCall(t, "year", d); got != "2024,1900,NULL" {
		t.Errorf("year(date): %s", got)
	}
	if got := mustCall(t, "dayofweek", d); got != "4,1,NULL" {
		t.Errorf("dayofweek(date): %s", got)
	}
	if got := mustCall(t, "month", ts); got != "8,12,2,NULL" {
		t.Errorf("month(ts): %s", got)
	}
	if got := mustCall(t, "epoch", ts); got != "1627991984.123456,-0.5,1709164800.0,NULL" {
		t.Errorf("epoch(ts): %s", got)
	}
	// A constant 'epoch' gives a DOUBLE, as in DuckDB.
	part := types.StringValue("epoch")
	f, err := ResolveConst("date_part", []arrow.DataType{types.String, types.Timestamp}, []*types.Value{&part, nil})
	if err != nil || !arrow.TypeEqual(f.Result, types.Float64) {
		t.Fatalf("date_part('epoch', ts): %v %v", f, err)
	}
	out, err := f.Eval([]arrow.Array{constStr("epoch", n), ts}, n)
	if err != nil || joined(out) != "1627991984.123456,-0.5,1709164800.0,NULL" {
		t.Errorf("date_part('epoch') DOUBLE: %s %v", joined(out), err)
	}
	// Intervals.
	iv := mk(t, types.Interval, "1 year 2 months 3 days 04:05:06")
	if got := mustCall(t, "date_part", constStr("month", 1), iv); got != "2" {
		t.Errorf("date_part(month, interval): %s", got)
	}
	if got := mustCall(t, "date_part", constStr("hour", 1), iv); got != "4" {
		t.Errorf("date_part(hour, interval): %s", got)
	}
	wantErr(t, "date_part", "unknown date part", constStr("fortnight", n), ts)
}

func TestDateTrunc(t *testing.T) {
	ts := mk(t, types.Timestamp, "2021-08-03 11:59:44.123456", "1969-12-31 23:59:59.5", nil)
	n := ts.Len()
	cases := []struct{ part, want string }{
		{"year", "2021-01-01 00:00:00,1969-01-01 00:00:00,NULL"},
		{"quarter", "2021-07-01 00:00:00,1969-10-01 00:00:00,NULL"},
		{"month", "2021-08-01 00:00:00,1969-12-01 00:00:00,NULL"},
		{"week", "2021-08-02 00:00:00,1969-12-29 00:00:00,NULL"},
		{"day", "2021-08-03 00:00:00,1969-12-31 00:00:00,NULL"},
		{"hour", "2021-08-03 11:00:00,1969-12-31 23:00:00,NULL"},
		{"minute", "2021-08-03 11:59:00,1969-12-31 23:59:00,NULL"},
		{"second", "2021-08-03 11:59:44,1969-12-31 23:59:59,NULL"},
		{"millisecond", "2021-08-03 11:59:44.123,1969-12-31 23:59:59.5,NULL"},
		{"microsecond", "2021-08-03 11:59:44.123456,1969-12-31 23:59:59.5,NULL"},
		{"decade", "2020-01-01 00:00:00,1960-01-01 00:00:00,NULL"},
		{"century", "2000-01-01 00:00:00,1900-01-01 00:00:00,NULL"},
		{"millennium", "2000-01-01 00:00:00,1000-01-01 00:00:00,NULL"},
	}
	for _, c := range cases {
		if got := mustCall(t, "date_trunc", constStr(c.part, n), ts); got != c.want {
			t.Errorf("date_trunc(%q) = %s, want %s", c.part, got, c.want)
		}
	}
	// DATE input: a TIMESTAMP, whether or not the part is known (as DuckDB 1.5 types it).
	d := mk(t, types.Date, "2024-02-29", "1969-12-31")
	out, f, err := evalCall(t, "date_trunc", constStr("month", 2), d)
	if err != nil || joined(out) != "2024-02-01 00:00:00,1969-12-01 00:00:00" || !arrow.TypeEqual(f.Result, types.Timestamp) {
		t.Errorf("date_trunc(month, date): %s %v", joined(out), err)
	}
	part := types.StringValue("month")
	fc, err := ResolveConst("date_trunc", []arrow.DataType{types.String, types.Date}, []*types.Value{&part, nil})
	if err != nil || !arrow.TypeEqual(fc.Result, types.Timestamp) {
		t.Fatalf("ResolveConst date_trunc(month, DATE): %v %v", fc, err)
	}
	hour := types.StringValue("hour")
	fh, _ := ResolveConst("date_trunc", []arrow.DataType{types.String, types.Date}, []*types.Value{&hour, nil})
	if !arrow.TypeEqual(fh.Result, types.Timestamp) {
		t.Errorf("date_trunc(hour, DATE) is %s", types.Name(fh.Result))
	}
	// Millisecond timestamps keep their unit.
	ms := mk(t, &arrow.TimestampType{Unit: arrow.Millisecond}, "2024-05-05 05:05:05.555")
	out, f, _ = evalCall(t, "date_trunc", constStr("second", 1), ms)
	if joined(out) != "2024-05-05 05:05:05" || f.Result.(*arrow.TimestampType).Unit != arrow.Millisecond {
		t.Errorf("date_trunc on TIMESTAMP_MS: %s %s", joined(out), f.Result)
	}
}

func TestDateDiffMakeDateStrftime(t *testing.T) {
	a := mk(t, types.Date, "2024-01-31", "2023-12-31", "2024-02-29")
	b := mk(t, types.Date, "2024-02-01", "2025-01-01", "2024-02-28")
	cases := []struct{ part, want string }{
		{"month", "1,13,0"},
		{"year", "0,2,0"},
		{"day", "1,367,-1"},
		{"quarter", "0,5,0"},
		{"week", "0,52,0"},
	}
	for _, c := range cases {
		if got := mustCall(t, "date_diff", constStr(c.part, 3), a, b); got != c.want {
			t.Errorf("date_diff(%q) = %s, want %s", c.part, got, c.want)
		}
	}
	ta := mk(t, types.Timestamp, "2024-01-01 10:59:59", "2024-01-01 00:00:00")
	tb := mk(t, types.Timestamp, "2024-01-01 11:00:00", "2023-12-31 23:59:59.999999")
	if got := mustCall(t, "date_diff", constStr("hour", 2), ta, tb); got != "1,-1" {
		t.Errorf("date_diff(hour): %s", got)
	}
	if got := mustCall(t, "datediff", constStr("second", 2), ta, tb); got != "1,-1" {
		t.Errorf("datediff(second): %s", got)
	}
	if got := mustCall(t, "make_date", mk(t, types.Int64, 2024, 1969, nil), mk(t, types.Int32, 2, 12, 1), mk(t, types.Int64, 29, 31, 1)); got != "2024-02-29,1969-12-31,NULL" {
		t.Errorf("make_date: %s", got)
	}
	wantErr(t, "make_date", "out of range", mk(t, types.Int64, 2023), mk(t, types.Int64, 2), mk(t, types.Int64, 29))
	if got := constCall(t, "strftime", mk(t, types.Timestamp, "2024-03-05 14:07:09.012345"), constStr("%Y/%m/%d %H:%M:%S.%f %j %a %b %I%p %%", 1)); got != "2024/03/05 14:07:09.012345 065 Tue Mar 02PM %" {
		t.Errorf("strftime: %s", got)
	}
}

func TestNow(t *testing.T) {
	f, err := Resolve("now", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.Eval(nil, 3)
	time.Sleep(2 * time.Millisecond)
	b, _ := f.Eval(nil, 1)
	if types.ValueAt(a, 0).I != types.ValueAt(b, 0).I || types.ValueAt(a, 2).I != types.ValueAt(a, 0).I {
		t.Error("now() changed between evaluations of one resolved call")
	}
	if !arrow.TypeEqual(f.Result, types.TimestampTZ) {
		t.Errorf("now() is %s", types.Name(f.Result))
	}
	cd, _ := Resolve("current_date", nil)
	v, _ := cd.Eval(nil, 1)
	if got, want := types.ValueAt(v, 0).String(), time.Now().UTC().Format("2006-01-02"); got != want {
		t.Errorf("current_date = %s, want %s", got, want)
	}
}
