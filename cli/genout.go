package cli

import (
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/storage/s3"
)

// genOut is where a generator writes: a local directory, or an object store
// location (s3://bucket/prefix) that is generated into a temporary directory first
// and uploaded when generation is done, so that a failed run leaves nothing half
// written in the store.
type genOut struct {
	out   string    // as the user gave it
	dir   string    // the directory the generator writes into
	store *s3.Store // nil for a local directory
	force bool
}

// isStoreURL reports whether out names an object store location.
func isStoreURL(out string) bool { return slices.Contains(s3.Schemes, storage.Scheme(out)) }

// openOut checks out as checkOut does (a non-empty output is refused unless force)
// and returns where to generate. A store is reached as the engine reaches one, by
// the LORE_S3_* environment variables.
func openOut(ctx context.Context, out string, force bool) (*genOut, error) {
	if !isStoreURL(out) {
		if err := checkOut(out, force); err != nil {
			return nil, err
		}
		return &genOut{out: out, dir: out, force: force}, nil
	}
	cfg, err := s3.ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	st, err := s3.New(cfg)
	if err != nil {
		return nil, err
	}
	objs, err := st.List(ctx, strings.TrimSuffix(out, "/")+"/")
	if err != nil {
		return nil, fmt.Errorf("cannot list output %q: %w", out, err)
	}
	if len(objs) > 0 && !force {
		return nil, fmt.Errorf("output %q is not empty (%d objects); pass --force to write into it anyway", out, len(objs))
	}
	dir, err := os.MkdirTemp("", "lore-gen-")
	if err != nil {
		return nil, fmt.Errorf("cannot make a temporary directory to generate into: %w", err)
	}
	return &genOut{out: out, dir: dir, store: st, force: force}, nil
}

// finish uploads what was generated to the store (nothing to do on local disk). With
// force, part files an earlier, larger run left beside the new ones are deleted, as
// the generators delete them on local disk: a table would otherwise read them too.
func (g *genOut) finish(ctx context.Context) error {
	if g.store == nil {
		return nil
	}
	base := strings.TrimSuffix(g.out, "/")
	if _, err := g.store.PutDir(ctx, g.dir, base); err != nil {
		return fmt.Errorf("cannot upload to %q: %w", g.out, err)
	}
	if !g.force {
		return nil
	}
	return g.removeStaleParts(ctx, base)
}

// removeStaleParts deletes the part files under base that this run did not write,
// in the directories it wrote parts into.
func (g *genOut) removeStaleParts(ctx context.Context, base string) error {
	objs, err := g.store.List(ctx, base+"/")
	if err != nil {
		return fmt.Errorf("cannot list %q: %w", g.out, err)
	}
	for _, o := range objs {
		rel := strings.TrimPrefix(o.Path, base+"/")
		dir, name := path.Split(rel)
		if !gen.IsPartFile(name) {
			continue
		}
		if _, err := os.Stat(g.local(dir)); err != nil {
			continue // a directory this run did not write
		}
		if _, err := os.Stat(g.local(rel)); err == nil {
			continue
		}
		if err := g.store.Delete(ctx, o.Path); err != nil {
			return fmt.Errorf("cannot remove stale %q: %w", o.Path, err)
		}
	}
	return nil
}

// local is the generated file or directory at rel (slash-separated).
func (g *genOut) local(rel string) string {
	return g.dir + string(os.PathSeparator) + strings.ReplaceAll(rel, "/", string(os.PathSeparator))
}

// close removes the temporary directory of a store's output.
func (g *genOut) close() {
	if g.store != nil {
		os.RemoveAll(g.dir)
	}
}
