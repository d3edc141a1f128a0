package deletes

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// sharedData finds ../shared/data beside the repository (a git worktree nested deeper
// finds it further up), or skips.
func sharedData(t testing.TB) string {
	t.Helper()
	d, err := findSharedData()
	if err != nil {
		t.Skip(err.Error())
	}
	return d
}

func findSharedData() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("module root not found")
		}
		dir = filepath.Dir(dir)
	}
	for up := filepath.Dir(dir); ; up = filepath.Dir(up) {
		d := filepath.Join(up, "shared", "data")
		if _, err := os.Stat(d); err == nil {
			return d, nil
		}
		if filepath.Dir(up) == up {
			return "", fmt.Errorf("shared test data (../shared/data) not found above %s", dir)
		}
	}
}

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
