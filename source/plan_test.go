package source

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// prunedTable writes one file of 4 row groups of 100 rows:
//
//	x  int64   100g .. 100g+99 in row group g
//	y  int64   all NULL in group 0, never NULL in group 1, half NULL in groups 2-3
//	c  int64   always 7
//	s  string  "g<g>-<i>", so group g holds "g<g>-..." only
//	f  float64 g, with a NaN in group 3
func prunedTable(t *testing.T) (*Listing, [][]any) {
	dir := t.TempDir()
	var x, y, c, s, f []any
	for g := int64(0); g < 4; g++ {
		for i := int64(0); i < 100; i++ {
			x = append(x, 100*g+i)
			switch {
			case g == 0, g >= 2 && i%2 == 0:
				y = append(y, nil)
			default:
				y = append(y, i)
			}
			c = append(c, int64(7))
			s = append(s, "g"+string(rune('0'+g))+"-"+string(rune('a'+i%26)))
			if g == 3 && i == 50 {
				f = append(f, nan)
			} else {
				f = append(f, float64(g))
			}
		}
	}
	writeParquet(t, filepath.Join(dir, "t.parquet"), 100,
		col{"x", types.Int64, x}, col{"y", types.Int64, y}, col{"c", types.Int64, c},
		col{"s", types.String, s}, col{"f", types.Float64, f})
	return resolve(t, dir), [][]any{x, y, c, s, f}
}

func TestRowGroupPruning(t *testing.T) {
	l, data := prunedTable(t)
	iv := types.IntValue
	sv := types.StringValue
	fv := types.FloatValue
	cases := []struct {
		p    Predicate
		kept []int // row groups left
	}{
		{Predicate{"x", ">", []types.Value{iv(250)}}, []int{2, 3}},
		{Predicate{"x", ">=", []types.Value{iv(299)}}, []int{2, 3}},
		{Predicate{"x", ">=", []types.Value{iv(300)}}, []int{3}},
		{Predicate{"x", "<", []types.Value{iv(100)}}, []int{0}},
		{Predicate{"x", "<=", []types.Value{iv(100)}}, []int{0, 1}},
		{Predicate{"x", "=", []types.Value{iv(150)}}, []int{1}},
		{Predicate{"x", "=", []types.Value{iv(1000)}}, nil},
		{Predicate{"x", "=", []types.Value{types.NullOf(types.Int64)}}, nil},
		{Predicate{"x", "in", []types.Value{iv(5), iv(305), types.NullOf(types.Int64)}}, []int{0, 3}},
		{Predicate{"x", "<>", []types.Value{iv(5)}}, []int{0, 1, 2, 3}},
		{Predicate{"c", "<>", []types.Value{iv(7)}}, nil},
		{Predicate{"c", "=", []types.Value{iv(7)}}, []int{0, 1, 2, 3}},
		{Predicate{"y", "is_null", nil}, []int{0, 2, 3}},
		{Predicate{"y", "is_not_null", nil}, []int{1, 2, 3}},
		{Predicate{"y", ">", []types.Value{iv(0)}}, []int{1, 2, 3}}, // group 0 is all NULL
		{Predicate{"x", "is_null", nil}, nil},
		{Predicate{"s", ">=", []types.Value{sv("g2")}}, []int{2, 3}},
		{Predicate{"s", "<", []types.Value{sv("g1")}}, []int{0}},
		{Predicate{"s", "=", []types.Value{sv("g1-c")}}, []int{1}},
		// Float maxima do not bound NaN, which sorts above every number.
		{Predicate{"f", ">", []types.Value{fv(10)}}, []int{0, 1, 2, 3}},
		{Predicate{"f", "<", []types.Value{fv(2)}}, []int{0, 1}},
		{Predicate{"f", "=", []types.Value{fv(1)}}, []int{1}},
		{Predicate{"f", "=", []types.Value{fv(nan)}}, []int{0, 1, 2, 3}},
	}
	for _, c := range cases {
		var ctr Counters
		spec := ScanSpec{Columns: []string{"x", "y", "c", "s", "f"}, Filters: []Predicate{c.p}}
		p, err := l.Plan(context.Background(), storage.Local{}, spec, &ctr)
		if err != nil {
			t.Fatal(err)
		}
		var kept []int
		for _, m := range p.Morsels {
			kept = append(kept, m.RowGroup)
			if m.Rows != 100 {
				t.Errorf("%v: morsel rows %d", c.p, m.Rows)
			}
		}
		if !slices.Equal(kept, c.kept) {
			t.Errorf("%s %s %v: kept row groups %v, want %v", c.p.Column, c.p.Op, c.p.Values, kept, c.kept)
		}
		s := ctr.Snapshot()
		if s.RowGroupsConsidered != 4 || s.RowGroupsPruned != int64(4-len(c.kept)) || s.FilesConsidered != 1 || s.FilesOpened != 1 {
			t.Errorf("%v: counters %+v", c.p, s)
		}
		// Pruning never loses a row: count matches over the kept morsels and over all data.
		colIdx := slices.Index(spec.Columns, c.p.Column)
		want := 0
		for r := range data[colIdx] {
			if holds(anyValue(data[colIdx][r], l.Schema.Field(colIdx).Type), c.p) {
				want++
			}
		}
		got := 0
		for _, m := range p.Morsels {
			if err := p.Read(context.Background(), m, func(b *vector.Batch) error {
				for r := 0; r < b.Rows; r++ {
					if holds(types.ValueAt(b.Cols[colIdx], r), c.p) {
						got++
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		if got != want {
			t.Errorf("%v: %d matching rows in kept groups, %d in the data", c.p, got, want)
		}
		s = ctr.Snapshot()
		if s.RowGroupsRead != int64(len(c.kept)) || s.RowsScanned != int64(100*len(c.kept)) ||
			(len(c.kept) > 0) != (s.CompressedBytesRead > 0) {
			t.Errorf("%v: read counters %+v", c.p, s)
		}
	}
}

func anyValue(v any, dt any) types.Value {
	switch x := v.(type) {
	case nil:
		return types.Value{Null: true, Type: types.Int64}
	case int64:
		return types.IntValue(x)
	case float64:
		return types.FloatValue(x)
	case string:
		return types.StringValue(x)
	}
	panic("unexpected")
}

func TestPartitionPruning(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{"1", "2", "NULL"} {
		writeParquet(t, filepath.Join(dir, "k="+k, "p.parquet"), 10, col{"v", types.Int64, ints(10, 20)})
	}
	l := resolve(t, dir)
	iv := types.IntValue
	cases := []struct {
		p    Predicate
		want []string
	}{
		{Predicate{"k", "=", []types.Value{iv(1)}}, []string{"10|1", "20|1"}},
		{Predicate{"k", "<>", []types.Value{iv(1)}}, []string{"10|2", "20|2"}},
		{Predicate{"k", ">=", []types.Value{iv(1)}}, []string{"10|1", "10|2", "20|1", "20|2"}},
		{Predicate{"k", "in", []types.Value{iv(2), iv(3)}}, []string{"10|2", "20|2"}},
		{Predicate{"k", "is_null", nil}, []string{"10|NULL", "20|NULL"}},
		{Predicate{"k", "is_not_null", nil}, []string{"10|1", "10|2", "20|1", "20|2"}},
		{Predicate{"K", "<", []types.Value{iv(0)}}, nil},
	}
	for _, c := range cases {
		var ctr Counters
		rows := render(scanAll(t, l, ScanSpec{Columns: []string{"v", "k"}, Filters: []Predicate{c.p}}, &ctr))
		if !slices.Equal(rows, c.want) {
			t.Errorf("%s %s: rows %v, want %v", c.p.Op, c.p.Values, rows, c.want)
		}
		s := ctr.Snapshot()
		files := int64(len(c.want) / 2)
		if s.FilesPrunedByPartition != 3-files || s.FilesConsidered != files || s.FilesOpened != files {
			t.Errorf("%s %s: counters %+v", c.p.Op, c.p.Values, s)
		}
	}
}

func TestReadCountStarAndColumnOrder(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "k=5", "a.parquet"), 4000,
		col{"a", types.Int64, seq(0, 10000)})
	l := resolve(t, dir)
	var ctr Counters
	p, err := l.Plan(context.Background(), storage.Local{}, ScanSpec{}, &ctr)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Morsels) != 3 {
		t.Fatalf("%d morsels, want 3 row groups", len(p.Morsels))
	}
	total := 0
	for _, m := range p.Morsels {
		if err := p.Read(context.Background(), m, func(b *vector.Batch) error {
			if len(b.Cols) != 0 || b.Rows <= 0 || b.Rows > vector.BatchSize {
				t.Errorf("count batch: %d cols, %d rows", len(b.Cols), b.Rows)
			}
			total += b.Rows
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if s := ctr.Snapshot(); total != 10000 || s.RowsScanned != 10000 || s.CompressedBytesRead != 0 {
		t.Errorf("count(*): %d rows, counters %+v", total, s)
	}
	// Columns in the requested order, repeated, with the partition column in between.
	rows := scanAll(t, l, ScanSpec{Columns: []string{"k", "a", "k", "a"}}, nil)
	if len(rows) != 10000 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		if r[0].I != 5 || r[2].I != 5 || r[1].I != int64(i) || r[3].I != int64(i) {
			t.Fatalf("row %d: %v", i, r)
		}
	}
}

func TestReadCastsAndSchemaErrors(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "a.parquet"), 10, col{"x", types.Int64, ints(1, 2)}, col{"s", types.String, strs("a", "b")})
	writeParquet(t, filepath.Join(dir, "b.parquet"), 10, col{"s", types.String, strs("c")}, col{"X", types.Int32, []any{int32(3)}})
	l := resolve(t, dir)
	rows := render(scanAll(t, l, ScanSpec{Columns: []string{"x", "s"}}, nil))
	if want := []string{"1|a", "2|b", "3|c"}; !slices.Equal(rows, want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
	// Pruning works across the int32 file with int64 filter values.
	var ctr Counters
	scanAll(t, l, ScanSpec{Columns: []string{"x"}, Filters: []Predicate{{"x", ">", []types.Value{types.IntValue(2)}}}}, &ctr)
	if s := ctr.Snapshot(); s.RowGroupsPruned != 1 || s.RowGroupsRead != 1 {
		t.Errorf("counters %+v", s)
	}

	// A file whose x cannot be read as the others' is refused when the files are
	// listed, naming the column, both files and both types.
	writeParquet(t, filepath.Join(dir, "c.parquet"), 10, col{"x", types.String, strs("oops")}, col{"s", types.String, strs("d")})
	_, err := Resolve(context.Background(), storage.Local{}, dir)
	if errs.CodeOf(err) != errs.CorruptSource || !strings.Contains(err.Error(), "a.parquet") || !strings.Contains(err.Error(), "c.parquet") ||
		!strings.Contains(err.Error(), `"x"`) || !strings.Contains(err.Error(), "BIGINT") || !strings.Contains(err.Error(), "VARCHAR") {
		t.Errorf("incompatible type: got %v", err)
	}
	// A file that lacks x reads it as NULL.
	writeParquet(t, filepath.Join(dir, "c.parquet"), 10, col{"s", types.String, strs("d")})
	l = resolve(t, dir)
	rows = render(scanAll(t, l, ScanSpec{Columns: []string{"s", "x"}}, nil))
	if want := []string{"a|1", "b|2", "c|3", "d|NULL"}; !slices.Equal(rows, want) {
		t.Errorf("a file without x: rows %v, want %v", rows, want)
	}
	// The missing column alone, under a filter on another.
	rows = render(scanAll(t, l, ScanSpec{Columns: []string{"x"}, Filters: []Predicate{{"s", ">", []types.Value{types.StringValue("c")}}}}, nil))
	if !slices.Contains(rows, "NULL") {
		t.Errorf("x alone: rows %v", rows)
	}
	if _, err := l.Plan(context.Background(), storage.Local{}, ScanSpec{Columns: []string{"nope"}}, nil); errs.CodeOf(err) != errs.Analysis {
		t.Errorf("unknown column: got %v", err)
	}
}

func TestFooterCacheByIdentity(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.parquet")
	writeParquet(t, path, 10, col{"x", types.Int64, ints(1, 2)})
	l := resolve(t, path)
	f1, err := loadFooter(context.Background(), storage.Local{}, l.Files[0].Info)
	if err != nil {
		t.Fatal(err)
	}
	f2, _ := loadFooter(context.Background(), storage.Local{}, l.Files[0].Info)
	if f1 != f2 {
		t.Error("the same file identity opened its footer twice")
	}
	// A rewritten file is a new identity and gets its own footer.
	writeParquet(t, path, 10, col{"x", types.Int64, ints(1, 2, 3)})
	l = resolve(t, path)
	f3, _ := loadFooter(context.Background(), storage.Local{}, l.Files[0].Info)
	if f3 == f1 || f3.NumRows() != 3 {
		t.Errorf("stale footer after rewrite: %d rows", f3.NumRows())
	}
}

// TestConcurrentMorsels reads all morsels at once (run with -race) and checks the
// counters add up.
func TestConcurrentMorsels(t *testing.T) {
	l, _ := prunedTable(t)
	var ctr Counters
	p, err := l.Plan(context.Background(), storage.Local{}, ScanSpec{Columns: []string{"s", "x"}}, &ctr)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var rows atomic.Int64
	for _, m := range p.Morsels {
		wg.Add(1)
		go func(m Morsel) {
			defer wg.Done()
			if err := p.Read(context.Background(), m, func(b *vector.Batch) error {
				rows.Add(int64(b.Rows))
				return nil
			}); err != nil {
				t.Error(err)
			}
		}(m)
	}
	wg.Wait()
	if s := ctr.Snapshot(); rows.Load() != 400 || s.RowsScanned != 400 || s.RowGroupsRead != 4 {
		t.Errorf("%d rows, counters %+v", rows.Load(), s)
	}
}

// TestTinyPagesCounts checks the counts MANIFEST.md gives for alltypes_tiny_pages
// (DuckDB's answers), through Plan with the filters pushed and the rows filtered here.
func TestTinyPagesCounts(t *testing.T) {
	for _, name := range []string{"alltypes_tiny_pages.parquet", "alltypes_tiny_pages_plain.parquet"} {
		l := resolve(t, filepath.Join(sharedData(t), "parquet-testing", "apache", name))
		between := []Predicate{
			{"id", ">=", []types.Value{{Type: types.Int32, I: 1000}}},
			{"id", "<=", []types.Value{{Type: types.Int32, I: 1999}}},
		}
		rows := scanAll(t, l, ScanSpec{Columns: []string{"id"}, Filters: between}, nil)
		n := 0
		for _, r := range rows {
			if holds(r[0], between[0]) && holds(r[0], between[1]) {
				n++
			}
		}
		if n != 1000 {
			t.Errorf("%s: %d rows with id between 1000 and 1999, DuckDB 1000", name, n)
		}
		eq := Predicate{"int_col", "=", []types.Value{{Type: types.Int32, I: 5}}}
		n = 0
		for _, r := range scanAll(t, l, ScanSpec{Columns: []string{"int_col"}, Filters: []Predicate{eq}}, nil) {
			if holds(r[0], eq) {
				n++
			}
		}
		if n != 730 {
			t.Errorf("%s: %d rows with int_col = 5, DuckDB 730", name, n)
		}
		var lo, hi types.Value
		for i, r := range scanAll(t, l, ScanSpec{Columns: []string{"timestamp_col"}}, nil) {
			if i == 0 || types.Compare(r[0], lo) < 0 {
				lo = r[0]
			}
			if i == 0 || types.Compare(r[0], hi) > 0 {
				hi = r[0]
			}
		}
		if lo.String() != "2008-12-31 23:00:00" || hi.String() != "2010-12-31 04:09:13.86" {
			t.Errorf("%s: timestamp_col from %s to %s", name, lo, hi)
		}
	}
}
