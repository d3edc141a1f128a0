package agg

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/types"
)

// Spec names an aggregate function bound to its argument type.
type Spec struct {
	// Name is the function, lower-case: "count_star", "count", "sum", "avg", "min",
	// "max" or "count_distinct"; "sum_distinct" and "avg_distinct" are sum and avg
	// over each group's distinct values.
	Name string
	// ArgType is the argument's type (a dictionary type stands for its value type);
	// nil for count_star.
	ArgType arrow.DataType
	// Quantiles are approx_percentile's fractions; List asks for them as one list
	// (the ARRAY form) rather than one value.
	Quantiles []float64
	List      bool
	// FromTop counts the quantiles from the greatest value down (percentile_disc(p)
	// WITHIN GROUP (ORDER BY x DESC)).
	FromTop bool
	// ArgTypes are the types of the arguments after the first, of the aggregates
	// that take several (corr(y, x), arg_min(v, by)); such an accumulator is a
	// MultiArg.
	ArgTypes []arrow.DataType
	// Sep is string_agg's separator.
	Sep string
	// Distinct and Order ask for the function over each group's distinct argument
	// values, or over its rows in that order (ORDER BY inside the call); the
	// accumulator is then a MultiArg whose arguments are followed by the keys.
	Distinct bool
	Order    []OrderKey
}

// OrderKey is one ORDER BY key inside an aggregate call.
type OrderKey struct {
	Type       arrow.DataType
	Desc       bool
	NullsFirst bool
}

func (s Spec) String() string {
	if s.ArgType == nil {
		return s.Name + "(*)"
	}
	names := []string{types.Name(s.ArgType)}
	for _, t := range s.ArgTypes {
		names = append(names, types.Name(t))
	}
	return fmt.Sprintf("%s(%s)", s.Name, strings.Join(names, ", "))
}

// Accumulator holds the partial states of one aggregate for groups 0..n-1, columnar
// and typed (for example a []int64 of sums and a []int64 of counts), never one
// interface value per group. It is the state machine of DESIGN.md §3: New and Resize
// initialise, Update folds rows in, Merge folds another partial in, Final reads the
// results out without disturbing the state, so Update and Final may alternate (as
// windows do).
//
// An Accumulator is not safe for concurrent use: each worker has its own and the
// workers' accumulators are combined with Merge.
type Accumulator interface {
	// Resize grows the number of groups to n; new groups are in the initial state.
	// It never shrinks.
	Resize(n int)
	// Update folds the selected rows of arg into their groups: row sel[k] (sel nil =
	// rows 0..len(groups)-1) goes to group groups[k]. groups nil sends every row to
	// group 0 (the ungrouped aggregate; group 0 is created if needed), and then the
	// rows are sel, or with sel nil too, every row of arg. Groups must exist (Resize).
	// count_star ignores arg's values; it may be nil unless sel and groups are both nil,
	// when it gives the number of rows (any column of the batch, or an array.Null).
	Update(arg arrow.Array, sel []int32, groups []uint32) error
	// Merge folds other's group j into this accumulator's group mapping[j]. other was
	// made by New with the same Spec; the target groups must exist. other is left as
	// it was, so one state may be merged into several (grouping sets are).
	Merge(other Accumulator, mapping []uint32) error
	// Final returns the result of groups 0..n-1 as an array of ResultType. Groups with
	// no rows (or only NULLs) give 0 for the counts and NULL for everything else.
	Final() (arrow.Array, error)
	// MemoryUsage estimates the bytes held, for memory accounting.
	MemoryUsage() int64
	// FromZone folds a zone's stored partials into group g (created if needed) instead
	// of its rows; ok is false, and the state untouched, when they do not suffice.
	FromZone(z *Zone, g uint32) (ok bool, err error)
}

// OneGroup is an Accumulator that folds the rows of one group faster than rows of
// many: an aggregate with few groups may sort a batch's rows by group and hand each
// group's to UpdateGroup.
type OneGroup interface {
	Accumulator
	// UpdateGroup folds rows sel (never nil) of arg into group g, which must exist.
	UpdateGroup(arg arrow.Array, sel []int32, g uint32) error
}

var (
	_ OneGroup = (*decSumAcc)(nil)
	_ OneGroup = (*dec64SumAcc)(nil)
	_ OneGroup = (*intSumAcc)(nil)
	_ OneGroup = (*countAcc)(nil)
)

// unsupported is the error for a function that does not accept its argument's type.
func unsupported(s Spec) error {
	return errs.New(errs.Analysis, "%s(%s) is not supported", s.Name, types.Name(s.ArgType))
}

// ZoneSketches says which of a zone's sketches aggregate name reads when it folds a
// zone in (FromZone): the distinct-count sketch, the quantile sketch. Others read
// neither, so a caller need not decode them.
func ZoneSketches(name string) (distinct, quantiles bool) {
	switch name {
	case "approx_count_distinct":
		return true, false
	case "approx_percentile":
		return false, true
	}
	return false, false
}

// ResultType is the type of an aggregate's result: BIGINT for the counts; for sum
// BIGINT of integers, DOUBLE of floats and DECIMAL(38,s) of DECIMAL(p,s); DOUBLE for
// avg of any numeric type; the argument's type for min and max (any orderable type;
// floats order NaN greatest). Unsupported combinations are ANALYSIS_ERRORs naming the
// function and the type.
func ResultType(s Spec) (arrow.DataType, error) {
	t, err := resultType(wideSpec(s))
	if err != nil {
		return nil, err
	}
	return types.Narrow(t), nil
}

// resultType is ResultType of a spec whose decimals are 128-bit.
func resultType(s Spec) (arrow.DataType, error) {
	if s.Name == "count_star" {
		return types.Int64, nil
	}
	if s.ArgType == nil {
		return nil, errs.New(errs.Analysis, "%s needs an argument", s.Name)
	}
	if s.Distinct || len(s.Order) > 0 {
		inner := s
		inner.Distinct, inner.Order = false, nil
		return resultType(inner)
	}
	arg := types.Unwrap(s.ArgType)
	if inner, ok := distinctOfName(s.Name); ok {
		if !distinctType(arg) {
			return nil, errs.New(errs.Analysis, "%s(DISTINCT %s) is not supported", inner, types.Name(arg))
		}
		return resultType(Spec{Name: inner, ArgType: s.ArgType})
	}
	switch s.Name {
	case "count":
		return types.Int64, nil
	case "approx_count_distinct":
		return types.Int64, nil
	case "approx_percentile":
		if !stats.KLLSupports(arg) {
			return nil, unsupported(s)
		}
		if s.List {
			return arrow.ListOf(arg), nil
		}
		return arg, nil
	case "count_distinct":
		if !distinctType(arg) {
			return nil, unsupported(s)
		}
		return types.Int64, nil
	case "sum":
		switch {
		case types.IsInteger(arg):
			return types.Int64, nil
		case arg.ID() == arrow.FLOAT32 || arg.ID() == arrow.FLOAT64:
			return types.Float64, nil
		case arg.ID() == arrow.DECIMAL128:
			return &arrow.Decimal128Type{Precision: 38, Scale: arg.(*arrow.Decimal128Type).Scale}, nil
		}
	case "avg":
		if types.IsInteger(arg) || arg.ID() == arrow.FLOAT32 || arg.ID() == arrow.FLOAT64 || arg.ID() == arrow.DECIMAL128 {
			return types.Float64, nil
		}
	case "min", "max":
		if minMaxType(arg) || arg.ID() == arrow.INTERVAL_MONTH_DAY_NANO || kernels.NestedOrderable(arg) {
			return arg, nil
		}
	default:
		if t, ok, err := moreResultType(s, arg); ok {
			return t, err
		}
		return nil, errs.New(errs.Analysis, "unknown aggregate function %q", s.Name)
	}
	return nil, unsupported(s)
}

// New returns an accumulator for s with no groups.
func New(s Spec) (Accumulator, error) {
	result, err := ResultType(s)
	if err != nil {
		return nil, err
	}
	if wide := wideSpec(s); !sameSpecTypes(wide, s) && !reads64(s) {
		inner, err := newAcc(wide)
		if err != nil {
			return nil, err
		}
		return &wideAcc{inner: inner, result: result}, nil
	}
	return newAcc(s)
}

// newAcc is New of a spec whose 64-bit decimals (if any) the accumulator reads
// itself.
func newAcc(s Spec) (Accumulator, error) {
	result, err := resultType(wideSpec(s))
	if err != nil {
		return nil, err
	}
	var arg arrow.DataType
	if s.ArgType != nil {
		arg = types.Unwrap(s.ArgType)
	}
	if s.Distinct || len(s.Order) > 0 {
		return newOrdered(s), nil
	}
	if inner, ok := distinctOfName(s.Name); ok {
		return newDistinctOf(Spec{Name: inner, ArgType: s.ArgType}), nil
	}
	switch s.Name {
	case "approx_count_distinct":
		return &hllAcc{}, nil
	case "approx_percentile":
		return &kllAcc{spec: s, arg: arg}, nil
	case "count_star":
		return &countAcc{star: true}, nil
	case "count":
		return &countAcc{}, nil
	case "count_distinct":
		return newDistinct(arg), nil
	case "sum", "avg":
		avg := s.Name == "avg"
		switch {
		case types.IsInteger(arg):
			return &intSumAcc{spec: s, argID: arg.ID(), avg: avg}, nil
		case arg.ID() == arrow.DECIMAL64 && !avg:
			_, scale, _ := types.DecimalParams(arg)
			return &dec64SumAcc{spec: s, scale: scale}, nil
		case arg.ID() == arrow.DECIMAL128 || arg.ID() == arrow.DECIMAL64:
			_, scale, _ := types.DecimalParams(arg)
			return &decSumAcc{spec: s, scale: scale, avg: avg}, nil
		default:
			return &floatSumAcc{spec: s, argID: arg.ID(), avg: avg}, nil
		}
	case "min", "max":
		if arg.ID() == arrow.INTERVAL_MONTH_DAY_NANO {
			return newMMInterval(s, arg, s.Name == "max"), nil
		}
		if kernels.NestedOrderable(arg) {
			return newMinMaxNested(s, arg, s.Name == "max"), nil
		}
		return newMinMax(s, arg, s.Name == "max"), nil
	}
	if acc := newMore(s, arg, result); acc != nil {
		return acc, nil
	}
	return nil, errs.New(errs.Internal, "BUG: no accumulator for %s", s)
}

// rows resolves the rows an Update folds: a dictionary argument becomes its dictionary
// with the selection mapped to dictionary entries (so values are read from the entries
// in place), and NULL rows are dropped. Without NULLs and dictionary the selection and
// groups are returned as they are. n is the number of rows to fold; groups stays nil
// for the ungrouped case. The returned slices may live in the scratch.
type rows struct {
	sel    []int32
	groups []uint32
	pos    []int32
	ident  []int32 // 0, 1, 2, …: only ever extended
}

// all returns s, or the identity selection of n rows when s is nil, for loops that
// read through a selection always.
func (r *rows) all(s []int32, n int) []int32 {
	if s != nil {
		return s
	}
	for i := len(r.ident); i < n; i++ {
		r.ident = append(r.ident, int32(i))
	}
	return r.ident[:n]
}

func (r *rows) memoryUsage() int64 {
	return int64(4 * (cap(r.sel) + cap(r.groups) + cap(r.pos) + cap(r.ident)))
}

func (r *rows) resolve(arg arrow.Array, sel []int32, groups []uint32) (vals arrow.Array, s []int32, g []uint32, n int) {
	n = len(groups)
	if groups == nil {
		if sel != nil {
			n = len(sel)
		} else {
			n = arg.Len()
		}
	}
	vals, s, g = arg, sel, groups
	nullIndex := false // a dictionary row with a NULL index
	if d, ok := arg.(*array.Dictionary); ok {
		r.pos = grow(r.pos[:0], n)
		dictIndices(d, sel, r.pos)
		vals, s = d.Dictionary(), r.pos
		nullIndex = d.Indices().NullN() > 0
	}
	if vals.DataType().ID() == arrow.NULL {
		return vals, s, g, 0
	}
	if vals.NullN() == 0 && !nullIndex {
		return vals, s, g, n
	}
	// Keep the rows whose value is valid, reading the validity bitmap directly (a
	// dictionary row with a NULL index has position -1).
	rs := grow(r.sel[:0], n)
	var rg []uint32
	if g != nil {
		rg = grow(r.groups[:0], n)
	}
	bm := vals.NullBitmapBytes()
	off := vals.Data().Offset()
	kept := 0
	if !nullIndex && bm != nil {
		// Branch-free: every row is written, and the count advances by its validity
		// bit.
		switch {
		case s == nil && g == nil:
			for k := 0; k < n; k++ {
				b := off + k
				rs[kept] = int32(k)
				kept += int(bm[b>>3]>>(b&7)) & 1
			}
		case g == nil:
			for _, i := range s[:n] {
				b := off + int(i)
				rs[kept] = i
				kept += int(bm[b>>3]>>(b&7)) & 1
			}
		default:
			for k := 0; k < n; k++ {
				i := int32(k)
				if s != nil {
					i = s[k]
				}
				b := off + int(i)
				rs[kept], rg[kept] = i, g[k]
				kept += int(bm[b>>3]>>(b&7)) & 1
			}
		}
	} else {
		for k := 0; k < n; k++ {
			i := int32(k)
			if s != nil {
				i = s[k]
			}
			if i < 0 {
				continue
			}
			if bm != nil {
				if b := off + int(i); bm[b>>3]&(1<<(b&7)) == 0 {
					continue
				}
			}
			rs[kept] = i
			if g != nil {
				rg[kept] = g[k]
			}
			kept++
		}
	}
	rs = rs[:kept]
	if g != nil {
		rg = rg[:kept]
	}
	r.sel, r.groups = rs, rg
	if g != nil {
		g = rg
	}
	return vals, rs, g, len(rs)
}

// dictIndices writes the dictionary entry of each selected row into pos (-1 for a
// NULL index).
func dictIndices(d *array.Dictionary, sel []int32, pos []int32) {
	idx := d.Indices()
	switch idx.DataType().ID() {
	case arrow.INT8:
		indices(rawValues[int8](idx), sel, pos)
	case arrow.INT16:
		indices(rawValues[int16](idx), sel, pos)
	case arrow.INT32:
		indices(rawValues[int32](idx), sel, pos)
	case arrow.INT64:
		indices(rawValues[int64](idx), sel, pos)
	case arrow.UINT8:
		indices(rawValues[uint8](idx), sel, pos)
	case arrow.UINT16:
		indices(rawValues[uint16](idx), sel, pos)
	case arrow.UINT32:
		indices(rawValues[uint32](idx), sel, pos)
	case arrow.UINT64:
		indices(rawValues[uint64](idx), sel, pos)
	default:
		panic(fmt.Sprintf("BUG: dictionary index type %s", idx.DataType()))
	}
	if idx.NullN() > 0 {
		for k := range pos {
			i := k
			if sel != nil {
				i = int(sel[k])
			}
			if idx.IsNull(i) {
				pos[k] = -1
			}
		}
	}
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

func indices[T integer](idx []T, sel []int32, pos []int32) {
	if sel == nil {
		for k := range pos {
			pos[k] = int32(idx[k])
		}
		return
	}
	for k, i := range sel[:len(pos)] {
		pos[k] = int32(idx[i])
	}
}

// rawValues views the values buffer of a fixed-width array as a []T (T must have the
// type's width), honouring the array's offset.
func rawValues[T any](arr arrow.Array) []T {
	d := arr.Data()
	buf := d.Buffers()[1]
	if buf == nil || buf.Len() == 0 || d.Len() == 0 {
		return nil
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	all := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(buf.Bytes()))), buf.Len()/size)
	return all[d.Offset() : d.Offset()+d.Len()]
}

// grow returns s extended with zero values to n elements (never shrunk).
func grow[T any](s []T, n int) []T {
	if n <= len(s) {
		return s
	}
	if n <= cap(s) {
		s = s[:n]
		return s
	}
	// Doubling while small; past a few thousand groups a quarter more, as append
	// grows, so that a large state is not held at up to twice its groups.
	c := 2 * cap(s)
	if cap(s) >= 4096 {
		c = cap(s) + cap(s)/4
	}
	next := make([]T, n, max(n, c))
	copy(next, s)
	return next
}

// extend grows a state slice to n groups, new groups zeroed.
func extend[T any](s []T, n int) []T {
	if n <= len(s) {
		return s
	}
	old := len(s)
	s = grow(s, n)
	clear(s[old:])
	return s
}

// bytesOf views a slice of fixed-size values as its bytes.
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}

// fixedArray builds an array of fixed-width type dt over vals (taken over, not
// copied); valid nil means no NULLs, else valid[i] false makes row i NULL.
func fixedArray[T any](dt arrow.DataType, vals []T, valid []bool) arrow.Array {
	bm, nulls := validityBitmap(valid)
	data := array.NewData(dt, len(vals), []*memory.Buffer{bm, memory.NewBufferBytes(bytesOf(vals))}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// validityBitmap packs valid into an Arrow validity buffer; nil when all are valid.
func validityBitmap(valid []bool) (*memory.Buffer, int) {
	nulls := 0
	for _, v := range valid {
		if !v {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	bm := make([]byte, (len(valid)+7)/8)
	for i, v := range valid {
		if v {
			bm[i/8] |= 1 << (i % 8)
		}
	}
	return memory.NewBufferBytes(bm), nulls
}

// ensureGroup0 creates group 0 for an ungrouped Update.
func ensureGroup0(a Accumulator, size int, groups []uint32) {
	if groups == nil && size == 0 {
		a.Resize(1)
	}
}

// otherAs checks that a merged accumulator is of the receiver's kind.
func otherAs[T Accumulator](other Accumulator, s Spec) (T, error) {
	o, ok := other.(T)
	if !ok {
		var zero T
		return zero, errs.New(errs.Internal, "BUG: cannot merge %T into %s", other, s)
	}
	return o, nil
}

// typeMismatch is the error for an argument array of an unexpected type.
func typeMismatch(s Spec, arg arrow.Array) error {
	return errs.New(errs.Internal, "BUG: %s given an argument of type %s", s, arg.DataType())
}
