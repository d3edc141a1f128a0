package iceberg

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/google/uuid"

	"github.com/loredb/lore/types"
)

// boundValue decodes a manifest's lower or upper bound (Iceberg's single-value binary
// serialisation) as the table column's type dt. ok is false for a bound that does not
// decode: bounds only speed reading up, so a bad one is none.
func boundValue(b []byte, dt arrow.DataType) (types.Value, bool) {
	v := types.Value{Type: dt}
	switch {
	case dt.ID() == arrow.BOOL:
		if len(b) != 1 || b[0] > 1 {
			return v, false
		}
		v.I = int64(b[0])
	case dt.ID() == arrow.INT32, dt.ID() == arrow.DATE32:
		if len(b) != 4 {
			return v, false
		}
		v.I = int64(int32(binary.LittleEndian.Uint32(b)))
	case dt.ID() == arrow.INT64, dt.ID() == arrow.TIME64, dt.ID() == arrow.TIMESTAMP:
		switch len(b) {
		case 4: // an int bound of a column since promoted to long
			if dt.ID() != arrow.INT64 {
				return v, false
			}
			v.I = int64(int32(binary.LittleEndian.Uint32(b)))
		case 8:
			v.I = int64(binary.LittleEndian.Uint64(b))
		default:
			return v, false
		}
	case dt.ID() == arrow.FLOAT32:
		if len(b) != 4 {
			return v, false
		}
		v.F = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case dt.ID() == arrow.FLOAT64:
		switch len(b) {
		case 4:
			v.F = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		case 8:
			v.F = math.Float64frombits(binary.LittleEndian.Uint64(b))
		default:
			return v, false
		}
	case types.IsDecimal(dt):
		d, ok := bigEndianDecimal(b)
		if !ok {
			return v, false
		}
		v.D = d
	case types.IsUUID(dt):
		if len(b) != 16 {
			return v, false
		}
		v.S = string(b)
	case types.IsString(dt), types.IsBinary(dt):
		v.S = string(b)
	default:
		return v, false
	}
	if types.IsFloat(dt) && math.IsNaN(v.F) {
		return v, false
	}
	return v, true
}

// bigEndianDecimal reads a decimal's unscaled value: big-endian two's complement in
// at most 16 bytes.
func bigEndianDecimal(b []byte) (decimal128.Num, bool) {
	if len(b) == 0 || len(b) > 16 {
		return decimal128.Num{}, false
	}
	var buf [16]byte
	if b[0]&0x80 != 0 {
		for i := range buf {
			buf[i] = 0xff
		}
	}
	copy(buf[16-len(b):], b)
	hi := int64(binary.BigEndian.Uint64(buf[:8]))
	lo := binary.BigEndian.Uint64(buf[8:])
	return decimal128.New(hi, lo), true
}

// partitionValue converts a partition tuple's value, as the Avro reader decodes it
// from the manifest, to the source column's type dt (an identity transform keeps the
// type): NULL, a boolean, an int or long (dates, times and timestamps among them), a
// float or double, a string, or bytes (binary, fixed, UUIDs, and decimals' unscaled
// values in big-endian two's complement). A UUID written as its text is read too.
func partitionValue(x any, dt arrow.DataType) (types.Value, error) {
	v := types.Value{Type: dt}
	if x == nil {
		return types.NullOf(dt), nil
	}
	bad := func() (types.Value, error) {
		return types.Value{}, fmt.Errorf("partition value %v (%T) cannot be %s", x, x, types.Name(dt))
	}
	switch x := x.(type) {
	case bool:
		if dt.ID() != arrow.BOOL {
			return bad()
		}
		if x {
			v.I = 1
		}
	case int32:
		v.I = int64(x)
	case int64:
		v.I = x
	case float32:
		v.F = float64(x)
	case float64:
		v.F = x
	case string:
		v.S = x
		if types.IsUUID(dt) && len(x) == 36 {
			u, err := uuid.Parse(x)
			if err != nil {
				return bad()
			}
			v.S = string(u[:])
		}
	case []byte:
		if types.IsDecimal(dt) {
			d, ok := bigEndianDecimal(x)
			if !ok {
				return bad()
			}
			v.D = d
			break
		}
		v.S = string(x)
	default:
		return bad()
	}
	// The kind of value must fit the column's type.
	switch {
	case types.IsFloat(dt):
		switch x.(type) {
		case float32, float64:
		default:
			return bad()
		}
	case types.IsString(dt) || types.IsBinary(dt):
		switch x.(type) {
		case string, []byte:
		default:
			return bad()
		}
		if types.IsUUID(dt) && len(v.S) != 16 {
			return bad()
		}
	case types.IsDecimal(dt):
		if _, ok := x.([]byte); !ok {
			return bad()
		}
	case dt.ID() == arrow.INT32:
		if v.I < math.MinInt32 || v.I > math.MaxInt32 {
			return bad()
		}
		fallthrough
	default:
		switch x.(type) {
		case float32, float64, string, []byte:
			return bad()
		}
	}
	return v, nil
}
