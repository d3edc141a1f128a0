package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore"
	"github.com/loredb/lore/types"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata/")

var mixedSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "d", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "small", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "日本", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
}, nil)

// mixedRow is one row of mixedSchema; nil fields are NULL.
type mixedRow struct {
	i     *int64
	f     *float64
	d     *int64 // scaled by 100
	s     *string
	day   *string
	ts    *string
	ok    *bool
	small *float32
	u     *uint8
}

func ptr[T any](v T) *T { return &v }

// mixedBatch builds one record of mixedSchema from rows.
func mixedBatch(t *testing.T, rows []mixedRow) arrow.Record {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, mixedSchema)
	defer b.Release()
	for _, r := range rows {
		appendOrNull(b.Field(0), r.i, func(v int64) { b.Field(0).(*array.Int64Builder).Append(v) })
		appendOrNull(b.Field(1), r.f, func(v float64) { b.Field(1).(*array.Float64Builder).Append(v) })
		appendOrNull(b.Field(2), r.d, func(v int64) { b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(v)) })
		appendOrNull(b.Field(3), r.s, func(v string) { b.Field(3).(*array.StringBuilder).Append(v) })
		appendOrNull(b.Field(4), r.day, func(v string) {
			d, err := time.Parse("2006-01-02", v)
			if err != nil {
				t.Fatal(err)
			}
			b.Field(4).(*array.Date32Builder).Append(arrow.Date32FromTime(d))
		})
		appendOrNull(b.Field(5), r.ts, func(v string) {
			ts, err := time.Parse("2006-01-02 15:04:05.999999", v)
			if err != nil {
				t.Fatal(err)
			}
			b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
		})
		appendOrNull(b.Field(6), r.ok, func(v bool) { b.Field(6).(*array.BooleanBuilder).Append(v) })
		appendOrNull(b.Field(7), r.small, func(v float32) { b.Field(7).(*array.Float32Builder).Append(v) })
		appendOrNull(b.Field(8), r.u, func(v uint8) { b.Field(8).(*array.Uint8Builder).Append(v) })
	}
	return b.NewRecord()
}

func appendOrNull[T any](b array.Builder, v *T, add func(T)) {
	if v == nil {
		b.AppendNull()
		return
	}
	add(*v)
}

// formatCases are the results rendered in every format.
func formatCases(t *testing.T) map[string]*lore.Result {
	rec := &lore.Record{ID: "q-1", SQL: "SELECT …", Settings: map[string]string{}, State: "finished",
		ElapsedMS: 1.25, Rows: 4, Execution: lore.Execution{Mode: "scan"}, Scans: []lore.ScanRecord{}}
	// Two batches, so that rows are rendered across batch boundaries.
	b1 := mixedBatch(t, []mixedRow{
		{i: ptr[int64](1), f: ptr(1.5), d: ptr[int64](1250), s: ptr(`say "hi", then go`), day: ptr("2024-01-02"),
			ts: ptr("2024-01-02 03:04:05.25"), ok: ptr(true), small: ptr[float32](0.1), u: ptr[uint8](7)},
		{i: ptr[int64](-42), f: ptr(math.NaN()), d: ptr[int64](-5), s: ptr("a|b\\c"), day: ptr("1969-12-31"),
			ts: ptr("2024-03-31 23:59:59"), ok: ptr(false), small: ptr[float32](-2), u: ptr[uint8](255)},
	})
	b2 := mixedBatch(t, []mixedRow{
		{},
		{i: ptr[int64](math.MaxInt64), f: ptr(math.Inf(1)), d: ptr[int64](123456789012345), s: ptr("naïve 日本\nline2\t<&>"),
			day: ptr("2000-02-29"), ts: ptr("1999-12-31 23:59:59.000001"), ok: ptr(true), small: ptr[float32](1e20), u: ptr[uint8](0)},
	})
	empty := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64},
		{Name: "b", Type: arrow.BinaryTypes.String},
	}, nil)
	return map[string]*lore.Result{
		"mixed":   {Schema: mixedSchema, Batches: []arrow.Record{b1, b2}, Record: rec},
		"empty":   {Schema: empty, Record: rec},
		"nocols":  {Record: rec},
		"onecell": {Schema: arrow.NewSchema([]arrow.Field{{Name: "count_star()", Type: arrow.PrimitiveTypes.Int64}}, nil), Batches: []arrow.Record{oneInt(12345)}},
	}
}

func oneInt(v int64) arrow.Record {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.Append(v)
	arr := b.NewArray()
	return array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "count_star()", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{arr}, 1)
}

var formatExt = map[string]string{"table": "txt", "csv": "csv", "json": "json", "ndjson": "ndjson", "markdown": "md"}

func TestWriteResultGolden(t *testing.T) {
	for name, res := range formatCases(t) {
		for _, format := range Formats {
			t.Run(name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				if err := WriteResult(&buf, format, res); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", "format", name+"."+formatExt[format])
				if *rewrite {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -rewrite to create it)", err)
				}
				if got := buf.String(); got != string(want) {
					t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", path, got, want)
				}
			})
		}
	}
}

func TestWriteResultUnknownFormat(t *testing.T) {
	if err := WriteResult(&bytes.Buffer{}, "xml", formatCases(t)["mixed"]); err == nil {
		t.Fatal("format xml accepted")
	}
}

// The checks below read the output back with independent parsers, so the golden
// files cannot silently enshrine malformed output.

func TestJSONIsValidAndTyped(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteResult(&buf, "json", formatCases(t)["mixed"]); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("json output is not one line: %q", out)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var doc struct {
		Columns []struct{ Name, Type string }
		Rows    [][]any
		Record  *lore.Record
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("json output does not parse: %v\n%s", err, out)
	}
	if len(doc.Columns) != 9 || doc.Columns[2].Type != "DECIMAL(15,2)" || doc.Columns[0].Type != "BIGINT" {
		t.Errorf("columns = %+v", doc.Columns)
	}
	if len(doc.Rows) != 4 {
		t.Fatalf("%d rows, want 4", len(doc.Rows))
	}
	r0, r1, r2, r3 := doc.Rows[0], doc.Rows[1], doc.Rows[2], doc.Rows[3]
	checks := []struct {
		got, want any
	}{
		{r0[0], json.Number("1")},
		{r3[0], json.Number("9223372036854775807")}, // exact, not rounded through a float
		{r0[1], json.Number("1.5")},
		{r1[1], "nan"},
		{r3[1], "inf"},
		{r0[2], json.Number("12.50")},
		{r1[2], json.Number("-0.05")},
		{r0[3], `say "hi", then go`},
		{r3[3], "naïve 日本\nline2\t<&>"},
		{r1[4], "1969-12-31"},
		{r0[5], "2024-01-02 03:04:05.25"},
		{r0[6], true},
		{r1[6], false},
		{r1[8], json.Number("255")},
	}
	for i, c := range checks {
		if c.got != c.want {
			t.Errorf("check %d: got %#v, want %#v", i, c.got, c.want)
		}
	}
	for c, v := range r2 {
		if v != nil {
			t.Errorf("row 2 column %d = %#v, want null", c, v)
		}
	}
	if doc.Record == nil || doc.Record.ID != "q-1" || doc.Record.Execution.Mode != "scan" {
		t.Errorf("record = %+v", doc.Record)
	}
}

func TestNDJSONKeepsColumnOrder(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteResult(&buf, "ndjson", formatCases(t)["mixed"]); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4", len(lines))
	}
	for _, line := range lines {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("line does not parse: %v: %s", err, line)
		}
		if len(obj) != 9 {
			t.Errorf("line has %d keys, want 9: %s", len(obj), line)
		}
		// Keys appear in schema order.
		last := -1
		for _, f := range mixedSchema.Fields() {
			key, _ := json.Marshal(f.Name)
			at := strings.Index(line, string(key)+":")
			if at <= last {
				t.Errorf("key %s out of order in %s", key, line)
			}
			last = at
		}
	}
}

func TestCSVRoundTrips(t *testing.T) {
	res := formatCases(t)["mixed"]
	var buf bytes.Buffer
	if err := WriteResult(&buf, "csv", res); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 {
		t.Fatalf("%d records, want header + 4", len(recs))
	}
	row := 1
	for _, b := range res.Batches {
		for i := 0; i < int(b.NumRows()); i++ {
			for c := 0; c < int(b.NumCols()); c++ {
				v := types.ValueAt(b.Column(c), i)
				want := v.String()
				if v.Null {
					want = ""
				}
				if recs[row][c] != want {
					t.Errorf("row %d column %d = %q, want %q", row, c, recs[row][c], want)
				}
			}
			row++
		}
	}
}

func TestTableAlignment(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteResult(&buf, "table", formatCases(t)["mixed"]); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	// Every line of the grid has the same display width, wide runes included.
	w := displayWidth(lines[0])
	for _, l := range lines {
		if displayWidth(l) != w {
			t.Errorf("line width %d, want %d: %q", displayWidth(l), w, l)
		}
	}
	if !strings.Contains(buf.String(), `line2\t<&>`) || strings.Count(buf.String(), "\n") != len(lines) {
		t.Error("a newline inside a value broke the grid")
	}
}

func TestDisplayWidth(t *testing.T) {
	for s, want := range map[string]int{"abc": 3, "日本": 4, "naïve": 5, "e\u0301": 1, "": 0} {
		if got := displayWidth(s); got != want {
			t.Errorf("displayWidth(%q) = %d, want %d", s, got, want)
		}
	}
}
