package delta

import (
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/types"
)

// statTypes are the column types a stated bound is read as in the tests.
var statTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int8,
	arrow.BinaryTypes.String, arrow.FixedWidthTypes.Date32, arrow.PrimitiveTypes.Float64,
	&arrow.Decimal128Type{Precision: 10, Scale: 2},
}

// decodedBound reads a bound the slow, general way: the JSON decoded as a string or a
// number, its text cast to the column's type. jsonValue must agree with it.
func decodedBound(raw []byte, dt arrow.DataType) (types.Value, bool) {
	s, ok := jsonText(raw)
	if !ok {
		return types.Value{}, false
	}
	v, err := kernels.ParseLiteral(s, dt)
	return v, err == nil && !v.Null
}

func checkBound(t *testing.T, raw []byte, dt arrow.DataType) {
	t.Helper()
	got, okGot := jsonValue(raw, dt)
	want, okWant := decodedBound(raw, dt)
	if okGot != okWant || okGot && got.String() != want.String() {
		t.Errorf("bound %s as %s: %v %v, want %v %v", raw, dt, got, okGot, want, okWant)
	}
}

// TestBoundsReadAsDecoded checks the direct reading of numbers and plain strings
// against decoding them.
func TestBoundsReadAsDecoded(t *testing.T) {
	for _, raw := range []string{`0`, `-0`, `42`, `-9223372036854775808`, `9223372036854775808`, `128`, `-129`, `32768`, `2147483648`,
		`1.5`, `1e3`, `-1.25E-2`, `"17"`, `"-3"`, `"+3"`, `" 3"`, `"2024-02-29"`, `"2024-02-30"`, `"a\"b"`, `"\u0031"`, `""`,
		`null`, `true`, `{}`, `[1]`, ` 7 `, `"12.345"`, `"99999999.99"`, `"1e400"`} {
		for _, dt := range statTypes {
			checkBound(t, []byte(raw), dt)
		}
	}
}

// FuzzBound compares the direct reading of a bound with decoding it, for any JSON
// value, as every type of statTypes.
func FuzzBound(f *testing.F) {
	for _, s := range []string{`123`, `-5`, `"2024-01-01"`, `"x"`, `1.5`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // bounds come from a decoded stats object
		}
		for _, dt := range statTypes {
			checkBound(t, raw, dt)
		}
	})
}
