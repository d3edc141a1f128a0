// Package wire writes and reads the machine-independent byte forms that one process
// hands another: partial states, column profiles, zone results. Integers are
// little-endian or unsigned varints, lengths precede what they measure, and a reader
// refuses bytes that run past their end without allocating for a corrupt count.
package wire

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/loredb/lore/errs"
)

// Form is a byte form's header: three bytes that name it, then its version. What
// names it in errors ("a partial state").
type Form struct {
	Magic   [3]byte
	Version byte
	What    string
}

// Writer starts a Writer of f: the header written.
func (f Form) Writer() *Writer { return &Writer{B: append(f.Magic[:], f.Version)} }

// Reader checks b's header and returns a Reader of what follows it. Bytes that are
// not of form f, or of another version, are CORRUPT_SOURCE.
func (f Form) Reader(b []byte) (*Reader, error) {
	if len(b) < 4 || [3]byte(b[:3]) != f.Magic {
		return nil, errs.New(errs.CorruptSource, "cannot read %s: it does not begin with %q", f.What, f.Magic[:])
	}
	if b[3] != f.Version {
		return nil, errs.New(errs.CorruptSource, "cannot read %s: version %d; this build reads version %d", f.What, b[3], f.Version)
	}
	return NewReader(b[4:], f.What), nil
}

// Writer appends values to B.
type Writer struct{ B []byte }

func (w *Writer) Uvarint(v uint64) { w.B = binary.AppendUvarint(w.B, v) }
func (w *Writer) U64(v uint64)     { w.B = binary.LittleEndian.AppendUint64(w.B, v) }
func (w *Writer) I64(v int64)      { w.U64(uint64(v)) }
func (w *Writer) F64(v float64)    { w.U64(math.Float64bits(v)) }

func (w *Writer) Bool(v bool) {
	if v {
		w.B = append(w.B, 1)
	} else {
		w.B = append(w.B, 0)
	}
}

// Bytes appends v's length, then v.
func (w *Writer) Bytes(v []byte) {
	w.Uvarint(uint64(len(v)))
	w.B = append(w.B, v...)
}

// Reader reads what a Writer wrote. The first failure sticks (Err), and every later
// read returns zero values.
type Reader struct {
	B    []byte
	what string // what is read, for errors: "a partial state"
	err  error
}

// NewReader reads b, naming it what in errors ("a partial state").
func NewReader(b []byte, what string) *Reader { return &Reader{B: b, what: what} }

// Err is the first failure: a CORRUPT_SOURCE error.
func (r *Reader) Err() error { return r.err }

// Fail records a failure (the first one sticks) and stops reading.
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = errs.New(errs.CorruptSource, "cannot read %s: %s", r.what, fmt.Sprintf(format, args...))
	}
	r.B = nil
}

// End fails when bytes are left over, and returns Err.
func (r *Reader) End() error {
	if r.err == nil && len(r.B) > 0 {
		r.Fail("%d bytes past its end", len(r.B))
	}
	return r.err
}

func (r *Reader) Uvarint() uint64 {
	v, n := binary.Uvarint(r.B)
	if n <= 0 {
		r.Fail("a length runs past its end")
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Count reads a count of items of at least size bytes each, refusing one the rest of
// the bytes cannot hold (a corrupt count never allocates).
func (r *Reader) Count(size int) int {
	v := r.Uvarint()
	if v > uint64(len(r.B))/uint64(max(size, 1)) {
		r.Fail("a count of %d runs past its end", v)
		return 0
	}
	return int(v)
}

func (r *Reader) U64() uint64 {
	if len(r.B) < 8 {
		r.Fail("a value runs past its end")
		return 0
	}
	v := binary.LittleEndian.Uint64(r.B)
	r.B = r.B[8:]
	return v
}

func (r *Reader) I64() int64   { return int64(r.U64()) }
func (r *Reader) F64() float64 { return math.Float64frombits(r.U64()) }

func (r *Reader) Bool() bool {
	if len(r.B) < 1 {
		r.Fail("a value runs past its end")
		return false
	}
	v := r.B[0]
	r.B = r.B[1:]
	if v > 1 {
		r.Fail("a flag of %d", v)
	}
	return v == 1
}

// Bytes reads a length, then that many bytes (sharing r's bytes).
func (r *Reader) Bytes() []byte {
	n := r.Count(1) // no more than the bytes left
	if r.err != nil {
		return nil
	}
	v := r.B[:n:n]
	r.B = r.B[n:]
	return v
}
