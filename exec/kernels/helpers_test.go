package kernels

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/loredb/lore/types"
)

// mk builds an array of dt from Go values; nil is NULL. Strings given for
// non-string types are parsed with the builder's text form (dates, timestamps,
// decimals, intervals).
func mk(t testing.TB, dt arrow.DataType, vals ...any) arrow.Array {
	t.Helper()
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.BooleanBuilder:
			bb.Append(v.(bool))
		case *array.Int8Builder:
			bb.Append(int8(v.(int)))
		case *array.Int16Builder:
			bb.Append(int16(v.(int)))
		case *array.Int32Builder:
			bb.Append(int32(v.(int)))
		case *array.Int64Builder:
			switch x := v.(type) {
			case int:
				bb.Append(int64(x))
			case int64:
				bb.Append(x)
			}
		case *array.Uint8Builder:
			bb.Append(uint8(v.(int)))
		case *array.Uint16Builder:
			bb.Append(uint16(v.(int)))
		case *array.Uint32Builder:
			bb.Append(uint32(v.(int)))
		case *array.Uint64Builder:
			switch x := v.(type) {
			case int:
				bb.Append(uint64(x))
			case uint64:
				bb.Append(x)
			}
		case *array.Float32Builder:
			bb.Append(float32(toF(v)))
		case *array.Float64Builder:
			bb.Append(toF(v))
		case *array.StringBuilder:
			bb.Append(v.(string))
		case *array.Date32Builder:
			d, ok := parseDate(v.(string))
			if !ok {
				t.Fatalf("bad date %q", v)
			}
			bb.Append(arrow.Date32(d))
		case *array.TimestampBuilder:
			ts, ok := parseTimestamp(v.(string), dt.(*arrow.TimestampType).Unit)
			if !ok {
				t.Fatalf("bad timestamp %q", v)
			}
			bb.Append(arrow.Timestamp(ts))
		case *array.Decimal128Builder:
			d := dt.(*arrow.Decimal128Type)
			n, err := decimal128.FromString(v.(string), d.Precision, d.Scale)
			if err != nil {
				t.Fatalf("bad decimal %q: %v", v, err)
			}
			bb.Append(n)
		case *array.Decimal64Builder:
			d := dt.(*arrow.Decimal64Type)
			n, err := decimal128.FromString(v.(string), d.Precision, d.Scale)
			if err != nil {
				t.Fatalf("bad decimal %q: %v", v, err)
			}
			bb.Append(decimal.Decimal64(n.LowBits()))
		case *array.MonthDayNanoIntervalBuilder:
			iv, ok := parseInterval(v.(string))
			if !ok {
				t.Fatalf("bad interval %q", v)
			}
			bb.Append(iv)
		default:
			t.Fatalf("mk: unsupported builder %T", b)
		}
	}
	return b.NewArray()
}

// dict builds a dictionary<int32, VARCHAR> array from row values (nil is NULL).
func dict(t testing.TB, vals ...any) arrow.Array {
	t.Helper()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: types.String}
	b := array.NewDictionaryBuilder(memory.DefaultAllocator, dt).(*array.BinaryDictionaryBuilder)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else if err := b.AppendString(v.(string)); err != nil {
			t.Fatal(err)
		}
	}
	return b.NewArray()
}

// render turns every row into its SQL text ("NULL" for NULL).
func render(arr arrow.Array) []string {
	out := make([]string, arr.Len())
	for i := range out {
		out[i] = types.ValueAt(arr, i).String()
	}
	return out
}

func joined(arr arrow.Array) string { return strings.Join(render(arr), ",") }

// call resolves name for the arguments' types and evaluates it.
func evalCall(t testing.TB, name string, args ...arrow.Array) (arrow.Array, *Function, error) {
	t.Helper()
	dts := make([]arrow.DataType, len(args))
	n := 0
	for i, a := range args {
		dts[i] = a.DataType()
		n = a.Len()
	}
	f, err := Resolve(name, dts)
	if err != nil {
		return nil, nil, err
	}
	out, err := f.Eval(args, n)
	if err != nil {
		return nil, f, err
	}
	if out.Len() != n {
		t.Fatalf("%s: result has %d rows, want %d", name, out.Len(), n)
	}
	if !arrow.TypeEqual(types.Unwrap(out.DataType()), f.Result) {
		t.Fatalf("%s: result type %s, declared %s", name, out.DataType(), f.Result)
	}
	return out, f, nil
}

// mustCall is call that fails the test on error and returns the rendered rows.
func mustCall(t testing.TB, name string, args ...arrow.Array) string {
	t.Helper()
	out, _, err := evalCall(t, name, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return joined(out)
}

func constStr(s string, n int) arrow.Array { return ConstArray(types.StringValue(s), n) }
func constInt(v int64, n int) arrow.Array  { return ConstArray(types.IntValue(v), n) }

var _ = fmt.Sprint
var _ = time.Now

func toF(v any) float64 {
	if i, ok := v.(int); ok {
		return float64(i)
	}
	return v.(float64)
}

func mustDec(t testing.TB, s string, p, sc int32) decimal128.Num {
	n, err := decimal128.FromString(s, p, sc)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
