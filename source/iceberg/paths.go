package iceberg

import (
	"strings"

	"github.com/loredb/lore/storage"
)

// resolver maps the paths an Iceberg table's metadata names (the manifest list,
// manifests, data and delete files) onto the store, where the table was found.
//
// A table's metadata says where it lives (location). When the table is read from
// elsewhere (it was copied or moved, or its location is relative, or names another
// store), a path under the declared location is taken under the directory the table
// was found at instead. A relative path is taken relative to the directory that
// the declared location, when it is relative too, is relative to: the found
// directory less the declared location's segments, when it ends with them.
// Otherwise a relative path is joined where its leading segments overlap the found
// directory's trailing ones (a writer that made paths relative to some ancestor of
// the table), or else under the table directory. Absolute paths and URIs outside the
// declared location are read as they are.
type resolver struct {
	table    string // the directory the table was found at, cleaned
	declared string // the declared location, without file:// and cleaned; "" when none
	base     string // what relative paths are relative to; "" when not known
}

func newResolver(table, declared string) *resolver {
	r := &resolver{table: cleanPath(table)}
	d := stripFile(strings.TrimSpace(declared))
	if d != "" {
		r.declared = cleanPath(d)
	}
	if r.declared != "" && !absolute(r.declared) {
		if b, ok := trimSegments(r.table, r.declared); ok {
			r.base = b
		}
	}
	return r
}

// resolve maps one path of the metadata onto the store.
func (r *resolver) resolve(p string) string {
	p = stripFile(p)
	if p == "" {
		return p
	}
	c := cleanPath(p)
	if r.declared != "" {
		if c == r.declared {
			return r.table
		}
		if rest, ok := strings.CutPrefix(c, strings.TrimSuffix(r.declared, "/")+"/"); ok {
			return join(r.table, rest)
		}
	}
	if absolute(c) {
		return p
	}
	if r.base != "" {
		return join(r.base, c)
	}
	if b, ok := overlap(r.table, c); ok {
		return join(b, c)
	}
	return join(r.table, c)
}

// absolute reports a path that names its object wherever it is read from: rooted, or
// a URI with a scheme.
func absolute(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	i := strings.Index(p, "://")
	return i > 1 && !strings.ContainsAny(p[:i], "/.")
}

// stripFile makes a file:// URI a path: file:///abs is /abs; file://rel (a relative
// path some writers put there) is rel.
func stripFile(p string) string {
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(p, "file:"); ok && strings.HasPrefix(rest, "/") {
		return rest
	}
	return p
}

// cleanPath cleans a path, keeping a URI's scheme and authority as they are.
func cleanPath(p string) string { return storage.Clean(p) }

func join(base, rel string) string {
	if base == "" || base == "." {
		return rel
	}
	return storage.Join(base, rel)
}

// trimSegments removes the trailing segments suffix from dir: ("/a/b/c", "b/c") is
// "/a". ok is false when dir does not end with them.
func trimSegments(dir, suffix string) (string, bool) {
	if suffix == "." || suffix == "" {
		return dir, true
	}
	if dir == suffix {
		return ".", true
	}
	if !strings.HasSuffix(dir, "/"+suffix) {
		return "", false
	}
	b := strings.TrimSuffix(dir, "/"+suffix)
	if b == "" {
		b = "/"
	}
	return b, true
}

// overlap finds the longest run of dir's trailing segments that rel starts with, and
// returns dir less them.
func overlap(dir, rel string) (string, bool) {
	ds := strings.Split(strings.Trim(dir, "/"), "/")
	rs := strings.Split(rel, "/")
	for k := min(len(ds), len(rs)-1); k > 0; k-- {
		if equalSegments(ds[len(ds)-k:], rs[:k]) {
			b, ok := trimSegments(dir, strings.Join(rs[:k], "/"))
			return b, ok
		}
	}
	return "", false
}

func equalSegments(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
