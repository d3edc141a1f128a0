package gen

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// readTable reads a whole Parquet file back through pqarrow.
func readTable(t *testing.T, path string) arrow.Table {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { rdr.Close() })
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("reader %s: %v", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	t.Cleanup(tbl.Release)
	return tbl
}

func genEvents(t *testing.T, opts EventsOptions) string {
	t.Helper()
	if opts.Out == "" {
		opts.Out = t.TempDir()
	}
	if err := Events(context.Background(), opts); err != nil {
		t.Fatalf("Events: %v", err)
	}
	return opts.Out
}

func TestEventsDeterministic(t *testing.T) {
	opts := EventsOptions{Rows: 30_000, Files: 3, Seed: 7, RowGroupRows: 8_000}
	a := genEvents(t, opts)
	b := genEvents(t, opts)
	opts.Seed = 8
	c := genEvents(t, opts)
	for k := range 3 {
		fa, _ := os.ReadFile(filepath.Join(a, EventsFileName(k)))
		fb, _ := os.ReadFile(filepath.Join(b, EventsFileName(k)))
		fc, _ := os.ReadFile(filepath.Join(c, EventsFileName(k)))
		if len(fa) == 0 || !bytes.Equal(fa, fb) {
			t.Errorf("file %d differs between two runs with the same seed (%d vs %d bytes)", k, len(fa), len(fb))
		}
		if bytes.Equal(fa, fc) {
			t.Errorf("file %d is identical for seeds 7 and 8", k)
		}
	}
}

func TestEventsRowCountsAndLayout(t *testing.T) {
	dir := t.TempDir()
	// A stale part from an earlier, larger run must disappear.
	if err := os.WriteFile(filepath.Join(dir, EventsFileName(5)), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	genEvents(t, EventsOptions{Rows: 10_001, Files: 3, Out: dir, Seed: 1, RowGroupRows: 1_000})
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"part-00000.parquet", "part-00001.parquet", "part-00002.parquet"}
	if !slices.Equal(names, want) {
		t.Fatalf("files = %v, want %v", names, want)
	}
	var total int64
	for k := range 3 {
		path := filepath.Join(dir, EventsFileName(k))
		rdr, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		md := rdr.MetaData()
		for g := 0; g < md.NumRowGroups(); g++ {
			n := md.RowGroup(g).NumRows()
			if g < md.NumRowGroups()-1 && n != 1_000 {
				t.Errorf("file %d row group %d has %d rows, want 1000", k, g, n)
			}
		}
		if !strings.HasPrefix(md.GetCreatedBy(), "lore") {
			t.Errorf("file %d created_by = %q, want lore", k, md.GetCreatedBy())
		}
		// The layout promises statistics, a page index and ZSTD on every column.
		rg := md.RowGroup(0)
		for c := 0; c < rg.NumColumns(); c++ {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			if set, _ := cc.StatsSet(); !set {
				t.Errorf("file %d column %d has no statistics", k, c)
			}
			if cc.GetColumnIndexLocation() == nil || cc.GetOffsetIndexLocation() == nil {
				t.Errorf("file %d column %d has no page index", k, c)
			}
			if cc.Compression() != compress.Codecs.Zstd {
				t.Errorf("file %d column %d compression = %v, want zstd", k, c, cc.Compression())
			}
		}
		if lt, ok := md.Schema.Column(0).LogicalType().(schema.TimestampLogicalType); !ok || lt.IsAdjustedToUTC() {
			t.Errorf("ts logical type = %v, want a timestamp not adjusted to UTC", md.Schema.Column(0).LogicalType())
		}
		total += md.NumRows
		rdr.Close()
		tbl := readTable(t, path)
		for i, f := range tbl.Schema().Fields() {
			w := EventsSchema.Field(i)
			if f.Name != w.Name || !arrow.TypeEqual(f.Type, w.Type) || f.Nullable != w.Nullable {
				t.Errorf("file %d column %d = %s %s (nullable %v), want %s %s (nullable %v)",
					k, i, f.Name, f.Type, f.Nullable, w.Name, w.Type, w.Nullable)
			}
		}
	}
	if total != 10_001 {
		t.Errorf("total rows = %d, want 10001", total)
	}
}

// column gathers one column of a table into a single array.
func column(t *testing.T, tbl arrow.Table, name string) arrow.Array {
	t.Helper()
	idx := tbl.Schema().FieldIndices(name)
	if len(idx) != 1 {
		t.Fatalf("no column %q", name)
	}
	chunks := tbl.Column(idx[0]).Data().Chunks()
	arr, err := array.Concatenate(chunks, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	return arr
}

func TestEventsClusteredByTS(t *testing.T) {
	dir := genEvents(t, EventsOptions{Rows: 40_000, Files: 4, ClusteredBy: "ts", Seed: 3, RowGroupRows: 5_000})
	prevMax := arrow.Timestamp(eventsStart - 1)
	for k := range 4 {
		rdr, err := file.OpenParquetFile(filepath.Join(dir, EventsFileName(k)), false)
		if err != nil {
			t.Fatal(err)
		}
		for g := 0; g < rdr.NumRowGroups(); g++ {
			sc := rdr.MetaData().RowGroup(g).SortingColumns()
			if len(sc) != 1 || sc[0].ColumnIdx != 0 || sc[0].Descending {
				t.Errorf("file %d row group %d sorting_columns = %+v, want ts ascending", k, g, sc)
			}
		}
		rdr.Close()
		ts := column(t, readTable(t, filepath.Join(dir, EventsFileName(k))), "ts").(*array.Timestamp)
		vals := ts.TimestampValues()
		if !slices.IsSorted(vals) {
			t.Fatalf("file %d is not sorted by ts", k)
		}
		if vals[0] <= prevMax {
			t.Errorf("file %d starts at %d, not after the previous file's max %d", k, vals[0], prevMax)
		}
		if int64(vals[len(vals)-1]) >= eventsEnd {
			t.Errorf("file %d ends at %d, past the range end", k, vals[len(vals)-1])
		}
		prevMax = vals[len(vals)-1]
		// The sorted draw must still spread over the file's whole time slice.
		span := (eventsEnd - eventsStart) / 4
		lo := eventsStart + span*int64(k)
		if int64(vals[0])-lo > span/100 || lo+span-int64(vals[len(vals)-1]) > span/100 {
			t.Errorf("file %d covers [%d, %d], not its slice [%d, %d)", k, vals[0], vals[len(vals)-1], lo, lo+span)
		}
	}
}

func TestEventsUnclusteredSpreads(t *testing.T) {
	dir := genEvents(t, EventsOptions{Rows: 20_000, Files: 2, Seed: 3})
	rdr, err := file.OpenParquetFile(filepath.Join(dir, EventsFileName(0)), false)
	if err != nil {
		t.Fatal(err)
	}
	if sc := rdr.MetaData().RowGroup(0).SortingColumns(); len(sc) != 0 {
		t.Errorf("unclustered file declares sorting_columns %+v", sc)
	}
	rdr.Close()
	ts := column(t, readTable(t, filepath.Join(dir, EventsFileName(0))), "ts").(*array.Timestamp)
	vals := ts.TimestampValues()
	if slices.IsSorted(vals) {
		t.Error("unclustered file is sorted by ts")
	}
	lo, hi := slices.Min(vals), slices.Max(vals)
	if int64(lo) < eventsStart || int64(hi) >= eventsEnd {
		t.Errorf("ts range [%d, %d] outside [%d, %d)", lo, hi, eventsStart, eventsEnd)
	}
	if int64(hi-lo) < (eventsEnd-eventsStart)*9/10 {
		t.Errorf("ts range [%d, %d] does not cover the quarter", lo, hi)
	}
}

func TestEventsDistributions(t *testing.T) {
	const rows = 100_000
	dir := genEvents(t, EventsOptions{Rows: rows, Files: 1, Seed: 11})
	tbl := readTable(t, filepath.Join(dir, EventsFileName(0)))
	nullFrac := func(name string) float64 {
		return float64(column(t, tbl, name).NullN()) / rows
	}
	for _, c := range []struct {
		name     string
		lo, high float64
	}{
		{"amount", 0.007, 0.013},
		{"latency_ms", 0.003, 0.007},
		{"flag", 0.016, 0.024},
		{"ts", 0, 0}, {"user_id", 0, 0}, {"category", 0, 0}, {"status", 0, 0}, {"country", 0, 0},
	} {
		if f := nullFrac(c.name); f < c.lo || f > c.high {
			t.Errorf("%s NULL fraction = %.4f, want within [%.3f, %.3f]", c.name, f, c.lo, c.high)
		}
	}

	cats := map[string]int{}
	catArr := column(t, tbl, "category").(*array.String)
	for i := range catArr.Len() {
		cats[catArr.Value(i)]++
	}
	if len(cats) < 40 || len(cats) > 50 {
		t.Errorf("%d distinct categories, want 40..50", len(cats))
	}
	if cats["cat_00"] < 3*cats["cat_25"] {
		t.Errorf("categories not skewed: cat_00=%d cat_25=%d", cats["cat_00"], cats["cat_25"])
	}

	users := column(t, tbl, "user_id").(*array.Int64)
	distinct := map[int64]bool{}
	for _, u := range users.Int64Values() {
		if u < 1 || u > 1_000_000 {
			t.Fatalf("user_id %d outside 1..1000000", u)
		}
		distinct[u] = true
	}
	if len(distinct) < 1_000 || len(distinct) > rows*9/10 {
		t.Errorf("%d distinct users in %d rows: not a skewed key", len(distinct), rows)
	}

	status := column(t, tbl, "status").(*array.Int32)
	n200 := 0
	for _, s := range status.Int32Values() {
		if !slices.Contains(statusCodes, s) {
			t.Fatalf("unexpected status %d", s)
		}
		if s == 200 {
			n200++
		}
	}
	if f := float64(n200) / rows; f < 0.65 || f > 0.75 {
		t.Errorf("status 200 fraction = %.3f, want about 0.70", f)
	}

	amount := column(t, tbl, "amount").(*array.Float64)
	for i := range amount.Len() {
		if amount.IsNull(i) {
			continue
		}
		v := amount.Value(i)
		if v <= 0 || v != round2(v) {
			t.Fatalf("amount %v is not a positive two-decimal value", v)
		}
	}
}

func TestEventsBadOptions(t *testing.T) {
	for _, opts := range []EventsOptions{
		{Rows: 0, Out: t.TempDir()},
		{Rows: 10, Files: 11, Out: t.TempDir()},
		{Rows: 10},
		{Rows: 10, Out: t.TempDir(), ClusteredBy: "user_id"},
	} {
		if err := Events(context.Background(), opts); err == nil {
			t.Errorf("Events(%+v) succeeded, want an error", opts)
		}
	}
}

func TestEventsCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	if err := Events(ctx, EventsOptions{Rows: 1000, Files: 2, Out: dir}); err == nil {
		t.Fatal("Events with a canceled context succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("canceled run left files: %v", entries)
	}
}
