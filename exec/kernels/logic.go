package kernels

import (
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// boolParts returns a boolean array's value bits and validity as fresh offset-0
// bitmaps; validity is all ones when the array has no NULL.
func boolParts(a *array.Boolean) (vals, valid []byte) {
	n := a.Len()
	vals = make([]byte, bitmapLen(n))
	if n > 0 {
		bitutil.CopyBitmap(a.Data().Buffers()[1].Bytes(), a.Data().Offset(), n, vals, 0)
	}
	valid = make([]byte, bitmapLen(n))
	if bm, off := validityOf(a); bm != nil {
		bitutil.CopyBitmap(bm, off, n, valid, 0)
	} else {
		bitutil.SetBitsTo(valid, 0, int64(n), true)
	}
	return vals, valid
}

func finishBool(vals, valid []byte, n int) *array.Boolean {
	nulls := n - bitutil.CountSetBits(valid, 0, n)
	if nulls == 0 {
		valid = nil
	}
	return boolArray(vals, n, valid, nulls)
}

// and3 is SQL AND: false if either side is false, NULL if unknown, else true.
func and3(x, y *array.Boolean) *array.Boolean {
	n := x.Len()
	av, am := boolParts(x)
	bv, bm := boolParts(y)
	for i := range av {
		ta, tb := av[i]&am[i], bv[i]&bm[i]   // known true
		fa, fb := am[i]&^av[i], bm[i]&^bv[i] // known false
		av[i] = ta & tb
		am[i] = (am[i] & bm[i]) | fa | fb
	}
	return finishBool(av, am, n)
}

// or3 is SQL OR: true if either side is true, NULL if unknown, else false.
func or3(x, y *array.Boolean) *array.Boolean {
	n := x.Len()
	av, am := boolParts(x)
	bv, bm := boolParts(y)
	for i := range av {
		ta, tb := av[i]&am[i], bv[i]&bm[i]
		av[i] = ta | tb
		am[i] = (am[i] & bm[i]) | ta | tb
	}
	return finishBool(av, am, n)
}

// not3 is SQL NOT: NULL stays NULL.
func not3(x *array.Boolean) *array.Boolean {
	n := x.Len()
	av, am := boolParts(x)
	for i := range av {
		av[i] = ^av[i] & am[i]
	}
	return finishBool(av, am, n)
}

// isNull is x IS NULL (want true) or x IS NOT NULL (want false); never NULL.
func isNull(x arrow.Array, want bool) *array.Boolean {
	n := x.Len()
	bits := make([]byte, bitmapLen(n))
	bm, off := validityOf(x)
	switch {
	case bm == nil:
		if !want {
			bitutil.SetBitsTo(bits, 0, int64(n), true)
		}
	case want:
		bitutil.InvertBitmap(bm, off, n, bits, 0)
	default:
		bitutil.CopyBitmap(bm, off, n, bits, 0)
	}
	return boolArray(bits, n, nil, 0)
}

// distinctFrom is x IS DISTINCT FROM y (want true) or IS NOT DISTINCT FROM (false):
// NULL equals NULL and differs from every value; never NULL.
func distinctFrom(x, y arrow.Array, want bool) (*array.Boolean, error) {
	n := x.Len()
	var ne *array.Boolean
	if x.DataType().ID() == arrow.NULL {
		ne = boolArray(make([]byte, bitmapLen(n)), n, nil, 0)
	} else {
		var err error
		if ne, err = compareArrays(opNe, x, y); err != nil {
			return nil, err
		}
	}
	nv, _ := boolParts(ne)
	xm, ym := make([]byte, bitmapLen(n)), make([]byte, bitmapLen(n))
	fillValidity(x, xm)
	fillValidity(y, ym)
	for i := range nv {
		both := xm[i] & ym[i]
		d := (nv[i] & both) | (xm[i] ^ ym[i])
		if !want {
			d = ^d
		}
		nv[i] = d
	}
	return boolArray(nv, n, nil, 0), nil
}

// fillValidity writes arr's validity to an offset-0 bitmap (all ones when no NULL).
func fillValidity(arr arrow.Array, dst []byte) {
	if bm, off := validityOf(arr); bm != nil {
		bitutil.CopyBitmap(bm, off, arr.Len(), dst, 0)
	} else {
		bitutil.SetBitsTo(dst, 0, int64(arr.Len()), true)
	}
}

// IfElse returns, row by row, then where cond is true and els where cond is false
// or NULL (CASE WHEN semantics). then and els have the same type (dictionary
// arrays are decoded); the result has that type.
func IfElse(cond *array.Boolean, then, els arrow.Array) arrow.Array {
	then, els = Decode(then), Decode(els)
	if then.DataType().ID() == arrow.NULL && els.DataType().ID() == arrow.NULL {
		return then
	}
	if then.DataType().ID() == arrow.NULL {
		then = nullArray(els.DataType(), els.Len())
	} else if els.DataType().ID() == arrow.NULL {
		els = nullArray(then.DataType(), then.Len())
	}
	if !arrow.TypeEqual(then.DataType(), els.DataType()) {
		// Callers cast both branches to their common type; tolerate one that did not.
		ct, ok := commonType(then.DataType(), els.DataType())
		if !ok {
			panic("BUG: IfElse of " + then.DataType().String() + " and " + els.DataType().String())
		}
		var err1, err2 error
		then, err1 = Cast(then, ct)
		els, err2 = Cast(els, ct)
		if err1 != nil || err2 != nil {
			panic(fmt.Sprintf("BUG: IfElse cast to %s: %v %v", ct, err1, err2))
		}
		then, els = Decode(then), Decode(els)
	}
	n := cond.Len()
	pick, cm := boolParts(cond)
	for i := range pick {
		pick[i] &= cm[i] // NULL conditions choose els
	}
	tm, em := make([]byte, bitmapLen(n)), make([]byte, bitmapLen(n))
	fillValidity(then, tm)
	fillValidity(els, em)
	valid := make([]byte, bitmapLen(n))
	for i := range valid {
		valid[i] = (pick[i] & tm[i]) | (^pick[i] & em[i])
	}
	nulls := n - bitutil.CountSetBits(valid, 0, n)
	if nulls == 0 {
		valid = nil
	}
	dt := then.DataType()
	switch a := then.(type) {
	case *array.Int8:
		return fixedArray(dt, selectVals(pick, a.Int8Values(), els.(*array.Int8).Int8Values()), valid, nulls)
	case *array.Int16:
		return fixedArray(dt, selectVals(pick, a.Int16Values(), els.(*array.Int16).Int16Values()), valid, nulls)
	case *array.Int32:
		return fixedArray(dt, selectVals(pick, a.Int32Values(), els.(*array.Int32).Int32Values()), valid, nulls)
	case *array.Int64:
		return fixedArray(dt, selectVals(pick, a.Int64Values(), els.(*array.Int64).Int64Values()), valid, nulls)
	case *array.Uint8:
		return fixedArray(dt, selectVals(pick, a.Uint8Values(), els.(*array.Uint8).Uint8Values()), valid, nulls)
	case *array.Uint16:
		return fixedArray(dt, selectVals(pick, a.Uint16Values(), els.(*array.Uint16).Uint16Values()), valid, nulls)
	case *array.Uint32:
		return fixedArray(dt, selectVals(pick, a.Uint32Values(), els.(*array.Uint32).Uint32Values()), valid, nulls)
	case *array.Uint64:
		return fixedArray(dt, selectVals(pick, a.Uint64Values(), els.(*array.Uint64).Uint64Values()), valid, nulls)
	case *array.Float32:
		return fixedArray(dt, selectVals(pick, a.Float32Values(), els.(*array.Float32).Float32Values()), valid, nulls)
	case *array.Float64:
		return fixedArray(dt, selectVals(pick, a.Float64Values(), els.(*array.Float64).Float64Values()), valid, nulls)
	case *array.Date32:
		return fixedArray(dt, selectVals(pick, a.Date32Values(), els.(*array.Date32).Date32Values()), valid, nulls)
	case *array.Timestamp:
		return fixedArray(dt, selectVals(pick, a.TimestampValues(), els.(*array.Timestamp).TimestampValues()), valid, nulls)
	case *array.Decimal128:
		return decimalArray(dt, selectVals[decimal128.Num](pick, a.Values(), els.(*array.Decimal128).Values()), valid, nulls)
	case *array.MonthDayNanoInterval:
		return decimalArray(dt, selectVals(pick, a.MonthDayNanoIntervalValues(), els.(*array.MonthDayNanoInterval).MonthDayNanoIntervalValues()), valid, nulls)
	case *array.Boolean:
		tv, _ := boolParts(a)
		ev, _ := boolParts(els.(*array.Boolean))
		for i := range tv {
			tv[i] = (pick[i] & tv[i]) | (^pick[i] & ev[i])
		}
		return boolArray(tv, n, valid, nulls)
	case *array.String:
		e := els.(*array.String)
		b := newStrBuilder(n, len(a.ValueBytes()))
		for i := 0; i < n; i++ {
			src := e
			if bitutil.BitIsSet(pick, i) {
				src = a
			}
			if src.IsNull(i) {
				b.addNull()
			} else {
				b.add(src.Value(i))
			}
		}
		return b.finish()
	}
	// Other types: concatenate both sides and gather.
	both, err := array.Concatenate([]arrow.Array{then, els}, defaultMem)
	if err != nil {
		panic("BUG: IfElse of " + dt.String() + ": " + err.Error())
	}
	idx := make([]int32, n)
	for i := range idx {
		if bitutil.BitIsSet(pick, i) {
			idx[i] = int32(i)
		} else {
			idx[i] = int32(n + i)
		}
	}
	return takeArray(both, idx)
}

func selectVals[T any](pick []byte, a, b []T) []T {
	out := make([]T, len(a))
	b = b[:len(a)]
	for i := range out {
		if pick[i>>3]&(1<<(i&7)) != 0 {
			out[i] = a[i]
		} else {
			out[i] = b[i]
		}
	}
	return out
}

// coalesce returns, per row, the first non-NULL argument (all of one type).
func coalesce(args []arrow.Array) arrow.Array {
	r := Decode(args[0])
	for _, next := range args[1:] {
		if r.NullN() == 0 {
			break
		}
		r = IfElse(isNull(r, false), r, Decode(next))
	}
	return r
}

// nullIf is NULLIF(x, y): NULL where x = y, else x.
func nullIf(x, y arrow.Array) (arrow.Array, error) {
	eq, err := compareArrays(opEq, x, y)
	if err != nil {
		return nil, err
	}
	return IfElse(eq, nullArray(x.DataType(), x.Len()), x), nil
}

// extremum is GREATEST (op opGt) or LEAST (opLt): NULL arguments are skipped; the
// result is NULL only when every argument is NULL.
func extremum(op cmpOp, args []arrow.Array) (arrow.Array, error) {
	r := Decode(args[0])
	for _, next := range args[1:] {
		next = Decode(next)
		better, err := compareArrays(op, next, r)
		if err != nil {
			return nil, err
		}
		r = coalesce([]arrow.Array{IfElse(better, next, r), next})
	}
	return r, nil
}
