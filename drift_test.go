package lore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// driftCol is one column of a file written by writeDrift: its type and its values,
// nil for NULL (int64 for integer and decimal types, the decimal's unscaled value;
// float64 for floats; string for VARCHAR).
type driftCol struct {
	name string
	typ  arrow.DataType
	vals []any
}

// writeDrift writes the columns to path, in row groups of two rows.
func writeDrift(t *testing.T, path string, cols ...driftCol) {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
		b := array.NewBuilder(memory.DefaultAllocator, c.typ)
		for _, v := range c.vals {
			if v == nil {
				b.AppendNull()
				continue
			}
			switch bb := b.(type) {
			case *array.Int32Builder:
				bb.Append(int32(v.(int64)))
			case *array.Int64Builder:
				bb.Append(v.(int64))
			case *array.Float32Builder:
				bb.Append(float32(v.(float64)))
			case *array.Float64Builder:
				bb.Append(v.(float64))
			case *array.Decimal128Builder:
				bb.Append(decimal128.FromI64(v.(int64)))
			case *array.StringBuilder:
				bb.Append(v.(string))
			default:
				t.Fatalf("no test values of type %s", c.typ)
			}
		}
		arrs[i] = b.NewArray()
		b.Release()
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecord(schema, arrs, int64(arrs[0].Len()))
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
	if err := pqarrow.WriteTable(tbl, f, 2, pq.NewWriterProperties(pq.WithStats(true)), pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
}

func vals(vs ...any) []any { return vs }

var (
	i32   = arrow.PrimitiveTypes.Int32
	i64   = arrow.PrimitiveTypes.Int64
	f32   = arrow.PrimitiveTypes.Float32
	f64   = arrow.PrimitiveTypes.Float64
	str   = arrow.BinaryTypes.String
	dec   = func(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }
	drift = []struct {
		name     string
		files    [][]driftCol // a.parquet, b.parquet, …
		describe string       // DESCRIBE's rows, name:type
		sql      string       // aggregates over the drifting column
		want     string       // its scanned answer
		rows     string       // SELECT * in order, to see every file's rows
	}{
		{
			name: "a later file lacks a column",
			files: [][]driftCol{
				{{"a", i64, vals(int64(1), int64(2), int64(3))}, {"b", i64, vals(int64(10), int64(20), nil)}},
				{{"a", i64, vals(int64(4), int64(5))}},
			},
			describe: "a:BIGINT b:BIGINT",
			sql:      "SELECT count(b), sum(b), min(b), max(b), count(*) FROM t",
			want:     "2|30|10|20|5|\n",
			rows:     "1|10|\n2|20|\n3|NULL|\n4|NULL|\n5|NULL|\n",
		},
		{
			name: "an earlier file lacks a column",
			files: [][]driftCol{
				{{"a", i64, vals(int64(1), int64(2))}},
				{{"b", i64, vals(int64(-7), nil, int64(40))}, {"a", i64, vals(int64(3), int64(4), int64(5))}},
			},
			describe: "a:BIGINT b:BIGINT",
			sql:      "SELECT count(b), sum(b), min(b), max(b), count(*) FROM t",
			want:     "2|33|-7|40|5|\n",
			rows:     "1|NULL|\n2|NULL|\n3|-7|\n4|NULL|\n5|40|\n",
		},
		{
			name: "INTEGER widened to BIGINT",
			files: [][]driftCol{
				{{"a", i64, vals(int64(1), int64(2))}, {"b", i32, vals(int64(-5), int64(7))}},
				{{"a", i64, vals(int64(3))}, {"b", i64, vals(int64(3_000_000_000))}},
			},
			describe: "a:BIGINT b:BIGINT",
			sql:      "SELECT count(b), sum(b), min(b), max(b) FROM t",
			want:     "3|3000000002|-5|3000000000|\n",
			rows:     "1|-5|\n2|7|\n3|3000000000|\n",
		},
		{
			name: "FLOAT widened to DOUBLE",
			files: [][]driftCol{
				{{"a", i64, vals(int64(1), int64(2))}, {"b", f32, vals(1.5, -0.25)}},
				{{"a", i64, vals(int64(3))}, {"b", f64, vals(2.125)}},
			},
			describe: "a:BIGINT b:DOUBLE",
			sql:      "SELECT count(b), sum(b), min(b), max(b) FROM t",
			want:     "3|3.375|-0.25|2.125|\n",
			rows:     "1|1.5|\n2|-0.25|\n3|2.125|\n",
		},
		{
			name: "DECIMAL(10,2) and DOUBLE read as DOUBLE",
			files: [][]driftCol{
				{{"a", i64, vals(int64(1), int64(2))}, {"b", dec(10, 2), vals(int64(150), int64(-25))}},
				{{"a", i64, vals(int64(3))}, {"b", f64, vals(2.125)}},
			},
			describe: "a:BIGINT b:DOUBLE",
			sql:      "SELECT count(b), sum(b), min(b), max(b) FROM t",
			want:     "3|3.375|-0.25|2.125|\n",
			rows:     "1|1.5|\n2|-0.25|\n3|2.125|\n",
		},
		{
			name: "DECIMAL(10,2) and DECIMAL(18,4) read as DECIMAL(18,4)",
			files: [][]driftCol{
				{{"a", i64, vals(int64(1), int64(2))}, {"b", dec(10, 2), vals(int64(12345), int64(-50))}},
				{{"a", i64, vals(int64(3), int64(4))}, {"b", dec(18, 4), vals(int64(10001), int64(99999999999999))}},
			},
			describe: "a:BIGINT b:DECIMAL(18,4)",
			sql:      "SELECT count(b), sum(b), min(b), max(b) FROM t",
			want:     "4|10000000123.9500|-0.5000|9999999999.9999|\n",
			rows:     "1|123.4500|\n2|-0.5000|\n3|1.0001|\n4|9999999999.9999|\n",
		},
	}
)

// TestSchemaDriftIsReadByName reads listings whose files' columns differ: a column a
// file lacks is NULL there, a narrower type is read widened, and statistics — from the
// footers and from a full read — answer as the scan does.
func TestSchemaDriftIsReadByName(t *testing.T) {
	for _, c := range drift {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, cols := range c.files {
				writeDrift(t, filepath.Join(dir, fmt.Sprintf("%c.parquet", 'a'+i)), cols...)
			}
			e := open(t, lore.Options{NoAutoRefresh: true})
			registerStats(t, e, dir)
			if got := describeColumns(t, e, "t"); got != c.describe {
				t.Errorf("DESCRIBE: %s, want %s", got, c.describe)
			}
			if got := resultText(run(t, e, "SELECT * FROM t ORDER BY a", nil)); got != c.rows {
				t.Errorf("rows:\n%s\nwant\n%s", got, c.rows)
			}
			// A filter on a, then b read late for the rows it keeps.
			if got, want := resultText(run(t, e, "SELECT a, b FROM t WHERE a >= 2 ORDER BY a", nil)), c.rows[strings.Index(c.rows, "\n")+1:]; got != want {
				t.Errorf("rows from a on:\n%s\nwant\n%s", got, want)
			}
			if got := resultText(run(t, e, c.sql, scanned)); got != c.want {
				t.Fatalf("%s scanned: %q, want %q", c.sql, got, c.want)
			}
			where := fmt.Sprintf("SELECT count(*) FROM '%s' WHERE b IS NULL", filepath.Join(dir, "*.parquet"))
			nulls := resultText(run(t, e, where, nil))

			run(t, e, "ANALYZE t", nil)
			sameAnswer(t, e, c.sql)
			// The footers' bounds, widened, answer MIN and MAX (a float's never do:
			// writers leave NaN out of them).
			if c.describe[len(c.describe)-len("DOUBLE"):] == "DOUBLE" {
				sameAnswer(t, e, "SELECT count(b), min(b), max(b), count(*) FROM t")
			} else {
				checkAnswered(t, e, "SELECT count(b), min(b), max(b), count(*) FROM t")
			}
			run(t, e, "ANALYZE t WITH (sketches = true)", nil)
			checkAnswered(t, e, c.sql)
			if got := resultText(run(t, e, "SELECT count(*) FROM t WHERE b IS NULL", nil)); got != nulls {
				t.Errorf("b IS NULL after ANALYZE: %q, the path query %q", got, nulls)
			}
		})
	}
}

// describeColumns renders DESCRIBE's rows as name:type.
func describeColumns(t *testing.T, e *lore.Engine, table string) string {
	t.Helper()
	res := run(t, e, "DESCRIBE "+table, nil)
	var cols []string
	for r := 0; r < int(res.NumRows()); r++ {
		cols = append(cols, cell(res, r, 0)+":"+cell(res, r, 1))
	}
	return strings.Join(cols, " ")
}

// sameAnswer runs sql scanned and as statistics may answer it, and compares.
func sameAnswer(t *testing.T, e *lore.Engine, sql string) {
	t.Helper()
	want := resultText(run(t, e, sql, scanned))
	if got := resultText(run(t, e, sql, nil)); got != want {
		t.Errorf("%s: %q, scanned %q", sql, got, want)
	}
}

// TestSchemaDriftThatCannotBeReconciled fails scans and ANALYZE alike, with one code
// and a message naming the column, both files and both types.
func TestSchemaDriftThatCannotBeReconciled(t *testing.T) {
	dir := t.TempDir()
	writeDrift(t, filepath.Join(dir, "a.parquet"), driftCol{"x", i64, vals(int64(1), int64(2))})
	e := open(t, lore.Options{NoAutoRefresh: true})
	registerStats(t, e, dir)
	run(t, e, "ANALYZE t", nil)
	writeDrift(t, filepath.Join(dir, "b.parquet"), driftCol{"x", str, vals("three")})
	ctx := context.Background()
	for _, sql := range []string{
		"SELECT count(*) FROM t",
		"SELECT sum(x) FROM t",
		"SELECT * FROM t",
		fmt.Sprintf("SELECT count(*) FROM '%s'", filepath.Join(dir, "*.parquet")),
		"ANALYZE t",
		"ANALYZE t WITH (sketches = true)",
		"DESCRIBE t",
	} {
		_, err := e.Query(ctx, sql, nil)
		if errs.CodeOf(err) != errs.CorruptSource {
			t.Errorf("%s: %v, want CORRUPT_SOURCE", sql, err)
			continue
		}
		msg := err.Error()
		for _, part := range []string{`"x"`, "BIGINT", "VARCHAR", filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")} {
			if !strings.Contains(msg, part) {
				t.Errorf("%s: %q does not name %s", sql, msg, part)
			}
		}
	}
}
