package types

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Value is one boxed scalar of a Lore type. It is used for literals, partition
// values, bounds and results rendered as text — never per row in a hot loop.
//
// Which field holds the value depends on the type: I for signed integers, booleans
// (0/1), dates (days since the epoch) and timestamps (units since the epoch in the
// type's unit); U for unsigned integers; F for floats; S for strings and binary;
// D for decimals (the scaled integer); Iv for intervals. A nested value (a list, a
// struct, a map) is A, a one-row array holding it, with its text form in S.
type Value struct {
	Type arrow.DataType
	Null bool
	I    int64
	U    uint64
	F    float64
	S    string
	D    decimal128.Num
	Iv   arrow.MonthDayNanoInterval
	A    arrow.Array
}

// NullOf is the NULL of a type.
func NullOf(dt arrow.DataType) Value { return Value{Type: dt, Null: true} }

// IntValue, FloatValue, StringValue, BoolValue build values of the common types.
func IntValue(v int64) Value     { return Value{Type: Int64, I: v} }
func FloatValue(v float64) Value { return Value{Type: Float64, F: v} }
func StringValue(s string) Value { return Value{Type: String, S: s} }
func DateValue(days int32) Value { return Value{Type: Date, I: int64(days)} }
func BoolValue(b bool) Value {
	if b {
		return Value{Type: Boolean, I: 1}
	}
	return Value{Type: Boolean}
}

// Bool is the value of a BOOLEAN.
func (v Value) Bool() bool { return v.I != 0 }

// ValueAt boxes row i of arr. Dictionary arrays yield their value type.
func ValueAt(arr arrow.Array, i int) Value {
	dt := arr.DataType()
	if dt.ID() == arrow.NULL || arr.IsNull(i) {
		return NullOf(Unwrap(dt))
	}
	switch a := arr.(type) {
	case *array.Dictionary:
		return ValueAt(a.Dictionary(), a.GetValueIndex(i))
	case *array.Boolean:
		return BoolValue(a.Value(i))
	case *array.Int8:
		return Value{Type: dt, I: int64(a.Value(i))}
	case *array.Int16:
		return Value{Type: dt, I: int64(a.Value(i))}
	case *array.Int32:
		return Value{Type: dt, I: int64(a.Value(i))}
	case *array.Int64:
		return Value{Type: dt, I: a.Value(i)}
	case *array.Uint8:
		return Value{Type: dt, U: uint64(a.Value(i))}
	case *array.Uint16:
		return Value{Type: dt, U: uint64(a.Value(i))}
	case *array.Uint32:
		return Value{Type: dt, U: uint64(a.Value(i))}
	case *array.Uint64:
		return Value{Type: dt, U: a.Value(i)}
	case *array.Float16:
		return Value{Type: dt, F: float64(a.Value(i).Float32())}
	case *array.Float32:
		return Value{Type: dt, F: float64(a.Value(i))}
	case *array.Float64:
		return Value{Type: dt, F: a.Value(i)}
	case *array.String:
		return Value{Type: dt, S: a.Value(i)}
	case *array.LargeString:
		return Value{Type: dt, S: a.Value(i)}
	case *array.StringView:
		return Value{Type: dt, S: a.Value(i)}
	case *array.Binary:
		return Value{Type: dt, S: string(a.Value(i))}
	case *array.LargeBinary:
		return Value{Type: dt, S: string(a.Value(i))}
	case *array.FixedSizeBinary:
		return Value{Type: dt, S: string(a.Value(i))}
	case *array.Date32:
		return Value{Type: dt, I: int64(a.Value(i))}
	case *array.Date64:
		return Value{Type: Date, I: int64(a.Value(i)) / 86400000}
	case *array.Timestamp:
		return Value{Type: dt, I: int64(a.Value(i))}
	case *array.Time32:
		return Value{Type: dt, I: int64(a.Value(i))}
	case *array.Time64:
		return Value{Type: dt, I: int64(a.Value(i))}
	case *array.Duration:
		return Value{Type: dt, I: int64(a.Value(i)), S: a.ValueStr(i)}
	case *array.Decimal128:
		return Value{Type: dt, D: a.Value(i)}
	case *array.Decimal64:
		return Value{Type: dt, D: decimal128.FromI64(int64(a.Value(i)))}
	case *array.MonthDayNanoInterval:
		return Value{Type: dt, Iv: a.Value(i)}
	}
	// Nested values: the row itself, and its text form.
	if s, ok := formatNested(arr, i); ok {
		return Value{Type: dt, S: s, A: array.NewSlice(arr, int64(i), int64(i+1))}
	}
	return Value{Type: dt, S: arr.ValueStr(i)}
}

// Compare orders two non-null values of the same type (-1, 0, +1). Floats order NaN
// above every other value, as DuckDB and PostgreSQL do.
func Compare(a, b Value) int {
	dt := Unwrap(a.Type)
	switch {
	case IsUnsigned(dt):
		return cmp.Compare(a.U, b.U)
	case IsFloat(dt):
		return CompareFloat(a.F, b.F)
	case IsString(dt) || IsBinary(dt):
		return strings.Compare(a.S, b.S)
	case IsDecimal(dt):
		return a.D.Cmp(b.D)
	case dt.ID() == arrow.INTERVAL_MONTH_DAY_NANO:
		return cmp.Compare(intervalMicros(a.Iv), intervalMicros(b.Iv))
	}
	return cmp.Compare(a.I, b.I)
}

// CompareFloat orders floats with NaN greatest and -0 equal to +0.
func CompareFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

// CompareInterval orders two intervals as DuckDB does, a month as 30 days and a
// day as 24 hours.
func CompareInterval(a, b arrow.MonthDayNanoInterval) int {
	return cmp.Compare(intervalMicros(a), intervalMicros(b))
}

func intervalMicros(iv arrow.MonthDayNanoInterval) int64 {
	return int64(iv.Months)*30*86400e6 + int64(iv.Days)*86400e6 + iv.Nanoseconds/1000
}

// String renders the value as SQL users read it (DuckDB's text forms): NULL, true,
// 42, 1.5, 2024-01-02, 2024-01-02 03:04:05.25, 12.50 for DECIMAL(p,2).
func (v Value) String() string {
	if v.Null {
		return "NULL"
	}
	dt := Unwrap(v.Type)
	switch {
	case dt.ID() == arrow.BOOL:
		return strconv.FormatBool(v.I != 0)
	case IsSigned(dt):
		return strconv.FormatInt(v.I, 10)
	case IsUnsigned(dt):
		return strconv.FormatUint(v.U, 10)
	case IsFloat(dt):
		return FormatFloat(v.F, dt.ID() == arrow.FLOAT32)
	case IsString(dt):
		return v.S
	case IsUUID(dt):
		return FormatUUID(v.S)
	case IsBinary(dt):
		return formatBlob(v.S)
	case IsDecimal(dt):
		return FormatDecimal(v.D, dt.(arrow.DecimalType).GetScale())
	case dt.ID() == arrow.DATE32:
		return FormatDate(int32(v.I))
	case dt.ID() == arrow.TIMESTAMP:
		t := dt.(*arrow.TimestampType)
		return FormatTimestamp(v.I, t.Unit, t.TimeZone != "")
	case dt.ID() == arrow.TIME64 || dt.ID() == arrow.TIME32:
		return formatTime(v, dt)
	case dt.ID() == arrow.INTERVAL_MONTH_DAY_NANO:
		return FormatInterval(v.Iv)
	}
	return v.S
}

// FormatFloat renders a float the shortest way that reads back exactly; integral
// values keep a ".0" so they read as floats.
func FormatFloat(f float64, single bool) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	bits := 64
	if single {
		bits = 32
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if strings.ContainsAny(s, "e") {
		mant, exp, _ := strings.Cut(s, "e")
		if e, err := strconv.Atoi(exp); err == nil && e > -5 && e < 16 {
			s = strconv.FormatFloat(f, 'f', -1, bits)
		} else {
			return mant + "e" + exp
		}
	}
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// FormatDecimal renders a scaled integer with scale digits after the point.
func FormatDecimal(d decimal128.Num, scale int32) string {
	s := d.BigInt().String()
	if scale <= 0 {
		if scale < 0 {
			return new(big.Int).Mul(d.BigInt(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil)).String()
		}
		return s
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for len(s) <= int(scale) {
		s = "0" + s
	}
	s = s[:len(s)-int(scale)] + "." + s[len(s)-int(scale):]
	if neg {
		s = "-" + s
	}
	return s
}

// UnitsPerSecond is the number of ticks of unit in a second.
func UnitsPerSecond(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1
	case arrow.Millisecond:
		return 1e3
	case arrow.Microsecond:
		return 1e6
	}
	return 1e9
}

// TimeOf converts a timestamp value in unit to a time.Time in UTC.
func TimeOf(v int64, unit arrow.TimeUnit) time.Time {
	per := UnitsPerSecond(unit)
	sec, frac := v/per, v%per
	if frac < 0 {
		sec--
		frac += per
	}
	return time.Unix(sec, frac*(1e9/per)).UTC()
}

func formatTime(v Value, dt arrow.DataType) string {
	var unit arrow.TimeUnit
	switch t := dt.(type) {
	case *arrow.Time32Type:
		unit = t.Unit
	case *arrow.Time64Type:
		unit = t.Unit
	}
	return FormatTime(v.I, unit)
}

// FormatTime renders a time of day of v ticks of unit as DuckDB does: HH:MM:SS and
// the microseconds without trailing zeros; 24:00:00 stays 24:00:00.
func FormatTime(v int64, unit arrow.TimeUnit) string {
	per := UnitsPerSecond(unit)
	sec, frac := v/per, v%per
	if frac < 0 {
		sec--
		frac += per
	}
	us := frac * 1000000 / per
	s := fmt.Sprintf("%02d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	if us != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%06d", us), "0")
	}
	return s
}

// FormatInterval renders an interval as DuckDB does: "1 year 2 months 3 days 04:05:06".
func FormatInterval(iv arrow.MonthDayNanoInterval) string {
	var parts []string
	plural := func(n int64, unit string) {
		if n == 0 {
			return
		}
		s := fmt.Sprintf("%d %s", n, unit)
		if n != 1 && n != -1 {
			s += "s"
		}
		parts = append(parts, s)
	}
	plural(int64(iv.Months)/12, "year")
	plural(int64(iv.Months)%12, "month")
	plural(int64(iv.Days), "day")
	if ns := iv.Nanoseconds; ns != 0 {
		sign := ""
		if ns < 0 {
			sign, ns = "-", -ns
		}
		us := ns / 1000
		h, m, s, f := us/3600e6, us/60e6%60, us/1e6%60, us%1e6
		t := fmt.Sprintf("%s%02d:%02d:%02d", sign, h, m, s)
		if f != 0 {
			t += "." + strings.TrimRight(fmt.Sprintf("%06d", f), "0")
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "00:00:00"
	}
	return strings.Join(parts, " ")
}

func formatBlob(s string) string {
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 32 && c < 127 && c != '\\' {
			b.WriteByte(c)
		} else {
			b.WriteString(`\x` + strings.ToUpper(hex.EncodeToString([]byte{c})))
		}
	}
	return b.String()
}
