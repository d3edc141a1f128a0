package lore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"

	"github.com/loredb/lore"
	"github.com/loredb/lore/storage"
)

// writeSequence writes rows values first, first+1, … of a non-null BIGINT column x,
// plain-encoded and uncompressed in one row group: files of as many rows are the same
// size whatever their values.
func writeSequence(t *testing.T, path string, first int64, rows int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	xs := b.Field(0).(*array.Int64Builder)
	for i := range rows {
		xs.Append(first + int64(i))
	}
	writeRecord(t, path, b, pq.NewWriterProperties(pq.WithDictionaryDefault(false), pq.WithStats(true),
		pq.WithMaxRowGroupLength(int64(rows))))
}

// TestARewriteWithItsTimesRestoredIsSeen rewrites a file in place with other values,
// keeping its size and restoring its modification time (as cp -p and rsync -t do):
// the record must be stale, and statements must read the new values rather than
// answer from the old record, prune with its zones or use the old footer.
func TestARewriteWithItsTimesRestoredIsSeen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "b.parquet")
	writeSequence(t, filepath.Join(dir, "a.parquet"), 1, 1000)
	writeSequence(t, p, 1, 100_000)
	e := open(t, lore.Options{NoAutoRefresh: true})
	registerStats(t, e, dir)
	run(t, e, "ANALYZE t WITH (sketches = true)", nil)
	const aggregates = "SELECT count(*), max(x), sum(x) FROM t"
	checkAnswered(t, e, aggregates)
	if got := resultText(run(t, e, "SELECT count(*) FROM t WHERE x > 4000000", nil)); got != "0|\n" {
		t.Fatalf("before the rewrite: %q", got)
	}

	before, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	old, err := storage.Local{}.Stat(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite in place: the same inode, new contents of the same size.
	tmp := filepath.Join(t.TempDir(), "b.parquet")
	writeSequence(t, tmp, 4_000_001, 100_000)
	data, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != before.Size() {
		t.Fatalf("the rewritten file has %d bytes, the original %d", len(data), before.Size())
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Restore the modification time. The inode change time moves with every write and
	// with Chtimes itself, but only as finely as the kernel's clock tick: touch the
	// file again until it has moved.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := os.Chtimes(p, before.ModTime(), before.ModTime()); err != nil {
			t.Fatal(err)
		}
		now, err := storage.Local{}.Stat(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if now.Size != old.Size || !now.ModTime.Equal(old.ModTime) || now.Inode != old.Inode {
			t.Fatalf("the rewrite is not in place: %+v, was %+v", now, old)
		}
		if !now.ChangeTime.Equal(old.ChangeTime) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the inode change time did not move")
		}
		time.Sleep(10 * time.Millisecond)
	}

	show := run(t, e, "SHOW STATS FOR t", nil)
	if stale := cell(show, 0, show.Schema.NumFields()-1); stale != "true" {
		t.Errorf("SHOW STATS stale = %s after a rewrite with the times restored", stale)
	}
	checkScanned(t, e, aggregates)
	want := "101000|4100000|405000550500|\n" // 1000·1001/2 + Σ 4000001…4100000
	if got := resultText(run(t, e, aggregates, nil)); got != want {
		t.Errorf("%s after the rewrite: %q, want %q", aggregates, got, want)
	}
	if got := resultText(run(t, e, "SELECT count(*) FROM t WHERE x > 4000000", nil)); got != "100000|\n" {
		t.Errorf("WHERE x > 4000000 after the rewrite: %q, want 100000", got)
	}
}
