package parquet

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/loredb/lore/types"
)

// A column chunk is read by the first of three paths that takes it:
//
//   - the page path (raw.go): Lore decodes the library's decompressed pages itself, for
//     flat numeric chunks in PLAIN and dictionary encodings and string chunks that are
//     dictionary-encoded throughout;
//   - the typed path (here): a flat column of a numeric or boolean physical type is
//     decoded by the library's typed column-chunk reader straight into the Go slice
//     that becomes the batch's value buffer, in the column's normalised type, skipping
//     the library's record reader (level bookkeeping, builders, chunked arrays);
//   - the library's Arrow reader (pqarrow) for everything else, then normalize.
//
// All three deliver the same types and values; tests read every test file all three
// ways and compare.

// readPath is the fastest path a column may take; tests and benchmarks lower it to
// compare the paths.
var readPath = pathPages

const (
	pathPages   = iota // the page path, else the typed path, else the library's
	pathTyped          // the typed path, else the library's Arrow reader
	pathLibrary        // the library's Arrow reader only
)

// decodeKind is how decoded physical values become the array's values.
type decodeKind uint8

const (
	kindCopy    decodeKind = iota // the values are the array's values as they are
	kindMicros                    // int64 milliseconds become microseconds
	kindDecimal                   // int32 or int64 unscaled values widen to decimal128
	kindInt8                      // int32 truncated to 8 bits (signedness is the type's)
	kindInt16                     // int32 truncated to 16 bits
	kindBool                      // bools packed into a bitmap
)

// chunkReader is what the library's typed column-chunk readers have in common.
type chunkReader[T any] interface {
	ReadBatch(batchSize int64, values []T, defLvls, repLvls []int16) (int64, int, error)
	Skip(rows int64) (int64, error)
	Err() error
	Close() error
}

// typedReader reads one flat column chunk of physical Go type T.
type typedReader[T int32 | int64 | float32 | float64 | bool] struct {
	r      chunkReader[T]
	want   arrow.DataType
	kind   decodeKind
	maxDef int16
	defs   []int16 // definition levels of the last batch, reused
	tmp    []T     // decoded values when they are converted, reused
}

// typedColumn returns a reader on the typed path for column c of row group rg, or nil
// when the column's shape or type is not one the path handles.
func (f *File) typedColumn(lib *libraryReaders, rg, c int) (colReader, error) {
	kind, ok := f.typedKind(c)
	if readPath == pathLibrary || !ok {
		return nil, nil
	}
	leaf := f.cols[c].leaf
	rdr, err := lib.file()
	if err != nil {
		return nil, err
	}
	cr, err := rdr.RowGroup(rg).Column(f.cols[c].leaves[0])
	if err != nil {
		return nil, err
	}
	want, maxDef := f.schema.Field(c).Type, leaf.MaxDefinitionLevel()
	switch r := cr.(type) {
	case *file.Int32ColumnChunkReader:
		return &typedReader[int32]{r: r, want: want, kind: kind, maxDef: maxDef}, nil
	case *file.Int64ColumnChunkReader:
		return &typedReader[int64]{r: r, want: want, kind: kind, maxDef: maxDef}, nil
	case *file.Float32ColumnChunkReader:
		return &typedReader[float32]{r: r, want: want, kind: kind, maxDef: maxDef}, nil
	case *file.Float64ColumnChunkReader:
		return &typedReader[float64]{r: r, want: want, kind: kind, maxDef: maxDef}, nil
	case *file.BooleanColumnChunkReader:
		return &typedReader[bool]{r: r, want: want, kind: kind, maxDef: maxDef}, nil
	}
	return nil, fmt.Errorf("column %q: %s column has a %T reader", leaf.Path(), leaf.PhysicalType(), cr)
}

// typedKind decides whether column c can take the typed path, and how: a flat leaf
// (no repetition, at most one definition level) of a numeric or boolean physical type.
// The library's type must be the one it infers from the Parquet schema alone: when an
// embedded Arrow schema made it pick another (date64, seconds, a dictionary), the
// library's conversion is kept.
func (f *File) typedKind(c int) (decodeKind, bool) {
	col := f.cols[c]
	leaf := col.leaf
	if leaf == nil || col.int96 || leaf.MaxRepetitionLevel() != 0 || leaf.MaxDefinitionLevel() > 1 {
		return 0, false
	}
	read, want := col.read, f.schema.Field(c).Type
	inferred := inferredType(leaf)
	if inferred == nil || !sameType(inferred, read) {
		return 0, false
	}
	switch inferred.ID() {
	case arrow.TIMESTAMP:
		from := inferred.(*arrow.TimestampType).Unit
		to, ok := want.(*arrow.TimestampType)
		switch {
		case !ok:
			return 0, false
		case from == to.Unit:
			return kindCopy, true
		case from == arrow.Millisecond && to.Unit == arrow.Microsecond:
			return kindMicros, true
		}
		return 0, false
	case arrow.DECIMAL128:
		if !arrow.TypeEqual(inferred, types.Wide(want)) {
			return 0, false
		}
		return kindDecimal, true
	}
	if !arrow.TypeEqual(inferred, want) {
		return 0, false
	}
	switch inferred.ID() {
	case arrow.INT8, arrow.UINT8:
		return kindInt8, true
	case arrow.INT16, arrow.UINT16:
		return kindInt16, true
	case arrow.BOOL:
		return kindBool, true
	}
	return kindCopy, true
}

// sameType compares types, timestamps by unit only: their time zone is the schema's
// business, not the values'.
func sameType(a, b arrow.DataType) bool {
	if ta, ok := a.(*arrow.TimestampType); ok {
		tb, ok := b.(*arrow.TimestampType)
		return ok && ta.Unit == tb.Unit
	}
	return arrow.TypeEqual(a, b)
}

// inferredType is the Arrow type the library gives a leaf of a numeric or boolean
// physical type from its Parquet annotation, or nil for the ones the typed path leaves
// to the library.
func inferredType(leaf *schema.Column) arrow.DataType {
	lt := leaf.LogicalType()
	switch leaf.PhysicalType() {
	case pq.Types.Boolean:
		if lt == nil || lt.IsNone() {
			return arrow.FixedWidthTypes.Boolean
		}
	case pq.Types.Float:
		if lt == nil || lt.IsNone() {
			return arrow.PrimitiveTypes.Float32
		}
	case pq.Types.Double:
		if lt == nil || lt.IsNone() {
			return arrow.PrimitiveTypes.Float64
		}
	case pq.Types.Int32:
		switch t := lt.(type) {
		case nil, schema.NoLogicalType:
			return arrow.PrimitiveTypes.Int32
		case schema.DateLogicalType:
			return arrow.FixedWidthTypes.Date32
		case schema.TimeLogicalType:
			if t.TimeUnit() == schema.TimeUnitMillis {
				return arrow.FixedWidthTypes.Time32ms
			}
		case schema.DecimalLogicalType:
			if t.Precision() >= 1 && t.Precision() <= 38 {
				return &arrow.Decimal128Type{Precision: t.Precision(), Scale: t.Scale()}
			}
		case schema.IntLogicalType:
			return intType(t, 32)
		}
	case pq.Types.Int64:
		switch t := lt.(type) {
		case nil, schema.NoLogicalType:
			return arrow.PrimitiveTypes.Int64
		case schema.TimestampLogicalType:
			switch t.TimeUnit() {
			case schema.TimeUnitMillis:
				return &arrow.TimestampType{Unit: arrow.Millisecond}
			case schema.TimeUnitMicros:
				return &arrow.TimestampType{Unit: arrow.Microsecond}
			case schema.TimeUnitNanos:
				return &arrow.TimestampType{Unit: arrow.Nanosecond}
			}
		case schema.TimeLogicalType:
			switch t.TimeUnit() {
			case schema.TimeUnitMicros:
				return arrow.FixedWidthTypes.Time64us
			case schema.TimeUnitNanos:
				return arrow.FixedWidthTypes.Time64ns
			}
		case schema.DecimalLogicalType:
			if t.Precision() >= 1 && t.Precision() <= 38 {
				return &arrow.Decimal128Type{Precision: t.Precision(), Scale: t.Scale()}
			}
		case schema.IntLogicalType:
			return intType(t, 64)
		}
	}
	return nil
}

// intType is the Arrow integer type of an INT annotation on a physical type of the
// given width; wider annotations than the physical type are left to the library.
func intType(t schema.IntLogicalType, physical int) arrow.DataType {
	if int(t.BitWidth()) > physical || (physical == 64) != (t.BitWidth() == 64) {
		return nil
	}
	switch t.BitWidth() {
	case 8:
		if t.IsSigned() {
			return arrow.PrimitiveTypes.Int8
		}
		return arrow.PrimitiveTypes.Uint8
	case 16:
		if t.IsSigned() {
			return arrow.PrimitiveTypes.Int16
		}
		return arrow.PrimitiveTypes.Uint16
	case 32:
		if t.IsSigned() {
			return arrow.PrimitiveTypes.Int32
		}
		return arrow.PrimitiveTypes.Uint32
	case 64:
		if t.IsSigned() {
			return arrow.PrimitiveTypes.Int64
		}
		return arrow.PrimitiveTypes.Uint64
	}
	return nil
}

// next reads up to n rows. The value buffer of the array it returns is allocated for
// this batch alone: the engine may keep the array as long as it likes.
func (c *typedReader[T]) next(n int64) (arrow.Array, error) {
	var vals []T
	if c.kind == kindCopy || c.kind == kindMicros {
		vals = make([]T, n) // decoded in place: this is the array's buffer
	} else {
		if int64(len(c.tmp)) < n {
			c.tmp = make([]T, n)
		}
		vals = c.tmp[:n]
	}
	var defs []int16
	if c.maxDef > 0 {
		if int64(len(c.defs)) < n {
			c.defs = make([]int16, n)
		}
		defs = c.defs[:n]
	}
	// A reader that failed (in a skip, say) may not be asked for more: the library's
	// batch loop would wait for ever on a page it could not set up.
	if err := c.r.Err(); err != nil {
		return nil, err
	}
	total, nv, err := c.r.ReadBatch(n, vals, defs, nil)
	if err != nil {
		return nil, err
	}
	if err := c.r.Err(); err != nil {
		return nil, err
	}
	if total < 0 || total > n || nv < 0 || int64(nv) > total {
		return nil, fmt.Errorf("column chunk reader returned %d levels and %d values for %d rows", total, nv, n)
	}
	rows := int(total)
	vals = vals[:rows]

	var valid *memory.Buffer
	nulls := 0
	if int64(nv) < total {
		if c.maxDef == 0 {
			return nil, fmt.Errorf("required column has %d values for %d rows", nv, total)
		}
		bits, err := spread(vals, defs[:rows], c.maxDef, nv)
		if err != nil {
			return nil, err
		}
		valid, nulls = memory.NewBufferBytes(bits), rows-nv
	}

	var data *memory.Buffer
	switch c.kind {
	case kindCopy:
		data = memory.NewBufferBytes(bytesOf(vals))
	case kindMicros:
		if err := millisToMicros(any(vals).([]int64)); err != nil {
			return nil, err
		}
		data = memory.NewBufferBytes(bytesOf(vals))
	case kindDecimal:
		narrow := c.want.ID() == arrow.DECIMAL64
		switch v := any(vals).(type) {
		case []int32:
			if narrow {
				data = memory.NewBufferBytes(bytesOf(widenInt32(v)))
			} else {
				data = memory.NewBufferBytes(bytesOf(widenDecimal(v)))
			}
		case []int64:
			if narrow {
				// v is the reader's scratch space: the array gets a copy.
				data = memory.NewBufferBytes(bytesOf(append([]int64(nil), v...)))
			} else {
				data = memory.NewBufferBytes(bytesOf(widenDecimal(v)))
			}
		default:
			return nil, fmt.Errorf("BUG: decimal from %T", vals)
		}
	case kindInt8:
		data = memory.NewBufferBytes(bytesOf(narrow[int8](any(vals).([]int32))))
	case kindInt16:
		data = memory.NewBufferBytes(bytesOf(narrow[int16](any(vals).([]int32))))
	case kindBool:
		data = memory.NewBufferBytes(packBools(any(vals).([]bool)))
	}
	d := array.NewData(c.want, rows, []*memory.Buffer{valid, data}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

func (c *typedReader[T]) skip(n int64) error {
	k, err := c.r.Skip(n)
	if err == nil {
		err = c.r.Err()
	}
	return skipped(n, k, err)
}

func (c *typedReader[T]) release() { c.r.Close() }

// spread moves the nv dense values at the start of vals to the rows whose definition
// level says they are defined (from the back, so in place), zeroes the null rows, and
// returns the validity bitmap.
func spread[T any](vals []T, defs []int16, maxDef int16, nv int) ([]byte, error) {
	bits := make([]byte, bitutil.BytesForBits(int64(len(vals))))
	defined := 0
	for i, d := range defs {
		if d == maxDef {
			bits[i>>3] |= 1 << (i & 7)
			defined++
		}
	}
	if defined != nv {
		return nil, fmt.Errorf("definition levels say %d values, the page has %d", defined, nv)
	}
	var zero T
	k := nv - 1
	for i := len(vals) - 1; i > k; i-- {
		if defs[i] == maxDef {
			vals[i] = vals[k]
			k--
		} else {
			vals[i] = zero
		}
	}
	return bits, nil
}

// millisToMicros scales milliseconds to microseconds in place, refusing overflow.
func millisToMicros(v []int64) error {
	for i, x := range v {
		if x > math.MaxInt64/1000 || x < math.MinInt64/1000 {
			return fmt.Errorf("timestamp %d ms out of range for microseconds", x)
		}
		v[i] = x * 1000
	}
	return nil
}

// widenInt32 copies int32 values into int64s.
func widenInt32(v []int32) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

func widenDecimal[T int32 | int64](v []T) []decimal128.Num {
	out := make([]decimal128.Num, len(v))
	for i, x := range v {
		out[i] = decimal128.FromI64(int64(x))
	}
	return out
}

// narrow truncates int32 values to a narrower integer type, as the library does for
// INT(8) and INT(16) annotations.
func narrow[O int8 | int16](v []int32) []O {
	out := make([]O, len(v))
	for i, x := range v {
		out[i] = O(x)
	}
	return out
}

func packBools(v []bool) []byte {
	out := make([]byte, bitutil.BytesForBits(int64(len(v))))
	for i, b := range v {
		if b {
			out[i>>3] |= 1 << (i & 7)
		}
	}
	return out
}

// bytesOf is the memory of a slice of fixed-width values, shared, as an Arrow buffer
// holds it.
func bytesOf[T any](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(zero)))
}
