package lore_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/internal/shareddata"
)

// TestNamesEqualButForCase reads a Parquet table whose columns user_id and uSeR_Id
// differ only in case: the second is uSeR_Id_1 everywhere a column is named (SELECT
// *, DESCRIBE, the statistics record ANALYZE writes) and binds without regard to
// case, and statistics answer for both columns what a scan does.
func TestNamesEqualButForCase(t *testing.T) {
	dir := t.TempDir()
	writeDrift(t, filepath.Join(dir, "a.parquet"),
		driftCol{"user_id", i64, vals(int64(1), int64(2), int64(3))},
		driftCol{"uSeR_Id", str, vals("u1", "u2", nil)})
	e := open(t, lore.Options{})
	registerStats(t, e, dir)
	if got := describeColumns(t, e, "t"); got != "user_id:BIGINT uSeR_Id_1:VARCHAR" {
		t.Fatalf("DESCRIBE: %s", got)
	}
	res := run(t, e, "SELECT * FROM t ORDER BY user_id", nil)
	if f := res.Schema.Field(1).Name; f != "uSeR_Id_1" || resultText(res) != "1|u1|\n2|u2|\n3|NULL|\n" {
		t.Errorf("SELECT *: second column %s, rows %q", f, resultText(res))
	}
	if got := resultText(run(t, e, "SELECT max(USER_ID_1), count(user_id_1), max(User_Id) FROM t", scanned)); got != "u2|2|3|\n" {
		t.Errorf("aggregates: %q", got)
	}
	query(t, e, "ANALYZE t")
	show := run(t, e, "SHOW STATS FOR t", nil)
	var names []string
	for r := 0; r < int(show.NumRows()); r++ {
		names = append(names, cell(show, r, 0))
	}
	// The last row is the table's (no column).
	if got := strings.Join(names, " "); got != "user_id uSeR_Id_1 NULL" {
		t.Errorf("SHOW STATS columns: %s", got)
	}
	sameAnswer(t, e, "SELECT max(uSeR_Id_1), count(user_id_1), min(user_id) FROM t")
}

// TestAnalyzeStructDefaults analyzes an Iceberg table whose struct gained fields with
// initial-defaults: the profile reads the older file's struct through the scan, which
// fills the defaults, and counts no NULL struct.
func TestAnalyzeStructDefaults(t *testing.T) {
	p := filepath.Join(shareddata.Dir(t), "iceberg", "duckdb-iceberg", "data", "persistent", "add_columns_with_defaults_in_struct",
		"default.db", "add_columns_with_defaults_in_struct", "metadata", "00003-21a957f9-c2ee-431a-9d18-bf257b561198.metadata.json")
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE d WITH (location = '%s', format = 'iceberg')", p))
	query(t, e, "ANALYZE d WITH (sketches = true)")
	if got := resultText(run(t, e, "SELECT count(*) FROM d WHERE a.col_integer = 342342 AND a.col_string = 'HELLO'", nil)); got != "1|\n" {
		t.Errorf("rows with the defaults: %q", got)
	}
	if got := cell(run(t, e, "SHOW STATS FOR d", nil), 0, 3); got != "0.0" {
		t.Errorf("nulls_fraction of a: %s, want 0", got)
	}
}
