package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loredb/lore/gen"
)

func TestOptimizeCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ev")
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 5000, Files: 2, Out: dir, Seed: 1, RowGroupRows: 1000}); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(args, strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, _, stderr := run("sql", "--home", home, "-c",
		"CREATE TABLE ev WITH (location = '"+dir+"', clustered_by = ARRAY['user_id'])"); code != 0 {
		t.Fatalf("create: %s", stderr)
	}
	code, stdout, stderr := run("optimize", "ev", "--home", home, "--row-group-rows", "2000", "--where", "user_id > 0", "--format", "csv")
	if code != 0 || !strings.HasPrefix(stdout, "table,files_replaced,files_written,rows,row_groups,bytes_before,bytes_after,clustered_by,recovered\nev,2,1,5000,3,") {
		t.Fatalf("optimize: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, bad := range [][]string{{"optimize"}, {"optimize", "ev", "extra"}, {"optimize", "ev", "--file-bytes", "-1"}} {
		if code, _, _ := run(append(bad, "--home", home)...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", bad, code, exitUsage)
		}
	}
	if code, _, stderr := run("optimize", "nope", "--home", home); code != 1 || !strings.Contains(stderr, "TABLE_NOT_FOUND") {
		t.Errorf("unknown table: exit %d, %s", code, stderr)
	}
}
