package kernels

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/loredb/lore/types"
)

// constCall resolves name with the values of the arguments that hold one value on
// every row given as constants (as the binder gives a literal's), runs it and
// renders the result.
func constCall(t testing.TB, name string, args ...arrow.Array) string {
	t.Helper()
	out, err := constCallErr(name, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return joined(out)
}

func constCallErr(name string, args ...arrow.Array) (arrow.Array, error) {
	dts := make([]arrow.DataType, len(args))
	consts := make([]*types.Value, len(args))
	n := 0
	for i, a := range args {
		dts[i] = a.DataType()
		n = a.Len()
		if _, isStr := a.(interface{ ValueStr(int) string }); isStr && a.Len() > 0 && constantValue(a) && a.DataType().ID() == arrow.STRING {
			v := types.ValueAt(a, 0)
			consts[i] = &v
		}
	}
	f, err := ResolveConst(name, dts, consts)
	if err != nil {
		return nil, err
	}
	return f.Eval(args, n)
}

func TestStrftimeCodes(t *testing.T) {
	ts := mk(t, types.Timestamp, "2024-03-05 03:04:05.123456", "2021-01-03 23:00:00", nil)
	cases := []struct{ f, want string }{
		{"%a %A %w %u", "Tue Tuesday 2 2,Sun Sunday 0 7,NULL"},
		{"%d %-d %b %h %B %m %-m", "05 5 Mar Mar March 03 3,03 3 Jan Jan January 01 1,NULL"},
		{"%y %-y %Y %G %V %U %W", "24 24 2024 2024 10 09 10,21 21 2021 2020 53 01 00,NULL"},
		{"%H %-H %I %-I %p %M %-M %S %-S", "03 3 03 3 AM 04 4 05 5,23 23 11 11 PM 00 0 00 0,NULL"},
		{"%g|%f|%n", "123|123456|123456000,000|000000|000000000,NULL"},
		{"%j %-j %z[%Z]", "065 65 +00[],003 3 +00[],NULL"},
		{"%c|%x|%X|%T|%%", "2024-03-05 03:04:05|2024-03-05|03:04:05|03:04:05|%,2021-01-03 23:00:00|2021-01-03|23:00:00|23:00:00|%,NULL"},
	}
	for _, c := range cases {
		if got := constCall(t, "strftime", ts, constStr(c.f, 3)); got != c.want {
			t.Errorf("strftime(%q) = %s, want %s", c.f, got, c.want)
		}
	}
	tz := mk(t, types.TimestampTZ, "2021-01-03 23:00:00")
	if got := constCall(t, "strftime", tz, constStr("%Z", 1)); got != "UTC" {
		t.Errorf("strftime(tz, %%Z) = %s", got)
	}
}

// A code outside the set, a lone trailing % and a format that is not a constant are
// errors, never text copied into the result.
func TestStrftimeRejects(t *testing.T) {
	ts := mk(t, types.Timestamp, "2024-03-05 03:04:05")
	for _, f := range []string{"%R", "%Q x", "abc%", "%-a", "%-", "%e"} {
		_, err := constCallErr("strftime", ts, constStr(f, 1))
		if err == nil || !strings.Contains(err.Error(), "strftime") {
			t.Errorf("strftime(%q): %v, want an error", f, err)
		}
	}
	if _, err := Resolve("strftime", []arrow.DataType{types.Timestamp, types.String}); err == nil || !strings.Contains(err.Error(), "constant") {
		t.Errorf("strftime with a column format: %v", err)
	}
}

func TestStrptime(t *testing.T) {
	cases := []struct{ s, f, want string }{
		{"2024-03-05 13:04:05", "%Y-%m-%d %H:%M:%S", "2024-03-05 13:04:05"},
		{"05/03/2024", "%d/%m/%Y", "2024-03-05 00:00:00"},
		{"Tue, 5 March 2024 1:04 PM", "%a, %-d %B %Y %-I:%M %p", "2024-03-05 13:04:00"},
		{"2024-03-05 13:04:05.5", "%Y-%m-%d %H:%M:%S.%f", "2024-03-05 13:04:05.5"},
		{"2024-065", "%Y-%j", "2024-03-05 00:00:00"},
		{"20240305", "%Y%m%d", "2024-03-05 00:00:00"},
		{"69-1-2", "%y-%m-%d", "1969-01-02 00:00:00"},
		{"2024 10 2", "%G %V %u", "2024-03-05 00:00:00"},
		{"2024 9 2", "%Y %U %w", "2024-03-05 00:00:00"},
		{"2024 10 2", "%Y %W %w", "2024-03-05 00:00:00"},
		{"12:30", "%H:%M", "1900-01-01 12:30:00"},
		{"  2024-03-05  ", "%Y-%m-%d", "2024-03-05 00:00:00"},
	}
	for _, c := range cases {
		if got := constCall(t, "strptime", constStr(c.s, 1), constStr(c.f, 1)); got != c.want {
			t.Errorf("strptime(%q, %q) = %s, want %s", c.s, c.f, got, c.want)
		}
	}
	if got := constCall(t, "strptime", constStr("2024-07-01 10:00 America/New_York", 1), constStr("%Y-%m-%d %H:%M %Z", 1)); got != "2024-07-01 14:00:00+00" {
		t.Errorf("strptime with %%Z = %s", got)
	}
	if got := constCall(t, "strptime", constStr("2024-01-01 10:00:00", 1), constStr("%c", 1)); got != "2024-01-01 10:00:00" {
		t.Errorf("strptime with %%c = %s", got)
	}
	if got := constCall(t, "strptime", constStr("2024-03-05 10 +02:30", 1), constStr("%Y-%m-%d %H %z", 1)); got != "2024-03-05 07:30:00+00" {
		t.Errorf("strptime with %%z = %s", got)
	}
	for _, c := range [][2]string{{"nope", "%Y"}, {"2024-02-30", "%Y-%m-%d"}, {"2024-03-05 x", "%Y-%m-%d"}, {"25:00", "%H:%M"}, {"2024-13-01", "%Y-%m-%d"}} {
		if _, err := constCallErr("strptime", constStr(c[0], 1), constStr(c[1], 1)); err == nil {
			t.Errorf("strptime(%q, %q) did not fail", c[0], c[1])
		}
		if got := constCall(t, "try_strptime", constStr(c[0], 1), constStr(c[1], 1)); got != "NULL" {
			t.Errorf("try_strptime(%q, %q) = %s", c[0], c[1], got)
		}
	}
}

// strptime on arbitrary text, and strftime of extreme values, fail cleanly or
// succeed, never panic.
func TestStrtimeArbitraryInput(t *testing.T) {
	formats := []string{"%Y-%m-%d", "%d/%m/%y %I:%M %p", "%G %V %u", "%Y %U %w", "%Y %W %w", "%Y-%j", "%b %-d %Y %H:%M:%S.%f %z", "%A %B %n %g", "x%%y"}
	pieces := []string{"2024", "-", "13", "02", "29", "Feb", "march", "pm", "AM", "+05:30", "-9", "999999999", " ", "%", ".", "366", "53", "0", "x", "Z"}
	state := uint64(1)
	next := func(n int) int {
		state = state*6364136223846793005 + 1442695040888963407
		return int(state>>33) % n
	}
	for _, f := range formats {
		tf, err := compileTimeFormat("strptime", f)
		if err != nil {
			t.Fatalf("%q: %v", f, err)
		}
		for k := 0; k < 2000; k++ {
			var sb strings.Builder
			for j := next(8); j >= 0; j-- {
				sb.WriteString(pieces[next(len(pieces))])
			}
			if us, err := tf.parse(sb.String()); err == nil && types.TimestampInfSign(us) != 0 {
				t.Errorf("strptime(%q, %q) made an infinite timestamp", sb.String(), f)
			}
		}
	}
	tf, _ := compileTimeFormat("strftime", "%a %A %w %u %d %b %B %m %y %Y %G %V %U %W %j %H %I %p %M %S %g %f %n %z %c %x %X")
	for _, days := range []int64{types.DateInfinity - 1, types.DateNegInfinity + 1, 0, -1, -719528} {
		if s := string(tf.appendFormat(nil, days, 86399999999999, false)); s == "" {
			t.Errorf("strftime of day %d is empty", days)
		}
	}
}
