package lore_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loredb/lore"
)

// TestDescribeFollowsTheFiles replaces a table's file with one of other columns:
// DESCRIBE shows the columns SELECT * reads now, not those of CREATE TABLE's time.
func TestDescribeFollowsTheFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.parquet")
	writeDrift(t, p, driftCol{"x", i64, vals(int64(1))}, driftCol{"y", str, vals("one")})
	e := open(t, lore.Options{})
	registerStats(t, e, dir)
	if got := describeColumns(t, e, "t"); got != "x:BIGINT y:VARCHAR" {
		t.Fatalf("DESCRIBE: %s", got)
	}
	writeDrift(t, p, driftCol{"x", i32, vals(int64(2))}, driftCol{"z", f64, vals(0.5)})
	got := describeColumns(t, e, "t")
	if got != "x:INTEGER z:DOUBLE" {
		t.Errorf("DESCRIBE after the file was replaced: %s, want x:INTEGER z:DOUBLE", got)
	}
	res := run(t, e, "SELECT * FROM t", nil)
	var star []string
	for _, f := range res.Schema.Fields() {
		star = append(star, f.Name)
	}
	if names := strings.Join(star, " "); names != "x z" || resultText(res) != "2|0.5|\n" {
		t.Errorf("SELECT *: columns %s, rows %q", names, resultText(res))
	}
}
