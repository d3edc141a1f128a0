package s3

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/loredb/lore/errs"
)

// putDirParallel bounds the objects PutDir writes at once: enough to hide a
// store's round trip, few enough that the files held in memory stay small.
const putDirParallel = 4

// PutDir writes every file under the local directory dir to url at the same
// relative paths (dir may also be one file, written to url itself) and returns how
// many it wrote. It is how generated tables reach a store: "lore gen --out s3://…"
// and the benchmark harness write locally and upload. Each file is read whole and
// sent as one request; a few are sent at once. An unreadable file is
// errs.SourceUnavailable.
func (s *Store) PutDir(ctx context.Context, dir, url string) (int, error) {
	if _, err := parse(url); err != nil {
		return 0, err
	}
	// A directory linked into place (a benchmark's cached data) is walked where the
	// link points: the walk does not follow a link at its root.
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	var files, rels []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files, rels = append(files, p), append(rels, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return 0, errs.New(errs.SourceUnavailable, "cannot read %q to upload it: %v", dir, err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(putDirParallel)
	for i, p := range files {
		dst := strings.TrimSuffix(url, "/") + "/" + rels[i]
		if rels[i] == "." {
			dst = url
		}
		g.Go(func() error {
			b, err := os.ReadFile(p)
			if err != nil {
				return errs.New(errs.SourceUnavailable, "cannot read %q to upload it: %v", p, err)
			}
			return s.Put(gctx, dst, b)
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return len(files), nil
}
