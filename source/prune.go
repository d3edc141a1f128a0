package source

import (
	"context"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/types"
)

// prunes reports whether no row of a row group with statistics cs (and rows rows) can
// satisfy f. It is conservative: without the statistics it needs, it keeps the group.
//
// Bounds that are not exact still bound (a truncated minimum is at most the true one, a
// truncated maximum at least the true one), so they prune comparisons; only "<>" needs
// exact bounds. Float bounds leave NaN out, and NaN sorts above every number, so a
// float maximum is no upper bound: nothing is pruned on it for floats.
func prunes(cs parquet.ColumnStats, rows int64, f Predicate) bool {
	allNull := cs.HasNullCount && cs.NullCount == rows
	switch f.Op {
	case "is_null":
		return cs.HasNullCount && cs.NullCount == 0
	case "is_not_null":
		return allNull
	}
	if allNull {
		return true // every comparison with NULL is unknown
	}
	if f.Op == "in" {
		for _, v := range f.Values {
			if !v.Null && !prunesCmp(cs, "=", v) {
				return false
			}
		}
		return true
	}
	if len(f.Values) == 0 {
		return false
	}
	if f.Values[0].Null {
		return true // x op NULL is never true
	}
	return prunesCmp(cs, f.Op, f.Values[0])
}

func prunesCmp(cs parquet.ColumnStats, op string, v types.Value) bool {
	if !cs.HasMinMax {
		return false
	}
	float := types.IsFloat(cs.Min.Type)
	nan := float && math.IsNaN(v.F)
	lo := types.Compare(cs.Min, v) // min vs v
	hi := types.Compare(cs.Max, v) // max vs v
	switch op {
	case "=":
		if nan {
			return false // NaN rows are outside the bounds
		}
		return lo > 0 || hi < 0
	case "<":
		return lo >= 0
	case "<=":
		return lo > 0
	case ">":
		return !float && hi <= 0
	case ">=":
		return !float && hi < 0
	case "<>":
		return !float && cs.MinExact && cs.MaxExact && lo == 0 && hi == 0
	}
	return false
}

// constant is an array of n copies of v.
func constant(v types.Value, n int) arrow.Array { return kernels.ConstArray(v, n) }

// castArray casts a file's column to the listing's type, refusing lossy conversions.
// Nested types of the same shape whose fields the file names differently are read
// as the table's type, their fields matched as matchField says; a timestamp a file
// stores without a time zone becomes the instant a lake table says it is.
func castArray(ctx context.Context, a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	from := a.DataType()
	if types.IsNested(from) && types.IsNested(to) {
		if p, ok := planNested(from, to, nil); ok {
			return reshape(ctx, a.Data(), p)
		}
	}
	if from.ID() == arrow.TIMESTAMP && to.ID() == arrow.TIMESTAMP {
		f, t := from.(*arrow.TimestampType), to.(*arrow.TimestampType)
		if f.Unit != t.Unit {
			// A finer unit is truncated, as DuckDB reads nanoseconds into microseconds.
			var err error
			if a, err = kernels.Cast(a, &arrow.TimestampType{Unit: t.Unit, TimeZone: f.TimeZone}); err != nil {
				return nil, err
			}
			defer a.Release()
		}
		d := array.NewData(to, a.Len(), a.Data().Buffers(), nil, a.NullN(), a.Data().Offset())
		defer d.Release()
		return array.MakeFromData(d), nil
	}
	if types.IsDecimal(from) || types.IsDecimal(to) {
		// Lore's casts take decimals of either width.
		return kernels.Cast(a, to)
	}
	return compute.CastArray(ctx, a, compute.SafeCastOptions(to))
}
