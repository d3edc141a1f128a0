package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/loredb/lore/storage"
)

// BenchmarkListAndPartition lists a directory of 1,000 files and reads their
// partitions, the work every statement does to pin a listing's version before
// statistics may answer; the files' own reads are not part of it.
func BenchmarkListAndPartition(b *testing.B) {
	for _, layout := range []string{"flat", "hive"} {
		b.Run(layout, func(b *testing.B) {
			dir := b.TempDir()
			for i := range 1000 {
				sub := dir
				if layout == "hive" {
					sub = filepath.Join(dir, fmt.Sprintf("day=%d", i%10), fmt.Sprintf("region=r%%20%d", i%3))
				}
				if err := os.MkdirAll(sub, 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("part-%05d.parquet", i)), nil, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				infos, base, err := listLocation(ctx, storage.Local{}, dir)
				if err != nil || len(infos) != 1000 {
					b.Fatal(len(infos), err)
				}
				l := &Listing{Location: dir, Format: "parquet", Files: make([]FileRef, len(infos))}
				if err := l.partition(infos, base); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
