package delta

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
)

type fact struct {
	Table          string  `json:"table"`
	Version        int64   `json:"version"`
	Rows           int64   `json:"rows"`
	LiveFiles      int     `json:"live_files"`
	RowsPerVersion [][]any `json:"rows_per_version"`
}

func facts(t *testing.T) (string, []fact) {
	t.Helper()
	dir := filepath.Join(shareddata.Dir(t), "delta")
	b, err := os.ReadFile(filepath.Join(dir, "facts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fs []fact
	if err := json.Unmarshal(b, &fs); err != nil {
		t.Fatal(err)
	}
	return dir, fs
}

// TestEveryVersionHasItsRows reads every version the facts list a row count for
// (time travel by version) and counts its live rows: the files' rows less those their
// deletion vectors delete.
func TestEveryVersionHasItsRows(t *testing.T) {
	dir, fs := facts(t)
	ctx := context.Background()
	for _, f := range fs {
		for _, rv := range f.RowsPerVersion {
			v, rows := int64(rv[0].(float64)), rv[1]
			l, err := Open(ctx, storage.Local{}, filepath.Join(dir, f.Table), source.AsOf{Version: v, HasVersion: true})
			if rows == nil {
				if err == nil {
					t.Errorf("%s v%d: read, but its files are gone", f.Table, v)
				} else if errs.CodeOf(err) != errs.Analysis {
					t.Errorf("%s v%d: %v, want an analysis error", f.Table, v, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s v%d: %v", f.Table, v, err)
				continue
			}
			n, err := l.Rows(ctx, storage.Local{})
			if err != nil {
				t.Errorf("%s v%d: %v", f.Table, v, err)
				continue
			}
			if want := int64(rows.(float64)); n != want {
				t.Errorf("%s v%d: %d rows, want %d", f.Table, v, n, want)
			}
			if l.Lake == nil || l.Lake.Version != v {
				t.Errorf("%s v%d: listing of version %+v", f.Table, v, l.Lake)
			}
		}
	}
}

// TestLogOnlyTables replays logs whose data files were never there: only the files
// the log leaves live must be listed.
func TestLogOnlyTables(t *testing.T) {
	dir, _ := facts(t)
	ctx := context.Background()
	for _, c := range []struct {
		table, file string
		rows        int64
	}{
		{"golden/checkpoint", "15", -1},
		{"delta-rs/latest_not_checkpointed", "", 5},
	} {
		l, err := Open(ctx, storage.Local{}, filepath.Join(dir, c.table), source.AsOf{})
		if err != nil {
			t.Fatalf("%s: %v", c.table, err)
		}
		if len(l.Files) != 1 {
			t.Fatalf("%s: %d files, want 1", c.table, len(l.Files))
		}
		if c.file != "" && filepath.Base(l.Files[0].Info.Path) != c.file {
			t.Errorf("%s: file %q, want %q", c.table, l.Files[0].Info.Path, c.file)
		}
		if c.rows >= 0 && (l.Files[0].Meta == nil || l.Files[0].Meta.Rows != c.rows) {
			t.Errorf("%s: stated rows %+v, want %d", c.table, l.Files[0].Meta, c.rows)
		}
	}
}

// copyTable copies a fixture table into a temporary directory a test may break.
func copyTable(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// TestBrokenLogsAreNamed breaks a log in the ways the protocol does not allow and
// expects a CORRUPT_SOURCE error naming the file at fault, never a wrong read.
func TestBrokenLogsAreNamed(t *testing.T) {
	dir, _ := facts(t)
	ctx := context.Background()
	base := filepath.Join(dir, "delta-rs/simple_table")
	commit := func(root string, v int) string {
		return filepath.Join(root, "_delta_log", strings.Repeat("0", 20-len(itoa(v)))+itoa(v)+".json")
	}
	cases := []struct {
		name   string
		break_ func(root string)
		code   errs.Code
		named  string
	}{
		{"missing commit", func(root string) { os.Remove(commit(root, 2)) }, errs.CorruptSource, "00000000000000000002.json"},
		{"unparsable commit", func(root string) { os.WriteFile(commit(root, 3), []byte("{\"add\": {\n"), 0o644) }, errs.CorruptSource, "00000000000000000003.json"},
		{"unknown reader feature", func(root string) {
			os.WriteFile(commit(root, 5), []byte(`{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors","futureFeature"],"writerFeatures":[]}}`+"\n"), 0o644)
		}, errs.CorruptSource, "futureFeature"},
		{"reader version 4", func(root string) {
			os.WriteFile(commit(root, 5), []byte(`{"protocol":{"minReaderVersion":4,"minWriterVersion":7}}`+"\n"), 0o644)
		}, errs.CorruptSource, "reader version 4"},
		{"no log", func(root string) { os.RemoveAll(filepath.Join(root, "_delta_log")) }, errs.SourceUnavailable, "_delta_log"},
	}
	for _, c := range cases {
		root := copyTable(t, base)
		c.break_(root)
		_, err := Open(ctx, storage.Local{}, root, source.AsOf{})
		if err == nil {
			t.Errorf("%s: read", c.name)
			continue
		}
		var e *errs.Error
		if !errors.As(err, &e) || e.Code != c.code || !strings.Contains(err.Error(), c.named) {
			t.Errorf("%s: %v, want %s naming %q", c.name, err, c.code, c.named)
		}
	}
}

func itoa(v int) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// FuzzCommit feeds arbitrary bytes to the commit parser and the replay of one
// version: they fail cleanly or succeed, never panic.
func FuzzCommit(f *testing.F) {
	if d, err := shareddata.Find(); err == nil {
		for _, p := range []string{"delta-rs/simple_table/_delta_log/00000000000000000000.json", "golden/dv-partitioned-with-checkpoint/_delta_log/00000000000000000011.json", "delta-rs/checkpoint-v2-table/_delta_log/00000000000000000009.json"} {
			if b, err := os.ReadFile(filepath.Join(d, "delta", p)); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(`{"metaData":{"schemaString":"{\"type\":\"struct\",\"fields\":[]}"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		os.MkdirAll(filepath.Join(root, "_delta_log"), 0o755)
		os.WriteFile(filepath.Join(root, "_delta_log", "00000000000000000000.json"), b, 0o644)
		l, err := Open(context.Background(), storage.Local{}, root, source.AsOf{})
		if err == nil && l.Schema == nil {
			t.Fatal("a listing without a schema")
		}
	})
}

// FuzzCheckpoint feeds arbitrary bytes to the checkpoint reader as the table's only
// checkpoint: a damaged checkpoint fails cleanly, never panics.
func FuzzCheckpoint(f *testing.F) {
	if d, err := shareddata.Find(); err == nil {
		for _, p := range []string{
			"golden/checkpoint/_delta_log/00000000000000000010.checkpoint.parquet",
			"kernel-rs/parsed-stats/_delta_log/00000000000000000003.checkpoint.parquet",
			"golden/v2-checkpoint-parquet/_delta_log/_sidecars/00000000000000000002.checkpoint.0000000001.0000000002.055454d8-329c-4e0e-864d-7f867075af33.parquet",
		} {
			if b, err := os.ReadFile(filepath.Join(d, "delta", p)); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		os.MkdirAll(filepath.Join(root, "_delta_log"), 0o755)
		os.WriteFile(filepath.Join(root, "_delta_log", "00000000000000000003.checkpoint.parquet"), b, 0o644)
		l, err := Open(context.Background(), storage.Local{}, root, source.AsOf{})
		if err == nil && l.Schema == nil {
			t.Fatal("a listing without a schema")
		}
	})
}
