package catalog

import (
	"context"
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
