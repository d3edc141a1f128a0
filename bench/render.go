package main

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/loredb/lore/types"
)

// renderDuck renders a value scanned from DuckDB as Lore's types.Value.String
// renders the same value, so that equal results give equal text; typ is DuckDB's
// type name of the column. Lore's own formatters are used wherever the value maps
// onto one of its types.
func renderDuck(v any, typ string) (string, error) {
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
		return types.FormatFloat(float64(x), true), nil
	case float64:
		return types.FormatFloat(x, false), nil
	case string:
		return x, nil
	case []byte:
		return blobText(x), nil
	case duckdb.Decimal:
		if x.Value == nil {
			return "NULL", nil
		}
		return types.FormatDecimal(decimal128.FromBigInt(x.Value), int32(x.Scale)), nil
	case duckdb.Interval:
		return types.FormatInterval(arrow.MonthDayNanoInterval{Months: x.Months, Days: x.Days, Nanoseconds: x.Micros * 1000}), nil
	case time.Time:
		return timeText(x.UTC(), typ)
	}
	// Nested values are rare in benchmarks; their Go form is still deterministic.
	return fmt.Sprint(v), nil
}

func timeText(t time.Time, typ string) (string, error) {
	switch typ {
	case "DATE":
		return t.Format("2006-01-02"), nil
	case "TIME":
		s := t.Format("15:04:05")
		if us := t.Nanosecond() / 1000; us != 0 {
			s += "." + strings.TrimRight(fmt.Sprintf("%06d", us), "0")
		}
		return s, nil
	case "TIMESTAMP", "TIMESTAMP_MS", "TIMESTAMP_S":
		return types.FormatTimestamp(t.UnixMicro(), arrow.Microsecond, false), nil
	case "TIMESTAMP_NS":
		return types.FormatTimestamp(t.UnixNano(), arrow.Nanosecond, false), nil
	case "TIMESTAMPTZ":
		return types.FormatTimestamp(t.UnixMicro(), arrow.Microsecond, true), nil
	}
	return "", fmt.Errorf("cannot render a time as %s", typ)
}

// blobText escapes bytes outside printable ASCII (and the backslash) as \xHH, as
// Lore renders BLOB values.
func blobText(b []byte) string {
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
