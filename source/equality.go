package source

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/types"
)

// EqualityDelete is one equality delete (an Iceberg delete file of equality_ids) as
// it applies to the data files it is attached to: a row whose values in the columns
// Fields (indexes into the listing's Schema) equal one of its tuples is deleted. Values
// compare as SQL's IS NOT DISTINCT FROM does: NULL matches NULL. It is immutable once
// built, and shared by every file it applies to.
type EqualityDelete struct {
	Fields []int
	// ID names the delete, so that a file with other deletes is another file to a
	// statistics record.
	ID   string
	keys map[string]struct{}
}

// NewEqualityDelete starts an equality delete on the columns fields.
func NewEqualityDelete(id string, fields []int) *EqualityDelete {
	return &EqualityDelete{Fields: fields, ID: id, keys: map[string]struct{}{}}
}

// Add adds a deleted tuple: one value per column of Fields, typed like the column.
func (d *EqualityDelete) Add(tuple []types.Value) {
	d.keys[string(appendTuple(nil, tuple))] = struct{}{}
}

// Len is how many distinct tuples are deleted.
func (d *EqualityDelete) Len() int { return len(d.keys) }

// Contains reports whether a row with these values in Fields is deleted.
func (d *EqualityDelete) Contains(tuple []types.Value) bool {
	_, ok := d.keys[string(appendTuple(nil, tuple))]
	return ok
}

func (d *EqualityDelete) containsKey(key []byte) bool {
	_, ok := d.keys[string(key)]
	return ok
}

// appendTuple encodes values so that two tuples of the same types encode alike
// exactly when their values are equal, NULL equal to NULL.
func appendTuple(b []byte, tuple []types.Value) []byte {
	for _, v := range tuple {
		b = appendValue(b, v)
	}
	return b
}

func appendValue(b []byte, v types.Value) []byte {
	if v.Null {
		return append(b, 0)
	}
	b = append(b, 1)
	dt := types.Unwrap(v.Type)
	switch {
	case types.IsUnsigned(dt):
		return binary.BigEndian.AppendUint64(b, v.U)
	case types.IsFloat(dt):
		f := v.F
		if math.IsNaN(f) {
			f = math.NaN()
		}
		return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
	case types.IsString(dt), types.IsBinary(dt), types.IsNested(dt):
		b = binary.AppendUvarint(b, uint64(len(v.S)))
		return append(b, v.S...)
	case types.IsDecimal(dt):
		b = binary.BigEndian.AppendUint64(b, uint64(v.D.HighBits()))
		return binary.BigEndian.AppendUint64(b, v.D.LowBits())
	case dt.ID() == arrow.INTERVAL_MONTH_DAY_NANO:
		b = binary.BigEndian.AppendUint32(b, uint32(v.Iv.Months))
		b = binary.BigEndian.AppendUint32(b, uint32(v.Iv.Days))
		return binary.BigEndian.AppendUint64(b, uint64(v.Iv.Nanoseconds))
	}
	return binary.BigEndian.AppendUint64(b, uint64(v.I))
}

// equalityLive narrows a batch's selection (sel; nil is every one of rows) to the
// rows no equality delete of the file removes. keys[k] holds, for each delete, its
// columns' arrays in the batch. The result is nil when every row is live, and empty
// when none is.
func equalityLive(dels []*EqualityDelete, keys [][]arrow.Array, rows int, sel []int32) []int32 {
	out := make([]int32, 0, rows)
	var buf []byte
	dropped := false
	appenders := make([][]func([]byte, int) []byte, len(keys))
	for k, arrays := range keys {
		for _, a := range arrays {
			appenders[k] = append(appenders[k], keyAppender(a))
		}
	}
	visit := func(i int) {
		for k, d := range dels {
			buf = buf[:0]
			for _, app := range appenders[k] {
				buf = app(buf, i)
			}
			if d.containsKey(buf) {
				dropped = true
				return
			}
		}
		out = append(out, int32(i))
	}
	if sel == nil {
		for i := range rows {
			visit(i)
		}
		if !dropped {
			return nil
		}
		return out
	}
	for _, i := range sel {
		visit(int(i))
	}
	return out
}

// keyAppender returns what appends row i of a encoded as appendValue encodes its
// value, chosen once per array by its type so that rows are not boxed; other types
// box.
func keyAppender(a arrow.Array) func(b []byte, i int) []byte {
	word := func(b []byte, i int, v uint64) []byte {
		if a.IsNull(i) {
			return append(b, 0)
		}
		return binary.BigEndian.AppendUint64(append(b, 1), v)
	}
	bytesOf := func(b []byte, i int, v []byte) []byte {
		if a.IsNull(i) {
			return append(b, 0)
		}
		b = binary.AppendUvarint(append(b, 1), uint64(len(v)))
		return append(b, v...)
	}
	float := func(f float64) uint64 {
		if math.IsNaN(f) {
			f = math.NaN()
		}
		return math.Float64bits(f)
	}
	switch x := a.(type) {
	case *array.Int32:
		return func(b []byte, i int) []byte { return word(b, i, uint64(int64(x.Value(i)))) }
	case *array.Int64:
		return func(b []byte, i int) []byte { return word(b, i, uint64(x.Value(i))) }
	case *array.Date32:
		return func(b []byte, i int) []byte { return word(b, i, uint64(int64(x.Value(i)))) }
	case *array.Time64:
		return func(b []byte, i int) []byte { return word(b, i, uint64(int64(x.Value(i)))) }
	case *array.Timestamp:
		return func(b []byte, i int) []byte { return word(b, i, uint64(int64(x.Value(i)))) }
	case *array.Boolean:
		return func(b []byte, i int) []byte {
			var v uint64
			if x.Value(i) {
				v = 1
			}
			return word(b, i, v)
		}
	case *array.Float64:
		return func(b []byte, i int) []byte { return word(b, i, float(x.Value(i))) }
	case *array.Float32:
		return func(b []byte, i int) []byte { return word(b, i, float(float64(x.Value(i)))) }
	case *array.String:
		return func(b []byte, i int) []byte {
			if x.IsNull(i) {
				return append(b, 0)
			}
			v := x.Value(i)
			b = binary.AppendUvarint(append(b, 1), uint64(len(v)))
			return append(b, v...)
		}
	case *array.Binary:
		return func(b []byte, i int) []byte { return bytesOf(b, i, x.Value(i)) }
	case *array.Decimal128:
		return func(b []byte, i int) []byte {
			if x.IsNull(i) {
				return append(b, 0)
			}
			d := x.Value(i)
			b = binary.BigEndian.AppendUint64(append(b, 1), uint64(d.HighBits()))
			return binary.BigEndian.AppendUint64(b, d.LowBits())
		}
	case *array.Decimal64:
		// Keyed as the 128-bit value, like the case above.
		return func(b []byte, i int) []byte {
			if x.IsNull(i) {
				return append(b, 0)
			}
			d := int64(x.Value(i))
			b = binary.BigEndian.AppendUint64(append(b, 1), uint64(d>>63))
			return binary.BigEndian.AppendUint64(b, uint64(d))
		}
	}
	return func(b []byte, i int) []byte { return appendValue(b, types.ValueAt(a, i)) }
}
