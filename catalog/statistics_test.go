package catalog

import (
	"context"
	"encoding/binary"
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
