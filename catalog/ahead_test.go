package catalog

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// resetAhead forgets OpenAhead's catalog, closing one never taken, so that a test
// can call OpenAhead as a fresh process does.
func resetAhead(t *testing.T) {
	t.Helper()
	reset := func() {
		ahead.mu.Lock()
		done := ahead.done
		ahead.mu.Unlock()
		if done != nil {
			<-done
		}
		if ahead.c != nil {
			ahead.c.Close()
		}
		ahead.mu.Lock()
		ahead.abs, ahead.done, ahead.c = "", nil, nil
		ahead.mu.Unlock()
	}
	reset()
	t.Cleanup(reset)
}

// A current catalog opened ahead is the one Open returns, once, with the lookup
// prepared; it reads and writes like any other.
func TestOpenAheadIsTakenOnce(t *testing.T) {
	ctx := context.Background()
	c, path := openTest(t)
	if _, _, err := c.CreateTable(ctx, Table{Name: "t", Location: "/data/t", Format: "parquet"}, false); err != nil {
		t.Fatal(err)
	}
	resetAhead(t)
	// The path as another spelling of the same file.
	OpenAhead(filepath.Join(filepath.Dir(path), ".", "catalog.db"))
	<-ahead.done
	want := ahead.c
	if want == nil {
		t.Fatal("the ahead open failed")
	}
	got, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if got != want {
		t.Fatal("Open did not take the catalog opened ahead")
	}
	if _, ok := got.prepared.Load(lookupQuery); !ok {
		t.Error("the catalog opened ahead has not prepared the lookup")
	}
	if tb, err := got.Lookup(ctx, "t"); err != nil || tb.Location != "/data/t" {
		t.Fatalf("Lookup = %+v, %v", tb, err)
	}
	if _, _, err := got.CreateTable(ctx, Table{Name: "u", Location: "/data/u", Format: "parquet"}, false); err != nil {
		t.Fatalf("a write through the catalog opened ahead: %v", err)
	}
	again, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again == got {
		t.Error("the catalog opened ahead was taken twice")
	}
}

// Open of another path, or of a file the ahead open could not read, opens the
// catalog itself.
func TestOpenAheadElsewhere(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	resetAhead(t)
	OpenAhead(filepath.Join(dir, "missing", "catalog.db"))
	other := filepath.Join(dir, "other.db")
	c, err := Open(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if ahead.abs == "" {
		t.Error("Open of another path took the catalog opened ahead")
	}
	// The ahead open found no catalog and made none: Open creates it.
	missing := filepath.Join(dir, "missing", "catalog.db")
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("the ahead open left a file behind: %v", err)
	}
	c, err = Open(ctx, missing)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tables, err := c.Tables(ctx); err != nil || len(tables) != 0 {
		t.Fatalf("Tables = %v, %v", tables, err)
	}
}
