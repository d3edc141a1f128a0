package kernels

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/loredb/lore/types"
)

// Integer arguments at the ends of BIGINT are counts past any string or any
// number of digits: none of them may overflow into a small count, a wrong answer
// or a panic.
func TestIntegerArgumentsAtTheExtremes(t *testing.T) {
	const lo, hi = math.MinInt64, math.MaxInt64
	s := mk(t, types.String, "a,b", "hello", "")
	n := s.Len()
	cases := []struct {
		name string
		args []arrow.Array
		want string
	}{
		// split_part: out of range is '', as in DuckDB.
		{"split_part", []arrow.Array{s, constStr(",", n), constInt(lo, n)}, ",,"},
		{"split_part", []arrow.Array{s, constStr(",", n), constInt(hi, n)}, ",,"},
		{"split_part", []arrow.Array{s, constStr(",", n), constInt(-2, n)}, "a,,"},
		// right with a negative count drops that many characters from the front.
		{"right", []arrow.Array{s, constInt(lo, n)}, ",,"},
		{"right", []arrow.Array{s, constInt(hi, n)}, "a,b,hello,"},
		{"left", []arrow.Array{s, constInt(lo, n)}, ",,"},
		{"left", []arrow.Array{s, constInt(hi, n)}, "a,b,hello,"},
		{"lpad", []arrow.Array{s, constInt(lo, n), constStr("x", n)}, ",,"},
		// substring: start 0 is before the first character, so a negative length
		// from there takes nothing.
		{"substr", []arrow.Array{s, constInt(0, n), constInt(lo, n)}, ",,"},
		{"substr", []arrow.Array{s, constInt(hi, n), constInt(hi, n)}, ",,"},
		{"substr", []arrow.Array{s, constInt(lo, n), constInt(hi, n)}, "a,b,hello,"},
		{"substr", []arrow.Array{s, constInt(2, n), constInt(lo, n)}, "a,h,"},
		{"substr", []arrow.Array{s, constInt(lo, n)}, "a,b,hello,"},
	}
	for _, c := range cases {
		if got := mustCall(t, c.name, c.args...); got != c.want {
			t.Errorf("%s(…, %s): %q, want %q", c.name, joined(c.args[len(c.args)-1]), got, c.want)
		}
	}
	// round at -9223372036854775808 digits rounds everything to 0; at the largest
	// count of digits it changes nothing.
	d := mk(t, dec(2, 1), "1.5", "-9.9", nil)
	for _, c := range []struct {
		digits int64
		want   string
	}{{lo, "0.0,0.0,NULL"}, {-2, "0.0,0.0,NULL"}, {hi, "1.5,-9.9,NULL"}} {
		if got := mustCall(t, "round", d, constInt(c.digits, d.Len())); got != c.want {
			t.Errorf("round(DECIMAL(2,1), %d) = %s, want %s", c.digits, got, c.want)
		}
	}
	f := mk(t, types.Float64, 1.5, -9.9)
	i := mk(t, types.Int64, int64(155), int64(-155))
	for _, c := range []struct {
		x      arrow.Array
		digits int64
		want   string
	}{{f, lo, "0.0,0.0"}, {f, hi, "1.5,-9.9"}, {i, lo, "0,0"}, {i, hi, "155,-155"}} {
		if got := mustCall(t, "round", c.x, constInt(c.digits, c.x.Len())); got != c.want {
			t.Errorf("round(%s, %d) = %s, want %s", types.Name(c.x.DataType()), c.digits, got, c.want)
		}
	}
	// A date minus the smallest BIGINT is out of range, and says so with the
	// operands as written.
	day := mk(t, types.Date, "2024-01-01")
	_, _, err := evalCall(t, "-", day, constInt(lo, 1))
	if err == nil || !strings.Contains(err.Error(), "2024-01-01 - -9223372036854775808 days") {
		t.Errorf("date - %d: %v", int64(lo), err)
	}
}
