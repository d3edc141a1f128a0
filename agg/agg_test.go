package agg

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
)

// Every function is checked against a reference computed directly from the logical
// values (math/big for exact sums), grouped and ungrouped, over plain and dictionary
// arrays with selections, and through the partial-state property: the input split in
// two, each half in its own accumulator with its own group numbering, merged.

var testTypes = []arrow.DataType{
	arrow.FixedWidthTypes.Boolean,
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
	arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
	&arrow.Decimal128Type{Precision: 30, Scale: 3}, &arrow.Decimal64Type{Precision: 15, Scale: 2},
	arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeString,
	arrow.FixedWidthTypes.Date32, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
	arrow.Null,
}

var testFuncs = []string{"count_star", "count", "sum", "avg", "min", "max", "count_distinct"}

// randValues draws n logical values of dt (nil = NULL): int64 for signed integers,
// dates and timestamps, uint64 for unsigned, float64 for floats, decimal128.Num,
// string, bool.
func randValues(rng *rand.Rand, dt arrow.DataType, n int, nullFrac float64) []any {
	out := make([]any, n)
	for i := range out {
		if dt.ID() == arrow.NULL || rng.Float64() < nullFrac {
			continue
		}
		switch dt.ID() {
		case arrow.BOOL:
			out[i] = rng.IntN(2) == 0
		case arrow.INT8:
			out[i] = int64(int8(rng.Uint32()))
		case arrow.INT16:
			out[i] = int64(int16(rng.Uint32()))
		case arrow.INT32, arrow.DATE32:
			out[i] = int64(int32(rng.Uint32()))
		case arrow.INT64, arrow.TIMESTAMP:
			out[i] = rng.Int64N(1<<50) - 1<<49
		case arrow.UINT8:
			out[i] = uint64(uint8(rng.Uint32()))
		case arrow.UINT16:
			out[i] = uint64(uint16(rng.Uint32()))
		case arrow.UINT32:
			out[i] = uint64(rng.Uint32())
		case arrow.UINT64:
			out[i] = rng.Uint64() >> 12
		case arrow.FLOAT32, arrow.FLOAT64:
			switch r := rng.IntN(30); {
			case r == 0:
				out[i] = math.NaN()
			case r == 1:
				out[i] = math.Copysign(0, -1)
			default:
				out[i] = float64(rng.IntN(2000)-1000) / 8
			}
		case arrow.DECIMAL128:
			out[i] = decimal128.FromI64(rng.Int64N(1<<40) - 1<<39).Mul(decimal128.FromU64(uint64(rng.IntN(1000000))))
		case arrow.DECIMAL64:
			out[i] = decimal128.FromI64(rng.Int64N(2e15) - 1e15)
		case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING:
			if r := rng.IntN(12); r == 0 {
				out[i] = ""
			} else {
				out[i] = strings.Repeat(string(rune('a'+rng.IntN(26))), r) + fmt.Sprint(rng.IntN(50))
			}
		}
	}
	return out
}

// build makes a plain array of type dt holding vals.
func build(dt arrow.DataType, vals []any) arrow.Array {
	if dt.ID() == arrow.NULL {
		return array.NewNull(len(vals))
	}
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.BooleanBuilder:
			bb.Append(v.(bool))
		case *array.Int8Builder:
			bb.Append(int8(v.(int64)))
		case *array.Int16Builder:
			bb.Append(int16(v.(int64)))
		case *array.Int32Builder:
			bb.Append(int32(v.(int64)))
		case *array.Int64Builder:
			bb.Append(v.(int64))
		case *array.Uint8Builder:
			bb.Append(uint8(v.(uint64)))
		case *array.Uint16Builder:
			bb.Append(uint16(v.(uint64)))
		case *array.Uint32Builder:
			bb.Append(uint32(v.(uint64)))
		case *array.Uint64Builder:
			bb.Append(v.(uint64))
		case *array.Float32Builder:
			bb.Append(float32(v.(float64)))
		case *array.Float64Builder:
			bb.Append(v.(float64))
		case *array.Decimal128Builder:
			bb.Append(v.(decimal128.Num))
		case *array.Decimal64Builder:
			bb.Append(decimal.Decimal64(v.(decimal128.Num).LowBits()))
		case *array.StringBuilder:
			bb.Append(v.(string))
		case *array.LargeStringBuilder:
			bb.Append(v.(string))
		case *array.BinaryBuilder:
			bb.Append([]byte(v.(string)))
		case *array.Date32Builder:
			bb.Append(arrow.Date32(v.(int64)))
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(v.(int64)))
		default:
			panic(fmt.Sprintf("test builder for %s", dt))
		}
	}
	return b.NewArray()
}

// buildDict makes a dictionary array holding vals, with unused entries, a NULL entry,
// and NULL rows both as NULL indices and as indices to the NULL entry.
func buildDict(rng *rand.Rand, dt arrow.DataType, vals []any) arrow.Array {
	entries := append([]any{nil}, randValues(rng, dt, 2, 0)...)
	where := map[string]int{}
	idx := make([]int32, len(vals))
	valid := make([]bool, len(vals))
	for i, v := range vals {
		valid[i] = true
		if v == nil {
			if rng.IntN(2) == 0 {
				valid[i] = false
			}
			continue // index 0: the NULL entry
		}
		key := canon(v)
		if _, ok := where[key]; !ok {
			where[key] = len(entries)
			entries = append(entries, v)
		}
		idx[i] = int32(where[key])
	}
	ib := array.NewInt32Builder(memory.DefaultAllocator)
	defer ib.Release()
	ib.AppendValues(idx, valid)
	return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: dt}, ib.NewArray(), build(dt, entries))
}

func canon(v any) string {
	if f, ok := v.(float64); ok {
		switch {
		case f != f:
			return "NaN"
		case f == 0:
			return "0"
		}
	}
	return fmt.Sprintf("%T:%v", v, v)
}

// compareValues orders two non-NULL logical values (NaN greatest).
func compareValues(a, b any) int {
	switch x := a.(type) {
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case int64:
		return cmp.Compare(x, b.(int64))
	case uint64:
		return cmp.Compare(x, b.(uint64))
	case float64:
		return cmp.Compare(x, b.(float64)) // cmp orders NaN least; flip below
	case decimal128.Num:
		return x.Cmp(b.(decimal128.Num))
	case string:
		return strings.Compare(x, b.(string))
	}
	panic(fmt.Sprintf("compare %T", a))
}

func floatOrder(a, b float64) int {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

// reference computes the expected result of fn over the rows of one group; ok false
// means NULL, errOverflow that the result does not fit.
func reference(fn string, dt arrow.DataType, rows []any) (want any, ok bool) {
	var nonNull []any
	for _, v := range rows {
		if v != nil {
			nonNull = append(nonNull, v)
		}
	}
	switch fn {
	case "count_star":
		return int64(len(rows)), true
	case "count":
		return int64(len(nonNull)), true
	case "count_distinct":
		seen := map[string]bool{}
		for _, v := range nonNull {
			seen[canon(v)] = true
		}
		return int64(len(seen)), true
	}
	if len(nonNull) == 0 {
		return nil, false
	}
	switch fn {
	case "min", "max":
		best := nonNull[0]
		for _, v := range nonNull[1:] {
			var c int
			if f, isFloat := v.(float64); isFloat {
				c = floatOrder(f, best.(float64))
			} else {
				c = compareValues(v, best)
			}
			if (fn == "min" && c < 0) || (fn == "max" && c > 0) {
				best = v
			}
		}
		return best, true
	case "sum", "avg":
		switch nonNull[0].(type) {
		case float64:
			s := 0.0
			for _, v := range nonNull {
				s += v.(float64)
			}
			if fn == "avg" {
				s /= float64(len(nonNull))
			}
			return s, true
		default:
			s := new(big.Int)
			for _, v := range nonNull {
				switch x := v.(type) {
				case int64:
					s.Add(s, big.NewInt(x))
				case uint64:
					s.Add(s, new(big.Int).SetUint64(x))
				case decimal128.Num:
					s.Add(s, x.BigInt())
				}
			}
			if fn == "avg" {
				f, _ := new(big.Float).Quo(new(big.Float).SetInt(s), big.NewFloat(float64(len(nonNull)))).Float64()
				if d, isDec := dt.(arrow.DecimalType); isDec {
					f /= math.Pow10(int(d.GetScale()))
				}
				return f, true
			}
			if _, isDec := nonNull[0].(decimal128.Num); isDec {
				return decimal128.FromBigInt(s), true
			}
			return s.Int64(), true
		}
	}
	panic(fn)
}

// readValue reads row i of a result array as a logical value (nil = NULL).
func readValue(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Uint8:
		return uint64(a.Value(i))
	case *array.Uint16:
		return uint64(a.Value(i))
	case *array.Uint32:
		return uint64(a.Value(i))
	case *array.Uint64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i)
	case *array.Decimal64:
		return decimal128.FromI64(int64(a.Value(i)))
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return string(a.Value(i))
	case *array.Date32:
		return int64(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	}
	panic(fmt.Sprintf("test reader for %s", arr.DataType()))
}

func sameValue(got, want any) bool {
	if gf, ok := got.(float64); ok {
		wf, ok := want.(float64)
		if !ok {
			return false
		}
		if gf != gf || wf != wf {
			return gf != gf && wf != wf
		}
		return gf == wf || math.Abs(gf-wf) <= 1e-9*math.Max(math.Abs(gf), math.Abs(wf))
	}
	return canon(got) == canon(want)
}

// batch is one input batch: the argument, its selection and the group of each
// selected row, with the logical values for the reference.
type batch struct {
	vals   []any
	arg    arrow.Array
	sel    []int32
	groups []uint32
}

func makeBatches(rng *rand.Rand, dt arrow.DataType, nBatches, groups int) []batch {
	var out []batch
	for b := 0; b < nBatches; b++ {
		n := rng.IntN(300)
		nullFrac := 0.15
		if b%3 == 0 {
			nullFrac = 0 // batches without NULLs take the direct loops
		}
		vals := randValues(rng, dt, n, nullFrac)
		var arg arrow.Array
		switch rng.IntN(3) {
		case 0:
			arg = buildDict(rng, dt, vals)
		case 1:
			arg = build(dt, vals)
		default:
			// A slice of a longer array: its values and validity start at an offset.
			padded := build(dt, append([]any{nil, nil, nil}, vals...))
			arg = array.NewSlice(padded, 3, int64(3+n))
		}
		out = append(out, selectedBatch(rng, vals, arg, rng.IntN(2) == 0, 4, groups))
	}
	return out
}

// selectedBatch is the batch of arg (whose values are vals): with selected, a random
// selection of about (keep-1)/keep of its rows; each selected row in a random one of
// groups groups.
func selectedBatch(rng *rand.Rand, vals []any, arg arrow.Array, selected bool, keep, groups int) batch {
	n := len(vals)
	var sel []int32
	if selected {
		sel = []int32{}
		for i := 0; i < n; i++ {
			if rng.IntN(keep) != 0 {
				sel = append(sel, int32(i))
			}
		}
	}
	m := n
	if sel != nil {
		m = len(sel)
	}
	g := make([]uint32, m)
	for k := range g {
		g[k] = uint32(rng.IntN(groups))
	}
	return batch{vals: vals, arg: arg, sel: sel, groups: g}
}

// groupRows collects the logical values of each group (all in group 0 if ungrouped).
func groupRows(batches []batch, groups int, ungrouped bool) [][]any {
	rows := make([][]any, groups)
	for _, b := range batches {
		for k, g := range b.groups {
			i := k
			if b.sel != nil {
				i = int(b.sel[k])
			}
			if ungrouped {
				g = 0
			}
			rows[g] = append(rows[g], b.vals[i])
		}
	}
	return rows
}

func feed(t *testing.T, acc Accumulator, batches []batch, ungrouped bool) {
	t.Helper()
	for _, b := range batches {
		g := b.groups
		if ungrouped {
			g = nil
		}
		if err := acc.Update(b.arg, b.sel, g); err != nil {
			t.Fatalf("Update: %v", err)
		}
	}
}

func checkResult(t *testing.T, what string, spec Spec, res arrow.Array, rows [][]any) {
	t.Helper()
	rt, err := ResultType(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !arrow.TypeEqual(res.DataType(), rt) {
		t.Fatalf("%s: result type %s, want %s", what, res.DataType(), rt)
	}
	if res.Len() != len(rows) {
		t.Fatalf("%s: %d results for %d groups", what, res.Len(), len(rows))
	}
	for g, r := range rows {
		want, ok := reference(spec.Name, spec.ArgType, r)
		got := readValue(res, g)
		if !ok {
			if got != nil {
				t.Fatalf("%s: group %d = %v, want NULL", what, g, got)
			}
			continue
		}
		if !sameValue(got, want) {
			t.Fatalf("%s: group %d = %v, want %v (%d rows)", what, g, got, want, len(r))
		}
	}
}

func TestAggregates(t *testing.T) {
	for _, fn := range testFuncs {
		for _, dt := range testTypes {
			spec := Spec{Name: fn, ArgType: dt}
			if _, err := ResultType(spec); err != nil {
				continue // unsupported combinations are tested separately
			}
			t.Run(fmt.Sprintf("%s/%s", fn, dt), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(len(fn)), uint64(dt.ID())))
				const groups = 17
				batches := makeBatches(rng, dt, 8, groups)
				half := len(batches) / 2

				for _, ungrouped := range []bool{false, true} {
					ng := groups
					if ungrouped {
						ng = 1
					}
					rows := groupRows(batches, ng, ungrouped)
					name := "grouped"
					if ungrouped {
						name = "ungrouped"
					}

					// All batches into one accumulator, Final called midway too.
					acc, err := New(spec)
					if err != nil {
						t.Fatal(err)
					}
					if !ungrouped {
						acc.Resize(groups)
					}
					feed(t, acc, batches[:half], ungrouped)
					if _, err := acc.Final(); err != nil {
						t.Fatal(err)
					}
					feed(t, acc, batches[half:], ungrouped)
					res, err := acc.Final()
					if err != nil {
						t.Fatal(err)
					}
					checkResult(t, name, spec, res, rows)

					// Two halves with their own group numbering (reversed in the second),
					// merged into a fresh accumulator.
					a1, _ := New(spec)
					a2, _ := New(spec)
					a1.Resize(ng)
					a2.Resize(ng)
					feed(t, a1, batches[:half], ungrouped)
					reversed := make([]batch, len(batches)-half)
					for i, b := range batches[half:] {
						rb := b
						rb.groups = make([]uint32, len(b.groups))
						for k, g := range b.groups {
							rb.groups[k] = uint32(ng-1) - g
							if ungrouped {
								rb.groups[k] = 0
							}
						}
						reversed[i] = rb
					}
					feed(t, a2, reversed, ungrouped)
					merged, _ := New(spec)
					merged.Resize(ng)
					identity := make([]uint32, ng)
					flip := make([]uint32, ng)
					for g := range identity {
						identity[g] = uint32(g)
						flip[g] = uint32(ng - 1 - g)
					}
					if err := merged.Merge(a1, identity); err != nil {
						t.Fatal(err)
					}
					if err := merged.Merge(a2, flip); err != nil {
						t.Fatal(err)
					}
					res, err = merged.Final()
					if err != nil {
						t.Fatal(err)
					}
					checkResult(t, name+" merged", spec, res, rows)
					// Merging leaves the merged states as they were: merged again, into
					// another accumulator, they give the same answer.
					again, _ := New(spec)
					again.Resize(ng)
					if err := again.Merge(a1, identity); err != nil {
						t.Fatal(err)
					}
					if err := again.Merge(a2, flip); err != nil {
						t.Fatal(err)
					}
					if res, err = again.Final(); err != nil {
						t.Fatal(err)
					}
					checkResult(t, name+" merged again", spec, res, rows)
					if merged.MemoryUsage() <= 0 {
						t.Fatalf("MemoryUsage = %d", merged.MemoryUsage())
					}
				}
			})
		}
	}
}

func TestEmptyInput(t *testing.T) {
	for _, fn := range testFuncs {
		spec := Spec{Name: fn, ArgType: arrow.PrimitiveTypes.Int32}
		if fn == "count_star" {
			spec.ArgType = nil
		}
		acc, err := New(spec)
		if err != nil {
			t.Fatal(err)
		}
		acc.Resize(3)
		// An update with no rows changes nothing.
		if err := acc.Update(build(arrow.PrimitiveTypes.Int32, nil), nil, []uint32{}); err != nil {
			t.Fatal(err)
		}
		res, err := acc.Final()
		if err != nil {
			t.Fatal(err)
		}
		for g := 0; g < 3; g++ {
			got := readValue(res, g)
			if strings.HasPrefix(fn, "count") {
				if got != int64(0) {
					t.Errorf("%s of no rows = %v, want 0", fn, got)
				}
			} else if got != nil {
				t.Errorf("%s of no rows = %v, want NULL", fn, got)
			}
		}
	}
}

func TestCountStarRowsFromArgument(t *testing.T) {
	acc, _ := New(Spec{Name: "count_star"})
	if err := acc.Update(array.NewNull(5), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := acc.Update(nil, []int32{1, 3}, nil); err != nil {
		t.Fatal(err)
	}
	if err := acc.Update(nil, nil, nil); err == nil {
		t.Fatal("count_star without rows to count: no error")
	}
	res, _ := acc.Final()
	if got := readValue(res, 0); got != int64(7) {
		t.Fatalf("count(*) = %v, want 7", got)
	}
}

func TestSumOverflow(t *testing.T) {
	i64 := arrow.PrimitiveTypes.Int64
	// Intermediate sums beyond 64 bits are fine when the result fits.
	acc, _ := New(Spec{Name: "sum", ArgType: i64})
	if err := acc.Update(build(i64, []any{int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MinInt64), int64(math.MinInt64)}), nil, nil); err != nil {
		t.Fatal(err)
	}
	res, err := acc.Final()
	if err != nil {
		t.Fatal(err)
	}
	if got := readValue(res, 0); got != int64(-2) {
		t.Fatalf("sum = %v, want -2", got)
	}
	// A result beyond BIGINT is an error.
	for _, spec := range []Spec{{Name: "sum", ArgType: i64}, {Name: "sum", ArgType: arrow.PrimitiveTypes.Uint64}} {
		acc, _ = New(spec)
		vals := []any{int64(math.MaxInt64), int64(1)}
		if spec.ArgType.ID() == arrow.UINT64 {
			vals = []any{uint64(math.MaxUint64)}
		}
		if err := acc.Update(build(spec.ArgType, vals), nil, nil); err != nil {
			t.Fatal(err)
		}
		_, err = acc.Final()
		if !errors.Is(err, errs.ErrAnalysis) || !strings.Contains(err.Error(), "SUM overflowed BIGINT") {
			t.Fatalf("%s: overflow error = %v", spec, err)
		}
	}
	// AVG of the same values does not overflow.
	acc, _ = New(Spec{Name: "avg", ArgType: i64})
	_ = acc.Update(build(i64, []any{int64(math.MaxInt64), int64(math.MaxInt64)}), nil, nil)
	res, err = acc.Final()
	if err != nil || readValue(res, 0) != float64(math.MaxInt64) {
		t.Fatalf("avg = %v, %v", readValue(res, 0), err)
	}
	// Decimal sums beyond 38 digits are an error.
	dec := &arrow.Decimal128Type{Precision: 38, Scale: 0}
	big38 := decimal128.GetMaxValue(38)
	acc, _ = New(Spec{Name: "sum", ArgType: dec})
	_ = acc.Update(build(dec, []any{big38, big38}), nil, nil)
	if _, err := acc.Final(); !errors.Is(err, errs.ErrAnalysis) || !strings.Contains(err.Error(), "SUM overflowed DECIMAL(38,0)") {
		t.Fatalf("decimal overflow error = %v", err)
	}
}

func TestResultTypes(t *testing.T) {
	cases := []struct {
		spec Spec
		want string // arrow type text, or the error text
	}{
		{Spec{Name: "count_star"}, "int64"},
		{Spec{Name: "count", ArgType: arrow.ListOf(arrow.PrimitiveTypes.Int32)}, "int64"},
		{Spec{Name: "sum", ArgType: arrow.PrimitiveTypes.Int8}, "int64"},
		{Spec{Name: "sum", ArgType: arrow.PrimitiveTypes.Uint64}, "int64"},
		{Spec{Name: "sum", ArgType: arrow.PrimitiveTypes.Float32}, "float64"},
		{Spec{Name: "sum", ArgType: &arrow.Decimal128Type{Precision: 10, Scale: 2}}, "decimal(38, 2)"},
		{Spec{Name: "avg", ArgType: &arrow.Decimal128Type{Precision: 10, Scale: 2}}, "float64"},
		{Spec{Name: "avg", ArgType: arrow.PrimitiveTypes.Int32}, "float64"},
		{Spec{Name: "min", ArgType: arrow.BinaryTypes.String}, "utf8"},
		{Spec{Name: "max", ArgType: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}}, "utf8"},
		{Spec{Name: "count_distinct", ArgType: arrow.FixedWidthTypes.Date32}, "int64"},
		{Spec{Name: "sum", ArgType: arrow.BinaryTypes.String}, "sum(VARCHAR) is not supported"},
		{Spec{Name: "avg", ArgType: arrow.FixedWidthTypes.Boolean}, "avg(BOOLEAN) is not supported"},
		{Spec{Name: "min", ArgType: arrow.ListOf(arrow.PrimitiveTypes.Int32)}, "list<item: int32, nullable>"},
		{Spec{Name: "min", ArgType: arrow.ListOf(arrow.FixedWidthTypes.MonthDayNanoInterval)}, "min(INTERVAL[]) is not supported"},
		{Spec{Name: "count_distinct", ArgType: arrow.StructOf()}, "count_distinct(STRUCT()) is not supported"},
		{Spec{Name: "nosuch", ArgType: arrow.PrimitiveTypes.Int32}, `unknown aggregate function "nosuch"`},
	}
	for _, c := range cases {
		rt, err := ResultType(c.spec)
		var got string
		if err != nil {
			got = err.Error()
			if !errors.Is(err, errs.ErrAnalysis) {
				t.Errorf("%s: error code %s", c.spec, errs.CodeOf(err))
			}
			if _, nerr := New(c.spec); nerr == nil {
				t.Errorf("New(%s) accepted an unsupported spec", c.spec)
			}
		} else {
			got = rt.String()
		}
		if got != c.want {
			t.Errorf("ResultType(%s) = %q, want %q", c.spec, got, c.want)
		}
	}
}

// TestFloatSpecials pins the float orderings: NaN is the greatest value, -0 equals +0.
func TestFloatSpecials(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	nan := math.NaN()
	check := func(fn string, vals []any, groups []uint32, want any) {
		t.Helper()
		acc, _ := New(Spec{Name: fn, ArgType: f64})
		if groups != nil {
			acc.Resize(1)
		}
		if err := acc.Update(build(f64, vals), nil, groups); err != nil {
			t.Fatal(err)
		}
		res, _ := acc.Final()
		if got := readValue(res, 0); !sameValue(got, want) {
			t.Errorf("%s(%v) = %v, want %v", fn, vals, got, want)
		}
	}
	for _, grouped := range [][]uint32{nil, {0, 0, 0}} {
		check("max", []any{1.0, nan, 2.0}, grouped, nan)
		check("min", []any{nan, 3.0, 2.0}, grouped, 2.0)
		check("min", []any{nan, nan, nil}, grouped[:min(len(grouped), 3)], nan)
		check("count_distinct", []any{0.0, math.Copysign(0, -1), nan}, grouped, int64(2))
	}
}

// TestNoGroups reads the results of accumulators that never had a group.
func TestNoGroups(t *testing.T) {
	for _, fn := range testFuncs {
		for _, dt := range testTypes {
			spec := Spec{Name: fn, ArgType: dt}
			if fn == "count_star" {
				spec.ArgType = nil
			}
			acc, err := New(spec)
			if err != nil {
				continue
			}
			res, err := acc.Final()
			if err != nil || res.Len() != 0 {
				t.Errorf("%s: Final of no groups = %v, %v", spec, res, err)
			}
		}
	}
}

// TestMergeRejectsOtherKinds checks that merging a different function is an error.
func TestMergeRejectsOtherKinds(t *testing.T) {
	a, _ := New(Spec{Name: "sum", ArgType: arrow.PrimitiveTypes.Int64})
	b, _ := New(Spec{Name: "min", ArgType: arrow.PrimitiveTypes.Int64})
	a.Resize(1)
	b.Resize(1)
	if err := a.Merge(b, []uint32{0}); err == nil {
		t.Fatal("merging min into sum: no error")
	}
	c, _ := New(Spec{Name: "sum", ArgType: arrow.PrimitiveTypes.Int64})
	c.Resize(2)
	if err := a.Merge(c, []uint32{0, 5}); err == nil {
		t.Fatal("merging into a group that does not exist: no error")
	}
}

// TestCountDistinctModes moves count_distinct between its value-keyed (all rows in
// group 0) and (group, value)-keyed states, by Update and by Merge.
func TestCountDistinctModes(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64} {
		spec := Spec{Name: "count_distinct", ArgType: dt}
		want := make([]map[string]bool, 3)
		for g := range want {
			want[g] = map[string]bool{}
		}
		add := func(vals []any, sel []int32, groups []uint32, mapping []uint32) {
			for k := range max(len(sel), len(groups)) {
				i, g := k, uint32(0)
				if sel != nil {
					i = int(sel[k])
				}
				if groups != nil {
					g = groups[k]
				}
				if vals[i] != nil {
					want[mapping[g]][canon(vals[i])] = true
				}
			}
		}
		newBatch := func() ([]any, arrow.Array, []int32) {
			vals := randValues(rng, dt, 100, 0.1)
			sel := []int32{}
			for i := range vals {
				if rng.IntN(3) > 0 {
					sel = append(sel, int32(i))
				}
			}
			if rng.IntN(2) == 0 {
				return vals, buildDict(rng, dt, vals), sel
			}
			return vals, build(dt, vals), sel
		}
		id := []uint32{0, 1, 2}

		a, _ := New(spec)
		a.Resize(3)
		v1, arr1, s1 := newBatch()
		if err := a.Update(arr1, s1, nil); err != nil { // value-keyed
			t.Fatal(err)
		}
		add(v1, s1, nil, id)
		v2, arr2, s2 := newBatch()
		g2 := make([]uint32, len(s2))
		for k := range g2 {
			g2[k] = uint32(rng.IntN(3))
		}
		if err := a.Update(arr2, s2, g2); err != nil { // converts
			t.Fatal(err)
		}
		add(v2, s2, g2, id)

		b, _ := New(spec) // value-keyed, merged into group 2
		v3, arr3, s3 := newBatch()
		if err := b.Update(arr3, s3, nil); err != nil {
			t.Fatal(err)
		}
		add(v3, s3, nil, []uint32{2})
		if err := a.Merge(b, []uint32{2}); err != nil {
			t.Fatal(err)
		}

		// A value-keyed state merged into group 1 of another value-keyed one.
		e, _ := New(spec)
		e.Resize(3)
		if err := e.Merge(b, []uint32{1}); err != nil {
			t.Fatal(err)
		}
		res, _ := e.Final()
		bDistinct := map[string]bool{}
		for _, i := range s3 {
			if v3[i] != nil {
				bDistinct[canon(v3[i])] = true
			}
		}
		if got := readValue(res, 1); got != int64(len(bDistinct)) {
			t.Fatalf("%s: merged into group 1: %v, want %d", dt, got, len(bDistinct))
		}
		if got := readValue(res, 0); got != int64(0) {
			t.Fatalf("%s: merged into group 1, group 0 = %v", dt, got)
		}

		// A (group, value)-keyed state merged into a fresh value-keyed one.
		d, _ := New(spec)
		d.Resize(3)
		if err := d.Merge(a, id); err != nil {
			t.Fatal(err)
		}
		for _, acc := range []Accumulator{a, d} {
			res, err := acc.Final()
			if err != nil {
				t.Fatal(err)
			}
			for g := range want {
				if got := readValue(res, g); got != int64(len(want[g])) {
					t.Fatalf("%s: group %d = %v, want %d", dt, g, got, len(want[g]))
				}
			}
		}
	}
}

// TestUpdateGroup checks that the accumulators that fold one group's rows at a time
// (OneGroup) end where Update over the same rows of mixed groups ends.
func TestUpdateGroup(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	dec := &arrow.Decimal128Type{Precision: 38, Scale: 2}
	specs := []Spec{{Name: "count_star"}}
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64, dec} {
		specs = append(specs, Spec{Name: "count", ArgType: dt}, Spec{Name: "sum", ArgType: dt}, Spec{Name: "avg", ArgType: dt})
	}
	for _, spec := range specs {
		const n, groups = 3000, 7
		dt := spec.ArgType
		if dt == nil {
			dt = arrow.PrimitiveTypes.Int64
		}
		vals := randValues(rng, dt, n, 0.1)
		args := []arrow.Array{build(dt, vals), buildDict(rng, dt, vals)}
		for k, arg := range args {
			mixed, _ := New(spec)
			one, _ := New(spec)
			og, ok := one.(OneGroup)
			if !ok {
				t.Fatalf("%s is not a OneGroup", spec)
			}
			mixed.Resize(groups)
			one.Resize(groups)
			// Every other row, in groups at random.
			var sel []int32
			var ids []uint32
			byGroup := make([][]int32, groups)
			for i := 0; i < n; i += 2 {
				g := uint32(rng.IntN(groups))
				sel, ids = append(sel, int32(i)), append(ids, g)
				byGroup[g] = append(byGroup[g], int32(i))
			}
			if err := mixed.Update(arg, sel, ids); err != nil {
				t.Fatal(err)
			}
			for g, rows := range byGroup {
				if len(rows) > 0 {
					if err := og.UpdateGroup(arg, rows, uint32(g)); err != nil {
						t.Fatal(err)
					}
				}
			}
			want, err := mixed.Final()
			if err != nil {
				t.Fatal(err)
			}
			got, err := one.Final()
			if err != nil {
				t.Fatal(err)
			}
			if !array.Equal(got, want) {
				t.Errorf("%s (arg %d): by group %v, mixed %v", spec, k, got, want)
			}
		}
	}
}

// Float SUM and AVG over arguments with NULLs take a loop per shape of the call:
// grouped or not, with a selection or not, the argument sliced or not. Each shape
// agrees with the reference.
func TestFloatSumShapesWithNulls(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64} {
		for _, fn := range []string{"sum", "avg"} {
			for shape := range 8 {
				grouped, selected, sliced := shape&1 != 0, shape&2 != 0, shape&4 != 0
				ng := 1
				if grouped {
					ng = 5
				}
				var batches []batch
				for range 4 {
					n := 50 + rng.IntN(200)
					vals := randValues(rng, dt, n, 0.2)
					for i, v := range vals {
						if f, ok := v.(float64); ok && f != f {
							vals[i] = 2.5 // a NaN would hide every other difference
						}
					}
					arg := build(dt, vals)
					if sliced {
						arg = array.NewSlice(build(dt, append([]any{nil, 1.5, nil}, vals...)), 3, int64(3+n))
					}
					batches = append(batches, selectedBatch(rng, vals, arg, selected, 3, ng))
				}
				spec := Spec{Name: fn, ArgType: dt}
				acc, err := New(spec)
				if err != nil {
					t.Fatal(err)
				}
				if grouped {
					acc.Resize(ng)
				}
				feed(t, acc, batches, !grouped)
				res, err := acc.Final()
				if err != nil {
					t.Fatal(err)
				}
				checkResult(t, fmt.Sprintf("%s(%s) shape %d", fn, dt, shape), spec, res, groupRows(batches, ng, !grouped))
			}
		}
	}
}
