package agg

import (
	"encoding/binary"
	"math"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/stats"
)

// The byte form of a partial state: what one process folded, handed to another to
// merge (a distributed run's workers and its coordinator). EncodeState writes an
// accumulator's groups; DecodeState makes, from the same Spec, an accumulator holding
// them, which merges and finalises as the original would. The form is versioned and
// independent of the machine (docs/format/partial-state.md):
//
//	"LPS" stateVersion              four bytes
//	kind                            uvarint length, then the bytes
//	groups                          uvarint
//	body                            the kind's own layout, little-endian
//
// Only some accumulators have a state form so far; Serializable says which.

// stateVersion is the version of the layout above and of every kind's body.
const stateVersion = 1

var stateMagic = [3]byte{'L', 'P', 'S'}

// stateful is an accumulator with a byte form of its state.
type stateful interface {
	// stateKind names the body's layout; a state decodes only into an accumulator
	// of the same kind.
	stateKind() string
	// groups is the number of groups the state holds.
	groups() int
	appendState(w *stateWriter)
	// loadState replaces the state with groups groups read from r.
	loadState(r *stateReader, groups int)
}

// Serializable reports whether an accumulator of s has a byte form of its state.
func Serializable(s Spec) bool {
	a, err := New(s)
	if err != nil {
		return false
	}
	_, ok := unwrapState(a)
	return ok
}

// unwrapState finds the stateful accumulator inside a (a wideAcc carries one).
func unwrapState(a Accumulator) (stateful, bool) {
	if w, ok := a.(*wideAcc); ok {
		a = w.inner
	}
	s, ok := a.(stateful)
	return s, ok
}

// EncodeState returns the byte form of a's state: every group it holds.
func EncodeState(a Accumulator) ([]byte, error) {
	s, ok := unwrapState(a)
	if !ok {
		return nil, errs.New(errs.Analysis, "the partial state of %T has no byte form", a)
	}
	w := &stateWriter{b: append(stateMagic[:], stateVersion)}
	w.bytes([]byte(s.stateKind()))
	w.uvarint(uint64(s.groups()))
	s.appendState(w)
	return w.b, nil
}

// DecodeState returns an accumulator of spec holding the state b encodes. Bytes of
// another version or kind, truncated, or with bytes left over are refused with
// CORRUPT_SOURCE.
func DecodeState(spec Spec, b []byte) (Accumulator, error) {
	a, err := New(spec)
	if err != nil {
		return nil, err
	}
	s, ok := unwrapState(a)
	if !ok {
		return nil, errs.New(errs.Analysis, "the partial state of %s has no byte form", spec.Name)
	}
	if len(b) < 4 || [3]byte(b[:3]) != stateMagic {
		return nil, errs.New(errs.CorruptSource, "cannot read a partial state: it does not begin with %q", stateMagic[:])
	}
	if b[3] != stateVersion {
		return nil, errs.New(errs.CorruptSource, "cannot read a partial state: version %d; this build reads version %d", b[3], stateVersion)
	}
	r := &stateReader{b: b[4:]}
	kind := string(r.bytes())
	n := r.count(1)
	if r.err == nil && kind != s.stateKind() {
		return nil, errs.New(errs.CorruptSource, "cannot read a partial state of kind %q as %s's (%q)", kind, spec.Name, s.stateKind())
	}
	if r.err == nil {
		s.loadState(r, n)
	}
	if r.err == nil && len(r.b) > 0 {
		r.fail("%d bytes past its end", len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return a, nil
}

// stateWriter appends a state's values.
type stateWriter struct{ b []byte }

func (w *stateWriter) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *stateWriter) u64(v uint64)     { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *stateWriter) i64(v int64)      { w.u64(uint64(v)) }
func (w *stateWriter) f64(v float64)    { w.u64(math.Float64bits(v)) }

func (w *stateWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *stateWriter) bytes(v []byte) {
	w.uvarint(uint64(len(v)))
	w.b = append(w.b, v...)
}

// stateReader reads what a stateWriter wrote; the first failure sticks, and every
// later read returns zero values.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = errs.New(errs.CorruptSource, "cannot read a partial state: "+format, args...)
	}
	r.b = nil
}

func (r *stateReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("a length runs past its end")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items of at least size bytes each, refusing one the rest
// of the bytes cannot hold (a corrupt count never allocates).
func (r *stateReader) count(size int) int {
	v := r.uvarint()
	if v > uint64(len(r.b))/uint64(max(size, 1)) {
		r.fail("a count of %d runs past its end", v)
		return 0
	}
	return int(v)
}

func (r *stateReader) u64() uint64 {
	if len(r.b) < 8 {
		r.fail("a value runs past its end")
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *stateReader) i64() int64   { return int64(r.u64()) }
func (r *stateReader) f64() float64 { return math.Float64frombits(r.u64()) }

func (r *stateReader) bool() bool {
	if len(r.b) < 1 {
		r.fail("a value runs past its end")
		return false
	}
	v := r.b[0]
	r.b = r.b[1:]
	if v > 1 {
		r.fail("a flag of %d", v)
	}
	return v == 1
}

func (r *stateReader) bytes() []byte {
	n := r.count(1) // no more than the bytes left
	if r.err != nil {
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// The kinds. Each body holds its groups' state in group order.

func (a *countAcc) stateKind() string { return "count" }
func (a *countAcc) groups() int       { return len(a.counts) }

func (a *countAcc) appendState(w *stateWriter) {
	for _, c := range a.counts {
		w.i64(c)
	}
}

func (a *countAcc) loadState(r *stateReader, n int) {
	a.counts = make([]int64, n)
	for g := range a.counts {
		a.counts[g] = r.i64()
	}
}

func appendSum128(w *stateWriter, st []sum128) {
	for _, s := range st {
		w.u64(s.lo)
		w.i64(s.hi)
		w.i64(s.cnt)
	}
}

func loadSum128(r *stateReader, n int) []sum128 {
	st := make([]sum128, n)
	for g := range st {
		st[g] = sum128{lo: r.u64(), hi: r.i64(), cnt: r.i64()}
	}
	return st
}

func (a *intSumAcc) stateKind() string               { return "sum_int" }
func (a *intSumAcc) groups() int                     { return len(a.st) }
func (a *intSumAcc) appendState(w *stateWriter)      { appendSum128(w, a.st) }
func (a *intSumAcc) loadState(r *stateReader, n int) { a.st = loadSum128(r, n) }

func (a *decSumAcc) stateKind() string { return "sum_decimal128" }
func (a *decSumAcc) groups() int       { return len(a.st) }

func (a *decSumAcc) appendState(w *stateWriter) {
	w.bool(a.overflow)
	appendSum128(w, a.st)
}

func (a *decSumAcc) loadState(r *stateReader, n int) {
	a.overflow = r.bool()
	a.st = loadSum128(r, n)
}

func (a *floatSumAcc) stateKind() string { return "sum_float" }
func (a *floatSumAcc) groups() int       { return len(a.st) }

func (a *floatSumAcc) appendState(w *stateWriter) {
	for _, s := range a.st {
		w.f64(s.sum)
		w.i64(s.cnt)
	}
}

func (a *floatSumAcc) loadState(r *stateReader, n int) {
	a.st = make([]fsum, n)
	for g := range a.st {
		a.st[g] = fsum{sum: r.f64(), cnt: r.i64()}
	}
}

// A 64-bit decimal sum that overflowed is written as the 128-bit sums it moved to.
func (a *dec64SumAcc) stateKind() string { return "sum_decimal64" }

func (a *dec64SumAcc) appendState(w *stateWriter) {
	w.bool(a.wide != nil)
	if a.wide != nil {
		a.wide.appendState(w)
		return
	}
	for g, s := range a.st {
		w.bool(a.has(uint32(g)))
		w.i64(s)
	}
}

func (a *dec64SumAcc) loadState(r *stateReader, n int) {
	if r.bool() {
		a.st, a.seen = nil, nil
		a.wide = &decSumAcc{spec: a.spec, scale: a.scale}
		a.wide.loadState(r, n)
		return
	}
	a.wide = nil
	a.st, a.seen = make([]int64, n), make([]uint64, (n+63)/64)
	for g := range a.st {
		if r.bool() {
			a.seen[g/64] |= 1 << (g % 64)
		}
		a.st[g] = r.i64()
	}
}

// MIN and MAX of integers (and of booleans and 64-bit decimals, held as integers)
// write each group's value as its 64 bits; of floats, as a float64's bits.
func (a *mmInt[T]) stateKind() string { return "min_max_int" }
func (a *mmInt[T]) groups() int       { return len(a.st) }
func (a *mmInt[T]) appendState(w *stateWriter) {
	appendCells(w, a.st, func(v T) uint64 { return uint64(v) })
}
func (a *mmInt[T]) loadState(r *stateReader, n int) {
	a.st = loadCells(r, n, func(u uint64) T { return T(u) })
}

func (a *mmFloat[T]) stateKind() string { return "min_max_float" }
func (a *mmFloat[T]) groups() int       { return len(a.st) }

func (a *mmFloat[T]) appendState(w *stateWriter) {
	appendCells(w, a.st, func(v T) uint64 { return math.Float64bits(float64(v)) })
}

func (a *mmFloat[T]) loadState(r *stateReader, n int) {
	a.st = loadCells(r, n, func(u uint64) T { return T(math.Float64frombits(u)) })
}

// appendCells writes MIN/MAX cells: a byte saying whether the group has a value,
// then the value's 64 bits as bits gives them.
func appendCells[T any](w *stateWriter, st []mmCell[T], bits func(T) uint64) {
	for _, c := range st {
		w.bool(c.has)
		w.u64(bits(c.v))
	}
}

func loadCells[T any](r *stateReader, n int, value func(uint64) T) []mmCell[T] {
	st := make([]mmCell[T], n)
	for g := range st {
		has := r.bool()
		st[g] = mmCell[T]{has: has, v: value(r.u64())}
	}
	return st
}

// Sketches are written in their own versioned forms (stats.HLL, stats.KLL); a group
// without one yet is an empty string.
func appendSketch(w *stateWriter, m interface{ MarshalBinary() ([]byte, error) }, present bool) {
	if !present {
		w.bytes(nil)
		return
	}
	b, err := m.MarshalBinary()
	if err != nil {
		// Only a sketch in memory is written; its encoding cannot fail.
		panic("BUG: " + err.Error())
	}
	w.bytes(b)
}

// loadSketch reads what appendSketch wrote for group g into a sketch from fresh, or
// returns the zero sketch (nil) for a group without one.
func loadSketch[S interface{ UnmarshalBinary([]byte) error }](r *stateReader, g int, fresh func() S) S {
	var none S
	b := r.bytes()
	if len(b) == 0 {
		return none
	}
	s := fresh()
	if err := s.UnmarshalBinary(b); err != nil {
		r.fail("group %d: %v", g, err)
		return none
	}
	return s
}

func (a *hllAcc) stateKind() string { return "approx_count_distinct" }
func (a *hllAcc) groups() int       { return len(a.sketches) }

func (a *hllAcc) appendState(w *stateWriter) {
	for g, s := range a.sketches {
		appendSketch(w, s, s != nil)
		e, ok := a.exact[uint32(g)]
		w.bool(ok)
		if ok {
			w.i64(e.n)
			w.bool(e.whole)
		}
	}
}

func (a *hllAcc) loadState(r *stateReader, n int) {
	a.sketches, a.exact = make([]*stats.HLL, n), nil
	for g := range a.sketches {
		a.sketches[g] = loadSketch(r, g, stats.NewHLL)
		if r.bool() {
			if a.exact == nil {
				a.exact = map[uint32]exactCount{}
			}
			a.exact[uint32(g)] = exactCount{n: r.i64(), whole: r.bool()}
		}
	}
}

func (a *kllAcc) stateKind() string { return "approx_quantile" }
func (a *kllAcc) groups() int       { return len(a.sketches) }

func (a *kllAcc) appendState(w *stateWriter) {
	for _, s := range a.sketches {
		appendSketch(w, s, s != nil)
	}
}

func (a *kllAcc) loadState(r *stateReader, n int) {
	a.sketches = make([]*stats.KLL, n)
	for g := range a.sketches {
		a.sketches[g] = loadSketch(r, g, stats.NewKLL)
	}
}
