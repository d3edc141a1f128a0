package oracle

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// render formats one value as Lore's types.Value.String does; typ is DuckDB's type
// name of the column. NULL is "NULL" and the empty string "(empty)".
func render(v any, typ string) (string, error) {
	if v == nil {
		return "NULL", nil
	}
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x), nil
	case int8:
		return strconv.FormatInt(int64(x), 10), nil
	case int16:
		return strconv.FormatInt(int64(x), 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint8:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint16:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint32:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case *big.Int:
		return x.String(), nil
	case float32:
		return formatFloat(float64(x), 32), nil
	case float64:
		return formatFloat(x, 64), nil
	case string:
		if x == "" {
			return "(empty)", nil
		}
		return x, nil
	case []byte:
		if typ == "UUID" && len(x) == 16 {
			// The driver hands a UUID over as its 16 bytes; Lore renders its text form.
			return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16]), nil
		}
		if len(x) == 0 {
			return "(empty)", nil
		}
		return formatBlob(x), nil
	case duckdb.Decimal:
		return formatDecimal(x.Value, int(x.Scale)), nil
	case duckdb.Interval:
		return formatInterval(x), nil
	case time.Time:
		return formatTime(x, typ)
	}
	if s, ok, err := renderNested(v, typ); ok {
		return s, err
	}
	return "", fmt.Errorf("cannot render %T (%s)", v, typ)
}

// formatFloat: the shortest representation that reads back exactly, in plain
// notation for exponents -5 < e < 16, with ".0" on integral values; nan, inf, -inf.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if mant, exp, ok := strings.Cut(s, "e"); ok {
		if e, err := strconv.Atoi(exp); err == nil && e > -5 && e < 16 {
			s = strconv.FormatFloat(f, 'f', -1, bits)
		} else {
			return mant + "e" + exp
		}
	}
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func formatDecimal(v *big.Int, scale int) string {
	s := v.String()
	if scale == 0 {
		return s
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for len(s) <= scale {
		s = "0" + s
	}
	s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	if neg {
		s = "-" + s
	}
	return s
}

func formatTime(t time.Time, typ string) (string, error) {
	t = t.UTC()
	if s, ok := infiniteTime(t, typ); ok {
		return s, nil
	}
	// DuckDB counts years before 1 from 1 BC and marks them "(BC)" after the date.
	date := func() string {
		if y := t.Year(); y <= 0 {
			return fmt.Sprintf("%04d-%02d-%02d (BC)", 1-y, t.Month(), t.Day())
		}
		return t.Format("2006-01-02")
	}
	frac := func(digits int) string {
		ns := t.Nanosecond()
		if ns == 0 {
			return ""
		}
		return "." + strings.TrimRight(fmt.Sprintf("%09d", ns)[:digits], "0")
	}
	switch typ {
	case "DATE":
		return date(), nil
	case "TIME":
		return t.Format("15:04:05") + frac(6), nil
	case "TIMESTAMP", "TIMESTAMP_MS", "TIMESTAMP_S":
		return date() + t.Format(" 15:04:05") + frac(6), nil
	case "TIMESTAMP_NS":
		return date() + t.Format(" 15:04:05") + frac(9), nil
	case "TIMESTAMPTZ":
		return date() + t.Format(" 15:04:05") + frac(6) + "+00", nil
	}
	return "", fmt.Errorf("cannot render a time as %s", typ)
}

// infiniteTime recognises the times the driver makes of DuckDB's infinite dates
// (±(2^31−1) days) and timestamps (±(2^63−1) ticks), which DuckDB renders infinity
// and -infinity.
func infiniteTime(t time.Time, typ string) (string, bool) {
	const maxDays = math.MaxInt32
	var v, inf int64
	switch typ {
	case "DATE":
		v, inf = t.Unix(), maxDays*86400
	case "TIMESTAMP", "TIMESTAMPTZ":
		v, inf = t.UnixMicro(), math.MaxInt64
	case "TIMESTAMP_NS":
		v, inf = t.UnixNano(), math.MaxInt64
	case "TIMESTAMP_MS":
		v, inf = t.UnixMilli(), math.MaxInt64
	case "TIMESTAMP_S":
		v, inf = t.Unix(), math.MaxInt64
	default:
		return "", false
	}
	switch v {
	case inf:
		return "infinity", true
	case -inf:
		return "-infinity", true
	}
	return "", false
}

func formatInterval(iv duckdb.Interval) string {
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
	if us := iv.Micros; us != 0 {
		sign := ""
		if us < 0 {
			sign, us = "-", -us
		}
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

func formatBlob(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		if c >= 32 && c < 127 && c != '\\' {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, `\x%02X`, c)
		}
	}
	return sb.String()
}
