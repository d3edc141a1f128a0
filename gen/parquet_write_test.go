package gen

// Tests of parquet.WriteFile as the generators use it.

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/loredb/lore/parquet"
)

var intSchema = arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)

func intRecord(from, n int64) arrow.Record {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range n {
		b.Append(from + i)
	}
	return array.NewRecord(intSchema, []arrow.Array{b.NewArray()}, n)
}

func TestWriteFileCutsRowGroupsExactly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.parquet")
	// Batches of uneven sizes must still give row groups of exactly 100 rows.
	sizes := []int64{7, 250, 1, 93, 49}
	err := parquet.WriteFile(path, intSchema, func(emit func(arrow.Record) error) error {
		next := int64(0)
		for _, n := range sizes {
			rec := intRecord(next, n)
			err := emit(rec)
			rec.Release()
			if err != nil {
				return err
			}
			next += n
		}
		return nil
	}, parquet.WriteOptions{RowGroupRows: 100, Compression: "snappy", CreatedBy: "lore test",
		KeyValue: map[string]string{"b": "2", "a": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	md := rdr.MetaData()
	var groups []int64
	for g := 0; g < md.NumRowGroups(); g++ {
		groups = append(groups, md.RowGroup(g).NumRows())
	}
	if len(groups) != 4 || groups[0] != 100 || groups[1] != 100 || groups[2] != 100 || groups[3] != 100 {
		t.Errorf("row groups = %v, want four of 100", groups)
	}
	if md.GetCreatedBy() != "lore test" {
		t.Errorf("created_by = %q", md.GetCreatedBy())
	}
	kv := md.KeyValueMetadata()
	if v := kv.FindValue("a"); v == nil || *v != "1" {
		t.Errorf("key-value metadata = %v", kv)
	}
	cc, _ := md.RowGroup(0).ColumnChunk(0)
	if cc.Compression() != compress.Codecs.Snappy {
		t.Errorf("compression = %v, want snappy", cc.Compression())
	}
	// The values come back in order: slicing did not drop or repeat rows.
	tbl := readTable(t, path)
	x := column(t, tbl, "x").(*array.Int64)
	for i, v := range x.Int64Values() {
		if v != int64(i) {
			t.Fatalf("row %d = %d", i, v)
		}
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("staging file left behind: %v", err)
	}
}

func TestWriteFileFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.parquet")
	boom := errors.New("boom")
	err := parquet.WriteFile(path, intSchema, func(emit func(arrow.Record) error) error {
		rec := intRecord(0, 10)
		defer rec.Release()
		if err := emit(rec); err != nil {
			return err
		}
		return boom
	}, parquet.WriteOptions{})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the producer's error", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed write left %v", entries)
	}
}

func TestWriteFileRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	noop := func(func(arrow.Record) error) error { return nil }
	if err := parquet.WriteFile(filepath.Join(dir, "a.parquet"), intSchema, noop, parquet.WriteOptions{Compression: "lz77"}); err == nil {
		t.Error("unknown compression accepted")
	}
	if err := parquet.WriteFile(filepath.Join(dir, "b.parquet"), intSchema, noop, parquet.WriteOptions{SortedBy: []string{"y"}}); err == nil {
		t.Error("sorting by a missing column accepted")
	}
	other := arrow.NewSchema([]arrow.Field{{Name: "y", Type: arrow.PrimitiveTypes.Int64}}, nil)
	err := parquet.WriteFile(filepath.Join(dir, "c.parquet"), other, func(emit func(arrow.Record) error) error {
		rec := intRecord(0, 3)
		defer rec.Release()
		return emit(rec)
	}, parquet.WriteOptions{})
	if err == nil {
		t.Error("a record of another schema was accepted")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("rejected writes left %v", entries)
	}
}
