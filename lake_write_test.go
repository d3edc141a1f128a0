package lore_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore"
)

// deltaType is the Delta schema type of an Arrow type the tests write.
func deltaType(t *testing.T, dt arrow.DataType) string {
	t.Helper()
	switch dt.ID() {
	case arrow.INT64:
		return "long"
	case arrow.INT32:
		return "integer"
	case arrow.FLOAT64:
		return "double"
	case arrow.STRING:
		return "string"
	case arrow.BOOL:
		return "boolean"
	case arrow.DATE32:
		return "date"
	case arrow.TIMESTAMP:
		if dt.(*arrow.TimestampType).TimeZone == "" {
			return "timestamp_ntz"
		}
		return "timestamp"
	}
	t.Fatalf("no Delta type for %s", dt)
	return ""
}

// deltaFile is one data file a test commits: its path relative to the table, its
// partition values (nil: NULL) and its stats JSON ("" for none).
type deltaFile struct {
	path  string
	parts map[string]*string
	stats string
	dv    string // a deletionVector object, "" for none
}

// deltaCommit writes commit version v of the Delta table at root: the protocol and
// metadata when v is 0 (schema fields then partition columns, both as name → type),
// removes of the paths in remove, and adds of files.
func deltaCommit(t *testing.T, root string, v int, schema [][2]string, partitions []string, remove []deltaFile, files []deltaFile) {
	t.Helper()
	var lines []string
	add := func(k string, v any) {
		b, err := json.Marshal(map[string]any{k: v})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	add("commitInfo", map[string]any{"timestamp": 1_700_000_000_000 + int64(v)*1000, "operation": "WRITE"})
	if v == 0 {
		fields := make([]map[string]any, len(schema))
		for i, f := range schema {
			fields[i] = map[string]any{"name": f[0], "type": f[1], "nullable": true, "metadata": map[string]any{}}
		}
		s, _ := json.Marshal(map[string]any{"type": "struct", "fields": fields})
		features := []string{"timestampNtz", "deletionVectors"}
		add("protocol", map[string]any{"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": features, "writerFeatures": features})
		if partitions == nil {
			partitions = []string{}
		}
		add("metaData", map[string]any{"id": "test", "format": map[string]any{"provider": "parquet", "options": map[string]any{}},
			"schemaString": string(s), "partitionColumns": partitions, "configuration": map[string]any{}, "createdTime": 1_700_000_000_000})
	}
	action := func(f deltaFile) map[string]any {
		info, err := os.Stat(filepath.Join(root, f.path))
		if err != nil {
			t.Fatal(err)
		}
		parts := f.parts
		if parts == nil {
			parts = map[string]*string{}
		}
		a := map[string]any{"path": f.path, "partitionValues": parts, "size": info.Size(), "modificationTime": info.ModTime().UnixMilli(), "dataChange": true}
		if f.stats != "" {
			a["stats"] = f.stats
		}
		if f.dv != "" {
			a["deletionVector"] = json.RawMessage(f.dv)
		}
		return a
	}
	for _, f := range remove {
		a := action(f)
		delete(a, "stats")
		a["deletionTimestamp"] = 1_700_000_000_000
		add("remove", a)
	}
	for _, f := range files {
		add("add", action(f))
	}
	dir := filepath.Join(root, "_delta_log")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%020d.json", v)), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// countIn runs a count statement on e and checks its answer and the mode it was
// answered in (context from the record, or scan).
func countIn(t *testing.T, e *lore.Engine, sql string, rows int, mode string) {
	t.Helper()
	res := query(t, e, sql)
	if got := cell(res, 0, 0); got != fmt.Sprint(rows) || res.Record.Execution.Mode != mode {
		t.Fatalf("%s: %s rows in mode %s, want %d in %s", sql, got, res.Record.Execution.Mode, rows, mode)
	}
}
