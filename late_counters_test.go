package lore_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"

	"github.com/loredb/lore"
)

// TestLateMaterialisationRule: with auto, the row filter runs where the rest of the
// projection outweighs the filter's columns at least four to one (a small key beside
// a long payload) and not where it does not (the filter on the payload itself);
// always and never force it. The counters say which ran, and how many rows the
// filter kept; every answer is the same.
func TestLateMaterialisationRule(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "late.parquet")
	writeLateFile(t, path, 20_000, 4, 20)
	e := open(t, lore.Options{})
	registerStats(t, e, path)
	for _, c := range []struct {
		sql  string
		auto bool // whether auto runs the row filter
	}{
		{"SELECT count(*), sum(length(payload)) FROM t WHERE k = 77", true},
		{"SELECT count(*), sum(k) FROM t WHERE payload LIKE '%123:%'", false},
	} {
		var answer string
		for _, mode := range []string{"auto", "always", "never"} {
			res := run(t, e, c.sql, map[string]string{"late_materialisation": mode, "result_cache": "false"})
			if answer == "" {
				answer = resultText(res)
			} else if got := resultText(res); got != answer {
				t.Errorf("%s with %s: %s, want %s", c.sql, mode, got, answer)
			}
			s := res.Record.Scans[0]
			ran := mode == "always" || mode == "auto" && c.auto
			switch {
			case ran && (s.RowFilterRowsExamined != 20_000 || s.RowFilterRowsAdmitted >= s.RowFilterRowsExamined):
				t.Errorf("%s with %s: the row filter examined %d rows, admitted %d", c.sql, mode, s.RowFilterRowsExamined, s.RowFilterRowsAdmitted)
			case !ran && (s.RowFilterRowsExamined != 0 || s.RowFilterRowsAdmitted != 0):
				t.Errorf("%s with %s: a row filter ran (%d rows examined)", c.sql, mode, s.RowFilterRowsExamined)
			}
			if ran && fmt.Sprint(s.RowFilterRowsAdmitted) != cell(res, 0, 0) {
				t.Errorf("%s with %s: admitted %d rows, the count is %s", c.sql, mode, s.RowFilterRowsAdmitted, cell(res, 0, 0))
			}
		}
	}
}

// TestPageCounters: on a file sorted by id with a page index, a narrow range skips
// most pages of id, and the bytes selected are a small part of the bytes of the
// chunks; without a filter nothing is skipped and every byte is selected.
func TestPageCounters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sorted.parquet")
	const rows = 50_000
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := 0; i < rows; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("value %d", i))
	}
	writeRecord(t, path, b, pq.NewWriterProperties(pq.WithDataPageSize(2048), pq.WithBatchSize(100),
		pq.WithMaxRowGroupLength(rows), pq.WithStats(true), pq.WithPageIndexEnabled(true), pq.WithDictionaryDefault(false)))
	e := open(t, lore.Options{})
	registerStats(t, e, path)
	res := run(t, e, "SELECT count(*), min(v) FROM t WHERE id BETWEEN 20000 AND 20100", map[string]string{"result_cache": "false"})
	if got := cell(res, 0, 0); got != "101" {
		t.Fatalf("count = %s", got)
	}
	s := res.Record.Scans[0]
	if s.PagesSkipped < 10 || s.CompressedBytesSelected <= 0 || s.CompressedBytesSelected*10 > s.CompressedBytesRead {
		t.Errorf("narrow range: pages skipped %d, bytes selected %d of %d", s.PagesSkipped, s.CompressedBytesSelected, s.CompressedBytesRead)
	}
	res = run(t, e, "SELECT count(*), min(v) FROM t WHERE length(v) > 3", map[string]string{"result_cache": "false"})
	s = res.Record.Scans[0]
	if s.PagesSkipped != 0 || s.CompressedBytesSelected != s.CompressedBytesRead {
		t.Errorf("no pushed filter: pages skipped %d, bytes selected %d of %d", s.PagesSkipped, s.CompressedBytesSelected, s.CompressedBytesRead)
	}
}

// A filter that keeps nearly nothing turns the row filter on once the scan has
// measured it, though the rest of the projection is no bigger than the filter's
// column (where the rule by sizes alone says no): the first row group is read whole,
// the later ones with the row filter; the answer is the same as without.
func TestLateMaterialisationLearnsSelectivity(t *testing.T) {
	const rows, groups = 40_000, 8
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i*7919) % 1_000_003)
		b.Field(1).(*array.Int64Builder).Append(int64(i) * 31)
	}
	path := filepath.Join(t.TempDir(), "lookup.parquet")
	writeRecord(t, path, b, pq.NewWriterProperties(pq.WithMaxRowGroupLength(rows/groups), pq.WithStats(true),
		pq.WithDictionaryDefault(false)))
	e := open(t, lore.Options{Threads: 1})
	registerStats(t, e, path)
	sql := "SELECT count(*), sum(v) FROM t WHERE k = 7919"
	never := run(t, e, sql, map[string]string{"late_materialisation": "never", "result_cache": "false"})
	auto := run(t, e, sql, map[string]string{"late_materialisation": "auto", "result_cache": "false"})
	if resultText(auto) != resultText(never) || cell(auto, 0, 0) != "1" {
		t.Fatalf("auto %s, never %s", resultText(auto), resultText(never))
	}
	s := auto.Record.Scans[0]
	if s.RowFilterRowsExamined == 0 || s.RowFilterRowsExamined >= rows {
		t.Errorf("the row filter examined %d rows of %d: want the row groups after the first", s.RowFilterRowsExamined, rows)
	}
}

// TestLateMaterialisationLearnsFromJoinFilters: a join's key filter is a filter the
// row filter can run first. Its key column outweighs the rest of the projection, so
// the bytes alone do not call for the row filter; once the first file's batches
// show that the key filter keeps almost nothing, auto reads the later files with it.
func TestLateMaterialisationLearnsFromJoinFilters(t *testing.T) {
	dir := t.TempDir()
	for i := range 4 {
		writeLateFile(t, filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i)), 20_000, uint64(10+i), 1)
	}
	e := open(t, lore.Options{Threads: 1})
	registerStats(t, e, dir)
	const sql = "SELECT count(*), sum(t.g), sum(t.k) FROM t JOIN (VALUES (77::BIGINT), (12345::BIGINT)) v(x) ON t.id = v.x"
	var answer string
	for _, mode := range []string{"never", "auto"} {
		res := run(t, e, sql, map[string]string{"late_materialisation": mode, "result_cache": "false", "use_statistics": "false"})
		if answer == "" {
			answer = resultText(res)
		} else if got := resultText(res); got != answer {
			t.Errorf("%s: %s, want %s", mode, got, answer)
		}
		s := res.Record.Scans[0]
		switch {
		case mode == "never" && s.RowFilterRowsExamined != 0:
			t.Errorf("never: the row filter examined %d rows", s.RowFilterRowsExamined)
		case mode == "auto" && (s.RowFilterRowsExamined < 40_000 || s.RowFilterRowsAdmitted > 10):
			t.Errorf("auto: the row filter examined %d rows and admitted %d; the later files should have run it", s.RowFilterRowsExamined, s.RowFilterRowsAdmitted)
		}
	}
	if !strings.HasPrefix(answer, "8|") {
		t.Errorf("the join found %q, want 8 rows", answer)
	}
}
