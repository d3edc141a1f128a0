package agg

import (
	"math"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/wire"
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
// Every accumulator has a state form; one that holds values of a type without a
// values column form (state_values.go: a union or a view type, say) has none, and
// Serializable says so.

// stateVersion is the version of the layout above and of every kind's body.
const stateVersion = 1

var stateForm = wire.Form{Magic: [3]byte{'L', 'P', 'S'}, Version: stateVersion, What: "a partial state"}

// stateful is an accumulator with a byte form of its state.
type stateful interface {
	// stateKind names the body's layout; a state decodes only into an accumulator
	// of the same kind.
	stateKind() string
	// stateGroups is the number of groups the state holds.
	stateGroups() int
	appendState(w *wire.Writer)
	// loadState replaces the state with groups groups read from r.
	loadState(r *wire.Reader, groups int)
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
	if t, typed := a.(typedState); ok && typed && !t.hasStateForm() {
		return nil, false
	}
	return s, ok
}

// EncodeState returns the byte form of a's state: every group it holds.
func EncodeState(a Accumulator) ([]byte, error) {
	s, ok := unwrapState(a)
	if !ok {
		return nil, errs.New(errs.Analysis, "the partial state of %T has no byte form", a)
	}
	w := stateForm.Writer()
	w.Bytes([]byte(s.stateKind()))
	w.Uvarint(uint64(s.stateGroups()))
	s.appendState(w)
	return w.B, nil
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
	r, err := stateForm.Reader(b)
	if err != nil {
		return nil, err
	}
	kind := string(r.Bytes())
	n := r.Count(1)
	if r.Err() == nil && kind != s.stateKind() {
		return nil, errs.New(errs.CorruptSource, "cannot read a partial state of kind %q as %s's (%q)", kind, spec.Name, s.stateKind())
	}
	if r.Err() == nil {
		s.loadState(r, n)
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	return a, nil
}

// The kinds. Each body holds its groups' state in group order.

func (a *countAcc) stateKind() string { return "count" }
func (a *countAcc) stateGroups() int  { return len(a.counts) }

func (a *countAcc) appendState(w *wire.Writer) {
	for _, c := range a.counts {
		w.I64(c)
	}
}

func (a *countAcc) loadState(r *wire.Reader, n int) {
	a.counts = make([]int64, n)
	for g := range a.counts {
		a.counts[g] = r.I64()
	}
}

func appendSum128(w *wire.Writer, st []sum128) {
	for _, s := range st {
		w.U64(s.lo)
		w.I64(s.hi)
		w.I64(s.cnt)
	}
}

func loadSum128(r *wire.Reader, n int) []sum128 {
	st := make([]sum128, n)
	for g := range st {
		st[g] = sum128{lo: r.U64(), hi: r.I64(), cnt: r.I64()}
	}
	return st
}

func (a *intSumAcc) stateKind() string               { return "sum_int" }
func (a *intSumAcc) stateGroups() int                { return len(a.st) }
func (a *intSumAcc) appendState(w *wire.Writer)      { appendSum128(w, a.st) }
func (a *intSumAcc) loadState(r *wire.Reader, n int) { a.st = loadSum128(r, n) }

func (a *decSumAcc) stateKind() string { return "sum_decimal128" }
func (a *decSumAcc) stateGroups() int  { return len(a.st) }

func (a *decSumAcc) appendState(w *wire.Writer) {
	w.Bool(a.overflow)
	appendSum128(w, a.st)
}

func (a *decSumAcc) loadState(r *wire.Reader, n int) {
	a.overflow = r.Bool()
	a.st = loadSum128(r, n)
}

func (a *floatSumAcc) stateKind() string { return "sum_float" }
func (a *floatSumAcc) stateGroups() int  { return len(a.st) }

func (a *floatSumAcc) appendState(w *wire.Writer) {
	for _, s := range a.st {
		w.F64(s.sum)
		w.I64(s.cnt)
	}
}

func (a *floatSumAcc) loadState(r *wire.Reader, n int) {
	a.st = make([]fsum, n)
	for g := range a.st {
		a.st[g] = fsum{sum: r.F64(), cnt: r.I64()}
	}
}

// A 64-bit decimal sum that overflowed is written as the 128-bit sums it moved to.
func (a *dec64SumAcc) stateKind() string { return "sum_decimal64" }
func (a *dec64SumAcc) stateGroups() int  { return a.groups() }

func (a *dec64SumAcc) appendState(w *wire.Writer) {
	w.Bool(a.wide != nil)
	if a.wide != nil {
		a.wide.appendState(w)
		return
	}
	for g, s := range a.st {
		w.Bool(a.has(uint32(g)))
		w.I64(s)
	}
}

func (a *dec64SumAcc) loadState(r *wire.Reader, n int) {
	if r.Bool() {
		a.st, a.seen = nil, nil
		a.wide = &decSumAcc{spec: a.spec, scale: a.scale}
		a.wide.loadState(r, n)
		return
	}
	a.wide = nil
	a.st, a.seen = make([]int64, n), make([]uint64, (n+63)/64)
	for g := range a.st {
		if r.Bool() {
			a.seen[g/64] |= 1 << (g % 64)
		}
		a.st[g] = r.I64()
	}
}

// MIN and MAX of integers (and of booleans and 64-bit decimals, held as integers)
// write each group's value as its 64 bits; of floats, as a float64's bits.
func (a *mmInt[T]) stateKind() string { return "min_max_int" }
func (a *mmInt[T]) stateGroups() int  { return len(a.st) }
func (a *mmInt[T]) appendState(w *wire.Writer) {
	appendCells(w, a.st, func(v T) uint64 { return uint64(v) })
}
func (a *mmInt[T]) loadState(r *wire.Reader, n int) {
	a.st = loadCells(r, n, func(u uint64) T { return T(u) })
}

func (a *mmFloat[T]) stateKind() string { return "min_max_float" }
func (a *mmFloat[T]) stateGroups() int  { return len(a.st) }

func (a *mmFloat[T]) appendState(w *wire.Writer) {
	appendCells(w, a.st, func(v T) uint64 { return math.Float64bits(float64(v)) })
}

func (a *mmFloat[T]) loadState(r *wire.Reader, n int) {
	a.st = loadCells(r, n, func(u uint64) T { return T(math.Float64frombits(u)) })
}

// appendCells writes MIN/MAX cells: a byte saying whether the group has a value,
// then the value's 64 bits as bits gives them.
func appendCells[T any](w *wire.Writer, st []mmCell[T], bits func(T) uint64) {
	for _, c := range st {
		w.Bool(c.has)
		w.U64(bits(c.v))
	}
}

func loadCells[T any](r *wire.Reader, n int, value func(uint64) T) []mmCell[T] {
	st := make([]mmCell[T], n)
	for g := range st {
		has := r.Bool()
		st[g] = mmCell[T]{has: has, v: value(r.U64())}
	}
	return st
}

// Sketches are written in their own versioned forms (stats.HLL, stats.KLL); a group
// without one yet is an empty string.
func appendSketch(w *wire.Writer, m interface{ MarshalBinary() ([]byte, error) }, present bool) {
	if !present {
		w.Bytes(nil)
		return
	}
	b, err := m.MarshalBinary()
	if err != nil {
		// Only a sketch in memory is written; its encoding cannot fail.
		panic("BUG: " + err.Error())
	}
	w.Bytes(b)
}

// loadSketch reads what appendSketch wrote for group g into a sketch from fresh, or
// returns the zero sketch (nil) for a group without one.
func loadSketch[S interface{ UnmarshalBinary([]byte) error }](r *wire.Reader, g int, fresh func() S) S {
	var none S
	b := r.Bytes()
	if len(b) == 0 {
		return none
	}
	s := fresh()
	if err := s.UnmarshalBinary(b); err != nil {
		r.Fail("group %d: %v", g, err)
		return none
	}
	return s
}

func (a *hllAcc) stateKind() string { return "approx_count_distinct" }
func (a *hllAcc) stateGroups() int  { return len(a.sketches) }

func (a *hllAcc) appendState(w *wire.Writer) {
	for g, s := range a.sketches {
		appendSketch(w, s, s != nil)
		e, ok := a.exact[uint32(g)]
		w.Bool(ok)
		if ok {
			w.I64(e.n)
			w.Bool(e.whole)
		}
	}
}

func (a *hllAcc) loadState(r *wire.Reader, n int) {
	a.sketches, a.exact = make([]*stats.HLL, n), nil
	for g := range a.sketches {
		a.sketches[g] = loadSketch(r, g, stats.NewHLL)
		if r.Bool() {
			if a.exact == nil {
				a.exact = map[uint32]exactCount{}
			}
			a.exact[uint32(g)] = exactCount{n: r.I64(), whole: r.Bool()}
		}
	}
}

func (a *kllAcc) stateKind() string { return "approx_quantile" }
func (a *kllAcc) stateGroups() int  { return len(a.sketches) }

func (a *kllAcc) appendState(w *wire.Writer) {
	for _, s := range a.sketches {
		appendSketch(w, s, s != nil)
	}
}

func (a *kllAcc) loadState(r *wire.Reader, n int) {
	a.sketches = make([]*stats.KLL, n)
	for g := range a.sketches {
		a.sketches[g] = loadSketch(r, g, stats.NewKLL)
	}
}
