package parquet

import (
	"errors"
	"sync"
	"sync/atomic"
)

// A PageShare is what the parts of one row group read at once by several workers
// have in common: the pages decompressed so far. A writer that puts each column
// chunk in a single page (DuckDB does) leaves a scan no page boundary to cut a row
// group at, so every part would read and decompress every page whole; with a share,
// each page is decompressed once, by the first part to need it, and read by all.
//
// A part that needs a page another part is still decompressing does not wait idle:
// it decompresses the first data page (and dictionary) of a chunk no part has begun
// yet, in the order of the columns read, so that the parts together decompress the
// row group's chunks side by side. The buffers go back to the pool when the last
// part is done (Done); a part never read leaves them to the collector.
type PageShare struct {
	rg   int
	cols []int // the columns the parts read, in the order helping takes them
	left atomic.Int32

	mu     sync.Mutex
	pages  map[int64]*sharedPage // by the offset of the page's body in the file
	helped int                   // cols[:helped] are taken by a helper
}

// sharedPage is one page of a share: data is set, or err, once done is closed.
type sharedPage struct {
	done chan struct{}
	data []byte
	err  error
}

// NewPageShare returns the share of row group rg for parts readers of columns cols.
func NewPageShare(rg int, cols []int, parts int) *PageShare {
	s := &PageShare{rg: rg, cols: cols, pages: make(map[int64]*sharedPage)}
	s.left.Store(int32(parts))
	return s
}

// Done is called by each part once it has read its rows (or failed); the last one
// puts the share's buffers back in the pool, since no part reads them any more.
func (s *PageShare) Done() {
	if s.left.Add(-1) != 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, p := range s.pages {
		select {
		case <-p.done:
			putPage(p.data)
		default: // a helper of a part that was never done; the collector takes it
		}
		delete(s.pages, k)
	}
}

// page returns the decompressed body of page p, which walker w has reached:
// decompressing it now when no part has, waiting for (or helping while) the part
// that does.
func (s *PageShare) page(w *pageWalker, p pageAt) ([]byte, error) {
	for {
		sp, mine := s.claim(p.body)
		if mine {
			return s.fill(w, p, sp)
		}
		select {
		case <-sp.done:
			return sp.data, sp.err
		default:
		}
		if !s.help(w.f) {
			<-sp.done
			return sp.data, sp.err
		}
	}
}

// claim returns the entry of the page at body, and whether the caller is to fill
// it (no part had met the page).
func (s *PageShare) claim(body int64) (*sharedPage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sp := s.pages[body]; sp != nil {
		return sp, false
	}
	sp := &sharedPage{done: make(chan struct{})}
	s.pages[body] = sp
	return sp, true
}

// fill decompresses page p into the entry sp the caller claimed. The entry is done
// however decoding ends: a decoder that panics (the caller's recovery reports it)
// leaves the other parts an error rather than a wait without end.
func (s *PageShare) fill(w *pageWalker, p pageAt, sp *sharedPage) ([]byte, error) {
	var buf []byte
	filled := false
	defer func() {
		if !filled {
			sp.err = errors.New("the page could not be decompressed by the part that read it first")
		}
		close(sp.done)
	}()
	data, err := w.decode(p, &buf)
	if err != nil {
		putPage(buf)
	}
	sp.data, sp.err, filled = data, err, true
	return data, err
}

// help decompresses, through f, the dictionary and first data page of the next
// chunk no part has begun; it returns false when none is left to take.
func (s *PageShare) help(f *File) bool {
	s.mu.Lock()
	if s.helped >= len(s.cols) {
		s.mu.Unlock()
		return false
	}
	c := s.cols[s.helped]
	s.helped++
	s.mu.Unlock()
	if c < 0 || c >= len(f.cols) || f.pageKind(s.rg, c) == pageNone {
		return true
	}
	w, err := f.chunkWalker(s.rg, f.cols[c].leaves[0])
	if w == nil || err != nil {
		return true // the part that reads the chunk meets the error itself
	}
	defer w.close()
	for {
		p, ok, err := w.next()
		if !ok || err != nil {
			return true
		}
		if !w.decompresses(p) {
			return true
		}
		if sp, mine := s.claim(p.body); mine {
			if _, err := s.fill(w, p, sp); err != nil {
				return true
			}
		}
		if p.typ != pageDictionary {
			return true
		}
	}
}
