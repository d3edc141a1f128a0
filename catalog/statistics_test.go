package catalog

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/loredb/lore/errs"
)

// key is a test bound: a big-endian integer, ordered like its bytes.
func key(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func sampleStatistics(id int64) Statistics {
	n0, n5 := int64(0), int64(5)
	return Statistics{
		TableID: id, DocumentVersion: 1, SourceKind: "listing", SourceIdentity: "abc",
		SourceLabel: "listing of 3 files (abc)", Depth: "metadata", RowCount: 30,
		ComputedAtMS: 1234, Document: []byte(`{"document_version":1}`),
		Files: []StatisticsFile{
			{Path: "/lake/a.parquet", Rows: 10, Bytes: 100, LastModifiedMS: 1, Columns: []FileColumnStats{
				{ColumnID: 0, Min: key(1), Max: key(10), BoundsExact: true, NullCount: &n0},
				{ColumnID: 2, Min: []byte{}, Max: []byte("m"), NullCount: &n5}}},
			{Path: "/lake/b.parquet", Rows: 10, Bytes: 100, LastModifiedMS: 2, Columns: []FileColumnStats{
				{ColumnID: 0, Min: key(20), Max: key(30), BoundsExact: true, NullCount: &n0}}},
			{Path: "/lake/c.parquet", Rows: 10, Bytes: 100, LastModifiedMS: 3, Columns: []FileColumnStats{
				{ColumnID: 0, NullCount: &n5}}}, // no bounds: may hold anything
		},
	}
}

func TestStatisticsRoundTripAndReplace(t *testing.T) {
	c, _ := openTest(t)
	ctx := context.Background()
	tb, _, err := c.CreateTable(ctx, sampleTable("events"), false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Statistics(ctx, tb.ID); ok || err != nil {
		t.Fatalf("statistics before any were written: %v %v", ok, err)
	}
	s := sampleStatistics(tb.ID)
	if err := c.PutStatistics(ctx, "events", s); err != nil {
		t.Fatal(err)
	}
	got, ok, err := c.Statistics(ctx, tb.ID)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	want := s
	want.Files, want.SourceLabel = nil, ""
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read %+v, wrote %+v", got, want)
	}
	// A second write replaces the first, files included.
	s.Depth, s.ComputedAtMS, s.Files = "full", 5678, s.Files[:1]
	if err := c.PutStatistics(ctx, "events", s); err != nil {
		t.Fatal(err)
	}
	got, _, _ = c.Statistics(ctx, tb.ID)
	if got.Depth != "full" || got.ComputedAtMS != 5678 {
		t.Fatalf("after replace: %+v", got)
	}
	paths, err := c.FilesMatching(ctx, tb.ID, 0, nil, nil)
	if err != nil || !slices.Equal(paths, []string{"/lake/a.parquet"}) {
		t.Fatalf("files after replace: %v %v", paths, err)
	}
	// Each write is an audit event.
	events, _ := c.AuditEvents(ctx, 2)
	if len(events) != 2 || events[0].Action != "analyze" || events[1].Action != "analyze" || events[0].TableName != "events" {
		t.Fatalf("audit: %+v", events)
	}
}

func TestFilesMatchingIsARangeQuery(t *testing.T) {
	c, _ := openTest(t)
	ctx := context.Background()
	tb, _, _ := c.CreateTable(ctx, sampleTable("events"), false)
	if err := c.PutStatistics(ctx, "events", sampleStatistics(tb.ID)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		lo, hi []byte
		want   []string
	}{
		{key(5), key(5), []string{"/lake/a.parquet", "/lake/c.parquet"}},
		{key(11), key(19), []string{"/lake/c.parquet"}},
		{key(25), nil, []string{"/lake/b.parquet", "/lake/c.parquet"}},
		{nil, key(1), []string{"/lake/a.parquet", "/lake/c.parquet"}},
		{nil, nil, []string{"/lake/a.parquet", "/lake/b.parquet", "/lake/c.parquet"}},
		{key(31), nil, []string{"/lake/c.parquet"}},
	}
	for _, tc := range cases {
		got, err := c.FilesMatching(ctx, tb.ID, 0, tc.lo, tc.hi)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("[%x, %x]: %v %v, want %v", tc.lo, tc.hi, got, err, tc.want)
		}
	}
	// The empty string is a bound, not a missing one: column 2 of a.parquet is ["", "m"].
	got, _ := c.FilesMatching(ctx, tb.ID, 2, []byte("n"), nil)
	if !slices.Equal(got, []string{"/lake/b.parquet", "/lake/c.parquet"}) {
		t.Errorf("strings above m: %v", got)
	}
}

func TestStatisticsGoWithTheTable(t *testing.T) {
	c, _ := openTest(t)
	ctx := context.Background()
	tb, _, _ := c.CreateTable(ctx, sampleTable("events"), false)
	if err := c.PutStatistics(ctx, "events", sampleStatistics(tb.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DropTable(ctx, "events", false); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := c.Statistics(ctx, tb.ID); ok {
		t.Fatal("statistics survived DROP TABLE")
	}
	for _, table := range []string{"table_files", "file_column_stats"} {
		var n int
		if err := c.reader.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s has %d rows after DROP TABLE (%v)", table, n, err)
		}
	}
	// A record computed for the dropped table never attaches to a new one of the same name.
	again, _, _ := c.CreateTable(ctx, sampleTable("events"), false)
	err := c.PutStatistics(ctx, "events", sampleStatistics(tb.ID))
	if errs.CodeOf(err) != errs.TableNotFound {
		t.Fatalf("a stale table id was accepted: %v", err)
	}
	if _, ok, _ := c.Statistics(ctx, again.ID); ok {
		t.Fatal("the refused write left a record")
	}
}

// TestFilesMatchingAgreesWithBounds compares the bounds search with the plain
// condition (a file matches [lo, hi] when it has no usable bounds, or max ≥ lo and
// min ≤ hi, as bytes) on random bounds of every shape the levels must get right:
// integers of every width from a point to the whole range, strings shorter and longer
// than the eight bytes a level measures, the empty string, bytes 0x00 and 0xff, bounds
// out of order, missing bounds and NaN.
func TestFilesMatchingAgreesWithBounds(t *testing.T) {
	c, _ := openTest(t)
	ctx := context.Background()
	tb, _, _ := c.CreateTable(ctx, sampleTable("events"), false)
	rng := rand.New(rand.NewPCG(16, 3))
	value := func() []byte {
		switch rng.IntN(3) {
		case 0: // an integer
			return binary.BigEndian.AppendUint64(nil, rng.Uint64()>>rng.IntN(64))
		case 1: // near another
			return binary.BigEndian.AppendUint64(nil, 1<<40+rng.Uint64N(1<<12))
		default: // a string
			b := make([]byte, rng.IntN(12))
			for i := range b {
				b[i] = []byte{0, 'a', 'b', 0xff}[rng.IntN(4)]
			}
			return b
		}
	}
	s := Statistics{TableID: tb.ID, DocumentVersion: 1, SourceKind: "listing", SourceIdentity: "r",
		Depth: "full", Document: []byte(`{"document_version":1}`)}
	for i := range 400 {
		fc := FileColumnStats{ColumnID: 0}
		switch k := rng.IntN(20); {
		case k == 0: // nothing known
		case k == 1:
			fc.Min = value()
		case k == 2:
			fc.Min, fc.Max, fc.HasNaN = value(), value(), true
		default:
			fc.Min, fc.Max = value(), value()
			if k > 4 && bytes.Compare(fc.Min, fc.Max) > 0 {
				fc.Min, fc.Max = fc.Max, fc.Min // mostly in order
			}
		}
		s.Files = append(s.Files, StatisticsFile{Path: fmt.Sprintf("/lake/%03d.parquet", i), Columns: []FileColumnStats{fc}})
	}
	if err := c.PutStatistics(ctx, "events", s); err != nil {
		t.Fatal(err)
	}
	for range 300 {
		var lo, hi []byte
		if rng.IntN(5) > 0 {
			lo = value()
		}
		if rng.IntN(5) > 0 {
			hi = value()
		}
		var want []string
		for _, f := range s.Files {
			b := f.Columns[0]
			if b.Min == nil || b.Max == nil || b.HasNaN ||
				(lo == nil || bytes.Compare(b.Max, lo) >= 0) && (hi == nil || bytes.Compare(b.Min, hi) <= 0) {
				want = append(want, f.Path)
			}
		}
		got, err := c.FilesMatching(ctx, tb.ID, 0, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("[%x, %x]: %d files, want %d", lo, hi, len(got), len(want))
		}
	}
}

// TestBoundsSearchMigration: a catalog written before the bounds search (schema 3:
// no row for a column a file states nothing of, no levels) upgrades in place on open.
// Its files without bounds are found afterwards, bounded files keep their bounds and
// get levels, and a record whose document is not JSON loses its per-file rows, since
// the number of its columns cannot be known.
func TestBoundsSearchMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	old, err := open(ctx, path, migrations[:3])
	if err != nil {
		t.Fatal(err)
	}
	good, _, _ := old.CreateTable(ctx, sampleTable("good"), false)
	bad, _, _ := old.CreateTable(ctx, sampleTable("bad"), false)
	old.Close()
	db := rawDB(t, path)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO table_statistics VALUES (?, 2, 'listing', 'x', 'metadata', 30, 1, ?)`,
			[]any{good.ID, []byte(`{"document_version":2,"columns":[{"name":"id"},{"name":"user"}]}`)}},
		{`INSERT INTO table_statistics VALUES (?, 2, 'listing', 'y', 'metadata', 30, 1, ?)`,
			[]any{bad.ID, []byte(`{"document_version":2,"colu`)}},
		{`INSERT INTO table_files VALUES (?, 0, '/lake/a.parquet', 10, 100, 1), (?, 1, '/lake/b.parquet', 10, 100, 1),
			(?, 2, '/lake/c.parquet', 10, 100, 1), (?, 0, '/lake/z.parquet', 10, 100, 1)`,
			[]any{good.ID, good.ID, good.ID, bad.ID}},
		// a: both columns bounded; b: column 0 bounded, column 1 nothing known (no
		// row); c: column 0 a null count only, column 1 no row.
		{`INSERT INTO file_column_stats (table_id, file_id, column_id, min, max, null_count) VALUES
			(?1, 0, 0, ?2, ?3, 0), (?1, 0, 1, x'61', x'6d', 0), (?1, 1, 0, ?4, ?5, 0), (?1, 2, 0, NULL, NULL, 5)`,
			[]any{good.ID, key(1), key(10), key(20), key(30)}},
		{`INSERT INTO file_column_stats (table_id, file_id, column_id, min, max) VALUES (?, 0, 0, x'00', x'01')`,
			[]any{bad.ID}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	db.Close()

	c, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		column int
		lo, hi []byte
		want   []string
	}{
		{0, key(5), key(5), []string{"/lake/a.parquet", "/lake/c.parquet"}},
		{0, key(25), nil, []string{"/lake/b.parquet", "/lake/c.parquet"}},
		{1, []byte("n"), nil, []string{"/lake/b.parquet", "/lake/c.parquet"}},
		{1, []byte("b"), []byte("c"), []string{"/lake/a.parquet", "/lake/b.parquet", "/lake/c.parquet"}},
	} {
		got, err := c.FilesMatching(ctx, good.ID, tc.column, tc.lo, tc.hi)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("column %d [%x, %x]: %v %v, want %v", tc.column, tc.lo, tc.hi, got, err, tc.want)
		}
	}
	var levels, rows int
	if err := c.reader.QueryRowContext(ctx, `SELECT count(level), count(*) FROM file_column_stats WHERE table_id = ?`,
		good.ID).Scan(&levels, &rows); err != nil || levels != 3 || rows != 6 {
		t.Errorf("after the upgrade: %d rows, %d with a level (%v); want 6 and 3", rows, levels, err)
	}
	if got, err := c.FilesMatching(ctx, bad.ID, 0, nil, nil); err != nil || len(got) != 0 {
		t.Errorf("the record that is not JSON kept files: %v %v", got, err)
	}
	if _, ok, _ := c.Statistics(ctx, bad.ID); !ok {
		t.Error("the record that is not JSON was deleted, not only its files")
	}
}

// TestFileIDsMatching: the ranges of several columns are all met by the files
// returned, and a record other than the one the caller names answers nothing.
func TestFileIDsMatching(t *testing.T) {
	c, _ := openTest(t)
	ctx := context.Background()
	tb, _, _ := c.CreateTable(ctx, sampleTable("events"), false)
	s := sampleStatistics(tb.ID)
	if err := c.PutStatistics(ctx, "events", s); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ranges []ColumnRange
		want   []int
	}{
		{nil, []int{0, 1, 2}},
		{[]ColumnRange{{ColumnID: 0, Lo: key(5), Hi: key(5)}}, []int{0, 2}},
		// b.parquet states nothing of column 2: it may hold "n".
		{[]ColumnRange{{ColumnID: 2, Lo: []byte("n")}}, []int{1, 2}},
		{[]ColumnRange{{ColumnID: 0, Lo: key(5), Hi: key(5)}, {ColumnID: 2, Lo: []byte("n")}}, []int{2}},
		{[]ColumnRange{{ColumnID: 0, Lo: key(40)}, {ColumnID: 0, Hi: key(0)}}, []int{2}},
	} {
		got, ok, err := c.FileIDsMatching(ctx, tb.ID, s.SourceIdentity, s.ComputedAtMS, tc.ranges)
		if err != nil || !ok || !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %v %v %v, want %v", tc.ranges, got, ok, err, tc.want)
		}
	}
	for _, stamp := range []struct {
		identity string
		at       int64
	}{{"other", s.ComputedAtMS}, {s.SourceIdentity, s.ComputedAtMS + 1}} {
		got, ok, err := c.FileIDsMatching(ctx, tb.ID, stamp.identity, stamp.at, nil)
		if err != nil || ok || got != nil {
			t.Errorf("another record %v: %v %v %v", stamp, got, ok, err)
		}
	}
}

// StatisticsSince leaves the document out exactly when the caller's stamp is the
// record's, and reads it when the record was replaced.
func TestStatisticsSinceReadsTheDocumentOnlyWhenReplaced(t *testing.T) {
	c, _ := openTest(t)
	tb, _, err := c.CreateTable(context.Background(), sampleTable("t"), false)
	if err != nil {
		t.Fatal(err)
	}
	s := Statistics{TableID: tb.ID, DocumentVersion: 3, SourceKind: "listing", SourceIdentity: "abc",
		Depth: "metadata", RowCount: 5, ComputedAtMS: 10, Document: []byte(`{"document_version":3}`), Detail: []byte(`{}`)}
	if err := c.PutStatistics(context.Background(), "t", s); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		identity string
		at       int64
		withDoc  bool
	}{{"abc", 10, false}, {"", 0, true}, {"abc", 11, true}, {"abd", 10, true}} {
		got, ok, err := c.StatisticsSince(context.Background(), tb.ID, tc.identity, tc.at)
		if err != nil || !ok || got.SourceIdentity != "abc" || got.ComputedAtMS != 10 || got.RowCount != 5 {
			t.Fatalf("%+v: %+v %v %v", tc, got, ok, err)
		}
		if (got.Document != nil) != tc.withDoc {
			t.Errorf("%+v: document %q", tc, got.Document)
		}
	}
	detail, err := c.StatisticsDetail(context.Background(), tb.ID, "abc", 10)
	if err != nil || string(detail) != `{}` {
		t.Fatalf("detail %q, %v", detail, err)
	}
	if _, err := c.StatisticsDetail(context.Background(), tb.ID, "abc", 9); errs.CodeOf(err) != errs.StatisticsUnavailable {
		t.Fatalf("the detail of another record: %v", err)
	}
}
