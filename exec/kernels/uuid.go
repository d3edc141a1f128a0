package kernels

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/types"
)

// stringsToUUID parses every row of s as a UUID's text form.
func stringsToUUID(s *array.String, to arrow.DataType) (arrow.Array, error) {
	b := array.NewBinaryBuilder(defaultMem, to.(arrow.BinaryDataType))
	defer b.Release()
	b.Reserve(s.Len())
	b.ReserveData(16 * (s.Len() - s.NullN()))
	for i := 0; i < s.Len(); i++ {
		if s.IsNull(i) {
			b.AppendNull()
			continue
		}
		u, ok := types.ParseUUID(s.Value(i))
		if !ok {
			return nil, conversionErr("string '"+s.Value(i)+"'", types.UUID)
		}
		b.Append(u[:])
	}
	return b.NewArray(), nil
}
