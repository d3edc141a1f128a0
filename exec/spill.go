package exec

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/vector"
)

// SpillSpace is the disk an engine's operators spill to when a statement's memory
// budget runs out: one directory, holding a subdirectory per statement that spills,
// and a bound on the bytes all of them may hold at once. Past the bound a statement
// fails with RESOURCE_EXHAUSTED, as it would have without spilling.
type SpillSpace struct {
	dir   string
	limit int64
	used  atomic.Int64
	seq   atomic.Int64
}

// NewSpillSpace returns the spill space in dir bounded to limit bytes. Statement
// directories left in dir by processes that no longer run (a crash, a kill) are
// removed: no statement of theirs can still be reading them.
func NewSpillSpace(dir string, limit int64) *SpillSpace {
	s := &SpillSpace{dir: dir, limit: limit}
	s.removeStale()
	return s
}

// Dir is the directory spill files are made under.
func (s *SpillSpace) Dir() string { return s.dir }

// Limit is the most bytes the space's files may hold at once.
func (s *SpillSpace) Limit() int64 { return s.limit }

// Used is the bytes spill files hold now.
func (s *SpillSpace) Used() int64 { return s.used.Load() }

// removeStale removes the statement directories (named pid-sequence) of processes
// that are gone.
func (s *SpillSpace) removeStale() {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pidText, _, ok := strings.Cut(e.Name(), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || !e.IsDir() || pid <= 0 || pid == os.Getpid() || alive(pid) {
			continue
		}
		os.RemoveAll(filepath.Join(s.dir, e.Name()))
	}
}

// alive reports whether process pid exists (a process of another user counts).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Statement returns the spill of one statement. Its directory is made when it first
// spills, and Close removes it with every file in it.
func (s *SpillSpace) Statement() *Spill {
	if s == nil {
		return nil
	}
	name := fmt.Sprintf("%d-%d", os.Getpid(), s.seq.Add(1))
	return &Spill{space: s, dir: filepath.Join(s.dir, name)}
}

// Spill is one statement's spill files: counted, bounded by the engine's space, and
// removed when the statement ends however it ends.
type Spill struct {
	space *SpillSpace
	dir   string

	mu     sync.Mutex
	made   bool
	seq    int
	held   int64 // bytes this statement's live files hold
	closed bool

	// Bytes and Files count what the statement wrote to spill files, for the query
	// record.
	Bytes atomic.Int64
	Files atomic.Int64
}

// Dir is the statement's spill directory (which exists only once it has spilled).
func (sp *Spill) Dir() string { return sp.dir }

// create makes a new spill file.
func (sp *Spill) create(what string) (*os.File, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.closed {
		return nil, errs.New(errs.Canceled, "statement ended")
	}
	if !sp.made {
		if err := os.MkdirAll(sp.dir, 0o700); err != nil {
			return nil, spillError(err)
		}
		sp.made = true
	}
	sp.seq++
	f, err := os.OpenFile(filepath.Join(sp.dir, fmt.Sprintf("%s-%d.arrows", what, sp.seq)), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return nil, spillError(err)
	}
	sp.Files.Add(1)
	return f, nil
}

// charge counts n more bytes written, failing past the space's bound.
func (sp *Spill) charge(n int64) error {
	if used := sp.space.used.Add(n); used > sp.space.limit {
		sp.space.used.Add(-n)
		return errs.New(errs.ResourceExhausted,
			"statement needs more spill space than the engine's spill limit allows (%d bytes spilled, limit %d bytes in %s)", used-n, sp.space.limit, sp.space.dir)
	}
	sp.mu.Lock()
	sp.held += n
	sp.mu.Unlock()
	sp.Bytes.Add(n)
	return nil
}

// discharge gives back n bytes of a removed file.
func (sp *Spill) discharge(n int64) {
	sp.mu.Lock()
	n = min(n, sp.held)
	sp.held -= n
	sp.mu.Unlock()
	sp.space.used.Add(-n)
}

// Close removes the statement's spill directory and gives its bytes back.
func (sp *Spill) Close() {
	if sp == nil {
		return
	}
	sp.mu.Lock()
	sp.closed = true
	made, held := sp.made, sp.held
	sp.held = 0
	sp.mu.Unlock()
	sp.space.used.Add(-held)
	if made {
		os.RemoveAll(sp.dir)
	}
}

// spillError is a failed write or read of a spill file; a full disk is
// RESOURCE_EXHAUSTED.
func spillError(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return errs.New(errs.ResourceExhausted, "no space left for spill files: %w", err)
	}
	return errs.New(errs.Internal, "spill file: %w", err)
}

// spillFile is a sequence of batches written to disk as an Arrow IPC stream with
// LZ4-compressed bodies (fast to write and read back, and about halves most
// columns), then read back in the order written, once. A column absent from the
// batches (nil: no operator above reads it) stays absent.
type spillFile struct {
	sp      *Spill
	f       *os.File
	w       *bufio.Writer
	counter countingWriter
	ipcw    *ipc.Writer
	schema  *arrow.Schema
	width   int
	present []int // the batch columns written, in order
	written int64
	rows    int64
}

// newSpillFile makes an empty spill file for batches of width columns.
func (sp *Spill) newSpillFile(what string, width int) (*spillFile, error) {
	if sp == nil {
		return nil, errs.New(errs.Internal, "no spill space")
	}
	f, err := sp.create(what)
	if err != nil {
		return nil, err
	}
	sf := &spillFile{sp: sp, f: f, width: width}
	sf.w = bufio.NewWriterSize(f, 1<<20)
	sf.counter = countingWriter{w: sf.w, sf: sf}
	return sf, nil
}

// countingWriter charges what passes through it to the spill's bound.
type countingWriter struct {
	w  io.Writer
	sf *spillFile
}

func (c countingWriter) Write(p []byte) (int, error) {
	if err := c.sf.sp.charge(int64(len(p))); err != nil {
		return 0, err
	}
	c.sf.written += int64(len(p))
	n, err := c.w.Write(p)
	if err != nil {
		return n, spillError(err)
	}
	return n, nil
}

// write appends b's rows (its selection applied, dictionaries expanded).
func (sf *spillFile) write(b *vector.Batch) error {
	b = b.Compact()
	if b.Rows == 0 {
		return nil
	}
	if sf.ipcw == nil {
		var fields []arrow.Field
		for i, c := range b.Cols {
			if c == nil {
				continue
			}
			sf.present = append(sf.present, i)
			fields = append(fields, arrow.Field{Name: "c" + strconv.Itoa(i), Type: kernels.Decode(c).DataType(), Nullable: true})
		}
		sf.schema = arrow.NewSchema(fields, nil)
		sf.ipcw = ipc.NewWriter(sf.counter, ipc.WithSchema(sf.schema), ipc.WithLZ4())
	}
	cols := make([]arrow.Array, len(sf.present))
	for j, i := range sf.present {
		c := b.Cols[i]
		if c == nil {
			return errs.New(errs.Internal, "spilled batches differ in their columns")
		}
		cols[j] = kernels.Decode(c)
	}
	rec := array.NewRecord(sf.schema, cols, int64(b.Rows))
	err := sf.ipcw.Write(rec)
	if err != nil {
		return asSpillError(err)
	}
	sf.rows += int64(b.Rows)
	return nil
}

// asSpillError keeps a coded error (the spill bound) and wraps any other.
func asSpillError(err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	return spillError(err)
}

// finish ends writing; the file can then be read.
func (sf *spillFile) finish() error {
	if sf.ipcw != nil {
		if err := sf.ipcw.Close(); err != nil {
			return asSpillError(err)
		}
	}
	if err := sf.w.Flush(); err != nil {
		return spillError(err)
	}
	return nil
}

// reader reads the file's batches back from the start.
func (sf *spillFile) reader() (*spillReader, error) {
	if _, err := sf.f.Seek(0, io.SeekStart); err != nil {
		return nil, spillError(err)
	}
	r := &spillReader{sf: sf}
	if sf.ipcw == nil {
		return r, nil // nothing was written
	}
	ir, err := ipc.NewReader(bufio.NewReaderSize(sf.f, 1<<20))
	if err != nil {
		return nil, spillError(err)
	}
	r.ipcr = ir
	return r, nil
}

// remove deletes the file and gives back its bytes.
func (sf *spillFile) remove() {
	if sf.f == nil {
		return
	}
	sf.f.Close()
	os.Remove(sf.f.Name())
	sf.f = nil
	sf.sp.discharge(sf.written)
}

// spillReader reads a spill file's batches in order.
type spillReader struct {
	sf   *spillFile
	ipcr *ipc.Reader
}

// next returns the next batch, or nil at the end.
func (r *spillReader) next() (*vector.Batch, error) {
	if r.ipcr == nil {
		return nil, nil
	}
	if !r.ipcr.Next() {
		if err := r.ipcr.Err(); err != nil && !errors.Is(err, io.EOF) {
			return nil, spillError(err)
		}
		return nil, nil
	}
	rec := r.ipcr.Record()
	rec.Retain()
	b := &vector.Batch{Rows: int(rec.NumRows()), Cols: make([]arrow.Array, r.sf.width)}
	for j, i := range r.sf.present {
		b.Cols[i] = rec.Column(j)
	}
	return b, nil
}

// The operators that spill by partitioning (the grouped aggregate, the hash join)
// split rows into spillFanOut files at each level, by spillFanBits further bits of
// their key's hash, down to maxSpillDepth levels.
const (
	spillFanOut   = 16
	spillFanBits  = 4
	maxSpillDepth = 4
)

// partitionFiles are one level's spill files of a partitioning operator, one per
// partition, each created when a row first goes to it. Workers write at once.
type partitionFiles struct {
	mu    [spillFanOut]sync.Mutex
	files [spillFanOut]*spillFile
}

// add writes b's rows, whose keys are keys, to the files of the partitions their
// key hashes select at level depth; width is the number of columns the files hold.
func (pf *partitionFiles) add(sp *Spill, what string, width, depth int, b *vector.Batch, keys []arrow.Array) error {
	hashes := make([]uint64, b.Rows)
	kernels.HashColumns(keys, nil, hashes)
	var sels [spillFanOut][]int32
	shift := 64 - spillFanBits*(depth+1)
	for r, h := range hashes {
		p := (h >> shift) % spillFanOut
		sels[p] = append(sels[p], int32(r))
	}
	for p, sel := range sels {
		if len(sel) == 0 {
			continue
		}
		if err := pf.write(sp, what, width, p, &vector.Batch{Cols: b.Cols, Rows: b.Rows, Sel: sel}); err != nil {
			return err
		}
	}
	return nil
}

func (pf *partitionFiles) write(sp *Spill, what string, width, p int, b *vector.Batch) error {
	pf.mu[p].Lock()
	defer pf.mu[p].Unlock()
	if pf.files[p] == nil {
		f, err := sp.newSpillFile(what, width)
		if err != nil {
			return err
		}
		pf.files[p] = f
	}
	return pf.files[p].write(b)
}

// finish ends every file written.
func (pf *partitionFiles) finish() error {
	for _, f := range pf.files {
		if f != nil {
			if err := f.finish(); err != nil {
				return err
			}
		}
	}
	return nil
}

// remove deletes every file still held.
func (pf *partitionFiles) remove() {
	for p, f := range pf.files {
		if f != nil {
			f.remove()
			pf.files[p] = nil
		}
	}
}
