package parquet

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/float16"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/loredb/lore/types"
)

// columnStats fills cs from the statistics of leaf column j in row group g. dt is the
// column's normalised type; read is the type the library reads it as (they differ in
// unit for timestamps). Bounds the library does not trust (an unknown sort order, a
// writer known to get them wrong) or that cannot be typed are left out.
func columnStats(md *metadata.FileMetaData, g, j int, leaf *schema.Column, dt, read arrow.DataType, cs *ColumnStats) error {
	raw := md.RowGroups[g].Columns[j].MetaData
	if raw == nil || raw.Statistics == nil {
		return nil
	}
	rs := raw.Statistics
	// The null count holds whatever the sort order, so it comes from the raw footer.
	if rs.IsSetNullCount() && rs.GetNullCount() >= 0 {
		cs.HasNullCount, cs.NullCount = true, rs.GetNullCount()
	}
	if rs.IsSetDistinctCount() && rs.GetDistinctCount() > 0 {
		cs.Distinct = rs.GetDistinctCount()
	}
	cc, err := md.RowGroup(g).ColumnChunk(j)
	if err != nil {
		return err
	}
	st, err := cc.Statistics()
	if err != nil || st == nil || !st.HasMinMax() {
		return err
	}
	if !rs.IsSetMinValue() || !rs.IsSetMaxValue() {
		// Only the deprecated min/max fields: they were ordered as signed values, right
		// for signed numbers and booleans only (unsigned integers, byte arrays and
		// byte-array decimals got wrong bounds from some writers).
		switch leaf.PhysicalType() {
		case pq.Types.Int32, pq.Types.Int64, pq.Types.Float, pq.Types.Double, pq.Types.Boolean:
			if types.IsUnsigned(dt) {
				return nil
			}
		default:
			return nil
		}
	}
	lo, hi, ok := bounds(st, dt, read)
	if !ok || !inRange(lo, dt) || !inRange(hi, dt) || types.Compare(lo, hi) > 0 {
		return nil // bounds that do not fit the type or each other are not bounds
	}
	cs.HasMinMax, cs.Min, cs.Max = true, lo, hi
	// Exactness flags are recent; without them a byte-array bound may be truncated,
	// while fixed-width values are always written whole.
	whole := leaf.PhysicalType() != pq.Types.ByteArray
	cs.MinExact, cs.MaxExact = whole, whole
	if rs.IsSetIsMinValueExact() {
		cs.MinExact = rs.GetIsMinValueExact()
	}
	if rs.IsSetIsMaxValueExact() {
		cs.MaxExact = rs.GetIsMaxValueExact()
	}
	return nil
}

// bounds types a statistics object's min and max as values of dt.
func bounds(st metadata.TypedStatistics, dt, read arrow.DataType) (lo, hi types.Value, ok bool) {
	lo, hi = types.Value{Type: dt}, types.Value{Type: dt}
	switch s := st.(type) {
	case *metadata.BooleanStatistics:
		if dt.ID() != arrow.BOOL {
			return lo, hi, false
		}
		lo, hi = types.BoolValue(s.Min()), types.BoolValue(s.Max())
		return lo, hi, true
	case *metadata.Int32Statistics:
		if types.IsUnsigned(dt) {
			lo.U, hi.U = uint64(uint32(s.Min())), uint64(uint32(s.Max()))
			return lo, hi, true
		}
		return intBounds(int64(s.Min()), int64(s.Max()), dt, read)
	case *metadata.Int64Statistics:
		if types.IsUnsigned(dt) {
			lo.U, hi.U = uint64(s.Min()), uint64(s.Max())
			return lo, hi, true
		}
		return intBounds(s.Min(), s.Max(), dt, read)
	case *metadata.Float32Statistics:
		return floatBounds(float64(s.Min()), float64(s.Max()), dt)
	case *metadata.Float64Statistics:
		return floatBounds(s.Min(), s.Max(), dt)
	case *metadata.Float16Statistics:
		if len(s.Min()) != 2 || len(s.Max()) != 2 {
			return lo, hi, false
		}
		return floatBounds(float64(float16.FromLEBytes(s.Min()).Float32()), float64(float16.FromLEBytes(s.Max()).Float32()), dt)
	case *metadata.ByteArrayStatistics:
		return bytesBounds(s.Min(), s.Max(), dt)
	case *metadata.FixedLenByteArrayStatistics:
		return bytesBounds(s.Min(), s.Max(), dt)
	}
	return lo, hi, false
}

func intBounds(a, b int64, dt, read arrow.DataType) (lo, hi types.Value, ok bool) {
	lo, hi = types.Value{Type: dt}, types.Value{Type: dt}
	switch {
	case types.IsSigned(dt), dt.ID() == arrow.DATE32, dt.ID() == arrow.TIME32, dt.ID() == arrow.TIME64:
		lo.I, hi.I = a, b
		return lo, hi, true
	case dt.ID() == arrow.TIMESTAMP:
		from, ok1 := read.(*arrow.TimestampType)
		to := dt.(*arrow.TimestampType)
		if !ok1 {
			return lo, hi, false
		}
		var ok2, ok3 bool
		lo.I, ok2 = rescale(a, from.Unit, to.Unit)
		hi.I, ok3 = rescale(b, from.Unit, to.Unit)
		return lo, hi, ok2 && ok3
	case types.IsDecimal(dt):
		lo.D, hi.D = decimal128.FromI64(a), decimal128.FromI64(b)
		return lo, hi, true
	}
	return lo, hi, false
}

// rescale converts a timestamp between units; ok is false on overflow. Going to a
// coarser unit floors, so a bound stays a bound.
func rescale(v int64, from, to arrow.TimeUnit) (int64, bool) {
	f, t := types.UnitsPerSecond(from), types.UnitsPerSecond(to)
	switch {
	case f == t:
		return v, true
	case t > f:
		m := t / f
		if v > math.MaxInt64/m || v < math.MinInt64/m {
			return 0, false
		}
		return v * m, true
	default:
		d := f / t
		q := v / d
		if v%d < 0 {
			q--
		}
		return q, true
	}
}

func floatBounds(a, b float64, dt arrow.DataType) (lo, hi types.Value, ok bool) {
	lo, hi = types.Value{Type: dt}, types.Value{Type: dt}
	// A NaN bound says nothing usable (old writers let NaN into min/max).
	if !types.IsFloat(dt) || math.IsNaN(a) || math.IsNaN(b) {
		return lo, hi, false
	}
	lo.F, hi.F = a, b
	return lo, hi, true
}

func bytesBounds(a, b []byte, dt arrow.DataType) (lo, hi types.Value, ok bool) {
	lo, hi = types.Value{Type: dt}, types.Value{Type: dt}
	switch {
	case types.IsString(dt) || types.IsBinary(dt):
		lo.S, hi.S = string(a), string(b)
		return lo, hi, true
	case types.IsDecimal(dt):
		var ok1, ok2 bool
		lo.D, ok1 = decimalFromBigEndian(a)
		hi.D, ok2 = decimalFromBigEndian(b)
		return lo, hi, ok1 && ok2
	}
	return lo, hi, false
}

// decimalFromBigEndian reads a big-endian two's-complement integer of any length that
// fits in 128 bits (the unscaled value of a Parquet decimal).
func decimalFromBigEndian(b []byte) (decimal128.Num, bool) {
	if len(b) == 0 {
		return decimal128.Num{}, false
	}
	var buf [16]byte
	if b[0]&0x80 != 0 {
		for i := range buf {
			buf[i] = 0xff
		}
	}
	if len(b) > 16 {
		// Longer encodings must be pure sign extension.
		ext := byte(0)
		if b[0]&0x80 != 0 {
			ext = 0xff
		}
		for _, c := range b[:len(b)-16] {
			if c != ext {
				return decimal128.Num{}, false
			}
		}
		b = b[len(b)-16:]
		if (b[0]&0x80 != 0) != (ext == 0xff) {
			return decimal128.Num{}, false
		}
	}
	copy(buf[16-len(b):], b)
	hi := binary.BigEndian.Uint64(buf[:8])
	lo := binary.BigEndian.Uint64(buf[8:])
	return decimal128.New(int64(hi), lo), true
}

// inRange reports whether a bound read from a wider physical type fits its column's
// type (a writer may store 4294967295 as the bound of a UTINYINT column).
func inRange(v types.Value, dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8:
		return v.I >= math.MinInt8 && v.I <= math.MaxInt8
	case arrow.INT16:
		return v.I >= math.MinInt16 && v.I <= math.MaxInt16
	case arrow.INT32:
		return v.I >= math.MinInt32 && v.I <= math.MaxInt32
	case arrow.UINT8:
		return v.U <= math.MaxUint8
	case arrow.UINT16:
		return v.U <= math.MaxUint16
	case arrow.UINT32:
		return v.U <= math.MaxUint32
	}
	return true
}
