package agg

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/types"
)

// Zone is what statistics know of one zone's rows (DESIGN.md §3) for one aggregate:
// the zone's row count and, for an aggregate with an argument column, that column's
// stored partials. Fields not known are left at their "unknown" values.
type Zone struct {
	Rows int64
	// Nulls is the argument's null count, or -1 when unknown.
	Nulls int64
	// Min and Max are the argument's exact bounds when Bounded (values that occur in
	// the zone, not merely bounds on them).
	Min, Max types.Value
	Bounded  bool
	// DistinctExact is COUNT(DISTINCT arg) over the zone, or -1 when unknown.
	DistinctExact int64
	// Distinct and Quantiles are the argument's sketches, or nil.
	Distinct  *stats.HLL
	Quantiles *stats.KLL
	// Sum is the exact sum of the zone's non-null argument values as text, "" when not
	// recorded: a decimal integer for integer arguments, the decimal text at the
	// argument's scale for decimals, and for floats the shortest text that parses
	// back to the same float64 (NaN and ±Inf included).
	Sum string
}

// UnknownZone is a zone of rows rows of which nothing else is known.
func UnknownZone(rows int64) Zone { return Zone{Rows: rows, Nulls: -1, DistinctExact: -1} }

// allNull reports whether every row of the zone is NULL in the argument, by its null
// count.
func (z *Zone) allNull() bool { return z.Nulls >= 0 && z.Nulls == z.Rows }

// The FromZone methods fold a zone's stored partials into group g, as Update would fold
// the zone's rows; ok is false, with the state untouched, when the partials do not
// suffice (the zone must then be read). They are the "derive from zone" step of every
// aggregate's state machine: the same state serves scans, merges and answers from
// statistics.

func (a *countAcc) FromZone(z *Zone, g uint32) (bool, error) {
	n := z.Rows
	if !a.star {
		if z.Nulls < 0 {
			return false, nil
		}
		n -= z.Nulls
	}
	a.Resize(int(g) + 1)
	a.counts[g] += n
	return true, nil
}

// minMaxFromZone folds a zone's exact bounds into a MIN or MAX by updating it with the
// one value that decides it: the same code as a scan.
func minMaxFromZone(a Accumulator, z *Zone, g uint32, isMax bool) (bool, error) {
	v, fold, ok := zoneBound(z, isMax)
	if !ok {
		return false, nil
	}
	if !fold {
		a.Resize(int(g) + 1)
		return true, nil // no value to fold in
	}
	// Min and max accumulators hold decimals in 128 bits (wide.go).
	arr := kernels.WidenDecimal(kernels.ConstArray(v, 1))
	a.Resize(int(g) + 1)
	if err := a.Update(arr, nil, []uint32{g}); err != nil {
		return false, err
	}
	return true, nil
}

// zoneBound is the value a MIN (or MAX) takes from zone z: fold is false for a zone
// of NULLs only, which adds nothing; ok is false when the zone does not suffice.
func zoneBound(z *Zone, isMax bool) (v types.Value, fold, ok bool) {
	switch {
	case z.allNull():
		return v, false, true
	case z.Nulls < 0 || !z.Bounded:
		return v, false, false
	}
	if isMax {
		return z.Max, true, true
	}
	return z.Min, true, true
}

// The numeric MIN/MAX take a zone's bound straight into their state.

func (a *mmInt[T]) FromZone(z *Zone, g uint32) (bool, error) {
	v, fold, ok := zoneBound(z, a.isMax)
	if !ok {
		return false, nil
	}
	a.Resize(int(g) + 1)
	if fold {
		x := T(v.I)
		if types.IsUnsigned(a.dt) {
			x = T(v.U)
		}
		a.take(g, x)
	}
	return true, nil
}

// take folds value x into group g.
func (a *mmInt[T]) take(g uint32, x T) {
	if c := &a.st[g]; !c.has || (a.isMax && x > c.v) || (!a.isMax && x < c.v) {
		c.v, c.has = x, true
	}
}
func (a *mmBool) FromZone(z *Zone, g uint32) (bool, error) { return minMaxFromZone(a, z, g, a.isMax) }
func (a *mmFloat[T]) FromZone(z *Zone, g uint32) (bool, error) {
	v, fold, ok := zoneBound(z, a.isMax)
	if !ok {
		return false, nil
	}
	a.Resize(int(g) + 1)
	if fold {
		if x, c := T(v.F), &a.st[g]; !c.has || floatBetter(x, c.v, a.isMax) {
			c.v, c.has = x, true
		}
	}
	return true, nil
}
func (a *mmDec64) FromZone(z *Zone, g uint32) (bool, error) {
	v, fold, ok := zoneBound(z, a.isMax)
	if !ok || (fold && !v.D.FitsInPrecision(18)) {
		return false, nil
	}
	a.Resize(int(g) + 1)
	if fold {
		a.take(g, int64(v.D.LowBits()))
	}
	return true, nil
}
func (a *mmDecimal) FromZone(z *Zone, g uint32) (bool, error) {
	return minMaxFromZone(a, z, g, a.isMax)
}
func (a *mmString) FromZone(z *Zone, g uint32) (bool, error) { return minMaxFromZone(a, z, g, a.isMax) }

// FromZone folds a zone's HLL sketch in. An exact distinct count answers a group that
// has nothing else (exact counts do not merge); it is kept beside the sketch and
// dropped when anything else reaches the group.
func (a *hllAcc) FromZone(z *Zone, g uint32) (bool, error) {
	if z.DistinctExact < 0 && z.Distinct == nil && !z.allNull() {
		return false, nil
	}
	a.Resize(int(g) + 1)
	fresh := a.sketches[g] == nil && !a.hasExact(g)
	switch {
	case z.DistinctExact >= 0 && fresh:
		if z.Distinct != nil {
			a.sketch(g).Merge(z.Distinct)
		}
		a.setExact(g, z.DistinctExact, z.Distinct != nil)
		return true, nil
	case z.Distinct != nil:
		if err := a.touch(g); err != nil {
			return false, err
		}
		a.sketch(g).Merge(z.Distinct)
		return true, nil
	case z.allNull():
		return true, nil
	}
	return false, nil
}

// exactCount is an exact distinct count standing in for a group's sketch; whole says
// the group's sketch holds the same values, so the group can take more.
type exactCount struct {
	n     int64
	whole bool
}

func (a *hllAcc) hasExact(g uint32) bool {
	_, ok := a.exact[g]
	return ok
}

func (a *hllAcc) setExact(g uint32, n int64, whole bool) {
	if a.exact == nil {
		a.exact = map[uint32]exactCount{}
	}
	a.exact[g] = exactCount{n, whole}
}

// touch is called before anything else reaches group g: an exact count stops being the
// answer, and a group that had only the exact count cannot take more.
func (a *hllAcc) touch(g uint32) error {
	e, ok := a.exact[g]
	if !ok {
		return nil
	}
	delete(a.exact, g)
	if !e.whole {
		return errs.New(errs.Internal, "BUG: approx_count_distinct merged a zone known only by its exact count")
	}
	return nil
}

func (a *kllAcc) FromZone(z *Zone, g uint32) (bool, error) {
	if z.Quantiles == nil && !z.allNull() {
		return false, nil
	}
	a.Resize(int(g) + 1)
	if z.Quantiles != nil {
		a.sketch(g).Merge(z.Quantiles)
	}
	return true, nil
}

// SUM and AVG fold a zone's recorded sum into the group's state as Update would fold
// its rows: the sum into the running total and rows − nulls into the count, so the
// answer is the one a scan gives. A zone whose every row is NULL adds nothing and
// needs no sum. A sum that does not parse for the argument's type is treated as not
// recorded (the zone is read), never guessed at.

// sumFromZone reports whether a zone's partials suffice for SUM/AVG, and the count of
// values they stand for; g is created in a first.
func sumFromZone(a Accumulator, z *Zone, g uint32) (cnt int64, fold bool, ok bool) {
	if z.Nulls < 0 || z.Nulls > z.Rows {
		return 0, false, false
	}
	if z.allNull() {
		a.Resize(int(g) + 1)
		return 0, false, true
	}
	if z.Sum == "" {
		return 0, false, false
	}
	return z.Rows - z.Nulls, true, true
}

// scaledFromZone is sumFromZone for a sum of scaled integers: the zone's sum times
// 10^scale as a 128-bit integer, with group g created, when fold is true.
func scaledFromZone(a Accumulator, z *Zone, g uint32, scale int32) (lo uint64, hi int64, cnt int64, fold, ok bool) {
	if cnt, fold, ok = sumFromZone(a, z, g); !fold {
		return 0, 0, 0, false, ok
	}
	if lo, hi, ok = parseScaled(z.Sum, scale); !ok {
		return 0, 0, 0, false, false
	}
	a.Resize(int(g) + 1)
	return lo, hi, cnt, true, true
}

func (a *intSumAcc) FromZone(z *Zone, g uint32) (bool, error) {
	lo, hi, cnt, fold, ok := scaledFromZone(a, z, g, 0)
	if !fold {
		return ok, nil
	}
	p := &a.st[g]
	p.lo, p.hi = add128(p.lo, p.hi, lo, hi)
	p.cnt += cnt
	return true, nil
}

func (a *floatSumAcc) FromZone(z *Zone, g uint32) (bool, error) {
	cnt, fold, ok := sumFromZone(a, z, g)
	if !fold {
		return ok, nil
	}
	f, err := strconv.ParseFloat(z.Sum, 64)
	if err != nil {
		return false, nil
	}
	a.Resize(int(g) + 1)
	a.st[g].sum += f
	a.st[g].cnt += cnt
	return true, nil
}

func (a *decSumAcc) FromZone(z *Zone, g uint32) (bool, error) {
	lo, hi, cnt, fold, ok := scaledFromZone(a, z, g, a.scale)
	if !fold {
		return ok, nil
	}
	a.addChecked(g, lo, hi)
	a.st[g].cnt += cnt
	if a.overflow {
		return false, a.overflowError()
	}
	return true, nil
}

// parseScaled reads decimal text ("-12", "3.50") as the 128-bit two's complement
// integer of its value times 10^scale. ok is false for malformed text, more fraction
// digits than scale (the value would not be exact), or a value outside 128 bits.
func parseScaled(text string, scale int32) (lo uint64, hi int64, ok bool) {
	digits, neg := text, false
	if len(digits) > 0 && (digits[0] == '-' || digits[0] == '+') {
		neg = digits[0] == '-'
		digits = digits[1:]
	}
	whole, frac, _ := strings.Cut(digits, ".")
	if whole == "" || int32(len(frac)) > scale || !allDigits(whole) || !allDigits(frac) {
		return 0, 0, false
	}
	n, good := new(big.Int).SetString(whole+frac+strings.Repeat("0", int(scale)-len(frac)), 10)
	if !good || n.BitLen() > 127 {
		return 0, 0, false
	}
	if neg {
		n.Neg(n)
	}
	// Two's complement in 128 bits: the low word is the value mod 2^64, the high word
	// the value shifted down by 64 (arithmetic shift, so negatives keep their sign).
	lo = new(big.Int).And(n, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	hi = new(big.Int).Rsh(n, 64).Int64()
	return lo, hi, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Exact distinct aggregates have no partial a zone can store.
func (a *distinctAcc) FromZone(*Zone, uint32) (bool, error) { return false, nil }
func (a *distinctOf) FromZone(*Zone, uint32) (bool, error)  { return false, nil }
