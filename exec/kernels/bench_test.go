package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

const benchRows = vector.BatchSize

func benchInt64(nullEvery int) arrow.Array {
	r := rand.New(rand.NewPCG(1, 2))
	b := array.NewInt64Builder(defaultMem)
	for i := 0; i < benchRows; i++ {
		if nullEvery > 0 && i%nullEvery == 0 {
			b.AppendNull()
		} else {
			b.Append(r.Int64N(1_000_000))
		}
	}
	return b.NewArray()
}

func benchFloat64() arrow.Array {
	r := rand.New(rand.NewPCG(3, 4))
	b := array.NewFloat64Builder(defaultMem)
	for i := 0; i < benchRows; i++ {
		b.Append(r.Float64() * 1000)
	}
	return b.NewArray()
}

var benchWords = []string{"AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"}

func benchStrings() arrow.Array {
	r := rand.New(rand.NewPCG(5, 6))
	b := array.NewStringBuilder(defaultMem)
	for i := 0; i < benchRows; i++ {
		b.Append(benchWords[r.IntN(len(benchWords))])
	}
	return b.NewArray()
}

func benchDict() arrow.Array {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: types.String}
	b := array.NewDictionaryBuilder(defaultMem, dt).(*array.BinaryDictionaryBuilder)
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < benchRows; i++ {
		_ = b.AppendString(benchWords[r.IntN(len(benchWords))])
	}
	return b.NewArray()
}

var benchDecimalType = &arrow.Decimal128Type{Precision: 15, Scale: 2}

func benchDecimal() arrow.Array {
	b := array.NewDecimal128Builder(defaultMem, benchDecimalType)
	for i := 0; i < benchRows; i++ {
		b.Append(decimal128.FromI64(int64(i*7919%5000 + 100)))
	}
	return b.NewArray()
}

func BenchmarkCompareConst(b *testing.B) {
	cases := []struct {
		name string
		arr  arrow.Array
		v    types.Value
	}{
		{"type=int64", benchInt64(0), types.IntValue(500_000)},
		{"type=int64,nulls", benchInt64(10), types.IntValue(500_000)},
		{"type=float64", benchFloat64(), types.FloatValue(500)},
		{"type=string", benchStrings(), types.StringValue("MAIL")},
		{"type=dictionary", benchDict(), types.StringValue("MAIL")},
		{"type=decimal(15,2)", benchDecimal(), types.Value{Type: benchDecimalType, D: decimal128.FromI64(2400)}},
	}
	for _, c := range cases {
		for _, op := range []string{"=", "<"} {
			b.Run(fmt.Sprintf("rows=%d,%s,op=%s", benchRows, c.name, op), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(benchRows))
				for b.Loop() {
					if _, err := CompareConst(op, c.arr, c.v); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSelectConst is the filter's fused comparison: every row, and the rows
// of a selection of half of them.
func BenchmarkSelectConst(b *testing.B) {
	half := make([]int32, 0, benchRows/2)
	for i := 0; i < benchRows; i += 2 {
		half = append(half, int32(i))
	}
	cases := []struct {
		name string
		arr  arrow.Array
		v    types.Value
	}{
		{"type=int64", benchInt64(0), types.IntValue(500_000)},
		{"type=decimal(15,2)", benchDecimal(), types.Value{Type: benchDecimalType, D: decimal128.FromI64(2400)}},
	}
	for _, c := range cases {
		for _, sel := range [][]int32{nil, half} {
			b.Run(fmt.Sprintf("rows=%d,%s,selected=%d", benchRows, c.name, max(len(sel), benchRows*b2i(sel == nil))), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(benchRows))
				for b.Loop() {
					if _, ok := SelectConst("<", c.arr, c.v, sel, nil); !ok {
						b.Fatal("declined")
					}
				}
			})
		}
	}
}

func BenchmarkAdd(b *testing.B) {
	cases := []struct {
		name string
		x, y arrow.Array
	}{
		{"type=int64", benchInt64(0), benchInt64(0)},
		{"type=int64,nulls", benchInt64(10), benchInt64(0)},
		{"type=float64", benchFloat64(), benchFloat64()},
	}
	for _, c := range cases {
		f, err := Resolve("+", []arrow.DataType{c.x.DataType(), c.y.DataType()})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("rows=%d,%s", benchRows, c.name), func(b *testing.B) {
			b.ReportAllocs()
			args := []arrow.Array{c.x, c.y}
			for b.Loop() {
				if _, err := f.Eval(args, benchRows); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run(fmt.Sprintf("rows=%d,type=int64,mul", benchRows), func(b *testing.B) {
		f, _ := Resolve("*", []arrow.DataType{types.Int64, types.Int64})
		args := []arrow.Array{benchInt64(0), benchInt64(0)}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.Eval(args, benchRows); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkFunctions(b *testing.B) {
	strs, d := benchStrings(), benchDict()
	cases := []struct {
		name string
		args []arrow.Array
	}{
		{"like/type=string", []arrow.Array{strs, constStr("%AI%", benchRows)}},
		{"like/type=dictionary", []arrow.Array{d, constStr("%AI%", benchRows)}},
		{"lower/type=string", []arrow.Array{strs}},
		{"lower/type=dictionary", []arrow.Array{d}},
		{"and/type=bool", []arrow.Array{ConstArray(types.BoolValue(true), benchRows), ConstArray(types.BoolValue(false), benchRows)}},
	}
	for _, c := range cases {
		name := c.name[:len(c.name)-len(c.name[indexByte(c.name, '/'):])]
		dts := make([]arrow.DataType, len(c.args))
		for i, a := range c.args {
			dts[i] = a.DataType()
		}
		f, err := Resolve(name, dts)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%s,rows=%d", c.name, benchRows), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Eval(c.args, benchRows); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return len(s)
}
