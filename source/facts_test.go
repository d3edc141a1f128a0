package source

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestFactsDirKeepsAtMostALimit(t *testing.T) {
	d := FactsDir(t.TempDir())
	fields := []arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}
	for i := range 20 {
		d.Keep(fmt.Sprintf("k%02d", i), fields, int64(i))
		at := time.Now().Add(time.Duration(i-20) * time.Minute)
		os.Chtimes(filepath.Join(string(d), fmt.Sprintf("k%02d.arrows", i)), at, at)
	}
	d.prune(5)
	entries, _ := os.ReadDir(string(d))
	if len(entries) != 5 {
		t.Fatalf("%d facts kept, want 5", len(entries))
	}
	if _, rows, ok := d.Facts("k19"); !ok || rows != 19 {
		t.Fatalf("the newest facts are gone: %d, %v", rows, ok)
	}
}
