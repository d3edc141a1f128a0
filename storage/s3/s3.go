package s3

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
)

// Store is an S3-compatible object store. Its paths are URLs, s3://bucket/key (s3a://
// and s3n:// read alike and are listed back as written). It is safe for concurrent use;
// the client is made on first use, so a Store that is never used never looks for
// credentials.
type Store struct {
	cfg Config

	once   sync.Once
	client *client
	err    error

	counts counters
}

var (
	_ storage.Store      = (*Store)(nil)
	_ storage.ListerFrom = (*Store)(nil)
	_ storage.InfoOpener = (*Store)(nil)
)

// New makes a store of cfg. It checks cfg but makes no request.
func New(cfg Config) (*Store, error) {
	cfg = cfg.withDefaults()
	if _, err := cfg.endpoint(); err != nil {
		return nil, err
	}
	return &Store{cfg: cfg}, nil
}

// Schemes are the URL schemes an S3 store reads.
var Schemes = []string{"s3", "s3a", "s3n"}

// Requests counts the requests a store has made, by kind, and the bytes its reads
// returned; a retried request counts once per attempt.
type Requests struct {
	List, Head, Get int64
	Put             int64 // writes, deletes and buckets made
	Bytes           int64
	Retries         int64
}

// Total is every request counted.
func (r Requests) Total() int64 { return r.List + r.Head + r.Get + r.Put }

// Sub is r less an earlier count.
func (r Requests) Sub(o Requests) Requests {
	return Requests{List: r.List - o.List, Head: r.Head - o.Head, Get: r.Get - o.Get, Put: r.Put - o.Put,
		Bytes: r.Bytes - o.Bytes, Retries: r.Retries - o.Retries}
}

// Add is r and o together.
func (r Requests) Add(o Requests) Requests {
	return Requests{List: r.List + o.List, Head: r.Head + o.Head, Get: r.Get + o.Get, Put: r.Put + o.Put,
		Bytes: r.Bytes + o.Bytes, Retries: r.Retries + o.Retries}
}

type counters struct{ list, head, get, put, bytes, retries atomic.Int64 }

// Requests is what the store has asked of the server so far.
func (s *Store) Requests() Requests {
	return Requests{List: s.counts.list.Load(), Head: s.counts.head.Load(), Get: s.counts.get.Load(), Put: s.counts.put.Load(),
		Bytes: s.counts.bytes.Load(), Retries: s.counts.retries.Load()}
}

func (s *Store) clientFor() (*client, error) {
	s.once.Do(func() { s.client, s.err = s.newClient() })
	return s.client, s.err
}

// location is a parsed path: its scheme as written, bucket and key.
type location struct {
	scheme, bucket, key string
}

// at parses p and makes the client, on first use, for a request on it.
func (s *Store) at(p string) (location, *client, error) {
	loc, err := parse(p)
	if err != nil {
		return location{}, nil, err
	}
	c, err := s.clientFor()
	return loc, c, err
}

func parse(p string) (location, error) {
	sc := storage.Scheme(p)
	ok := false
	for _, s := range Schemes {
		ok = ok || s == sc
	}
	if !ok {
		return location{}, errs.New(errs.SourceUnavailable, "%q is not an s3:// URL", p)
	}
	rest := p[len(sc)+3:]
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return location{}, errs.New(errs.SourceUnavailable, "%q names no bucket", p)
	}
	return location{scheme: p[:len(sc)], bucket: bucket, key: key}, nil
}

func (l location) path(key string) string { return l.scheme + "://" + l.bucket + "/" + key }

func (l location) String() string { return l.path(l.key) }

// Stat describes one object by a HEAD request. A key that is no object but a prefix
// of some (a directory) is described with Size 0, as local disk describes one.
func (s *Store) Stat(ctx context.Context, p string) (storage.ObjectInfo, error) {
	loc, c, err := s.at(p)
	if err != nil {
		return storage.ObjectInfo{}, err
	}
	var h headInfo
	err = s.retry(ctx, "stat", loc, &s.counts.head, func(ctx context.Context) (err error) {
		h, err = c.head(ctx, loc.bucket, loc.key)
		return err
	})
	if err == nil {
		return storage.ObjectInfo{Path: p, Size: h.size, ModTime: h.modTime, ETag: h.etag}, nil
	}
	if !errors.Is(err, fs.ErrNotExist) || loc.key == "" {
		return storage.ObjectInfo{}, err
	}
	dir := strings.TrimSuffix(loc.key, "/") + "/"
	page, lerr := s.listPage(ctx, c, loc, dir, "", "", "", 1)
	if lerr != nil {
		return storage.ObjectInfo{}, lerr
	}
	if len(page.Contents) > 0 {
		return storage.ObjectInfo{Path: p}, nil
	}
	return storage.ObjectInfo{}, err
}

// List returns every object at or under p, files only, sorted by path, from
// ListObjectsV2 pages alone (no request per object). p names a directory (a key
// prefix ending before a "/") or one object.
func (s *Store) List(ctx context.Context, p string) ([]storage.ObjectInfo, error) {
	return s.ListFrom(ctx, p, "")
}

// ListFrom is List of the objects whose path relative to dir sorts after after: the
// listing starts there, so the keys before it cost nothing.
func (s *Store) ListFrom(ctx context.Context, dir, after string) ([]storage.ObjectInfo, error) {
	loc, c, err := s.at(dir)
	if err != nil {
		return nil, err
	}
	key := strings.TrimSuffix(loc.key, "/")
	if key == "" || strings.HasSuffix(loc.key, "/") || after != "" {
		prefix := ""
		if key != "" {
			prefix = key + "/"
		}
		start := ""
		if after != "" {
			start = prefix + after
		}
		return s.listAll(ctx, c, loc, prefix, start, "")
	}
	// One request finds either the object key itself or the directory key/: both
	// have key as a prefix, and the object sorts first.
	page, err := s.listPage(ctx, c, loc, key, "", "", "", 0)
	if err != nil {
		return nil, err
	}
	if len(page.Contents) > 0 && page.Contents[0].Key == key {
		return []storage.ObjectInfo{info(loc, page.Contents[0])}, nil
	}
	dirPrefix := key + "/"
	var out []storage.ObjectInfo
	past := false
	for _, o := range page.Contents {
		if strings.HasPrefix(o.Key, dirPrefix) {
			out = append(out, info(loc, o))
		} else if o.Key > dirPrefix {
			past = true
		}
	}
	if !page.IsTruncated || past {
		return sorted(out), nil
	}
	// Go on under key/ alone: other keys share the prefix (key.crc, key-old/…).
	start := ""
	if len(out) > 0 {
		start = strings.TrimPrefix(out[len(out)-1].Path, loc.path(""))
	}
	rest, err := s.listAll(ctx, c, loc, dirPrefix, start, "")
	return append(out, rest...), err
}

// Subdirs names the directories directly under dir from the first page of one
// listing with a delimiter: enough to tell a Delta or an Iceberg table's folder from
// a plain one in one request.
func (s *Store) Subdirs(ctx context.Context, dir string) ([]string, bool, error) {
	loc, c, err := s.at(dir)
	if err != nil {
		return nil, false, err
	}
	prefix := strings.TrimSuffix(loc.key, "/")
	if prefix != "" {
		prefix += "/"
	}
	page, err := s.listPage(ctx, c, loc, prefix, "", "", "/", 0)
	if err != nil {
		return nil, false, err
	}
	var names []string
	for _, cp := range page.CommonPrefixes {
		names = append(names, strings.TrimSuffix(strings.TrimPrefix(cp.Prefix, prefix), "/"))
	}
	return names, !page.IsTruncated, nil
}

// listParallel bounds the key ranges a long listing is split into.
const listParallel = 8

// listAll lists every key under prefix after start (or from a continuation token),
// sorted. A listing longer than one page is split where the layout allows: the
// directories under prefix (Hive partitions) are found by one listing with a
// delimiter, and the keys between chosen ones are listed as separate ranges at once.
// Every key lies in exactly one range, so the result is the sequential listing's.
func (s *Store) listAll(ctx context.Context, c *client, loc location, prefix, start, token string) ([]storage.ObjectInfo, error) {
	page, err := s.listPage(ctx, c, loc, prefix, start, token, "", 0)
	if err != nil {
		return nil, err
	}
	out := objects(loc, page)
	if !page.IsTruncated || len(page.Contents) == 0 {
		return sorted(out), nil
	}
	last := page.Contents[len(page.Contents)-1].Key
	bounds, err := s.splitPoints(ctx, c, loc, prefix, last)
	if err != nil {
		return nil, err
	}
	if len(bounds) < 2 {
		rest, err := s.listRange(ctx, c, loc, prefix, "", page.NextContinuationToken, "")
		return sorted(append(out, rest...)), err
	}
	// Ranges [last, b1), [b1, b2), …, [bk, end), the bounds chosen evenly.
	k := min(listParallel-1, len(bounds))
	los := []string{last}
	for i := 1; i <= k; i++ {
		los = append(los, bounds[i*len(bounds)/(k+1)])
	}
	los = slices.Compact(los)
	parts := make([][]storage.ObjectInfo, len(los))
	g, gctx := errgroup.WithContext(ctx)
	for i, lo := range los {
		hi := ""
		if i+1 < len(los) {
			hi = los[i+1]
		}
		g.Go(func() (err error) {
			parts[i], err = s.listRange(gctx, c, loc, prefix, lo, "", hi)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, p := range parts {
		out = append(out, p...)
	}
	return sorted(out), nil
}

// splitPoints are the directories under prefix (one level down, or further while a
// level holds one directory alone) whose names sort after after: the places a long
// listing can be split.
func (s *Store) splitPoints(ctx context.Context, c *client, loc location, prefix, after string) ([]string, error) {
	for depth := 0; depth < 4; depth++ {
		var dirs []string
		files := 0
		token := ""
		for {
			page, err := s.listPage(ctx, c, loc, prefix, "", token, "/", 0)
			if err != nil {
				return nil, err
			}
			files += len(page.Contents)
			for _, cp := range page.CommonPrefixes {
				dirs = append(dirs, cp.Prefix)
			}
			token = page.NextContinuationToken
			if !page.IsTruncated || token == "" {
				break
			}
		}
		if len(dirs) == 1 && files == 0 {
			prefix = dirs[0]
			continue
		}
		var out []string
		for _, d := range dirs {
			if d > after {
				out = append(out, d)
			}
		}
		return out, nil
	}
	return nil, nil
}

// listRange lists the keys under prefix after start (or from a continuation token)
// and before stop ("" for no end).
func (s *Store) listRange(ctx context.Context, c *client, loc location, prefix, start, token, stop string) ([]storage.ObjectInfo, error) {
	var out []storage.ObjectInfo
	for {
		page, err := s.listPage(ctx, c, loc, prefix, start, token, "", 0)
		if err != nil {
			return nil, err
		}
		for i, o := range page.Contents {
			if stop != "" && o.Key >= stop {
				page.Contents = page.Contents[:i]
				return append(out, objects(loc, page)...), nil
			}
		}
		out = append(out, objects(loc, page)...)
		token = page.NextContinuationToken
		if !page.IsTruncated || token == "" {
			return out, nil
		}
		start = ""
	}
}

// objects are the files of a page: keys that end in "/" are directory markers.
func objects(loc location, page *listPage) []storage.ObjectInfo {
	var out []storage.ObjectInfo
	for _, o := range page.Contents {
		if o.Key != "" && !strings.HasSuffix(o.Key, "/") {
			out = append(out, info(loc, o))
		}
	}
	return out
}

func sorted(out []storage.ObjectInfo) []storage.ObjectInfo {
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func (s *Store) listPage(ctx context.Context, c *client, loc location, prefix, start, token, delimiter string, max int) (*listPage, error) {
	var out *listPage
	err := s.retry(ctx, "list", location{loc.scheme, loc.bucket, prefix}, &s.counts.list, func(ctx context.Context) (err error) {
		out, err = c.list(ctx, loc.bucket, prefix, start, token, delimiter, max)
		return err
	})
	return out, err
}

func info(loc location, o listed) storage.ObjectInfo {
	return storage.ObjectInfo{Path: loc.path(o.Key), Size: o.Size, ModTime: o.LastModified, ETag: o.ETag}
}

// Open opens the object at p. Its size and ETag come with the first bytes: the
// first request reads the object's start, and every later one is held to that ETag.
func (s *Store) Open(ctx context.Context, p string) (storage.Reader, error) {
	loc, c, err := s.at(p)
	if err != nil {
		return nil, err
	}
	r := &reader{s: s, c: c, ctx: ctx, loc: loc, size: -1}
	if err := r.probe(); err != nil {
		return nil, err
	}
	return r, nil
}

// OpenInfo opens the object o describes, making no request: every read is held to
// o's ETag, so an object replaced since o was listed is errs.SourceChanged. An o
// without an ETag but with a size (a lake table's metadata states sizes) is held to
// the ETag of the first response, and its size is a claim that CheckSize tests
// against the store; one with neither is opened by path.
func (s *Store) OpenInfo(ctx context.Context, o storage.ObjectInfo) (storage.Reader, error) {
	if o.ETag == "" && o.Size <= 0 {
		return s.Open(ctx, o.Path)
	}
	loc, c, err := s.at(o.Path)
	if err != nil {
		return nil, err
	}
	return &reader{s: s, c: c, ctx: ctx, loc: loc, size: o.Size, etag: o.ETag, pinned: true, claimed: o.ETag == ""}, nil
}

func (s *Store) String() string { return fmt.Sprint(s.cfg) }

// Put writes the object at p whole (Lore's writers: generated data, a benchmark's
// tables, tests). It is retried like a read; a body that cannot be read again is
// sent once.
func (s *Store) Put(ctx context.Context, p string, body []byte) error {
	loc, c, err := s.at(p)
	if err != nil {
		return err
	}
	return s.retry(ctx, "write", loc, &s.counts.put, func(ctx context.Context) error {
		return c.put(ctx, loc.bucket, loc.key, body)
	})
}

// Delete removes the object at p; a missing one is no error.
func (s *Store) Delete(ctx context.Context, p string) error {
	loc, c, err := s.at(p)
	if err != nil {
		return err
	}
	err = s.retry(ctx, "delete", loc, &s.counts.put, func(ctx context.Context) error {
		return c.delete(ctx, loc.bucket, loc.key)
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// CreateBucket makes a bucket; one that exists already and is the caller's is no
// error.
func (s *Store) CreateBucket(ctx context.Context, bucket string) error {
	c, err := s.clientFor()
	if err != nil {
		return err
	}
	loc := location{scheme: "s3", bucket: bucket}
	return s.retry(ctx, "create bucket", loc, &s.counts.put, func(ctx context.Context) error {
		return c.createBucket(ctx, bucket)
	})
}
