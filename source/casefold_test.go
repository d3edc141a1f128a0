package source

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/loredb/lore/types"
)

// TestNamesEqualButForCase reads a Parquet directory whose columns' names are equal
// without regard to case: the later ones are renamed with the first suffix no other
// column has (uSeR_Id would be uSeR_Id_1, which User_Id_1 holds, so it is
// uSeR_Id_2), every column is reachable under its name, and each reads its own data
// from the files, NULL in a file that lacks it rather than the data of a column
// spelled otherwise.
func TestNamesEqualButForCase(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "a.parquet"), 10,
		col{"user_id", types.Int64, ints(1, 2)},
		col{"uSeR_Id", types.String, strs("u1", "u2")},
		col{"User_Id_1", types.Int64, ints(10, 20)},
	)
	writeParquet(t, filepath.Join(dir, "b.parquet"), 10,
		col{"uSeR_Id", types.String, strs("u3")},
	)
	l := resolve(t, dir)
	var got []string
	for _, f := range l.Schema.Fields() {
		got = append(got, f.Name)
	}
	if want := []string{"user_id", "uSeR_Id_2", "User_Id_1"}; !slices.Equal(got, want) {
		t.Fatalf("columns %v, want %v", got, want)
	}
	rows := render(scanAll(t, l, ScanSpec{Columns: []string{"USER_ID", "user_id_2", "user_id_1"}}, nil))
	want := []string{"1|u1|10", "2|u2|20", "NULL|u3|NULL"}
	if !slices.Equal(rows, want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
	// Filters on a renamed column prune by the statistics of the file's column.
	c := &Counters{}
	rows = render(scanAll(t, l, ScanSpec{Columns: []string{"user_id_2"}, Filters: []Predicate{{Column: "uSeR_Id_2", Op: "=", Values: []types.Value{types.StringValue("u3")}}}}, c))
	if !slices.Equal(rows, []string{"u3"}) || c.RowGroupsPruned.Load() != 1 {
		t.Errorf("filtered rows %v with %d row groups pruned, want [u3] and 1", rows, c.RowGroupsPruned.Load())
	}
}
