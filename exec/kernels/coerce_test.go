package kernels

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/loredb/lore/types"
)

func dec(p, s int32) arrow.DataType { return types.Decimal(p, s) }

func TestCommonType(t *testing.T) {
	tsMS := &arrow.TimestampType{Unit: arrow.Millisecond}
	tsNS := &arrow.TimestampType{Unit: arrow.Nanosecond}
	dictStr := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: types.String}
	cases := []struct {
		a, b arrow.DataType
		want arrow.DataType // nil: no common type
	}{
		{types.Int32, types.Int32, types.Int32},
		{types.Int32, types.Int64, types.Int64},
		{types.Int8, types.Int16, types.Int16},
		{types.Uint8, types.Uint32, types.Uint32},
		{types.Uint8, types.Int8, types.Int16},
		{types.Uint16, types.Int64, types.Int64},
		{types.Uint32, types.Int32, types.Int64},
		{types.Uint64, types.Int8, dec(20, 0)},
		{types.Int32, types.Float64, types.Float64},
		{types.Int64, types.Float32, types.Float32},
		{dec(10, 2), types.Float32, types.Float32},
		{types.Float32, types.Float32, types.Float32},
		{types.Float32, types.Float64, types.Float64},
		{types.Int32, dec(15, 2), dec(15, 2)},
		{types.Int32, dec(5, 2), dec(12, 2)},
		{types.Int64, dec(15, 2), dec(21, 2)},
		{dec(15, 2), dec(10, 4), dec(17, 4)},
		{dec(38, 10), dec(38, 20), dec(38, 20)},
		{dec(15, 2), types.Float64, types.Float64},
		{types.Date, types.Timestamp, types.Timestamp},
		{types.Timestamp, types.Date, types.Timestamp},
		{tsMS, types.Timestamp, types.Timestamp},
		{tsNS, tsMS, tsNS},
		{types.Timestamp, types.TimestampTZ, types.TimestampTZ},
		{types.String, arrow.BinaryTypes.LargeString, types.String},
		{dictStr, types.String, types.String},
		{types.Null, types.Date, types.Date},
		{types.Int64, types.Null, types.Int64},
		{types.Null, types.Null, types.Null},
		{types.Boolean, types.Boolean, types.Boolean},
		{types.Interval, types.Interval, types.Interval},
		{types.String, types.Int64, nil},
		{types.Boolean, types.Int32, nil},
		{types.Date, types.Int32, nil},
		{types.Binary, types.String, nil},
	}
	for _, c := range cases {
		got, ok := CommonType(c.a, c.b)
		if c.want == nil {
			if ok {
				t.Errorf("CommonType(%s, %s) = %s, want none", types.Name(c.a), types.Name(c.b), types.Name(got))
			}
			continue
		}
		if !ok || !arrow.TypeEqual(got, c.want) {
			t.Errorf("CommonType(%s, %s) = %v (%v), want %s", types.Name(c.a), types.Name(c.b), got, ok, types.Name(c.want))
		}
		// Symmetric.
		back, ok := CommonType(c.b, c.a)
		if !ok || !arrow.TypeEqual(back, got) {
			t.Errorf("CommonType(%s, %s) = %v, not symmetric with %v", types.Name(c.b), types.Name(c.a), back, got)
		}
	}
}

// Every value of both sides must survive a cast to the common type.
func TestCommonTypeHoldsBothSides(t *testing.T) {
	ints := []arrow.DataType{types.Int8, types.Int16, types.Int32, types.Int64, types.Uint8, types.Uint16, types.Uint32, types.Uint64}
	for _, a := range ints {
		for _, b := range ints {
			ct, ok := CommonType(a, b)
			if !ok {
				t.Fatalf("no common type for %s, %s", types.Name(a), types.Name(b))
			}
			for _, src := range []arrow.DataType{a, b} {
				lo, hi, uhi := intRange(src)
				var arr arrow.Array
				if types.IsSigned(src) {
					arr, _ = Cast(mk(t, types.Int64, lo, hi), src)
				} else {
					arr, _ = Cast(mk(t, types.Uint64, 0, uhi), src)
				}
				if _, err := Cast(arr, ct); err != nil {
					t.Errorf("%s extremes do not fit common type %s of (%s, %s): %v", types.Name(src), types.Name(ct), types.Name(a), types.Name(b), err)
				}
			}
		}
	}
}
