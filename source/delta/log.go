package delta

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
)

// logEntry is one file of _delta_log that log replay can use.
type logEntry struct {
	info    storage.ObjectInfo
	version int64
	kind    entryKind
	part    int // multi-part checkpoint: this part (1-based) and how many there are
	parts   int
	// described is set when info has the file's size and times, not its path alone.
	described bool
}

type entryKind int

const (
	commitEntry    entryKind = iota // NNNNNNNNNNNNNNNNNNNN.json
	classicEntry                    // NNNNNNNNNNNNNNNNNNNN.checkpoint.parquet
	multiPartEntry                  // NNNNNNNNNNNNNNNNNNNN.checkpoint.PPPPPPPPPP.TTTTTTTTTT.parquet
	v2Entry                         // NNNNNNNNNNNNNNNNNNNN.checkpoint.<uuid>.json|parquet
)

// The names of checkpoint files, compiled on first use rather than when a process
// starts.
var (
	classicName   = lazyRegexp(`^(\d{20})\.checkpoint\.parquet$`)
	multiPartName = lazyRegexp(`^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$`)
	v2Name        = lazyRegexp(`^(\d{20})\.checkpoint\.[0-9A-Za-z-]+\.(json|parquet)$`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// logListing is what listing _delta_log found.
type logListing struct {
	dir string
	// commits are the names of the commit files by version, and listed what the
	// store said of each (nil when the log was listed by names alone): a long log's
	// listing is kept small, and commit makes the entry of one version.
	commits  map[int64]string
	listed   map[string]storage.ObjectInfo
	points   map[int64][]logEntry // checkpoint files by version
	sidecars map[string]storage.ObjectInfo
	latest   int64 // the newest version the log has a commit or a checkpoint of; -1 when none
}

// listLog lists the table's _delta_log, as much of it as a snapshot as of at needs.
// On a local disk it reads the names alone: a snapshot needs the size and times of
// the checkpoint and the commits after it only (describe), and a statement on a long
// log would otherwise stat every commit since the table was created. On an object
// store that lists from a key (storage.ListerFrom) a list request costs by the
// entries it returns: the log is listed from the checkpoint _last_checkpoint names,
// when that checkpoint is there and complete and the version asked for is not older.
// The hint is only a hint: one that names a missing or partial checkpoint, or does
// not parse, costs a listing of the whole log, never a wrong snapshot (a newer
// checkpoint than it names is listed all the same). Any other store lists it whole.
func listLog(ctx context.Context, store storage.Store, root string, at source.AsOf) (*logListing, error) {
	dir := storage.Join(root, "_delta_log")
	if _, ok := storage.StoreFor(store, dir).(storage.Local); ok {
		if ll, ok, err := listLocalNames(ctx, store, dir); ok || err != nil {
			return ll, err
		}
	}
	if from, ok := storage.StoreFor(store, dir).(storage.ListerFrom); ok && at.Time.IsZero() {
		if v, ok := lastCheckpoint(ctx, store, dir); ok && (!at.HasVersion || at.Version >= v) {
			infos, err := from.ListFrom(ctx, dir, fmt.Sprintf("%020d", v))
			if err != nil {
				return nil, err
			}
			ll := listingOf(dir, infos)
			if _, cpv := ll.checkpoint(v); cpv == v {
				return ll, nil
			}
		}
	}
	infos, err := store.List(ctx, dir)
	if err != nil {
		return nil, err
	}
	return listingOf(dir, infos), nil
}

// lastCheckpoint is the version _last_checkpoint names; ok is false when there is no
// such file or it does not parse.
func lastCheckpoint(ctx context.Context, store storage.Store, dir string) (int64, bool) {
	b, err := readAll(ctx, store, storage.ObjectInfo{Path: dir + "/_last_checkpoint"})
	if err != nil {
		return 0, false
	}
	var hint struct {
		Version *int64 `json:"version"`
	}
	if json.Unmarshal(b, &hint) != nil || hint.Version == nil || *hint.Version < 0 {
		return 0, false
	}
	return *hint.Version, true
}

// listingOf makes the listing of _delta_log dir from what its store listed.
func listingOf(dir string, infos []storage.ObjectInfo) *logListing {
	ll := newListing(dir, len(infos))
	ll.listed = make(map[string]storage.ObjectInfo, len(infos))
	for _, o := range infos {
		rel, ok := strings.CutPrefix(o.Path, dir+"/")
		if !ok {
			continue
		}
		if name, ok := strings.CutPrefix(rel, "_sidecars/"); ok && !strings.Contains(name, "/") {
			ll.sidecars[name] = o
			continue
		}
		if strings.Contains(rel, "/") {
			continue
		}
		if e, ok := parseEntry(rel, o); ok {
			e.described = true
			ll.listed[rel] = o
			ll.add(rel, e)
		}
	}
	return ll
}

// newListing is an empty listing of dir, sized for n entries.
func newListing(dir string, n int) *logListing {
	return &logListing{dir: dir, commits: make(map[int64]string, n), points: map[int64][]logEntry{}, sidecars: map[string]storage.ObjectInfo{}, latest: -1}
}

// add adds the entry of the log file called name.
func (ll *logListing) add(name string, e logEntry) {
	if e.kind == commitEntry {
		ll.commits[e.version] = name
	} else {
		ll.points[e.version] = append(ll.points[e.version], e)
	}
	ll.latest = max(ll.latest, e.version)
}

// listLocalNames lists the local directory dir by the names of its entries, and
// _sidecars (rare, and small) in full. ok is false when dir cannot be read as a
// directory: the caller's List then says why, as it does for any store.
func listLocalNames(ctx context.Context, store storage.Store, dir string) (ll *logListing, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, false, nil
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return nil, false, nil
	}
	ll = newListing(dir, len(names))
	for _, name := range names {
		if name == "_sidecars" {
			infos, err := store.List(ctx, dir+"/_sidecars")
			if err != nil {
				return nil, false, err
			}
			for _, o := range infos {
				if rel, ok := strings.CutPrefix(o.Path, dir+"/_sidecars/"); ok && !strings.Contains(rel, "/") {
					ll.sidecars[rel] = o
				}
			}
			continue
		}
		if v, ok := commitVersion(name); ok {
			ll.commits[v] = name
			ll.latest = max(ll.latest, v)
			continue
		}
		if e, ok := parseEntry(name, storage.ObjectInfo{Path: dir + "/" + name}); ok {
			ll.add(name, e)
		}
	}
	return ll, true, nil
}

// describe fills in the size and times of the entries listed by name alone.
func describe(ctx context.Context, store storage.Store, es []logEntry) error {
	for i := range es {
		if es[i].described {
			continue
		}
		o, err := store.Stat(ctx, es[i].info.Path)
		if err != nil {
			return err
		}
		es[i].info, es[i].described = o, true
	}
	return nil
}

// parseEntry recognises a log file by its name.
func parseEntry(name string, o storage.ObjectInfo) (logEntry, bool) {
	num := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	if v, ok := commitVersion(name); ok {
		return logEntry{info: o, version: v, kind: commitEntry}, true
	}
	if m := classicName().FindStringSubmatch(name); m != nil {
		return logEntry{info: o, version: num(m[1]), kind: classicEntry}, true
	}
	if m := multiPartName().FindStringSubmatch(name); m != nil {
		part, parts := int(num(m[2])), int(num(m[3]))
		if part < 1 || part > parts {
			return logEntry{}, false
		}
		return logEntry{info: o, version: num(m[1]), kind: multiPartEntry, part: part, parts: parts}, true
	}
	if m := v2Name().FindStringSubmatch(name); m != nil {
		return logEntry{info: o, version: num(m[1]), kind: v2Entry}, true
	}
	return logEntry{}, false
}

// commitVersion is the version of a commit file's name: twenty digits and .json.
// Commits are most of a log: recognised without a regular expression.
func commitVersion(name string) (int64, bool) {
	v, ok := strings.CutSuffix(name, ".json")
	if !ok || len(v) != 20 || !digits(v) {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// commit is the entry of the commit of version v.
func (ll *logListing) commit(v int64) (logEntry, bool) {
	name, ok := ll.commits[v]
	if !ok {
		return logEntry{}, false
	}
	e := logEntry{info: storage.ObjectInfo{Path: ll.dir + "/" + name}, version: v, kind: commitEntry}
	if o, ok := ll.listed[name]; ok {
		e.info, e.described = o, true
	}
	return e, true
}

// digits reports whether s is ASCII digits only.
func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkpoint returns the files of the newest complete checkpoint at or before version
// v, and its version; -1 when there is none. A V2 or classic checkpoint is one file; a
// multi-part checkpoint is complete when every part of one part count is there.
func (ll *logListing) checkpoint(v int64) ([]logEntry, int64) {
	var versions []int64
	for cv := range ll.points {
		if cv <= v {
			versions = append(versions, cv)
		}
	}
	slices.Sort(versions)
	for i := len(versions) - 1; i >= 0; i-- {
		es := ll.points[versions[i]]
		// Prefer a V2 checkpoint, then a classic one, then a complete multi-part set.
		for _, kind := range []entryKind{v2Entry, classicEntry} {
			for _, e := range es {
				if e.kind == kind {
					return []logEntry{e}, versions[i]
				}
			}
		}
		byCount := map[int][]logEntry{}
		for _, e := range es {
			if e.kind == multiPartEntry {
				byCount[e.parts] = append(byCount[e.parts], e)
			}
		}
		for parts, set := range byCount {
			seen := map[int]bool{}
			for _, e := range set {
				seen[e.part] = true
			}
			if len(seen) == parts {
				slices.SortFunc(set, func(a, b logEntry) int { return a.part - b.part })
				return dedupParts(set), versions[i]
			}
		}
	}
	return nil, -1
}

// dedupParts keeps one file per part.
func dedupParts(set []logEntry) []logEntry {
	out := set[:0:0]
	for _, e := range set {
		if len(out) == 0 || out[len(out)-1].part != e.part {
			out = append(out, e)
		}
	}
	return out
}

// readAll reads one whole log file.
func readAll(ctx context.Context, store storage.Store, o storage.ObjectInfo) ([]byte, error) {
	r, err := storage.OpenInfo(ctx, store, o)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.Size() > maxLine*4 {
		return nil, corrupt(o.Path, "%d bytes is too large for a log file", r.Size())
	}
	b := make([]byte, r.Size())
	if _, err := r.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, errs.New(errs.SourceUnavailable, "cannot read %q: %w", o.Path, err)
	}
	return b, nil
}
