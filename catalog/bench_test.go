package catalog

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func benchCatalog(b *testing.B) *Catalog {
	b.Helper()
	c, err := Open(context.Background(), filepath.Join(b.TempDir(), "catalog.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// The query log is written once per statement, so its cost is on every statement's path.
func BenchmarkLogQuery(b *testing.B) {
	ctx := context.Background()
	c := benchCatalog(b)
	record := []byte(`{"id":"q","state":"finished","execution":{"mode":"context"},"scans":[]}`)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := c.LogQuery(ctx, QueryLogEntry{ID: strconv.Itoa(i), SQL: "SELECT count(*) FROM t",
			State: "finished", Mode: "context", StartedAt: time.Now(), Record: record}); err != nil {
			b.Fatal(err)
		}
	}
}

// Binding reads a table definition per referenced table.
func BenchmarkTable(b *testing.B) {
	ctx := context.Background()
	c := benchCatalog(b)
	if _, _, err := c.CreateTable(ctx, sampleTable("events"), false); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Table(ctx, "events"); err != nil {
			b.Fatal(err)
		}
	}
}

// benchFiles is the record of a table of n files and 8 columns: file i holds
// [i·1000, i·1000+999] in every column (a table clustered on each), except that one
// file in 500 has no bounds for a column.
func benchFiles(id int64, n int) Statistics {
	s := Statistics{TableID: id, DocumentVersion: 1, SourceKind: "listing", SourceIdentity: "x",
		Depth: "metadata", Document: []byte(`{"document_version":1}`)}
	for i := range n {
		f := StatisticsFile{Path: fmt.Sprintf("/lake/part-%05d.parquet", i), Rows: 1000, Bytes: 1 << 20}
		for c := range 8 {
			fc := FileColumnStats{ColumnID: c}
			if (i+c)%500 != 0 {
				fc.Min, fc.Max = key(uint32(i*1000)), key(uint32(i*1000+999))
			}
			f.Columns = append(f.Columns, fc)
		}
		s.Files = append(s.Files, f)
	}
	return s
}

// BenchmarkFilesMatching10k asks the bounds index of a table of 10,000 files which
// files can match a point (one file matches, beside the few without bounds) and a
// wide range (half the files): as paths (FilesMatching) and as the file ids a scan
// asks for (FileIDsMatching).
func BenchmarkFilesMatching10k(b *testing.B) {
	ctx := context.Background()
	c := benchCatalog(b)
	tb, _, err := c.CreateTable(ctx, sampleTable("events"), false)
	if err != nil {
		b.Fatal(err)
	}
	s := benchFiles(tb.ID, 10_000)
	if err := c.PutStatistics(ctx, "events", s); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name   string
		lo, hi []byte
		want   int
	}{
		{"point", key(5_000_500), key(5_000_500), 1 + 20},
		{"wide", key(2_500_000), key(7_499_999), 5_000 + 20},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				paths, err := c.FilesMatching(ctx, tb.ID, 3, bc.lo, bc.hi)
				if err != nil {
					b.Fatal(err)
				}
				if len(paths) < bc.want-10 || len(paths) > bc.want+10 {
					b.Fatalf("%d files match, want about %d", len(paths), bc.want)
				}
			}
		})
		b.Run("ids-"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			r := []ColumnRange{{ColumnID: 3, Lo: bc.lo, Hi: bc.hi}}
			for b.Loop() {
				ids, ok, err := c.FileIDsMatching(ctx, tb.ID, s.SourceIdentity, s.ComputedAtMS, r)
				if err != nil || !ok {
					b.Fatal(ok, err)
				}
				if len(ids) < bc.want-10 || len(ids) > bc.want+10 {
					b.Fatalf("%d files match, want about %d", len(ids), bc.want)
				}
			}
		})
	}
}
