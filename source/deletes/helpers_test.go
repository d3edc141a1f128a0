package deletes

import (
	"encoding/json"
	"github.com/loredb/lore/internal/shareddata"
	"os"
	"path/filepath"
	"testing"
)

// sharedData finds ../shared/data beside the repository, or skips.
func sharedData(t testing.TB) string { return shareddata.Dir(t) }

// fixture reads a file of the shared test data, skipping when the data is absent.
func fixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sharedData(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// deltaFacts returns facts.json's rows_deleted_by_dv of each Delta table.
func deltaFacts(t testing.TB) map[string]int64 {
	t.Helper()
	var facts []struct {
		Table          string `json:"table"`
		RowsDeletedByD int64  `json:"rows_deleted_by_dv"`
	}
	if err := json.Unmarshal(fixture(t, "delta/facts.json"), &facts); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, f := range facts {
		out[f.Table] = f.RowsDeletedByD
	}
	return out
}
