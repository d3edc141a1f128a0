package kernels

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/loredb/lore/types"
)

func TestDateSubAndAge(t *testing.T) {
	a := mk(t, types.Timestamp, "2024-01-31 00:00:00", "2020-03-01 00:00:00", "2024-03-15 00:00:00", "2024-01-31 12:00:00")
	b := mk(t, types.Timestamp, "2024-02-29 00:00:00", "2021-02-28 00:00:00", "2024-01-15 00:00:00", "2024-02-29 11:00:00")
	if got := mustCall(t, "date_sub", constStr("month", 4), a, b); got != "1,11,-2,0" {
		t.Errorf("date_sub(month): %s", got)
	}
	if got := mustCall(t, "date_sub", constStr("year", 4), a, b); got != "0,0,0,0" {
		t.Errorf("date_sub(year): %s", got)
	}
	if got := mustCall(t, "age", mk(t, types.Timestamp, "2024-03-01 00:00:00"), mk(t, types.Timestamp, "2023-01-15 10:00:00")); got != "1 year 1 month 16 days 14:00:00" {
		t.Errorf("age: %s", got)
	}
	if got := mustCall(t, "age", mk(t, types.Date, "2020-01-31"), mk(t, types.Date, "2024-03-01")); got != "-4 years -1 month -1 day" {
		t.Errorf("age backwards: %s", got)
	}
}

func TestTimeBucket(t *testing.T) {
	ts := mk(t, types.Timestamp, "2024-03-05 13:04:05", "1999-12-25 00:00:00", nil)
	if got := mustCall(t, "time_bucket", mk(t, types.Interval, "15 minutes", "10 days", "1 day"), ts); got != "2024-03-05 13:00:00,1999-12-24 00:00:00,NULL" {
		t.Errorf("time_bucket: %s", got)
	}
	d := mk(t, types.Date, "2024-03-05", "1990-07-04")
	if got := mustCall(t, "time_bucket", mk(t, types.Interval, "3 months", "5 months"), d); got != "2024-01-01,1990-06-01" {
		t.Errorf("time_bucket of months: %s", got)
	}
	wantErr(t, "time_bucket", "mix", mk(t, types.Interval, "1 month 1 day"), mk(t, types.Date, "2024-03-05"))
	wantErr(t, "time_bucket", "greater than 0", mk(t, types.Interval, "0 days"), mk(t, types.Date, "2024-03-05"))
}

func TestIntervalScale(t *testing.T) {
	iv := mk(t, types.Interval, "1 month 1 day 1 hour", "1 month", "1 day")
	if got := mustCall(t, "*", iv, mk(t, types.Int64, 3, 2, -1)); got != "3 months 3 days 03:00:00,2 months,-1 day" {
		t.Errorf("interval * integer: %s", got)
	}
	if got := mustCall(t, "/", iv, mk(t, types.Int64, 1, 2, 0)); got != "1 month 1 day 01:00:00,15 days,NULL" {
		t.Errorf("interval / integer: %s", got)
	}
	if got := mustCall(t, "*", mk(t, types.Float64, 1.5, 0.5, 1.1), iv); got != "1 month 16 days 13:30:00,15 days,1 day 02:24:00" {
		t.Errorf("double * interval: %s", got)
	}
	wantErr(t, "*", "out of range", mk(t, types.Interval, "1000000000 months"), mk(t, types.Int64, 3))
	wantErr(t, "+", "out of range", mk(t, types.Interval, "2000000000 months"), mk(t, types.Interval, "2000000000 months"))
}

// Every date function runs on empty and all-NULL input, with typed and untyped NULL
// arguments, without failing, and returns its declared type.
func TestDateFunctionsOnNulls(t *testing.T) {
	S, I, F, D, TS, IV, N := types.String, types.Int64, types.Float64, types.Date, types.Timestamp, types.Interval, types.Null
	sigs := []struct {
		name string
		args []arrow.DataType
	}{
		{"date_add", []arrow.DataType{D, IV}}, {"date_add", []arrow.DataType{N, N}},
		{"date_sub", []arrow.DataType{S, D, TS}}, {"datesub", []arrow.DataType{S, N, N}},
		{"age", []arrow.DataType{TS, TS}}, {"age", []arrow.DataType{D}}, {"age", []arrow.DataType{N, N}},
		{"make_timestamp", []arrow.DataType{I, I, I, I, I, F}}, {"make_timestamp", []arrow.DataType{I}},
		{"epoch_ms", []arrow.DataType{TS}}, {"epoch_ms", []arrow.DataType{I}}, {"epoch_us", []arrow.DataType{D}},
		{"epoch_ns", []arrow.DataType{IV}}, {"epoch_ns", []arrow.DataType{N}},
		{"to_timestamp", []arrow.DataType{F}}, {"last_day", []arrow.DataType{TS}}, {"last_day", []arrow.DataType{N}},
		{"dayname", []arrow.DataType{D}}, {"monthname", []arrow.DataType{N}},
		{"time_bucket", []arrow.DataType{IV, TS}}, {"time_bucket", []arrow.DataType{IV, D, TS}}, {"time_bucket", []arrow.DataType{IV, TS, IV}},
		{"time_bucket", []arrow.DataType{N, N}},
		{"to_days", []arrow.DataType{I}}, {"to_seconds", []arrow.DataType{F}}, {"to_years", []arrow.DataType{N}},
		{"isinf", []arrow.DataType{D}}, {"isfinite", []arrow.DataType{TS}},
		{"*", []arrow.DataType{IV, I}}, {"*", []arrow.DataType{F, IV}}, {"/", []arrow.DataType{IV, N}},
		{"strptime", []arrow.DataType{S, S}}, {"strftime", []arrow.DataType{N, S}},
	}
	for _, s := range sigs {
		consts := make([]*types.Value, len(s.args))
		if s.name == "strptime" || s.name == "strftime" {
			f := types.StringValue("%Y-%m-%d")
			consts[1] = &f
		}
		f, err := ResolveConst(s.name, s.args, consts)
		if err != nil {
			t.Errorf("Resolve(%s, %v): %v", s.name, s.args, err)
			continue
		}
		for _, n := range []int{0, 3} {
			in := make([]arrow.Array, len(s.args))
			for i, dt := range s.args {
				in[i] = ConstArray(types.NullOf(dt), n)
			}
			out, err := f.Eval(in, n)
			if err != nil {
				t.Errorf("%s%v on %d NULL rows: %v", s.name, s.args, n, err)
				continue
			}
			if out.Len() != n || !arrow.TypeEqual(types.Unwrap(out.DataType()), f.Result) || out.NullN() != n {
				t.Errorf("%s%v on %d NULL rows: %d rows (%d NULL) of %s, want %s", s.name, s.args, n, out.Len(), out.NullN(), out.DataType(), types.Name(f.Result))
			}
		}
	}
}
