package parquet

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/loredb/lore/types"
)

// fixedLenType is the Lore type of a FIXED_LEN_BYTE_ARRAY leaf that the library reads
// as plain fixed-size binary but that has a type of its own: the UUID logical type on
// 16 bytes, and the legacy INTERVAL converted type on 12 bytes (three little-endian
// unsigned 32-bit integers: months, days, milliseconds), which DuckDB writes and reads
// as its INTERVAL. Other leaves give nil.
func fixedLenType(leaf *schema.Column) arrow.DataType {
	if leaf.PhysicalType() != pq.Types.FixedLenByteArray {
		return nil
	}
	switch {
	case leaf.TypeLength() == 16 && isUUID(leaf.LogicalType()):
		return types.UUID
	case leaf.TypeLength() == 12 && leaf.ConvertedType() == schema.ConvertedTypes.Interval:
		return types.Interval
	}
	return nil
}

func isUUID(lt schema.LogicalType) bool {
	_, ok := lt.(schema.UUIDLogicalType)
	return ok
}

// fixedToUUID copies 16-byte values into a UUID array.
func fixedToUUID(a *array.FixedSizeBinary) (arrow.Array, error) {
	if w := a.DataType().(*arrow.FixedSizeBinaryType).ByteWidth; w != 16 {
		return nil, fmt.Errorf("UUID column has %d-byte values", w)
	}
	b := array.NewBinaryBuilder(memory.DefaultAllocator, types.UUID.(arrow.BinaryDataType))
	defer b.Release()
	b.Reserve(a.Len())
	b.ReserveData(16 * (a.Len() - a.NullN()))
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			b.AppendNull()
		} else {
			b.Append(a.Value(i))
		}
	}
	return b.NewArray(), nil
}

// fixedToInterval converts Parquet INTERVAL values (months, days and milliseconds,
// each a little-endian unsigned 32-bit integer) to month-day-nanosecond intervals.
func fixedToInterval(a *array.FixedSizeBinary) (arrow.Array, error) {
	if w := a.DataType().(*arrow.FixedSizeBinaryType).ByteWidth; w != 12 {
		return nil, fmt.Errorf("INTERVAL column has %d-byte values", w)
	}
	b := array.NewMonthDayNanoIntervalBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.Reserve(a.Len())
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			b.AppendNull()
			continue
		}
		v := a.Value(i)
		b.Append(arrow.MonthDayNanoInterval{
			Months:      int32(binary.LittleEndian.Uint32(v[0:4])),
			Days:        int32(binary.LittleEndian.Uint32(v[4:8])),
			Nanoseconds: int64(binary.LittleEndian.Uint32(v[8:12])) * 1e6,
		})
	}
	return b.NewArray(), nil
}
