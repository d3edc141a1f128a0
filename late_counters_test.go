package lore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

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

// TestFilterProvedByRowGroups: on a file clustered by id in row groups of 5,000 rows,
// a row group whose least id is past the bound proves id >= bound on every row: the
// conjunct does not run there and the counter says so, in every way of reading and
// every shape of consumer (an aggregate that reads id or not, grouped, a projection),
// and each answer is the one computed here from the rows. A nullable column's
// conjunct is proved only where the row group has no NULL.
func TestFilterProvedByRowGroups(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "clustered.parquet")
	const rows, group = 40_000, 5_000
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "k", Type: arrow.PrimitiveTypes.Int32},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "payload", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	v := func(i int) (int64, bool) { return int64(i / 10), i >= 3*group && i%97 == 0 } // NULLs from row group 3 on
	for i := 0; i < rows; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int32Builder).Append(int32(i % 7))
		if x, null := v(i); null {
			b.Field(2).(*array.Int64Builder).AppendNull()
		} else {
			b.Field(2).(*array.Int64Builder).Append(x)
		}
		b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("payload %d", i))
	}
	writeRecord(t, path, b, pq.NewWriterProperties(pq.WithMaxRowGroupLength(group), pq.WithStats(true),
		pq.WithDictionaryFor("id", false)))
	e := open(t, lore.Options{})
	registerStats(t, e, path)
	// A copy whose id pages are overwritten in the row groups that prove the bound
	// below: a read that decoded id there would fail.
	broken := filepath.Join(t.TempDir(), "broken.parquet")
	breakChunks(t, path, broken, 0, 3, 4, 5, 6, 7)
	query(t, e, fmt.Sprintf("CREATE TABLE broken WITH (location = '%s', format = 'parquet')", broken))

	const bound = 12_345 // inside row group 2: groups 3 to 7 prove id >= bound
	type want struct {
		text   string
		proved int64
	}
	count := func(keep func(i int) bool, val func(i int) int64) (n, sum int64) {
		for i := 0; i < rows; i++ {
			if keep(i) {
				n++
				sum += val(i)
			}
		}
		return n, sum
	}
	n1, s1 := count(func(i int) bool { return i >= bound && i%7 == 3 }, func(i int) int64 { return int64(i % 7) })
	n2, s2 := count(func(i int) bool { return i >= bound }, func(i int) int64 { return int64(i) })
	n3, _ := count(func(i int) bool { x, null := v(i); return i >= bound && !null && x >= 0 }, func(int) int64 { return 0 })
	n4, _ := count(func(i int) bool { return i >= bound && i%2 == 0 }, func(int) int64 { return 0 })
	var perK [7]int64
	for i := bound; i < rows; i++ {
		perK[i%7]++
	}
	var grouped strings.Builder
	for k, n := range perK {
		fmt.Fprintf(&grouped, "%d|%d|\n", k, n)
	}
	var tail strings.Builder
	for i := rows - 3; i < rows; i++ {
		fmt.Fprintf(&tail, "%d|payload %d|\n", i%7, i)
	}
	for _, c := range []struct {
		sql string
		want
	}{
		// id only in the filter: not decoded where proved.
		{fmt.Sprintf("SELECT count(*), sum(k) FROM t WHERE id >= %d AND k = 3", bound), want{fmt.Sprintf("%d|%d|\n", n1, s1), 5}},
		// id in the filter and the aggregate: decoded everywhere.
		{fmt.Sprintf("SELECT count(*), sum(id) FROM t WHERE id >= %d", bound), want{fmt.Sprintf("%d|%d|\n", n2, s2), 5}},
		// id in an aggregate's FILTER: decoded everywhere.
		{fmt.Sprintf("SELECT count(*) FILTER (WHERE id %% 2 = 0) FROM t WHERE id >= %d", bound), want{fmt.Sprintf("%d|\n", n4), 5}},
		// Every conjunct proved: no filter runs there.
		{fmt.Sprintf("SELECT count(*) FROM t WHERE id >= %d", bound), want{fmt.Sprintf("%d|\n", n2), 5}},
		{fmt.Sprintf("SELECT k, count(*) FROM t WHERE NOT (id < %d) GROUP BY k ORDER BY k", bound), want{grouped.String(), 5}},
		// v has NULLs from row group 3 on: only id's conjunct is proved there, and only
		// v's in row group 2.
		{fmt.Sprintf("SELECT count(*) FROM t WHERE id >= %d AND v >= 0", bound), want{fmt.Sprintf("%d|\n", n3), 6}},
		// A projection hands on k and payload only; the last row group starts at the
		// bound.
		{fmt.Sprintf("SELECT k, payload FROM t WHERE id >= %d ORDER BY id DESC LIMIT 3", rows-group), want{reverseLines(tail.String()), 1}},
		// Each conjunct proved in one of the two row groups the range spans.
		{"SELECT count(*) FROM t WHERE id >= 4999 AND id < 5001", want{"2|\n", 2}},
		{"SELECT count(*) FROM t WHERE id > 4999 AND id < 5001", want{"1|\n", 1}},
	} {
		for _, mode := range []string{"auto", "always", "never"} {
			res := run(t, e, c.sql, map[string]string{"late_materialisation": mode, "result_cache": "false", "use_statistics": "false"})
			if got := resultText(res); got != c.text {
				t.Errorf("%s with %s: %q, want %q", c.sql, mode, got, c.text)
			}
			if got := res.Record.Scans[0].RowGroupsFilterProved; got != c.proved {
				t.Errorf("%s with %s: %d row groups proved the filter, want %d", c.sql, mode, got, c.proved)
			}
		}
	}
	// Where id is read only by the proved conjunct, its pages are never decoded:
	// the broken copy answers as the whole file does. Read whole, it fails.
	for _, mode := range []string{"auto", "always", "never"} {
		for _, sql := range []string{
			fmt.Sprintf("SELECT count(*), sum(k) FROM broken WHERE id >= %d AND k = 3", bound),
			fmt.Sprintf("SELECT count(*) FROM broken WHERE id >= %d", bound),
		} {
			res := run(t, e, sql, map[string]string{"late_materialisation": mode, "result_cache": "false", "use_statistics": "false"})
			if got, want := resultText(res), resultText(run(t, e, strings.Replace(sql, "broken", "t", 1), map[string]string{"use_statistics": "false"})); got != want {
				t.Errorf("%s with %s: %q, want %q", sql, mode, got, want)
			}
		}
	}
	if _, err := e.Query(context.Background(), "SELECT sum(id) FROM broken", map[string]string{"use_statistics": "false"}); err == nil {
		t.Errorf("reading the broken pages did not fail")
	}
}

// breakChunks copies the Parquet file src to dst with the pages of column col in the
// row groups groups overwritten with bytes no page header decodes from; the footer
// and its statistics stay as they were.
func breakChunks(t *testing.T, src, dst string, col int, groups ...int) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	r, err := file.OpenParquetFile(src, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, g := range groups {
		cc, err := r.MetaData().RowGroup(g).ColumnChunk(col)
		if err != nil {
			t.Fatal(err)
		}
		start := cc.DataPageOffset()
		if cc.HasDictionaryPage() && cc.DictionaryPageOffset() < start {
			start = cc.DictionaryPageOffset()
		}
		copy(data[start:start+cc.TotalCompressedSize()], bytes.Repeat([]byte{0xff}, int(cc.TotalCompressedSize())))
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// reverseLines reverses the order of the lines of s.
func reverseLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for i := len(lines) - 1; i >= 0; i-- {
		b.WriteString(lines[i])
	}
	return b.String()
}
