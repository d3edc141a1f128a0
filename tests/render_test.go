package tests

import (
	"math"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore"
)

// TestRender checks the runner's own rendering of an Arrow result: type letters,
// NULL, (empty), floats, decimals, timestamps with a zone, dictionaries, and the
// testdata path written back as the token.
func TestRender(t *testing.T) {
	mem := memory.NewGoAllocator()
	dec := &arrow.Decimal128Type{Precision: 15, Scale: 2}
	tz := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: dec, Nullable: true},
		{Name: "ts", Type: tz, Nullable: true},
		{Name: "k", Type: dict, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 0}, []bool{true, false})
	b.Field(1).(*array.Float64Builder).AppendValues([]float64{math.NaN(), math.Copysign(0, -1)}, nil)
	b.Field(2).(*array.StringBuilder).AppendValues([]string{"", "/abs/testdata/x.parquet"}, nil)
	b.Field(3).(*array.Decimal128Builder).AppendValues([]decimal128.Num{decimal128.FromI64(-2050), decimal128.FromI64(1)}, nil)
	b.Field(4).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1_500_000, 0}, []bool{true, false})
	db := b.Field(5).(*array.BinaryDictionaryBuilder)
	if err := db.AppendString("east"); err != nil {
		t.Fatal(err)
	}
	db.AppendNull()
	rec := b.NewRecord()
	defer rec.Release()

	letters, rows, err := render(&lore.Result{Schema: schema, Batches: []arrow.Record{rec}}, "/abs/testdata")
	if err != nil {
		t.Fatal(err)
	}
	if letters != "IRTRTT" {
		t.Errorf("letters %q, want IRTRTT", letters)
	}
	want := [][]string{
		{"1", "nan", "(empty)", "-20.50", "1970-01-01 00:00:01.5+00", "east"},
		{"NULL", "-0.0", "__TESTDATA__/x.parquet", "0.01", "NULL", "NULL"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows\n%q\nwant\n%q", rows, want)
	}
}
