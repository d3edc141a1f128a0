package kernels

import (
	"bytes"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// cmpOp is a comparison operator.
type cmpOp uint8

const (
	opEq cmpOp = iota
	opNe
	opLt
	opLe
	opGt
	opGe
)

var cmpOps = map[string]cmpOp{"=": opEq, "==": opEq, "<>": opNe, "!=": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe}

// holds reports whether a three-way comparison result c satisfies op.
func (op cmpOp) holds(c int) bool {
	switch op {
	case opEq:
		return c == 0
	case opNe:
		return c != 0
	case opLt:
		return c < 0
	case opLe:
		return c <= 0
	case opGt:
		return c > 0
	}
	return c >= 0
}

// lowWords are scratch buffers for the low words of decimals compared as integers.
var lowWords = sync.Pool{New: func() any { return new([]int64) }}

// CompareConst compares every row of arr with the constant v (the hot path of
// filters) and returns a BOOLEAN array, NULL where arr is NULL (all NULL when v is
// NULL). op is one of = <> < <= > >= (and != ==); arr and v have the same type after
// coercion. A dictionary arr is compared once per dictionary value.
func CompareConst(op string, arr arrow.Array, v types.Value) (*array.Boolean, error) {
	o, ok := cmpOps[op]
	if !ok {
		return nil, errs.New(errs.Analysis, "unknown comparison operator %q", op)
	}
	if v.Type == nil {
		return nil, errs.New(errs.Internal, "CompareConst: the constant has no type")
	}
	n := arr.Len()
	if v.Null || arr.DataType().ID() == arrow.NULL {
		return boolArray(make([]byte, bitmapLen(n)), n, make([]byte, bitmapLen(n)), n), nil
	}
	if at, vt := types.Unwrap(arr.DataType()), types.Unwrap(v.Type); !arrow.TypeEqual(at, vt) {
		var err error
		if arr, v, err = alignConst(arr, v); err != nil {
			return nil, err
		}
	}
	if NestedOrderable(arr.DataType()) {
		return compareArrays(o, arr, ConstArray(v, n))
	}
	if d, ok := arr.(*array.Dictionary); ok {
		if d.Dictionary().Len() > 2*n {
			// A dictionary much larger than the batch (a slice of a big one): comparing
			// the rows is cheaper than comparing every dictionary value.
			return CompareConst(op, Decode(arr), v)
		}
		perValue, err := CompareConst(op, d.Dictionary(), v)
		if err != nil {
			return nil, err
		}
		return gatherBool(perValue, d.Indices()), nil
	}
	bits := make([]byte, bitmapLen(n))
	valid, nulls := copyValidity(arr)
	switch a := arr.(type) {
	case *array.Int8:
		cmpVC(o, a.Int8Values(), int8(v.I), bits)
	case *array.Int16:
		cmpVC(o, a.Int16Values(), int16(v.I), bits)
	case *array.Int32:
		cmpVC(o, a.Int32Values(), int32(v.I), bits)
	case *array.Int64:
		cmpVC(o, a.Int64Values(), v.I, bits)
	case *array.Uint8:
		cmpVC(o, a.Uint8Values(), uint8(v.U), bits)
	case *array.Uint16:
		cmpVC(o, a.Uint16Values(), uint16(v.U), bits)
	case *array.Uint32:
		cmpVC(o, a.Uint32Values(), uint32(v.U), bits)
	case *array.Uint64:
		cmpVC(o, a.Uint64Values(), v.U, bits)
	case *array.Float32:
		cmpFloatVC(o, a.Float32Values(), float32(v.F), bits)
	case *array.Float64:
		cmpFloatVC(o, a.Float64Values(), v.F, bits)
	case *array.Date32:
		cmpVC(o, a.Date32Values(), arrow.Date32(v.I), bits)
	case *array.Timestamp:
		cmpVC(o, a.TimestampValues(), arrow.Timestamp(v.I), bits)
	case *array.Time32:
		cmpVC(o, a.Time32Values(), arrow.Time32(v.I), bits)
	case *array.Time64:
		cmpVC(o, a.Time64Values(), arrow.Time64(v.I), bits)
	case *array.String:
		cmpStringConst(o, a, v.S, bits)
	case *array.Boolean:
		c := v.I != 0
		for i := 0; i < n; i++ {
			if o.holds(cmpBool(a.Value(i), c)) {
				bitutil.SetBit(bits, i)
			}
		}
	case *array.Decimal64:
		c, ok := fitsInt64(v.D)
		if !ok {
			// A constant beyond 64 bits: compare in 128.
			return CompareConst(op, WidenDecimal(arr), v)
		}
		cmpVC(o, int64sOf(a), c, bits)
	case *array.Decimal128:
		vals := a.Values()
		if c, ok := fitsInt64(v.D); ok && a.DataType().(*arrow.Decimal128Type).Precision <= 18 {
			// Every value of at most 18 digits is its low 64 bits: compare those with
			// the typed loops.
			lp := lowWords.Get().(*[]int64)
			low := (*lp)[:0]
			for _, x := range vals {
				low = append(low, int64(x.LowBits()))
			}
			cmpVC(o, low, c, bits)
			*lp = low
			lowWords.Put(lp)
			break
		}
		for i, x := range vals {
			if o.holds(x.Cmp(v.D)) {
				bitutil.SetBit(bits, i)
			}
		}
	case *array.MonthDayNanoInterval:
		c := intervalKey(v.Iv)
		for i, x := range a.MonthDayNanoIntervalValues() {
			if o.holds(cmpInterval(intervalKey(x), c)) {
				bitutil.SetBit(bits, i)
			}
		}
	case *array.Binary:
		c := []byte(v.S)
		for i := 0; i < n; i++ {
			if o.holds(bytes.Compare(a.Value(i), c)) {
				bitutil.SetBit(bits, i)
			}
		}
	default:
		// Large and view strings: compare through the canonical form.
		if s, ok := asStrings(arr); ok {
			for i := 0; i < n; i++ {
				if o.holds(compareStrings(s.Value(i), v.S)) {
					bitutil.SetBit(bits, i)
				}
			}
			break
		}
		return nil, errs.New(errs.Analysis, "cannot compare values of type %s", types.Name(arr.DataType()))
	}
	return boolArray(bits, n, valid, nulls), nil
}

// alignConst brings a column and a constant of different types to one type, so
// that a caller passing, say, a BIGINT constant for an INTEGER column still gets
// an exact answer: the constant is converted to the column's type when that loses
// nothing, otherwise both go to their common type.
func alignConst(arr arrow.Array, v types.Value) (arrow.Array, types.Value, error) {
	at, vt := types.Unwrap(arr.DataType()), types.Unwrap(v.Type)
	if c, err := Cast(ConstArray(v, 1), at); err == nil {
		if back, err := Cast(c, vt); err == nil && types.Compare(types.ValueAt(back, 0), v) == 0 {
			return arr, types.ValueAt(c, 0), nil
		}
	}
	ct, ok := CommonType(at, vt)
	if !ok {
		return nil, v, errs.New(errs.Analysis, "cannot compare %s with %s", types.Name(at), types.Name(vt))
	}
	ca, err := Cast(arr, ct)
	if err != nil {
		return nil, v, err
	}
	cv, err := Cast(ConstArray(v, 1), ct)
	if err != nil {
		return nil, v, err
	}
	return ca, types.ValueAt(cv, 0), nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// intervalKey orders intervals the way DuckDB does: months as 30 days, days as 24
// hours, compared as (normalised months, days, micros).
type ivKey struct{ months, days, micros int64 }

func intervalKey(iv arrow.MonthDayNanoInterval) ivKey {
	micros := iv.Nanoseconds / 1000
	days := int64(iv.Days) + micros/microsPerDay
	micros %= microsPerDay
	months := int64(iv.Months) + days/30
	days %= 30
	return ivKey{months, days, micros}
}

func cmpInterval(a, b ivKey) int {
	switch {
	case a.months != b.months:
		return cmpI64(a.months, b.months)
	case a.days != b.days:
		return cmpI64(a.days, b.days)
	}
	return cmpI64(a.micros, b.micros)
}

func cmpI64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// strRaw exposes a string array's offsets (absolute into data) and its whole data
// buffer, so loops slice bytes without per-row method calls.
func strRaw(a *array.String) ([]int32, []byte) {
	offs := a.ValueOffsets()
	var data []byte
	if bufs := a.Data().Buffers(); len(bufs) > 2 && bufs[2] != nil {
		data = bufs[2].Bytes()
	}
	return offs, data
}

func cmpStringConst(o cmpOp, a *array.String, c string, bits []byte) {
	offs, data := strRaw(a)
	n := a.Len()
	cb := []byte(c)
	switch o {
	case opEq, opNe:
		want := o == opEq
		for i := 0; i < n; i++ {
			s := data[offs[i]:offs[i+1]]
			eq := len(s) == len(cb) && bytes.Equal(s, cb)
			if eq == want {
				bits[i>>3] |= 1 << (i & 7)
			}
		}
	default:
		for i := 0; i < n; i++ {
			if o.holds(bytes.Compare(data[offs[i]:offs[i+1]], cb)) {
				bits[i>>3] |= 1 << (i & 7)
			}
		}
	}
}

// compareArrays compares two arrays of the same (non-dictionary) type row by row.
func compareArrays(o cmpOp, x, y arrow.Array) (*array.Boolean, error) {
	n := x.Len()
	bits := make([]byte, bitmapLen(n))
	valid, nulls := andValidity(n, x, y)
	if x.DataType().ID() == arrow.NULL || y.DataType().ID() == arrow.NULL {
		return boolArray(bits, n, make([]byte, bitmapLen(n)), n), nil
	}
	if NestedOrderable(x.DataType()) && arrow.TypeEqual(x.DataType(), y.DataType()) {
		// Nested values compare as their encodings do (nestedkey.go).
		x, y = NestedKeys(x), NestedKeys(y)
	}
	switch a := x.(type) {
	case *array.Int8:
		cmpVV(o, a.Int8Values(), y.(*array.Int8).Int8Values(), bits)
	case *array.Int16:
		cmpVV(o, a.Int16Values(), y.(*array.Int16).Int16Values(), bits)
	case *array.Int32:
		cmpVV(o, a.Int32Values(), y.(*array.Int32).Int32Values(), bits)
	case *array.Int64:
		cmpVV(o, a.Int64Values(), y.(*array.Int64).Int64Values(), bits)
	case *array.Uint8:
		cmpVV(o, a.Uint8Values(), y.(*array.Uint8).Uint8Values(), bits)
	case *array.Uint16:
		cmpVV(o, a.Uint16Values(), y.(*array.Uint16).Uint16Values(), bits)
	case *array.Uint32:
		cmpVV(o, a.Uint32Values(), y.(*array.Uint32).Uint32Values(), bits)
	case *array.Uint64:
		cmpVV(o, a.Uint64Values(), y.(*array.Uint64).Uint64Values(), bits)
	case *array.Float32:
		cmpFloatVV(o, a.Float32Values(), y.(*array.Float32).Float32Values(), bits)
	case *array.Float64:
		cmpFloatVV(o, a.Float64Values(), y.(*array.Float64).Float64Values(), bits)
	case *array.Date32:
		cmpVV(o, a.Date32Values(), y.(*array.Date32).Date32Values(), bits)
	case *array.Timestamp:
		cmpVV(o, a.TimestampValues(), y.(*array.Timestamp).TimestampValues(), bits)
	case *array.Time32:
		cmpVV(o, a.Time32Values(), y.(*array.Time32).Time32Values(), bits)
	case *array.Time64:
		cmpVV(o, a.Time64Values(), y.(*array.Time64).Time64Values(), bits)
	case *array.String:
		b := y.(*array.String)
		ao, ad := strRaw(a)
		bo, bd := strRaw(b)
		for i := 0; i < n; i++ {
			if o.holds(bytes.Compare(ad[ao[i]:ao[i+1]], bd[bo[i]:bo[i+1]])) {
				bits[i>>3] |= 1 << (i & 7)
			}
		}
	case *array.Boolean:
		b := y.(*array.Boolean)
		for i := 0; i < n; i++ {
			if o.holds(cmpBool(a.Value(i), b.Value(i))) {
				bitutil.SetBit(bits, i)
			}
		}
	case *array.Decimal64:
		bv, ok := y.(*array.Decimal64)
		if !ok {
			return compareArrays(o, WidenDecimal(x), y)
		}
		cmpVV(o, int64sOf(a), int64sOf(bv), bits)
	case *array.Decimal128:
		if _, ok := y.(*array.Decimal64); ok {
			return compareArrays(o, x, WidenDecimal(y))
		}
		bv := y.(*array.Decimal128).Values()
		for i, v := range a.Values() {
			if o.holds(v.Cmp(bv[i])) {
				bitutil.SetBit(bits, i)
			}
		}
	case *array.MonthDayNanoInterval:
		bv := y.(*array.MonthDayNanoInterval).MonthDayNanoIntervalValues()
		for i, v := range a.MonthDayNanoIntervalValues() {
			if o.holds(cmpInterval(intervalKey(v), intervalKey(bv[i]))) {
				bitutil.SetBit(bits, i)
			}
		}
	case *array.Binary:
		b := y.(*array.Binary)
		for i := 0; i < n; i++ {
			if o.holds(bytes.Compare(a.Value(i), b.Value(i))) {
				bitutil.SetBit(bits, i)
			}
		}
	default:
		return nil, errs.New(errs.Analysis, "cannot compare values of type %s", types.Name(x.DataType()))
	}
	return boolArray(bits, n, valid, nulls), nil
}

// gatherBool maps a per-dictionary-value boolean result to the rows of a
// dictionary array through its indices: row i is res[indices[i]], NULL where the
// index is NULL or the value's result is NULL.
func gatherBool(res *array.Boolean, indices arrow.Array) *array.Boolean {
	switch ix := indices.(type) {
	case *array.Int8:
		return gatherBoolIdx(res, ix.Int8Values(), indices)
	case *array.Int16:
		return gatherBoolIdx(res, ix.Int16Values(), indices)
	case *array.Int32:
		return gatherBoolIdx(res, ix.Int32Values(), indices)
	case *array.Int64:
		return gatherBoolIdx(res, ix.Int64Values(), indices)
	case *array.Uint8:
		return gatherBoolIdx(res, ix.Uint8Values(), indices)
	case *array.Uint16:
		return gatherBoolIdx(res, ix.Uint16Values(), indices)
	case *array.Uint32:
		return gatherBoolIdx(res, ix.Uint32Values(), indices)
	case *array.Uint64:
		return gatherBoolIdx(res, ix.Uint64Values(), indices)
	}
	panic("BUG: dictionary index type " + indices.DataType().String())
}

func gatherBoolIdx[I integer](res *array.Boolean, idx []I, indices arrow.Array) *array.Boolean {
	n := len(idx)
	d := res.Len()
	// Copy the per-value bits and validity to offset 0 so lookups are plain.
	rv := make([]byte, bitmapLen(d))
	if d > 0 {
		bitutil.CopyBitmap(res.Data().Buffers()[1].Bytes(), res.Data().Offset(), d, rv, 0)
	}
	resValid, _ := copyValidity(res)
	ixValid, ixOff := validityOf(indices)
	bits := make([]byte, bitmapLen(n))
	if resValid == nil && ixValid == nil {
		// The common case: a plain lookup per row, eight rows per output byte.
		full := n &^ 7
		for i := 0; i < full; i += 8 {
			k := idx[i : i+8 : i+8]
			var w byte
			for j, x := range k {
				w |= (rv[x>>3] >> (x & 7) & 1) << j
			}
			bits[i>>3] = w
		}
		for i := full; i < n; i++ {
			x := idx[i]
			bits[i>>3] |= (rv[x>>3] >> (x & 7) & 1) << (i & 7)
		}
		return boolArray(bits, n, nil, 0)
	}
	var valid []byte
	nulls := 0
	if resValid != nil || ixValid != nil {
		valid = make([]byte, bitmapLen(n))
	}
	for i, k := range idx {
		if ixValid != nil && !bitutil.BitIsSet(ixValid, ixOff+i) {
			nulls++
			continue
		}
		if resValid != nil && !bitutil.BitIsSet(resValid, int(k)) {
			nulls++
			continue
		}
		if valid != nil {
			bitutil.SetBit(valid, i)
		}
		if bitutil.BitIsSet(rv, int(k)) {
			bitutil.SetBit(bits, i)
		}
	}
	if nulls == 0 {
		valid = nil
	}
	return boolArray(bits, n, valid, nulls)
}

// SelectConst is CompareConst fused with the selection a filter makes of it: it
// returns the rows of sel (every row when sel is nil), in order, where arr op v is
// true — never a NULL row. ok is false, and nothing done, for what it does not take:
// types that need aligning (but decimals of one scale), dictionaries, floats,
// strings, and decimals beyond 18 digits; CompareConst takes those. The rows are
// written into room when it holds as many as there are rows to test (its contents
// need not be cleared), into a new slice otherwise.
func SelectConst(op string, arr arrow.Array, v types.Value, sel, room []int32) (out []int32, ok bool) {
	o, known := cmpOps[op]
	if !known || v.Null || v.Type == nil {
		return nil, false
	}
	at, vt := types.Unwrap(arr.DataType()), types.Unwrap(v.Type)
	if !arrow.TypeEqual(at, vt) {
		// Decimals of one scale are scaled integers alike, whatever their precisions.
		_, as, ok1 := types.DecimalParams(at)
		_, vs, ok2 := types.DecimalParams(vt)
		if !ok1 || !ok2 || as != vs {
			return nil, false
		}
	}
	n := arr.Len()
	if sel != nil {
		n = len(sel)
	}
	out = hashGrow(room, n)
	switch a := arr.(type) {
	case *array.Int8:
		out = selectVC(o, a.Int8Values(), int8(v.I), sel, out)
	case *array.Int16:
		out = selectVC(o, a.Int16Values(), int16(v.I), sel, out)
	case *array.Int32:
		out = selectVC(o, a.Int32Values(), int32(v.I), sel, out)
	case *array.Int64:
		out = selectVC(o, a.Int64Values(), v.I, sel, out)
	case *array.Uint8:
		out = selectVC(o, a.Uint8Values(), uint8(v.U), sel, out)
	case *array.Uint16:
		out = selectVC(o, a.Uint16Values(), uint16(v.U), sel, out)
	case *array.Uint32:
		out = selectVC(o, a.Uint32Values(), uint32(v.U), sel, out)
	case *array.Uint64:
		out = selectVC(o, a.Uint64Values(), v.U, sel, out)
	case *array.Date32:
		out = selectVC(o, a.Date32Values(), arrow.Date32(v.I), sel, out)
	case *array.Timestamp:
		out = selectVC(o, a.TimestampValues(), arrow.Timestamp(v.I), sel, out)
	case *array.Decimal64:
		c, fits := fitsInt64(v.D)
		if !fits {
			return nil, false
		}
		out = selectVC(o, int64sOf(a), c, sel, out)
	case *array.Decimal128:
		c, fits := fitsInt64(v.D)
		if !fits || a.DataType().(*arrow.Decimal128Type).Precision > 18 {
			return nil, false
		}
		// Every value of at most 18 digits is its low 64 bits.
		lp := lowWords.Get().(*[]int64)
		low := (*lp)[:0]
		for _, x := range a.Values() {
			low = append(low, int64(x.LowBits()))
		}
		out = selectVC(o, low, c, sel, out)
		*lp = low
		lowWords.Put(lp)
	default:
		return nil, false
	}
	if arr.NullN() > 0 {
		k := 0
		for _, i := range out {
			out[k] = i
			k += b2i(arr.IsValid(int(i)))
		}
		out = out[:k]
	}
	return out, true
}
