package agg

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// MIN and MAX keep, per group, the best value so far and whether there is one. There is
// one state type per family of value representations: integers (also booleans, dates,
// times and timestamps, by their integer storage), floats (NaN is the greatest value,
// -0 and +0 are equal), decimals and byte strings.

// minMaxType reports whether MIN and MAX accept values of dt.
func minMaxType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DECIMAL128, arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY,
		arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return true
	}
	return false
}

func newMinMax(s Spec, dt arrow.DataType, isMax bool) Accumulator {
	switch dt.ID() {
	case arrow.BOOL:
		return &mmBool{mmInt[uint8]{spec: s, dt: dt, isMax: isMax}}
	case arrow.INT8:
		return &mmInt[int8]{spec: s, dt: dt, isMax: isMax}
	case arrow.INT16:
		return &mmInt[int16]{spec: s, dt: dt, isMax: isMax}
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return &mmInt[int32]{spec: s, dt: dt, isMax: isMax}
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return &mmInt[int64]{spec: s, dt: dt, isMax: isMax}
	case arrow.UINT8:
		return &mmInt[uint8]{spec: s, dt: dt, isMax: isMax}
	case arrow.UINT16:
		return &mmInt[uint16]{spec: s, dt: dt, isMax: isMax}
	case arrow.UINT32:
		return &mmInt[uint32]{spec: s, dt: dt, isMax: isMax}
	case arrow.UINT64:
		return &mmInt[uint64]{spec: s, dt: dt, isMax: isMax}
	case arrow.FLOAT32:
		return &mmFloat[float32]{spec: s, dt: dt, isMax: isMax}
	case arrow.FLOAT64:
		return &mmFloat[float64]{spec: s, dt: dt, isMax: isMax}
	case arrow.DECIMAL128:
		return newMMDecimal(s, dt, isMax)
	case arrow.DECIMAL64:
		return &mmDec64{mmInt[int64]{spec: s, dt: dt, isMax: isMax}}
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return &mmString{spec: s, dt: dt, isMax: isMax}
	}
	panic(fmt.Sprintf("BUG: no min/max state for %s", dt))
}

// mmPrepare is the common start of a min/max Update: group 0 for the ungrouped case,
// NULLs and dictionaries resolved, the selection materialised, and for an ungrouped
// dictionary argument each dictionary entry visited once.
func mmPrepare(a Accumulator, size int, r *rows, dt arrow.DataType, spec Spec, arg arrow.Array, sel []int32, groups []uint32) (vals arrow.Array, s []int32, g []uint32, n int, err error) {
	ensureGroup0(a, size, groups)
	_, isDict := arg.(*array.Dictionary)
	vals, s, g, n = r.resolve(arg, sel, groups)
	if n == 0 {
		return vals, s, g, 0, nil
	}
	if vals.DataType().ID() != dt.ID() {
		return nil, nil, nil, 0, typeMismatch(spec, arg)
	}
	s = r.all(s, n)
	if isDict && g == nil {
		s = r.distinctEntries(s, vals.Len())
		n = len(s)
	}
	return vals, s, g, n, nil
}

// distinctEntries keeps the first occurrence of each position in s (positions below
// size): MIN and MAX of an ungrouped dictionary column need each entry once.
func (r *rows) distinctEntries(s []int32, size int) []int32 {
	seen := make([]bool, size)
	out := make([]int32, 0, len(s))
	for _, i := range s {
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}

// mmCell is the state of one group of a numeric MIN/MAX: value and presence side by
// side, so that a row touches one place.
type mmCell[T any] struct {
	v   T
	has bool
}

// cellsArray builds the result array of numeric MIN/MAX states.
func cellsArray[T any](dt arrow.DataType, st []mmCell[T]) arrow.Array {
	vals := make([]T, len(st))
	valid := make([]bool, len(st))
	for g, c := range st {
		vals[g], valid[g] = c.v, c.has
	}
	return fixedArray(dt, vals, valid)
}

// mmInt is MIN/MAX over integer storage.
type mmInt[T integer] struct {
	spec  Spec
	dt    arrow.DataType
	isMax bool
	st    []mmCell[T]
	rows  rows
}

func (a *mmInt[T]) Resize(n int) { a.st = extend(a.st, n) }

func (a *mmInt[T]) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	vals, s, g, n, err := mmPrepare(a, len(a.st), &a.rows, a.dt, a.spec, arg, sel, groups)
	if err != nil || n == 0 {
		return err
	}
	a.fold(rawValues[T](vals), s, g, n)
	return nil
}

// fold folds data at positions s into groups g (nil: group 0).
func (a *mmInt[T]) fold(data []T, s []int32, g []uint32, n int) {
	st := a.st
	if g == nil {
		best := st[0].v
		if !st[0].has {
			best = data[s[0]]
		}
		if a.isMax {
			for _, i := range s[:n] {
				if v := data[i]; v > best {
					best = v
				}
			}
		} else {
			for _, i := range s[:n] {
				if v := data[i]; v < best {
					best = v
				}
			}
		}
		st[0] = mmCell[T]{best, true}
		return
	}
	if a.isMax {
		for k, grp := range g[:n] {
			if v, c := data[s[k]], &st[grp]; !c.has || v > c.v {
				c.v, c.has = v, true
			}
		}
		return
	}
	for k, grp := range g[:n] {
		if v, c := data[s[k]], &st[grp]; !c.has || v < c.v {
			c.v, c.has = v, true
		}
	}
}

func (a *mmInt[T]) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*mmInt[T]](other, a.spec)
	if err != nil {
		return err
	}
	return a.merge(o, mapping)
}

func (a *mmInt[T]) merge(o *mmInt[T], mapping []uint32) error {
	if err := checkMapping(a.spec, mapping, len(o.st), len(a.st)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.st)] {
		oc, c := o.st[j], &a.st[g]
		if oc.has && (!c.has || (a.isMax && oc.v > c.v) || (!a.isMax && oc.v < c.v)) {
			*c = oc
		}
	}
	return nil
}

func (a *mmInt[T]) Final() (arrow.Array, error) { return cellsArray(a.dt, a.st), nil }

func (a *mmInt[T]) MemoryUsage() int64 {
	return int64(int(unsafe.Sizeof(mmCell[T]{}))*cap(a.st)) + a.rows.memoryUsage()
}

// mmBool is MIN/MAX of booleans (false < true) over 0/1 bytes.
type mmBool struct{ mmInt[uint8] }

func (a *mmBool) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	vals, s, g, n, err := mmPrepare(a, len(a.st), &a.rows, a.dt, a.spec, arg, sel, groups)
	if err != nil || n == 0 {
		return err
	}
	b := vals.(*array.Boolean)
	data := make([]uint8, b.Len())
	for i := range data {
		if b.Value(i) {
			data[i] = 1
		}
	}
	a.fold(data, s, g, n)
	return nil
}

func (a *mmBool) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*mmBool](other, a.spec)
	if err != nil {
		return err
	}
	return a.merge(&o.mmInt, mapping)
}

func (a *mmBool) Final() (arrow.Array, error) {
	n := len(a.st)
	bits := make([]byte, (n+7)/8)
	valid := make([]bool, n)
	for i, c := range a.st {
		if c.v != 0 {
			bits[i/8] |= 1 << (i % 8)
		}
		valid[i] = c.has
	}
	bm, nulls := validityBitmap(valid)
	data := array.NewData(a.dt, n, []*memory.Buffer{bm, memory.NewBufferBytes(bits)}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// mmDec64 is MIN/MAX of DECIMAL(p,s) with p ≤ 18, read as the 64-bit scaled
// integers they are stored as: one type and scale orders them as integers.
type mmDec64 struct{ mmInt[int64] }

func (a *mmDec64) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*mmDec64](other, a.spec)
	if err != nil {
		return err
	}
	return a.merge(&o.mmInt, mapping)
}

// mmFloat is MIN/MAX of floats with NaN greater than every other value.
type mmFloat[T float32 | float64] struct {
	spec  Spec
	dt    arrow.DataType
	isMax bool
	st    []mmCell[T]
	rows  rows
}

// floatBetter reports whether v beats cur: for max, v is greater or NaN (nothing beats
// a NaN); for min, v is smaller or cur is NaN and v is not.
func floatBetter[T float32 | float64](v, cur T, isMax bool) bool {
	if isMax {
		return cur == cur && (v > cur || v != v)
	}
	return v < cur || (cur != cur && v == v)
}

func (a *mmFloat[T]) Resize(n int) { a.st = extend(a.st, n) }

func (a *mmFloat[T]) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	vals, s, g, n, err := mmPrepare(a, len(a.st), &a.rows, a.dt, a.spec, arg, sel, groups)
	if err != nil || n == 0 {
		return err
	}
	data := rawValues[T](vals)
	st := a.st
	if g == nil {
		best := st[0].v
		if !st[0].has {
			best = data[s[0]]
		}
		if a.isMax {
			for _, i := range s[:n] {
				if v := data[i]; best == best && (v > best || v != v) {
					best = v
				}
			}
		} else {
			for _, i := range s[:n] {
				if v := data[i]; v < best || (best != best && v == v) {
					best = v
				}
			}
		}
		st[0] = mmCell[T]{best, true}
		return nil
	}
	for k, grp := range g[:n] {
		if v, c := data[s[k]], &st[grp]; !c.has || floatBetter(v, c.v, a.isMax) {
			c.v, c.has = v, true
		}
	}
	return nil
}

func (a *mmFloat[T]) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*mmFloat[T]](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, len(o.st), len(a.st)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.st)] {
		if oc, c := o.st[j], &a.st[g]; oc.has && (!c.has || floatBetter(oc.v, c.v, a.isMax)) {
			*c = oc
		}
	}
	return nil
}

func (a *mmFloat[T]) Final() (arrow.Array, error) { return cellsArray(a.dt, a.st), nil }

func (a *mmFloat[T]) MemoryUsage() int64 {
	return int64(int(unsafe.Sizeof(mmCell[T]{}))*cap(a.st)) + a.rows.memoryUsage()
}

// mmOrdered is MIN/MAX of a fixed-width type ordered by cmp: DECIMAL(p,s) by the
// scaled 128-bit integers, INTERVAL as DuckDB orders intervals.
type mmOrdered[T any] struct {
	spec  Spec
	dt    arrow.DataType
	isMax bool
	cmp   func(a, b T) int
	vals  []T
	has   []bool
	rows  rows
}

// mmDecimal is MIN/MAX of DECIMAL(p,s).
type mmDecimal struct{ mmOrdered[decimal128.Num] }

func newMMDecimal(s Spec, dt arrow.DataType, isMax bool) *mmDecimal {
	return &mmDecimal{mmOrdered[decimal128.Num]{spec: s, dt: dt, isMax: isMax, cmp: func(a, b decimal128.Num) int {
		switch {
		case a.Greater(b):
			return 1
		case a.Less(b):
			return -1
		}
		return 0
	}}}
}

// FromZone answers from no zone; a type whose zones keep bounds (DECIMAL) says
// otherwise.
func (a *mmOrdered[T]) FromZone(*Zone, uint32) (bool, error) { return false, nil }

// ordered is the state a MIN/MAX of another worker merges from.
func (a *mmOrdered[T]) ordered() *mmOrdered[T] { return a }

func (a *mmOrdered[T]) better(v, cur T) bool {
	if a.isMax {
		return a.cmp(v, cur) > 0
	}
	return a.cmp(v, cur) < 0
}

func (a *mmOrdered[T]) Resize(n int) { a.vals, a.has = extend(a.vals, n), extend(a.has, n) }

func (a *mmOrdered[T]) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	vals, s, g, n, err := mmPrepare(a, len(a.has), &a.rows, a.dt, a.spec, arg, sel, groups)
	if err != nil || n == 0 {
		return err
	}
	data := rawValues[T](vals)
	for k, i := range s[:n] {
		var grp uint32
		if g != nil {
			grp = g[k]
		}
		if v := data[i]; !a.has[grp] || a.better(v, a.vals[grp]) {
			a.vals[grp], a.has[grp] = v, true
		}
	}
	return nil
}

func (a *mmOrdered[T]) Merge(other Accumulator, mapping []uint32) error {
	oa, ok := other.(interface{ ordered() *mmOrdered[T] })
	if !ok {
		return errs.New(errs.Internal, "BUG: cannot merge %T into %s", other, a.spec)
	}
	o := oa.ordered()
	if err := checkMapping(a.spec, mapping, len(o.has), len(a.has)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.has)] {
		if o.has[j] && (!a.has[g] || a.better(o.vals[j], a.vals[g])) {
			a.vals[g], a.has[g] = o.vals[j], true
		}
	}
	return nil
}

func (a *mmOrdered[T]) Final() (arrow.Array, error) {
	return fixedArray(a.dt, append([]T(nil), a.vals...), a.has), nil
}

func (a *mmOrdered[T]) MemoryUsage() int64 {
	var zero T
	return int64(int(unsafe.Sizeof(zero))*cap(a.vals)+cap(a.has)) + a.rows.memoryUsage()
}

// mmString is MIN/MAX of strings and binary, compared bytewise. During an Update the
// best value of a group may be a view into the argument's memory; the groups changed
// by the batch are copied out at its end, so the state never holds on to a batch.
type mmString struct {
	spec    Spec
	dt      arrow.DataType
	isMax   bool
	vals    []string
	has     []bool
	dirty   []bool   // per group: vals holds a view into the current batch
	changed []uint32 // the dirty groups
	bytes   int64    // the bytes of the owned strings in vals
	rows    rows
}

func (a *mmString) Resize(n int) {
	a.vals, a.has, a.dirty = extend(a.vals, n), extend(a.has, n), extend(a.dirty, n)
}

func (a *mmString) better(v, cur string) bool {
	if a.isMax {
		return v > cur
	}
	return v < cur
}

func (a *mmString) Update(arg arrow.Array, sel []int32, groups []uint32) error {
	vals, s, g, n, err := mmPrepare(a, len(a.has), &a.rows, a.dt, a.spec, arg, sel, groups)
	if err != nil || n == 0 {
		return err
	}
	switch a.dt.ID() {
	case arrow.STRING, arrow.BINARY:
		mmStringFold(a, rawOffsets[int32](vals), vals.Data().Buffers()[2], s, g, n)
	default:
		mmStringFold(a, rawOffsets[int64](vals), vals.Data().Buffers()[2], s, g, n)
	}
	for _, grp := range a.changed {
		a.vals[grp] = strings.Clone(a.vals[grp])
		a.bytes += int64(len(a.vals[grp]))
		a.dirty[grp] = false
	}
	a.changed = a.changed[:0]
	return nil
}

// rawOffsets views the offsets buffer of a variable-width array (n+1 entries).
func rawOffsets[O int32 | int64](arr arrow.Array) []O {
	d := arr.Data()
	buf := d.Buffers()[1]
	if buf == nil || buf.Len() == 0 {
		return make([]O, d.Len()+1)
	}
	var zero O
	all := unsafe.Slice((*O)(unsafe.Pointer(unsafe.SliceData(buf.Bytes()))), buf.Len()/int(unsafe.Sizeof(zero)))
	return all[d.Offset() : d.Offset()+d.Len()+1]
}

func mmStringFold[O int32 | int64](a *mmString, offs []O, dataBuf *memory.Buffer, s []int32, g []uint32, n int) {
	var data []byte
	if dataBuf != nil {
		data = dataBuf.Bytes()
	}
	at := func(i int32) string {
		b := data[offs[i]:offs[i+1]]
		if len(b) == 0 {
			return ""
		}
		return unsafe.String(&b[0], len(b))
	}
	if g == nil {
		best, found := a.vals[0], a.has[0]
		if !found {
			best = at(s[0])
		}
		changed := !found
		for _, i := range s[:n] {
			if v := at(i); a.better(v, best) {
				best, changed = v, true
			}
		}
		if changed {
			a.bytes += int64(len(best) - len(a.vals[0]))
			a.vals[0], a.has[0] = strings.Clone(best), true
		}
		return
	}
	for k, grp := range g[:n] {
		if v := at(s[k]); !a.has[grp] || a.better(v, a.vals[grp]) {
			if !a.dirty[grp] {
				a.bytes -= int64(len(a.vals[grp])) // the owned value being replaced
				a.dirty[grp] = true
				a.changed = append(a.changed, grp)
			}
			a.vals[grp], a.has[grp] = v, true
		}
	}
}

func (a *mmString) Merge(other Accumulator, mapping []uint32) error {
	o, err := otherAs[*mmString](other, a.spec)
	if err != nil {
		return err
	}
	if err := checkMapping(a.spec, mapping, len(o.has), len(a.has)); err != nil {
		return err
	}
	for j, g := range mapping[:len(o.has)] {
		if o.has[j] && (!a.has[g] || a.better(o.vals[j], a.vals[g])) {
			a.bytes += int64(len(o.vals[j]) - len(a.vals[g]))
			a.vals[g], a.has[g] = o.vals[j], true // states own their strings: sharing is safe
		}
	}
	return nil
}

func (a *mmString) Final() (arrow.Array, error) {
	b := types.NewBuilder(memory.DefaultAllocator, a.dt)
	defer b.Release()
	b.Reserve(len(a.vals))
	switch bb := b.(type) {
	case *array.StringBuilder:
		for g, v := range a.vals {
			if a.has[g] {
				bb.Append(v)
			} else {
				bb.AppendNull()
			}
		}
	case *array.LargeStringBuilder:
		for g, v := range a.vals {
			if a.has[g] {
				bb.Append(v)
			} else {
				bb.AppendNull()
			}
		}
	case *array.BinaryBuilder: // also LARGE_BINARY
		for g, v := range a.vals {
			if a.has[g] {
				bb.AppendString(v)
			} else {
				bb.AppendNull()
			}
		}
	default:
		return nil, errs.New(errs.Internal, "BUG: no builder for %s", a.spec)
	}
	return b.NewArray(), nil
}

func (a *mmString) MemoryUsage() int64 {
	return int64(16*cap(a.vals)+2*cap(a.has)+4*cap(a.changed)) + a.bytes + a.rows.memoryUsage()
}
