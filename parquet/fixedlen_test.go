package parquet

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// TestUUIDAndIntervalColumns reads a file DuckDB wrote (tests/testdata/uuids.parquet,
// see tests/oracle/cmd/mkdata) with a UUID column and an INTERVAL column: they come
// out as UUID and INTERVAL, the UUID bounds order the bytes as unsigned (so
// ffffffff-… is the greatest, where a signed order would make it the least) and the
// interval has no bounds, Parquet defining no order for it.
func TestUUIDAndIntervalColumns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join("..", "tests", "testdata", "uuids.parquet")
	r, err := storage.Local{}.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := Open(ctx, r, "uuids.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if got := types.Name(f.Schema().Field(1).Type); got != "UUID" {
		t.Errorf("u is %s, want UUID", got)
	}
	if got := types.Name(f.Schema().Field(2).Type); got != "INTERVAL" {
		t.Errorf("iv is %s, want INTERVAL", got)
	}
	var rows []string
	for g := 0; g < f.NumRowGroups(); g++ {
		err := f.ReadRowGroup(ctx, g, []int{0, 1, 2}, func(b *vector.Batch) error {
			for i := 0; i < b.Rows; i++ {
				rows = append(rows, types.ValueAt(b.Cols[0], i).String()+" "+types.ValueAt(b.Cols[1], i).String()+" "+types.ValueAt(b.Cols[2], i).String())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"1 00000000-0000-0000-0000-000000000001 1 month 2 days 00:00:03",
		"2 a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 1 year",
		"3 ffffffff-ffff-ffff-ffff-ffffffffffff 36:00:00.25",
		"4 NULL NULL",
		"5 a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 00:00:00",
		"6 7fffffff-0000-0000-0000-000000000000 1 year 2 months 40 days 00:00:01.5",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	bounds := []string{"00000000-0000-0000-0000-000000000001 ffffffff-ffff-ffff-ffff-ffffffffffff"}
	if f.NumRowGroups() != len(bounds) {
		t.Fatalf("%d row groups, want %d", f.NumRowGroups(), len(bounds))
	}
	for g, want := range bounds {
		u := f.RowGroup(g).Columns[1]
		if !u.HasMinMax {
			t.Errorf("row group %d: UUID column has no bounds", g)
		} else if got := u.Min.String() + " " + u.Max.String(); got != want || !types.IsUUID(u.Min.Type) {
			t.Errorf("row group %d: UUID bounds %s (%s), want %s", g, got, types.Name(u.Min.Type), want)
		}
		if iv := f.RowGroup(g).Columns[2]; iv.HasMinMax {
			t.Errorf("row group %d: INTERVAL column has bounds %s, %s", g, iv.Min, iv.Max)
		}
	}
}
