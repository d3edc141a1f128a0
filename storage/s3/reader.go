package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
)

const (
	// probeSize is what opening an object by path reads of its start: metadata files
	// and manifests are mostly smaller, so most are read whole by that one request.
	probeSize = 1 << 20
	// readAhead is the least a read that misses what was fetched asks for: readers
	// of row-oriented files (Avro manifests, JSON) read forward in small steps.
	readAhead = 1 << 20
	// keptReads bounds the spans kept from reads that missed, oldest dropped first.
	keptReads = 8
)

// reader is one object open for ranged reads. Every request after the first is held
// to the object's ETag (If-Match, and the response's ETag checked too), so a reader
// never returns bytes of two versions of an object. What was fetched is kept, as
// spans, until Close: Prefetch fetches the ranges a reader is about to be asked for,
// coalesced into few requests, and ReadAt serves them from memory.
type reader struct {
	s      *Store
	c      *client
	ctx    context.Context
	loc    location
	size   int64
	etag   string // under mu: several parts of a Prefetch may pin it at once
	pinned bool   // opened as listed: a missing object has changed, not failed
	// claimed is a size stated by a table's metadata, not yet seen from the store:
	// CheckSize learns the real one.
	claimed   bool
	checkOnce sync.Once
	checkErr  error

	mu    sync.Mutex
	spans []span // sorted by off
}

type span struct {
	off     int64
	b       []byte
	demand  bool   // fetched by a read that missed, not by Prefetch
	release func() // frees b, when it is mapped from the disk cache; else nil
}

func (r *reader) Size() int64 { return r.size }

func (r *reader) Close() error {
	r.mu.Lock()
	spans := r.spans
	r.spans = nil
	r.mu.Unlock()
	for _, s := range spans {
		if s.release != nil {
			s.release()
		}
	}
	return nil
}

// probe reads the object's start, learning its size and ETag from the response.
func (r *reader) probe() error {
	b, total, err := r.get(0, probeSize, true)
	if err != nil {
		if errors.Is(err, errNoRange) {
			// An empty object has no range to read.
			o, herr := r.s.Stat(r.ctx, r.loc.String())
			if herr != nil {
				return herr
			}
			r.size = o.Size
			r.setETag(o.ETag)
			return nil
		}
		return err
	}
	r.size = total
	r.add(span{off: 0, b: b})
	return nil
}

// tailSize is what CheckSize reads of an object's end: a Parquet footer is there, and
// most are smaller.
const tailSize = 64 << 10

var _ storage.SizeChecker = (*reader)(nil)

// CheckSize learns the object's size (and ETag) from the store when the reader was
// opened with a size a table's metadata states. It reads the object's end as the
// claimed size places it, which a footer read would have asked for anyway: when the
// store's size agrees, that costs no request more. When it does not, the object's
// start is read instead, as opening by path does, and Size becomes the real size.
func (r *reader) CheckSize() error {
	r.checkOnce.Do(func() {
		if !r.claimed {
			return
		}
		claim := r.size
		off := max(claim-tailSize, 0)
		b, total, err := r.get(off, claim-off, true)
		if err == nil && total == claim {
			r.add(span{off: off, b: b})
			return
		}
		if err != nil && !errors.Is(err, errNoRange) {
			r.checkErr = err
			return
		}
		r.setETag("")
		r.checkErr = r.probe()
	})
	return r.checkErr
}

// get reads n bytes at off (fewer at the object's end), retrying a body cut short
// for the bytes still missing. When open is set the object's size is not yet known:
// the response's Content-Range gives it (total), and its ETag pins the reader.
func (r *reader) get(off, n int64, open bool) (buf []byte, total int64, err error) {
	buf = make([]byte, n)
	var got int64
	err = r.s.retry(r.ctx, "read", r.loc, &r.s.counts.get, func(ctx context.Context) error {
		rng := fmt.Sprintf("bytes=%d-%d", off+got, off+n-1)
		out, err := r.c.get(ctx, r.loc.bucket, r.loc.key, rng, r.pinnedETag())
		if err != nil {
			return err
		}
		defer out.Body.Close()
		e := etag(out.Header.Get("ETag"))
		if held, ok := r.pin(e); !ok {
			return &loreErr{errs.New(errs.SourceChanged, "%q changed while it was read (ETag %s, was %s)", r.loc, e, held)}
		}
		start, size, ok := contentRange(out.Header.Get("Content-Range"))
		switch {
		case ok && start != off+got:
			return &loreErr{errs.New(errs.SourceUnavailable, "reading %q: asked for bytes from %d, the store sent from %d", r.loc, off+got, start)}
		case !ok:
			// The whole object came back: a store that ignores ranges.
			size = out.ContentLength
			if _, err := io.CopyN(io.Discard, out.Body, off+got); err != nil {
				return err
			}
		}
		if open {
			total = size
			if size-off < n {
				buf, n = buf[:max(size-off, 0)], max(size-off, 0)
			}
		} else if size != r.size {
			return &loreErr{errs.New(errs.SourceChanged, "%q is %d bytes, not the %d it was listed with", r.loc, size, r.size)}
		}
		k, err := io.ReadFull(out.Body, buf[got:])
		got += int64(k)
		r.s.counts.bytes.Add(int64(k))
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errShort // the rest is asked for again
		}
		return err
	})
	if err != nil && r.pinned && errors.Is(err, fs.ErrNotExist) {
		err = errs.New(errs.SourceChanged, "%q was in the table's listing and is gone", r.loc)
	}
	return buf, total, err
}

// pinnedETag is the ETag the reader holds its reads to: "" until a response gives one.
func (r *reader) pinnedETag() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.etag
}

func (r *reader) setETag(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.etag = e
}

// pin holds the reader to e when it holds none yet, and says whether a response
// with ETag e is of the object the reader holds to (held).
func (r *reader) pin(e string) (held string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.etag == "" {
		r.etag = e
	}
	return r.etag, e == "" || e == r.etag
}

// contentRange reads "bytes start-end/size".
func contentRange(s string) (start, size int64, ok bool) {
	rest, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	first, _, found2 := strings.Cut(rng, "-")
	if !found || !found2 {
		return 0, 0, false
	}
	start, err1 := strconv.ParseInt(first, 10, 64)
	size, err2 := strconv.ParseInt(tot, 10, 64)
	return start, size, err1 == nil && err2 == nil
}

// ReadAt reads from what was fetched, or else fetches the range (and some way past
// it, for readers that go on forward).
func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, fmt.Errorf("negative offset %d", off)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), r.size-off)
	if !r.copyOut(p[:n], off) {
		want := min(max(n, readAhead), r.size-off)
		b, _, err := r.get(off, want, false)
		if err != nil {
			return 0, err
		}
		copy(p, b[:n])
		r.add(span{off: off, b: b, demand: true})
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// copyOut fills p with the bytes at off when fetched spans hold them all.
func (r *reader) copyOut(p []byte, off int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.covered(off, int64(len(p)), p)
}

// covered reports whether spans hold [off, off+n), copying it into p when p is not
// nil. The caller holds mu.
func (r *reader) covered(off, n int64, p []byte) bool {
	end := off + n
	i, _ := slices.BinarySearchFunc(r.spans, off, func(s span, off int64) int {
		if s.off+int64(len(s.b)) <= off {
			return -1
		}
		if s.off > off {
			return 1
		}
		return 0
	})
	for pos := off; pos < end; i++ {
		if i >= len(r.spans) || r.spans[i].off > pos || r.spans[i].off+int64(len(r.spans[i].b)) <= pos {
			// Spans may overlap; look for any that holds pos.
			j := slices.IndexFunc(r.spans, func(s span) bool { return s.off <= pos && pos < s.off+int64(len(s.b)) })
			if j < 0 {
				return false
			}
			i = j
		}
		s := r.spans[i]
		k := min(end, s.off+int64(len(s.b))) - pos
		if p != nil {
			copy(p[pos-off:], s.b[pos-s.off:pos-s.off+k])
		}
		pos += k
	}
	return true
}

// add keeps a fetched span, dropping the oldest span of a missed read past keptReads.
func (r *reader) add(sp span) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sp.demand {
		n := 0
		for _, s := range r.spans {
			if s.demand {
				n++
			}
		}
		if n >= keptReads {
			i := slices.IndexFunc(r.spans, func(s span) bool { return s.demand })
			r.spans = slices.Delete(r.spans, i, i+1)
		}
	}
	i, _ := slices.BinarySearchFunc(r.spans, sp.off, func(s span, off int64) int {
		if s.off < off {
			return -1
		}
		if s.off > off {
			return 1
		}
		return 0
	})
	r.spans = slices.Insert(r.spans, i, sp)
}

// Prefetch fetches the ranges not yet held: those in the disk cache from it, the rest
// coalesced where the gap between two is small, long ones cut into parts, the
// requests run several at once.
func (r *reader) Prefetch(ranges []storage.Range) error {
	var want []storage.Range
	r.mu.Lock()
	for _, g := range ranges {
		g.Off = max(g.Off, 0)
		g.Len = min(g.Len, r.size-g.Off)
		if g.Len > 0 && !r.covered(g.Off, g.Len, nil) {
			want = append(want, g)
		}
	}
	r.mu.Unlock()
	if len(want) == 0 {
		return nil
	}
	slices.SortFunc(want, func(a, b storage.Range) int { return int(a.Off - b.Off) })
	if cache := r.s.cfg.Cache; cache != nil {
		missed, tag := want[:0], r.pinnedETag()
		for _, g := range want {
			if b, release, ok := cache.Get(r.loc.String(), tag, g); ok {
				r.add(span{off: g.Off, b: b, release: release})
			} else {
				missed = append(missed, g)
			}
		}
		want = missed
	}
	parts := coalesce(want, r.s.cfg.Coalesce, r.s.cfg.Part)
	g, _ := errgroup.WithContext(r.ctx)
	g.SetLimit(r.s.cfg.Parallel)
	for _, p := range parts {
		g.Go(func() error {
			b, _, err := r.get(p.Off, p.Len, false)
			if err == nil {
				r.add(span{off: p.Off, b: b})
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if cache := r.s.cfg.Cache; cache != nil {
		tag := r.pinnedETag()
		for _, g := range want {
			b := make([]byte, g.Len)
			if r.copyOut(b, g.Off) {
				cache.Put(r.loc.String(), tag, g, b)
			}
		}
	}
	return nil
}

// coalesce merges sorted ranges whose gap is at most gap (none when gap is negative)
// and cuts what results into parts of at most part bytes.
func coalesce(rs []storage.Range, gap, part int64) []storage.Range {
	var merged []storage.Range
	for _, g := range rs {
		if n := len(merged); n > 0 && gap >= 0 && g.Off-(merged[n-1].Off+merged[n-1].Len) <= gap {
			last := &merged[n-1]
			last.Len = max(last.Len, g.Off+g.Len-last.Off)
			continue
		}
		merged = append(merged, g)
	}
	var out []storage.Range
	for _, m := range merged {
		for off := m.Off; off < m.Off+m.Len; off += part {
			out = append(out, storage.Range{Off: off, Len: min(part, m.Off+m.Len-off)})
		}
	}
	return out
}
