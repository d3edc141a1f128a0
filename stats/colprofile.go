package stats

import (
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/wire"
)

// ColumnProfile is what a full read learns of one column over some zones: its null
// count, exact bounds (or that it holds a NaN), the exact sum of its values, and its
// sketches. Profiles of disjoint zones merge into the profile of their union, in any
// order: the null counts, bounds and distinct-count sketch exactly as one pass over
// the union would give them, the quantile sketch within its error. The profile of
// one zone is that zone's partials (ZoneColumn); a merged one keeps no sum — sums are
// recorded per zone.
//
// Its byte form (MarshalBinary) is versioned and independent of the machine, so that
// the processes that read zones can hand their profiles to the one that writes the
// record (docs/format/partial-state.md).
type ColumnProfile struct {
	Rows int64      // rows of the zones profiled
	Zone ZoneColumn // null count, bounds, sum
	HLL  *HLL       // nil for a column without a distinct-count sketch
	KLL  *KLL       // nil for a column without a quantile sketch
}

// Merge folds o, the profile of other zones of the same column, into p. A sketch
// that is nil on one side is one of no values (the zones held none, or the column's
// type has no such sketch); o is left unchanged.
func (p *ColumnProfile) Merge(o *ColumnProfile) {
	m := NewZoneMerge()
	m.Add(p.Zone, p.Rows)
	m.Add(o.Zone, o.Rows)
	p.Zone = m.Result()
	p.Rows += o.Rows
	switch {
	case o.HLL == nil:
	case p.HLL == nil:
		p.HLL = NewHLL()
		p.HLL.Merge(o.HLL)
	default:
		p.HLL.Merge(o.HLL)
	}
	switch {
	case o.KLL == nil:
	case p.KLL == nil:
		p.KLL = NewKLL()
		p.KLL.Merge(o.KLL)
	default:
		p.KLL.Merge(o.KLL)
	}
}

// profileVersion is the version of the byte form below.
const profileVersion = 1

var profileForm = wire.Form{Magic: [3]byte{'L', 'C', 'P'}, Version: profileVersion, What: "a column profile"}

// The byte form, little-endian:
//
//	"LCP" profileVersion             four bytes
//	rows                             uvarint
//	flags                            a byte: 1 null count known, 2 bounds, 4 bounds
//	                                 exact, 8 NaN, 16 HLL, 32 KLL
//	null count                       uvarint, when known
//	min, max                         uvarint length then bytes each, with bounds
//	sum                              uvarint length then the decimal text ("" none)
//	HLL, KLL                         uvarint length then the sketch's own form, each
//	                                 when present

const (
	flagNulls = 1 << iota
	flagBounds
	flagExact
	flagNaN
	flagHLL
	flagKLL
	flagAll = flagKLL<<1 - 1
)

// MarshalBinary returns the profile's byte form.
func (p *ColumnProfile) MarshalBinary() ([]byte, error) {
	w := profileForm.Writer()
	w.Uvarint(uint64(p.Rows))
	var flags byte
	if p.Zone.NullCount != nil {
		flags |= flagNulls
	}
	bounded := p.Zone.Min != nil && p.Zone.Max != nil
	if bounded {
		flags |= flagBounds
		if p.Zone.BoundsExact {
			flags |= flagExact
		}
	}
	if p.Zone.HasNaN {
		flags |= flagNaN
	}
	if p.HLL != nil {
		flags |= flagHLL
	}
	if p.KLL != nil {
		flags |= flagKLL
	}
	w.B = append(w.B, flags)
	if p.Zone.NullCount != nil {
		w.Uvarint(uint64(*p.Zone.NullCount))
	}
	if bounded {
		w.Bytes(p.Zone.Min)
		w.Bytes(p.Zone.Max)
	}
	w.Bytes([]byte(p.Zone.Sum))
	if p.HLL != nil {
		b, err := p.HLL.MarshalBinary()
		if err != nil {
			return nil, err
		}
		w.Bytes(b)
	}
	if p.KLL != nil {
		b, err := p.KLL.MarshalBinary()
		if err != nil {
			return nil, err
		}
		w.Bytes(b)
	}
	return w.B, nil
}

// UnmarshalColumnProfile reads a profile's byte form. Bytes of another version,
// truncated, or with bytes left over are refused with CORRUPT_SOURCE.
func UnmarshalColumnProfile(b []byte) (*ColumnProfile, error) {
	r, err := profileForm.Reader(b)
	if err != nil {
		return nil, err
	}
	p := &ColumnProfile{Rows: int64(r.Uvarint())}
	flags := byte(0)
	if len(r.B) > 0 {
		flags, r.B = r.B[0], r.B[1:]
	} else {
		r.Fail("it ends before its flags")
	}
	if flags&^flagAll != 0 {
		r.Fail("unknown flags %#x", flags)
	}
	if flags&flagNulls != 0 {
		n := int64(r.Uvarint())
		p.Zone.NullCount = &n
	}
	if flags&flagBounds != 0 {
		p.Zone.Min = clone(r.Bytes())
		p.Zone.Max = clone(r.Bytes())
		p.Zone.BoundsExact = flags&flagExact != 0
	}
	p.Zone.HasNaN = flags&flagNaN != 0
	p.Zone.Sum = string(r.Bytes())
	if flags&flagHLL != 0 {
		if sb := r.Bytes(); r.Err() == nil {
			p.HLL = NewHLL()
			if err := p.HLL.UnmarshalBinary(sb); err != nil {
				r.Fail("its distinct-count sketch: %v", err)
			}
		}
	}
	if flags&flagKLL != 0 {
		if sb := r.Bytes(); r.Err() == nil {
			p.KLL = NewKLL()
			if err := p.KLL.UnmarshalBinary(sb); err != nil {
				r.Fail("its quantile sketch: %v", err)
			}
		}
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	if p.Rows < 0 || (p.Zone.NullCount != nil && (*p.Zone.NullCount < 0 || *p.Zone.NullCount > p.Rows)) {
		return nil, errs.New(errs.CorruptSource, "cannot read a column profile: %d rows with a null count out of range", p.Rows)
	}
	return p, nil
}

// clone copies b, never returning nil for an empty bound: an empty bound is a bound.
func clone(b []byte) []byte { return append([]byte{}, b...) }
