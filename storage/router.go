package storage

import (
	"context"

	"github.com/loredb/lore/errs"
)

// InfoOpener is a store that opens an object already described (its size and ETag
// known from a listing) without asking the store for them again, and holds every read
// to that version of the object: one that changed since is errs.SourceChanged.
type InfoOpener interface {
	OpenInfo(ctx context.Context, o ObjectInfo) (Reader, error)
}

// OpenInfo opens the object o describes: through the store's OpenInfo when it has one,
// else by path.
func OpenInfo(ctx context.Context, s Store, o ObjectInfo) (Reader, error) {
	if op, ok := s.(InfoOpener); ok {
		return op.OpenInfo(ctx, o)
	}
	return s.Open(ctx, o.Path)
}

// SizeChecker is a Reader opened with a size that a table's metadata states (a Delta
// add action, an Iceberg manifest) rather than one the store reported. Such a size is
// a claim: writers have been seen to state sizes their files do not have, and local
// disk, which always asks the file, reads those files. CheckSize asks the store, once,
// before anything is located from the size (a footer is found from the end), and
// leaves Size the object's real size.
type SizeChecker interface {
	CheckSize() error
}

// CheckSize makes r's Size the object's real size, where r holds a claimed one; a
// reader whose size came from its store has nothing to do.
func CheckSize(r Reader) error {
	if c, ok := r.(SizeChecker); ok {
		return c.CheckSize()
	}
	return nil
}

// Range is a byte range of an object.
type Range struct{ Off, Len int64 }

// Prefetcher is a Reader that can be told the ranges it is about to be asked for, so
// that it fetches them in few requests (an object store) rather than one per read.
type Prefetcher interface {
	Prefetch(ranges []Range) error
}

// Prefetch tells r the ranges it is about to be asked for, when it can use them; a
// reader of local disk has nothing to do, and neither has one read under a context
// of NoPrefetch.
func Prefetch(ctx context.Context, r Reader, ranges []Range) error {
	if p, ok := r.(Prefetcher); ok && len(ranges) > 0 && ctx.Value(noPrefetch{}) == nil {
		return p.Prefetch(ranges)
	}
	return nil
}

type noPrefetch struct{}

// NoPrefetch is ctx for reads that must not fetch ahead what they are about to read
// (the statement's memory budget cannot hold it): they fetch piece by piece instead,
// in more requests and bounded memory.
func NoPrefetch(ctx context.Context) context.Context {
	return context.WithValue(ctx, noPrefetch{}, true)
}

// Router is the store every location goes through: a URL's scheme picks the store
// that holds it (s3://… an S3 store), and a path without a scheme is local disk.
type Router struct {
	Local   Store
	schemes map[string]Store
}

var (
	_ Store      = (*Router)(nil)
	_ InfoOpener = (*Router)(nil)
)

// NewRouter routes local paths to local and each scheme of schemes (lower case) to its
// store.
func NewRouter(local Store, schemes map[string]Store) *Router {
	return &Router{Local: local, schemes: schemes}
}

// StoreFor is the store that holds p: s itself, or the store a Router routes p to.
// Readers that work differently on some stores (local disk, a store that lists from
// a key) ask it rather than s. A path no store holds gives s.
func StoreFor(s Store, p string) Store {
	if r, ok := s.(*Router); ok {
		if t, err := r.For(p); err == nil {
			return t
		}
	}
	return s
}

// For is the store that holds p.
func (r *Router) For(p string) (Store, error) {
	sc := Scheme(p)
	if sc == "" {
		return r.Local, nil
	}
	if s, ok := r.schemes[sc]; ok {
		return s, nil
	}
	return nil, errs.New(errs.SourceUnavailable, "%q: the %s:// scheme is not a store Lore reads (s3:// is)", p, sc)
}

// Stat describes one object.
func (r *Router) Stat(ctx context.Context, p string) (ObjectInfo, error) {
	s, err := r.For(p)
	if err != nil {
		return ObjectInfo{}, err
	}
	return s.Stat(ctx, p)
}

// List lists dir recursively.
func (r *Router) List(ctx context.Context, dir string) ([]ObjectInfo, error) {
	s, err := r.For(dir)
	if err != nil {
		return nil, err
	}
	return s.List(ctx, dir)
}

// Open opens an object by path.
func (r *Router) Open(ctx context.Context, p string) (Reader, error) {
	s, err := r.For(p)
	if err != nil {
		return nil, err
	}
	return s.Open(ctx, p)
}

// OpenInfo opens the object o describes, held to its version where the store can.
func (r *Router) OpenInfo(ctx context.Context, o ObjectInfo) (Reader, error) {
	s, err := r.For(o.Path)
	if err != nil {
		return nil, err
	}
	return OpenInfo(ctx, s, o)
}
