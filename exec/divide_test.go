package exec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"golang.org/x/sync/errgroup"

	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/vector"
)

// TestDivideLeavesNoWorkerAlone: the last morsels of a scan, one per worker, are read
// in two parts each (fewer morsels than workers: enough parts for every worker), the
// parts covering their row groups in order, and reading the parts gives the rows of
// reading the row groups whole — a part starts inside a page and passes over the
// rows before it there. Row groups whose chunks are each a single page are divided
// as well, their parts sharing the pages (one decompresses each, parquet.PageShare);
// the parts are read at once, as workers read them.
func TestDivideLeavesNoWorkerAlone(t *testing.T) {
	for _, c := range []struct {
		name     string
		pageSize int64
		shared   bool
	}{
		{"pages of 16 KiB", 16 << 10, false},
		{"a page per chunk", 8 << 20, true},
	} {
		t.Run(c.name, func(t *testing.T) { testDivide(t, c.pageSize, c.shared) })
	}
}

func testDivide(t *testing.T, pageSize int64, shared bool) {
	const groups, rows = 3, 40_000
	dir := t.TempDir()
	path := filepath.Join(dir, "t.parquet")
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := range groups * rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%7 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(string(rune('a' + i%26)))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := pq.NewWriterProperties(pq.WithMaxRowGroupLength(rows), pq.WithDictionaryDefault(false),
		pq.WithCompression(compress.Codecs.Zstd), pq.WithDataPageSize(pageSize))
	if err := pqarrow.WriteTable(array.NewTableFromRecords(sch, []arrow.RecordBatch{rec}), f, rows, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	f.Close()

	ctx := context.Background()
	l, err := source.Resolve(ctx, storage.Local{}, path)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := l.Plan(ctx, storage.Local{}, source.ScanSpec{Columns: []string{"id", "s"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// read reads every morsel in a goroutine of its own and puts their rows in
	// the morsels' order.
	read := func(ms []source.Morsel) (ids []int64, text string) {
		partIDs := make([][]int64, len(ms))
		partText := make([]strings.Builder, len(ms))
		var g errgroup.Group
		for i, m := range ms {
			g.Go(func() error {
				return sp.Read(ctx, m, func(b *vector.Batch) error {
					id, s := b.Cols[0].(*array.Int64), b.Cols[1].(*array.String)
					for r := range b.Rows {
						partIDs[i] = append(partIDs[i], id.Value(r))
						if s.IsNull(r) {
							partText[i].WriteByte('-')
						} else {
							partText[i].WriteString(s.Value(r))
						}
					}
					return nil
				})
			})
		}
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		for i := range ms {
			ids = append(ids, partIDs[i]...)
			sb.WriteString(partText[i].String())
		}
		return ids, sb.String()
	}
	wantIDs, wantText := read(sp.Morsels)
	if len(sp.Morsels) != groups || len(wantIDs) != groups*rows {
		t.Fatalf("%d morsels, %d rows; want %d row groups of %d", len(sp.Morsels), len(wantIDs), groups, rows)
	}
	for _, c := range []struct {
		threads int
		parts   []int // per row group
	}{
		{2, []int{1, 2, 2}}, // the last two, one per worker, in two
		{3, []int{2, 2, 2}},
		{6, []int{2, 2, 2}}, // fewer morsels than workers: two parts each
		{1, []int{1, 1, 1}},
	} {
		p := &pipeline{bd: &builder{env: &Env{Threads: c.threads}}}
		ms, err := p.divide(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		per := make([]int, groups)
		for _, m := range ms {
			per[m.RowGroup]++
			if whole := m.First == 0 && m.Rows == rows; (m.Share != nil) != (shared && !whole) {
				t.Errorf("%d workers: part %+v of row group %d shares its pages: %v, want %v", c.threads, m, m.RowGroup, m.Share != nil, shared && !whole)
			}
		}
		for g := range groups {
			if per[g] != c.parts[g] {
				t.Errorf("%d workers: row group %d in %d parts, want %d (%+v)", c.threads, g, per[g], c.parts[g], ms)
			}
		}
		ids, text := read(ms)
		if len(ids) != len(wantIDs) || text != wantText {
			t.Fatalf("%d workers: the parts read %d rows, not the %d of the whole row groups, or other values", c.threads, len(ids), len(wantIDs))
		}
		for i := range ids {
			if ids[i] != wantIDs[i] {
				t.Fatalf("%d workers: row %d is id %d, want %d", c.threads, i, ids[i], wantIDs[i])
			}
		}
	}
}
