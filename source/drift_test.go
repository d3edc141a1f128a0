package source

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

func decimal(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }

func TestWiden(t *testing.T) {
	cases := []struct {
		a, b arrow.DataType
		want string // "" when the pair cannot be reconciled
	}{
		{types.Int32, types.Int64, "BIGINT"},
		{types.Int8, types.Int16, "SMALLINT"},
		{types.Uint8, types.Uint32, "UINTEGER"},
		{types.Uint16, types.Int16, "INTEGER"},
		{types.Uint32, types.Int64, "BIGINT"},
		{types.Uint32, types.Int32, "BIGINT"},
		{types.Uint64, types.Int64, ""},
		{types.Float32, types.Float64, "DOUBLE"},
		{types.Int32, types.Float32, "DOUBLE"},
		{types.Int64, types.Float64, ""}, // a BIGINT does not fit a DOUBLE exactly
		{decimal(10, 2), decimal(18, 4), "DECIMAL(18,4)"},
		{decimal(18, 4), decimal(10, 2), "DECIMAL(18,4)"},
		{decimal(12, 0), decimal(10, 6), "DECIMAL(18,6)"},
		{decimal(38, 0), decimal(38, 10), ""},
		{types.Int32, decimal(5, 2), "DECIMAL(12,2)"},
		{types.Int64, decimal(38, 20), ""},
		{decimal(9, 3), types.Float32, "DOUBLE"},
		{types.String, arrow.BinaryTypes.LargeString, "VARCHAR"},
		{types.String, types.Int64, ""},
		{types.Date, types.Timestamp, ""},
		{types.Boolean, types.Int8, ""},
	}
	for _, c := range cases {
		for _, pair := range [][2]arrow.DataType{{c.a, c.b}, {c.b, c.a}} {
			got, ok := Widen(pair[0], pair[1])
			name := ""
			if ok {
				name = types.Name(got)
			}
			if name != c.want {
				t.Errorf("Widen(%s, %s) = %q, want %q", types.Name(pair[0]), types.Name(pair[1]), name, c.want)
			}
		}
	}
}

func TestWidenValue(t *testing.T) {
	cases := []struct {
		v     types.Value
		to    arrow.DataType
		want  string
		exact bool
	}{
		{types.Value{Type: types.Int32, I: -7}, types.Int64, "-7", true},
		{types.Value{Type: types.Uint32, U: 4_000_000_000}, types.Int64, "4000000000", true},
		{types.Value{Type: types.Float32, F: 1.5}, types.Float64, "1.5", true},
		{types.Value{Type: types.Int32, I: 3}, types.Float64, "3.0", true},
		{types.Value{Type: decimal(10, 2), D: decimal128.FromI64(-12345)}, decimal(18, 4), "-123.4500", true},
		{types.Value{Type: types.Int32, I: 42}, decimal(12, 2), "42.00", true},
		{types.Value{Type: decimal(10, 2), D: decimal128.FromI64(150)}, types.Float64, "1.5", false},
		{types.NullOf(types.Int32), types.Int64, "NULL", true},
	}
	for _, c := range cases {
		got, exact, ok := WidenValue(c.v, c.to)
		if !ok || !arrow.TypeEqual(got.Type, c.to) || got.String() != c.want || exact != c.exact {
			t.Errorf("WidenValue(%s %s, %s) = %s %s exact %v ok %v, want %s exact %v", types.Name(c.v.Type), c.v, types.Name(c.to), types.Name(got.Type), got, exact, ok, c.want, c.exact)
		}
	}
	if _, _, ok := WidenValue(types.StringValue("x"), types.Int64); ok {
		t.Error("a string widened to BIGINT")
	}
	if _, _, ok := WidenValue(types.Value{Type: decimal(10, 4), D: decimal128.FromI64(1)}, decimal(10, 2)); ok {
		t.Error("a decimal narrowed")
	}
}

// TestCastErrorsSaySomething checks the message of a cast that fails: Arrow's decimal
// cast wraps an empty cause, which printed as "invalid: invalid: %!s(<nil>)".
func TestCastErrorsSaySomething(t *testing.T) {
	b := array.NewDecimal128Builder(memory.DefaultAllocator, decimal(18, 4).(*arrow.Decimal128Type))
	b.Append(decimal128.FromI64(99999999999999))
	a := b.NewArray()
	defer a.Release()
	b.Release()
	_, err := castArray(context.Background(), a, decimal(10, 2))
	if err == nil {
		t.Fatal("an overflowing decimal cast succeeded")
	}
	got := castError("f.parquet", "d", a.DataType(), decimal(10, 2), err)
	msg := got.Error()
	if errs.CodeOf(got) != errs.CorruptSource || strings.Contains(msg, "%!") || strings.Contains(msg, "invalid: invalid") ||
		!strings.Contains(msg, "DECIMAL(18,4)") || !strings.Contains(msg, "DECIMAL(10,2)") || !strings.Contains(msg, "f.parquet") {
		t.Errorf("cast error %q (%s)", msg, errs.CodeOf(got))
	}
}

// TestUnionKeepsTwoSpellingsOfOneFile reads a file with columns "a" and "A" and one
// with "A" alone: the listing has both, the second renamed "A_1" (SetSchema) to be
// reachable, and the second file lacks "a".
func TestUnionKeepsTwoSpellingsOfOneFile(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "a.parquet"), 10, col{"a", types.Int64, ints(1)}, col{"A", types.Int64, ints(2)})
	writeParquet(t, filepath.Join(dir, "b.parquet"), 10, col{"A", types.Int64, ints(4)})
	l := resolve(t, dir)
	rows := render(scanAll(t, l, ScanSpec{Columns: []string{"a", "A_1"}}, nil))
	if want := []string{"1|2", "NULL|4"}; !slices.Equal(rows, want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
}
