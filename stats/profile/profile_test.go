package profile_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/loredb/lore/dist/disttest"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/stats/profile"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// The tests write real Parquet files, build the footers' record, run Full, and check
// every zone, file and the table against what they compute themselves from the rows
// they wrote. Values are kept as plain Go values (nil = NULL): int64 for integers,
// dates (days) and timestamps (µs), float64, string, bool, *big.Int for a decimal's
// scaled integer.

var (
	dec18 = &arrow.Decimal128Type{Precision: 18, Scale: 2}
	dec38 = &arrow.Decimal128Type{Precision: 38, Scale: 10}
	tsUS  = &arrow.TimestampType{Unit: arrow.Microsecond}
)

type testColumn struct {
	name string
	dt   arrow.DataType
	gen  func(r *rand.Rand, file, row int) any
}

var testColumns = []testColumn{
	{"i", arrow.PrimitiveTypes.Int64, func(r *rand.Rand, _, row int) any {
		switch {
		case row%17 == 3:
			return nil
		case row == 5:
			return int64(math.MaxInt64 / 2)
		case row == 6:
			return int64(math.MinInt64 / 2)
		}
		return r.Int64N(2000) - 1000
	}},
	{"small", arrow.PrimitiveTypes.Int8, func(r *rand.Rand, _, row int) any { return int64(r.IntN(7) - 3) }},
	{"f", arrow.PrimitiveTypes.Float64, func(r *rand.Rand, file, row int) any {
		switch {
		case row%23 == 1:
			return nil
		case file == 1 && row == 1200: // file 1, its second row group only
			return math.NaN()
		case row%101 == 7:
			return math.Copysign(0, -1)
		}
		return math.Round(r.NormFloat64()*1e6) / 1e3
	}},
	{"d", dec18, func(r *rand.Rand, _, row int) any {
		if row%11 == 0 {
			return nil
		}
		return big.NewInt(r.Int64N(2_000_000) - 1_000_000)
	}},
	{"d38", dec38, func(r *rand.Rand, _, row int) any {
		if row%5 == 0 {
			return nil
		}
		n := new(big.Int).Lsh(big.NewInt(r.Int64N(1<<40)-(1<<39)), 60) // about 28 digits
		return n
	}},
	{"s", arrow.BinaryTypes.String, func(r *rand.Rand, _, row int) any {
		if row%13 == 0 {
			return nil
		}
		return fmt.Sprintf("v%04d", r.IntN(3000))
	}},
	{"day", arrow.FixedWidthTypes.Date32, func(r *rand.Rand, _, _ int) any { return int64(19000 + r.IntN(400)) }},
	{"ts", tsUS, func(r *rand.Rand, _, row int) any {
		if row%9 == 4 {
			return nil
		}
		return 1_700_000_000_000_000 + r.Int64N(1e12)
	}},
	{"b", arrow.FixedWidthTypes.Boolean, func(r *rand.Rand, _, row int) any {
		if row%7 == 0 {
			return nil
		}
		return r.IntN(3) == 0
	}},
	{"none", arrow.PrimitiveTypes.Int32, func(*rand.Rand, int, int) any { return nil }},
}

const rowGroupRows = 1000

// testFile is one file of the test table: where it goes, its partition value and rows.
type testFile struct {
	rel  string
	k    any // int64, or nil for the NULL partition
	rows int
}

var testFiles = []testFile{
	{"k=1/a.parquet", int64(1), 2500},
	{"k=1/b.parquet", int64(1), 1500},
	{"k=2/c.parquet", int64(2), 0},
	{"k=__HIVE_DEFAULT_PARTITION__/d.parquet", nil, 1000},
}

// table is the written test table: data[file][column][row], columns as testColumns.
type table struct {
	dir  string
	data [][][]any
}

func writeTable(t testing.TB) *table {
	t.Helper()
	tb := &table{dir: t.TempDir()}
	fields := make([]arrow.Field, len(testColumns))
	for c, col := range testColumns {
		fields[c] = arrow.Field{Name: col.name, Type: col.dt, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	for fi, f := range testFiles {
		r := rand.New(rand.NewPCG(uint64(fi), 42))
		cols := make([][]any, len(testColumns))
		for row := 0; row < f.rows; row++ {
			for c, col := range testColumns {
				cols[c] = append(cols[c], col.gen(r, fi, row))
			}
		}
		tb.data = append(tb.data, cols)
		arrs := make([]arrow.Array, len(testColumns))
		for c, col := range testColumns {
			vals := make([]types.Value, f.rows)
			for row, v := range cols[c] {
				vals[row] = box(col.dt, v)
			}
			arrs[c] = vector.FromValues(col.dt, vals)
		}
		rec := array.NewRecord(schema, arrs, int64(f.rows))
		err := parquet.WriteFile(filepath.Join(tb.dir, f.rel), schema, func(emit func(arrow.Record) error) error {
			if f.rows == 0 {
				return nil
			}
			return emit(rec)
		}, parquet.WriteOptions{RowGroupRows: rowGroupRows})
		if err != nil {
			t.Fatal(err)
		}
	}
	return tb
}

func box(dt arrow.DataType, v any) types.Value {
	switch x := v.(type) {
	case nil:
		return types.NullOf(dt)
	case int64:
		return types.Value{Type: dt, I: x}
	case float64:
		return types.Value{Type: dt, F: x}
	case string:
		return types.Value{Type: dt, S: x}
	case bool:
		if x {
			return types.Value{Type: dt, I: 1}
		}
		return types.Value{Type: dt}
	case *big.Int:
		return types.Value{Type: dt, D: decimal128.FromBigInt(x)}
	}
	panic(fmt.Sprintf("test value %T", v))
}

// metadataRecord resolves dir and builds its footers' record.
func metadataRecord(t testing.TB, dir string) (*source.Listing, *stats.Record) {
	t.Helper()
	ctx := context.Background()
	l, err := source.Resolve(ctx, storage.Local{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := disttest.FootersRecord(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	return l, rec
}

// expect is what the test computes for one column over a set of rows.
type expect struct {
	rows, nulls int64
	min, max    any
	nan         bool
	sum         string
}

// less orders two non-null, non-NaN test values of the same column.
func less(a, b any) bool {
	switch x := a.(type) {
	case int64:
		return x < b.(int64)
	case float64:
		return x < b.(float64)
	case string:
		return x < b.(string)
	case bool:
		return !x && b.(bool)
	case *big.Int:
		return x.Cmp(b.(*big.Int)) < 0
	}
	panic(fmt.Sprintf("test value %T", a))
}

func compute(dt arrow.DataType, vals []any) expect {
	e := expect{rows: int64(len(vals))}
	isum := new(big.Int)
	var fsum float64
	n := 0
	for _, v := range vals {
		if v == nil {
			e.nulls++
			continue
		}
		n++
		switch x := v.(type) {
		case int64:
			isum.Add(isum, big.NewInt(x))
		case float64:
			fsum += x
		case *big.Int:
			isum.Add(isum, x)
		}
		if f, ok := v.(float64); ok && f != f {
			e.nan = true
			continue
		}
		if e.min == nil || less(v, e.min) {
			e.min = v
		}
		if e.max == nil || less(e.max, v) {
			e.max = v
		}
	}
	if e.nan {
		e.min, e.max = nil, nil
	}
	if n > 0 && types.IsNumeric(dt) {
		switch {
		case types.IsFloat(dt):
			e.sum = strconv.FormatFloat(fsum, 'g', -1, 64)
		case types.IsDecimal(dt):
			e.sum = decimalText(isum, int(dt.(*arrow.Decimal128Type).Scale))
		default:
			e.sum = isum.String()
		}
	}
	return e
}

func decimalText(n *big.Int, scale int) string {
	digits := new(big.Int).Abs(n).String()
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	s := digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	if n.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// matches checks one recorded zone column against the expectation.
func matches(t *testing.T, where string, dt arrow.DataType, got stats.ZoneColumn, want expect, sums bool) {
	t.Helper()
	if got.NullCount == nil || *got.NullCount != want.nulls {
		t.Errorf("%s: null count %v, want %d", where, got.NullCount, want.nulls)
	}
	if got.HasNaN != want.nan {
		t.Errorf("%s: HasNaN %v, want %v", where, got.HasNaN, want.nan)
	}
	if want.min == nil {
		if got.Min != nil || got.Max != nil {
			t.Errorf("%s: bounds %x..%x, want none", where, got.Min, got.Max)
		}
	} else {
		if !got.BoundsExact {
			t.Errorf("%s: bounds not exact", where)
		}
		codec, _ := stats.CodecFor(dt)
		for _, b := range []struct {
			name string
			enc  []byte
			want any
		}{{"min", got.Min, want.min}, {"max", got.Max, want.max}} {
			v, err := codec.Decode(b.enc)
			if err != nil {
				t.Errorf("%s: %s: %v", where, b.name, err)
				continue
			}
			if !sameValue(v, b.want) {
				t.Errorf("%s: %s %s, want %v", where, b.name, v, b.want)
			}
		}
	}
	if sums && got.Sum != want.sum {
		t.Errorf("%s: sum %q, want %q", where, got.Sum, want.sum)
	}
}

func sameValue(v types.Value, want any) bool {
	switch x := want.(type) {
	case int64:
		return !v.Null && (v.I == x || (types.IsUnsigned(v.Type) && v.U == uint64(x)))
	case float64:
		return !v.Null && v.F == x // -0 equals +0: the codec keeps one zero
	case string:
		return !v.Null && v.S == x
	case bool:
		return !v.Null && (v.I == 1) == x
	case *big.Int:
		return !v.Null && v.D.BigInt().Cmp(x) == 0
	}
	return false
}

func TestFull(t *testing.T) {
	tb := writeTable(t)
	l, rec := metadataRecord(t, tb.dir)
	var calls, last int64
	err := profile.Full(context.Background(), storage.Local{}, l, rec, profile.Options{Threads: 2, Progress: func(done, total int64) {
		calls++
		if done < last || done > total || total != 5000 {
			t.Errorf("progress %d of %d after %d", done, total, last)
		}
		last = done
	}})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last != 5000 {
		t.Errorf("progress: %d calls, last %d", calls, last)
	}
	if rec.Depth != stats.DepthFull {
		t.Errorf("depth %q", rec.Depth)
	}
	if len(rec.Columns) != len(testColumns)+1 || rec.Columns[len(testColumns)].Name != "k" {
		t.Fatalf("columns %v", rec.Columns)
	}
	// The partition column k, as the test sees it: every row has its file's value.
	kType := l.Schema.Field(len(testColumns)).Type
	columnOf := func(fi, c int) []any {
		if c < len(testColumns) {
			return tb.data[fi][c]
		}
		out := make([]any, testFiles[fi].rows)
		for i := range out {
			out[i] = testFiles[fi].k
		}
		return out
	}
	typeOf := func(c int) arrow.DataType {
		if c < len(testColumns) {
			return testColumns[c].dt
		}
		return kType
	}
	z := 0
	for fi, f := range testFiles {
		for c := range rec.Columns {
			dt := typeOf(c)
			vals := columnOf(fi, c)
			for g := 0; g*rowGroupRows < f.rows; g++ {
				zone := rec.Zones[z+g]
				if zone.File != fi || zone.RowGroup != g {
					t.Fatalf("zone %d is file %d row group %d", z+g, zone.File, zone.RowGroup)
				}
				part := vals[g*rowGroupRows : min(f.rows, (g+1)*rowGroupRows)]
				matches(t, fmt.Sprintf("%s zone %d column %s", f.rel, g, rec.Columns[c].Name), dt, zone.Columns[c], compute(dt, part), true)
			}
			matches(t, fmt.Sprintf("%s column %s", f.rel, rec.Columns[c].Name), dt, rec.PerFile[fi].Columns[c], compute(dt, vals), false)
		}
		z += (f.rows + rowGroupRows - 1) / rowGroupRows
	}
	if z != len(rec.Zones) {
		t.Fatalf("%d zones, want %d", len(rec.Zones), z)
	}
	for c, col := range rec.Columns {
		dt := typeOf(c)
		var all []any
		for fi := range testFiles {
			all = append(all, columnOf(fi, c)...)
		}
		want := compute(dt, all)
		zc := stats.ZoneColumn{NullCount: col.NullCount, Min: col.Min, Max: col.Max, BoundsExact: col.BoundsExact, HasNaN: col.HasNaN}
		matches(t, "table column "+col.Name, dt, zc, want, false)
		checkDistinct(t, col, all)
		checkQuantiles(t, col, dt, all)
	}
	// The float column: NaN only in file 1's second row group, so only that zone, its
	// file and the table lose their bounds.
	if !rec.Zones[4].Columns[2].HasNaN || rec.Zones[3].Columns[2].HasNaN || rec.PerFile[0].Columns[2].Min == nil {
		t.Errorf("NaN placement: zones 3/4 HasNaN %v/%v", rec.Zones[3].Columns[2].HasNaN, rec.Zones[4].Columns[2].HasNaN)
	}
	if _, err := rec.Marshal(); err != nil {
		t.Fatal(err)
	}
}

// checkDistinct compares the HLL estimate with the true number of distinct non-null
// values (NaN is one value; -0 and +0 are one).
func checkDistinct(t *testing.T, col stats.Column, vals []any) {
	t.Helper()
	if col.Distinct == nil {
		t.Errorf("column %s: no HLL sketch", col.Name)
		return
	}
	h := stats.NewHLL()
	if err := h.UnmarshalBinary(col.Distinct); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, v := range vals {
		if v == nil {
			continue
		}
		key := fmt.Sprint(v)
		if f, ok := v.(float64); ok && f == 0 {
			key = "0"
		}
		seen[key] = true
	}
	n, est := float64(len(seen)), h.Estimate()
	switch {
	case n <= 10:
		if math.Round(est) != n {
			t.Errorf("column %s: HLL estimate %.2f of %v distinct values, want exact", col.Name, est, n)
		}
	case math.Abs(est-n) > 3*stats.HLLRelativeError*n:
		t.Errorf("column %s: HLL estimate %.1f of %v distinct values: beyond 3 standard errors", col.Name, est, n)
	}
}

// checkQuantiles checks the KLL sketch: n and the exact extremes, and each quantile's
// true rank within the rank error.
func checkQuantiles(t *testing.T, col stats.Column, dt arrow.DataType, vals []any) {
	t.Helper()
	if !stats.KLLSupports(dt) {
		if col.Quantiles != nil {
			t.Errorf("column %s: a KLL sketch for %s", col.Name, types.Name(dt))
		}
		return
	}
	if col.Quantiles == nil {
		t.Errorf("column %s: no KLL sketch", col.Name)
		return
	}
	s := stats.NewKLL()
	if err := s.UnmarshalBinary(col.Quantiles); err != nil {
		t.Fatal(err)
	}
	var xs []float64
	for _, v := range vals {
		switch x := v.(type) {
		case int64:
			xs = append(xs, float64(x))
		case float64:
			if x == x {
				xs = append(xs, x)
			}
		case *big.Int:
			f, _ := new(big.Float).Quo(new(big.Float).SetInt(x), new(big.Float).SetFloat64(math.Pow10(int(dt.(*arrow.Decimal128Type).Scale)))).Float64()
			xs = append(xs, f)
		}
	}
	if s.N() != uint64(len(xs)) {
		t.Fatalf("column %s: KLL of %d values, want %d", col.Name, s.N(), len(xs))
	}
	if len(xs) == 0 {
		return
	}
	slices.Sort(xs)
	if s.Min() != xs[0] || s.Max() != xs[len(xs)-1] {
		t.Errorf("column %s: KLL extremes %v..%v, want %v..%v", col.Name, s.Min(), s.Max(), xs[0], xs[len(xs)-1])
	}
	for _, q := range []float64{0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99} {
		x := s.Quantile(q)
		lo, _ := slices.BinarySearch(xs, x)
		hi := lo
		for hi < len(xs) && xs[hi] == x {
			hi++
		}
		n := float64(len(xs))
		// x's true normalized rank is anywhere in [lo/n, hi/n] (ties); q must be near.
		if q < float64(lo)/n-stats.KLLRankError || q > float64(hi)/n+stats.KLLRankError {
			t.Errorf("column %s: quantile %.2f is %v of true rank %.4f..%.4f", col.Name, q, x, float64(lo)/n, float64(hi)/n)
		}
	}
}

func TestFullIsIndependentOfThreads(t *testing.T) {
	tb := writeTable(t)
	var docs [][]byte
	for _, threads := range []int{1, 2, 3} {
		l, rec := metadataRecord(t, tb.dir)
		if err := profile.Full(context.Background(), storage.Local{}, l, rec, profile.Options{Threads: threads}); err != nil {
			t.Fatal(err)
		}
		rec.ComputedAtMS = 0
		doc, err := rec.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc)
		if threads > 1 {
			prev, _ := stats.Unmarshal(docs[0])
			for c := range rec.Columns {
				if !bytes.Equal(prev.Columns[c].Distinct, rec.Columns[c].Distinct) {
					t.Errorf("column %s: HLL bytes differ between 1 and %d threads", rec.Columns[c].Name, threads)
				}
				if !bytes.Equal(prev.Columns[c].Quantiles, rec.Columns[c].Quantiles) {
					t.Errorf("column %s: KLL bytes differ between 1 and %d threads", rec.Columns[c].Name, threads)
				}
			}
			if !bytes.Equal(docs[0], doc) {
				t.Errorf("the record with %d threads differs from the record with 1", threads)
			}
		}
	}
}

// unchanged runs Full expecting an error and checks that rec is as it was.
func unchanged(t *testing.T, ctx context.Context, l *source.Listing, rec *stats.Record, opt profile.Options) error {
	t.Helper()
	before, _ := rec.Marshal()
	err := profile.Full(ctx, storage.Local{}, l, rec, opt)
	if err == nil {
		t.Fatal("Full succeeded")
	}
	if after, _ := rec.Marshal(); !bytes.Equal(before, after) {
		t.Error("a failed Full changed the record")
	}
	return err
}

func TestFullMemoryLimit(t *testing.T) {
	tb := writeTable(t)
	l, rec := metadataRecord(t, tb.dir)
	err := unchanged(t, context.Background(), l, rec, profile.Options{MemoryLimit: 10_000})
	if errs.CodeOf(err) != errs.ResourceExhausted || !errors.Is(err, errs.ErrResourceExhausted) || !strings.Contains(err.Error(), "10000 bytes") {
		t.Errorf("tiny memory limit: %v", err)
	}
	// A limit the table fits in works.
	if err := profile.Full(context.Background(), storage.Local{}, l, rec, profile.Options{MemoryLimit: 64 << 20}); err != nil {
		t.Errorf("64 MiB: %v", err)
	}
}

func TestFullCanceled(t *testing.T) {
	tb := writeTable(t)
	l, rec := metadataRecord(t, tb.dir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := unchanged(t, ctx, l, rec, profile.Options{Threads: 2}); !errors.Is(err, context.Canceled) && errs.CodeOf(err) != errs.Canceled {
		t.Errorf("canceled: %v", err)
	}
	// Canceled in the middle of the read, from the progress callback.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	err := unchanged(t, ctx, l, rec, profile.Options{Threads: 1, Progress: func(done, _ int64) {
		if done >= 1000 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) && errs.CodeOf(err) != errs.Canceled {
		t.Errorf("canceled midway: %v", err)
	}
}

func TestFullCorruptFile(t *testing.T) {
	tb := writeTable(t)
	l, rec := metadataRecord(t, tb.dir)
	// Overwrite the data pages of one file, leaving its footer intact.
	path := filepath.Join(tb.dir, testFiles[1].rel)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 4; i < len(b)/3; i++ {
		b[i] = 0xA5
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	err = unchanged(t, context.Background(), l, rec, profile.Options{Threads: 2})
	if errs.CodeOf(err) != errs.CorruptSource || !strings.Contains(err.Error(), "b.parquet") {
		t.Errorf("corrupt file: %v", err)
	}
}

// A file without one of the table's columns reads it as NULL, as the footers' record
// does.
func TestFullMissingColumn(t *testing.T) {
	dir := t.TempDir()
	full := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	part := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	write := func(name string, schema *arrow.Schema, n int) {
		cols := make([]arrow.Array, len(schema.Fields()))
		for c, f := range schema.Fields() {
			vals := make([]types.Value, n)
			for i := range vals {
				vals[i] = types.Value{Type: f.Type, I: int64(i + 1), F: float64(i) / 4}
			}
			cols[c] = vector.FromValues(f.Type, vals)
		}
		rec := array.NewRecord(schema, cols, int64(n))
		if err := parquet.WriteFile(filepath.Join(dir, name), schema, func(emit func(arrow.Record) error) error { return emit(rec) }, parquet.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	write("1.parquet", full, 10)
	write("2.parquet", part, 30)
	l, rec := metadataRecord(t, dir)
	if err := profile.Full(context.Background(), storage.Local{}, l, rec, profile.Options{}); err != nil {
		t.Fatal(err)
	}
	x := rec.Column("x")
	if x == nil || x.NullCount == nil || *x.NullCount != 30 || rec.Zones[1].Columns[1].Sum != "" || rec.Zones[0].Columns[1].Sum != "11.25" {
		t.Errorf("column x: %+v, zones %+v", x, rec.Zones)
	}
	if a := rec.Column("a"); a.NullCount == nil || *a.NullCount != 0 || rec.Zones[1].Columns[0].Sum != "465" {
		t.Errorf("column a: %+v, zone sums %q %q", a, rec.Zones[0].Columns[0].Sum, rec.Zones[1].Columns[0].Sum)
	}
}

// Many small zones: workers run ahead of the zone being folded and wait for it, and
// the record is still the one a single worker makes.
func TestFullManyZones(t *testing.T) {
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	const n, perGroup = 2000, 20
	vals := make([]types.Value, n)
	for i := range vals {
		vals[i] = types.Value{Type: arrow.PrimitiveTypes.Int64, I: int64(i * i % 977)}
	}
	rec := array.NewRecord(schema, []arrow.Array{vector.FromValues(arrow.PrimitiveTypes.Int64, vals)}, n)
	if err := parquet.WriteFile(filepath.Join(dir, "t.parquet"), schema, func(emit func(arrow.Record) error) error { return emit(rec) }, parquet.WriteOptions{RowGroupRows: perGroup}); err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, threads := range []int{1, 2} {
		l, r := metadataRecord(t, dir)
		if err := profile.Full(context.Background(), storage.Local{}, l, r, profile.Options{Threads: threads}); err != nil {
			t.Fatal(err)
		}
		if len(r.Zones) != n/perGroup {
			t.Fatalf("%d zones", len(r.Zones))
		}
		for z, zone := range r.Zones {
			var sum int64
			for i := z * perGroup; i < (z+1)*perGroup; i++ {
				sum += vals[i].I
			}
			if zone.Columns[0].Sum != strconv.FormatInt(sum, 10) {
				t.Errorf("zone %d: sum %q, want %d", z, zone.Columns[0].Sum, sum)
			}
		}
		r.ComputedAtMS = 0
		doc, _ := r.Marshal()
		docs = append(docs, doc)
	}
	if !bytes.Equal(docs[0], docs[1]) {
		t.Error("the record of 100 zones differs between 1 and 2 threads")
	}
}
