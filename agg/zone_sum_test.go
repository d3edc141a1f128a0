package agg

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// SUM and AVG from recorded zone sums must equal SUM and AVG of a scan of the same
// rows. Each case is a list of zones (values, nil = NULL); the scan side updates one
// accumulator with every zone's rows, the statistics side folds each zone's
// (sum text, rows, nulls) through FromZone, and the sum text is computed here with
// math/big from the values, independently of the accumulators.

type sumZone []any // int64, uint64, float64 or *big.Int (a decimal's scaled integer); nil = NULL

func TestSumFromZoneMatchesScan(t *testing.T) {
	d18 := &arrow.Decimal128Type{Precision: 18, Scale: 2}
	d38 := &arrow.Decimal128Type{Precision: 38, Scale: 10}
	bigDec := func(s string) *big.Int {
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			t.Fatalf("bad test number %q", s)
		}
		return n
	}
	cases := []struct {
		dt    arrow.DataType
		zones []sumZone
	}{
		{arrow.PrimitiveTypes.Int8, []sumZone{{int64(127), int64(-128), nil, int64(5)}, {int64(-1)}, {nil, nil}}},
		{arrow.PrimitiveTypes.Int16, []sumZone{{int64(32767), int64(32767)}, {int64(-32768), nil}}},
		{arrow.PrimitiveTypes.Int32, []sumZone{{int64(math.MaxInt32), int64(math.MaxInt32), int64(7)}, {int64(math.MinInt32)}}},
		// Each zone's sum lies outside BIGINT (2^63 and -2^63-1), the total fits:
		// the 128-bit state must keep every bit of the recorded text.
		{arrow.PrimitiveTypes.Int64, []sumZone{{int64(math.MaxInt64), int64(1)}, {int64(math.MinInt64), int64(-1), nil}, {int64(-3)}}},
		{arrow.PrimitiveTypes.Int64, []sumZone{{int64(-5), int64(12), nil}, {}, {nil}}},
		{arrow.PrimitiveTypes.Uint64, []sumZone{{uint64(1<<63 - 10), uint64(4)}, {uint64(5), nil}}},
		{arrow.PrimitiveTypes.Float64, []sumZone{{0.1, 0.2, nil, -1e-300, 3.5}, {-0.0, 1e300, -1e300}, {math.Pi}}},
		{arrow.PrimitiveTypes.Float64, []sumZone{{math.NaN(), 1.0}, {2.0}}},
		{arrow.PrimitiveTypes.Float64, []sumZone{{math.Inf(-1)}, {-1.5}}},
		{d18, []sumZone{{big.NewInt(-12345), big.NewInt(99_999_999_999_999_999), nil}, {big.NewInt(-99_999_999_999_999_999), big.NewInt(1)}}},
		{d38, []sumZone{
			{bigDec("12345678901234567890123456789012345678"), bigDec("-1")},
			{bigDec("-12345678901234567890123456789012345678"), nil, bigDec("5000000000")},
		}},
	}
	for _, c := range cases {
		for _, fn := range []string{"sum", "avg"} {
			spec := Spec{Name: fn, ArgType: c.dt}
			scan, err := New(spec)
			if err != nil {
				t.Fatal(err)
			}
			fromZones, _ := New(spec)
			for _, zone := range c.zones {
				arr := vector.FromValues(c.dt, zoneValues(c.dt, zone))
				if err := scan.Update(arr, nil, []uint32(nil)); err != nil {
					t.Fatalf("%s: scan: %v", spec, err)
				}
				z := Zone{Rows: int64(len(zone)), Nulls: 0, DistinctExact: -1, Sum: sumText(t, c.dt, zone)}
				for _, v := range zone {
					if v == nil {
						z.Nulls++
					}
				}
				ok, err := fromZones.FromZone(&z, 0)
				if err != nil || !ok {
					t.Fatalf("%s: FromZone(sum %q, rows %d, nulls %d) = %v, %v", spec, z.Sum, z.Rows, z.Nulls, ok, err)
				}
			}
			want, err := scan.Final()
			if err != nil {
				t.Fatalf("%s: scan Final: %v", spec, err)
			}
			got, err := fromZones.Final()
			if err != nil {
				t.Fatalf("%s: zones Final: %v", spec, err)
			}
			if want.Len() != 1 || got.Len() != 1 {
				t.Fatalf("%s: %d and %d groups", spec, want.Len(), got.Len())
			}
			w, g := types.ValueAt(want, 0), types.ValueAt(got, 0)
			same := w.Null == g.Null && w.String() == g.String()
			if types.IsFloat(w.Type) && !w.Null && !g.Null {
				same = math.Float64bits(w.F) == math.Float64bits(g.F) || (w.F != w.F && g.F != g.F)
			}
			if !same {
				t.Errorf("%s over %v: scan gives %s, zones give %s", spec, c.zones, w, g)
			}
		}
	}
}

// zoneValues boxes a zone's values as dt.
func zoneValues(dt arrow.DataType, zone sumZone) []types.Value {
	out := make([]types.Value, len(zone))
	for i, v := range zone {
		switch x := v.(type) {
		case nil:
			out[i] = types.NullOf(dt)
		case int64:
			out[i] = types.Value{Type: dt, I: x}
		case uint64:
			out[i] = types.Value{Type: dt, U: x}
		case float64:
			out[i] = types.Value{Type: dt, F: x}
		case *big.Int:
			out[i] = types.Value{Type: dt, D: decimal128.FromBigInt(x)}
		}
	}
	return out
}

// sumText is the exact sum of a zone's non-null values as text, "" when it has none:
// integers and decimals summed in math/big (decimals formatted at dt's scale), floats
// summed in float64 in row order as a scan does and written with every digit needed.
func sumText(t *testing.T, dt arrow.DataType, zone sumZone) string {
	n := 0
	var f float64
	s := new(big.Int)
	for _, v := range zone {
		switch x := v.(type) {
		case nil:
			continue
		case int64:
			s.Add(s, big.NewInt(x))
		case uint64:
			s.Add(s, new(big.Int).SetUint64(x))
		case float64:
			f += x
		case *big.Int:
			s.Add(s, x)
		}
		n++
	}
	switch {
	case n == 0:
		return ""
	case types.IsFloat(dt):
		text := strconv.FormatFloat(f, 'g', -1, 64)
		if back, err := strconv.ParseFloat(text, 64); err != nil || (math.Float64bits(back) != math.Float64bits(f) && f == f) {
			t.Fatalf("%v does not round-trip through %q", f, text)
		}
		return text
	case types.IsDecimal(dt):
		scale := int(dt.(*arrow.Decimal128Type).Scale)
		digits := new(big.Int).Abs(s).String()
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		text := digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
		if s.Sign() < 0 {
			text = "-" + text
		}
		return text
	}
	return s.String()
}

func TestSumFromZoneRefusesWhatDoesNotSuffice(t *testing.T) {
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, &arrow.Decimal128Type{Precision: 10, Scale: 2}} {
		for _, z := range []Zone{
			{Rows: 3, Nulls: -1, DistinctExact: -1, Sum: "6"},    // null count unknown
			{Rows: 3, Nulls: 1, DistinctExact: -1},               // no sum on record
			{Rows: 3, Nulls: 0, DistinctExact: -1, Sum: "six"},   // malformed
			{Rows: 3, Nulls: 0, DistinctExact: -1, Sum: "1e400"}, // not a decimal
		} {
			a, _ := New(Spec{Name: "sum", ArgType: dt})
			ok, err := a.FromZone(&z, 2)
			if ok || err != nil {
				t.Errorf("sum(%s) FromZone(%+v) = %v, %v; want not ok", types.Name(dt), z, ok, err)
			}
			if out, _ := a.Final(); out.Len() != 0 {
				t.Errorf("sum(%s): a refused zone created %d groups", types.Name(dt), out.Len())
			}
		}
		// A zone of NULLs only needs no sum: the group exists and is NULL.
		a, _ := New(Spec{Name: "avg", ArgType: dt})
		if ok, err := a.FromZone(&Zone{Rows: 4, Nulls: 4, DistinctExact: -1}, 1); !ok || err != nil {
			t.Fatalf("avg(%s) of an all-NULL zone: %v, %v", types.Name(dt), ok, err)
		}
		out, _ := a.Final()
		if out.Len() != 2 || out.IsValid(1) {
			t.Errorf("avg(%s) of an all-NULL zone: %d groups, group 1 valid %v", types.Name(dt), out.Len(), out.IsValid(1))
		}
	}
	// A decimal sum with more fraction digits than the scale would not be exact.
	a, _ := New(Spec{Name: "sum", ArgType: &arrow.Decimal128Type{Precision: 10, Scale: 2}})
	if ok, _ := a.FromZone(&Zone{Rows: 1, Nulls: 0, DistinctExact: -1, Sum: "1.005"}, 0); ok {
		t.Error("a decimal sum finer than the scale was accepted")
	}
	// Decimal sums that overflow 38 digits together fail as a scan's would.
	d := &arrow.Decimal128Type{Precision: 38, Scale: 0}
	a, _ = New(Spec{Name: "sum", ArgType: d})
	huge := strings.Repeat("9", 38)
	var err error
	for i := 0; i < 2 && err == nil; i++ {
		_, err = a.FromZone(&Zone{Rows: 1, Nulls: 0, DistinctExact: -1, Sum: huge}, 0)
	}
	if err == nil {
		_, err = a.Final()
	}
	if errs.CodeOf(err) != errs.Analysis {
		t.Errorf("SUM past DECIMAL(38,0) from zones: %v, want an ANALYSIS_ERROR", err)
	}
}
