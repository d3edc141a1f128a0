package iceberg

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	ice "github.com/apache/iceberg-go"
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

// partitionValue converts a partition tuple's value, as iceberg-go decodes it from the
// manifest, to the source column's type dt (an identity transform keeps the type).
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
	case int:
		v.I = int64(x)
	case ice.Date:
		v.I = int64(x)
	case ice.Time:
		v.I = int64(x)
	case ice.Timestamp:
		v.I = int64(x)
	case ice.TimestampNano:
		v.I = int64(x)
	case time.Time:
		switch {
		case dt.ID() == arrow.DATE32:
			v.I = x.UTC().Unix() / 86400
		case dt.ID() == arrow.TIMESTAMP && dt.(*arrow.TimestampType).Unit == arrow.Nanosecond:
			v.I = x.UTC().UnixNano()
		default:
			v.I = x.UTC().UnixMicro()
		}
	case time.Duration:
		v.I = x.Microseconds()
	case float32:
		v.F = float64(x)
	case float64:
		v.F = x
	case string:
		v.S = x
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
	case [16]byte:
		v.S = string(x[:])
	case uuid.UUID:
		v.S = string(x[:])
	case ice.DecimalLiteral:
		return decimalValue(x.Val, x.Scale, dt)
	case ice.Decimal:
		return decimalValue(x.Val, x.Scale, dt)
	case *big.Rat:
		_, ds, ok := types.DecimalParams(dt)
		if !ok {
			return bad()
		}
		scale := int64(ds)
		n := new(big.Int).Mul(x.Num(), new(big.Int).Exp(big.NewInt(10), big.NewInt(scale), nil))
		if new(big.Int).Rem(n, x.Denom()).Sign() != 0 {
			return bad()
		}
		n.Quo(n, x.Denom())
		if n.BitLen() > 127 {
			return bad()
		}
		v.D = decimal128.FromBigInt(n)
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
		case string, []byte, [16]byte, uuid.UUID:
		default:
			return bad()
		}
		if types.IsUUID(dt) && len(v.S) != 16 {
			return bad()
		}
	case types.IsDecimal(dt):
		if _, ok := x.([]byte); !ok {
			if _, ok := x.(*big.Rat); !ok {
				return bad()
			}
		}
	case dt.ID() == arrow.INT32:
		if v.I < math.MinInt32 || v.I > math.MaxInt32 {
			return bad()
		}
		fallthrough
	default:
		switch x.(type) {
		case float32, float64, string, []byte, [16]byte, uuid.UUID:
			return bad()
		}
	}
	return v, nil
}

// decimalValue rescales an unscaled decimal to the column's scale.
func decimalValue(d decimal128.Num, scale int, dt arrow.DataType) (types.Value, error) {
	_, tscale, ok := types.DecimalParams(dt)
	if !ok {
		return types.Value{}, fmt.Errorf("decimal partition value for a %s column", types.Name(dt))
	}
	t := struct{ Scale int32 }{tscale}
	if int32(scale) != t.Scale {
		r, err := d.Rescale(int32(scale), t.Scale)
		if err != nil {
			return types.Value{}, err
		}
		d = r
	}
	return types.Value{Type: dt, D: d}, nil
}
