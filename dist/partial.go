package dist

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/internal/wire"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// A Partial is an aggregate's groups unfinished — read from some zones by a worker,
// or merged from several partials: every group's key (one array per group
// expression; none when the aggregate groups nothing) and every aggregate's state
// over the groups, in key order.
type Partial struct {
	Keys   []arrow.Array
	States []agg.Accumulator
	Groups int
}

// NewPartial is the partial of aggregate a holding states over the groups of keys
// (one array per group expression; none when a groups nothing, which is one group).
func NewPartial(a *plan.Aggregate, keys []arrow.Array, states []agg.Accumulator) *Partial {
	p := &Partial{Keys: keys, States: states, Groups: 1}
	if len(a.Groups) > 0 {
		p.Groups = 0
		if len(keys) > 0 {
			p.Groups = keys[0].Len()
		}
	}
	return p
}

// The byte form of a partial, for the aggregate of the fragment it came from:
//
//	"LAP" partialVersion           four bytes
//	groups                         uvarint
//	keys                           length-prefixed: an Arrow IPC stream of one
//	                               record, a column per group expression (empty
//	                               bytes when the aggregate groups nothing)
//	states                         uvarint count, then each aggregate's state in
//	                               agg.EncodeState's form, length-prefixed
const partialVersion = 1

var partialForm = wire.Form{Magic: [3]byte{'L', 'A', 'P'}, Version: partialVersion, What: "an aggregate's partial"}

// MarshalBinary returns the partial's byte form.
func (p *Partial) MarshalBinary() ([]byte, error) {
	w := partialForm.Writer()
	w.Uvarint(uint64(p.Groups))
	if len(p.Keys) == 0 {
		w.Bytes(nil)
	} else {
		fields := make([]arrow.Field, len(p.Keys))
		for i, k := range p.Keys {
			fields[i] = arrow.Field{Name: fmt.Sprint("k", i), Type: k.DataType(), Nullable: true}
		}
		schema := arrow.NewSchema(fields, nil)
		rec := array.NewRecord(schema, p.Keys, int64(p.Groups))
		defer rec.Release()
		b, err := ipcStream(schema, rec)
		if err != nil {
			return nil, errs.New(errs.Internal, "writing a partial's keys: %w", err)
		}
		w.Bytes(b)
	}
	w.Uvarint(uint64(len(p.States)))
	for _, s := range p.States {
		b, err := agg.EncodeState(s)
		if err != nil {
			return nil, err
		}
		w.Bytes(b)
	}
	return w.B, nil
}

// UnmarshalPartial reads a partial of aggregate a (the fragment's) from its byte
// form; bytes that are not one, or not of a's groups and aggregates, are
// CORRUPT_SOURCE.
func UnmarshalPartial(a *plan.Aggregate, b []byte) (*Partial, error) {
	r, err := partialForm.Reader(b)
	if err != nil {
		return nil, err
	}
	p := &Partial{Groups: int(min(r.Uvarint(), 1<<40))}
	keys := r.Bytes()
	states := make([][]byte, r.Count(1))
	for i := range states {
		states[i] = r.Bytes()
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	switch {
	case len(a.Groups) == 0 && (len(keys) > 0 || p.Groups != 1):
		return nil, errs.New(errs.CorruptSource, "an ungrouped aggregate's partial of %d groups", p.Groups)
	case len(states) != len(a.Aggs):
		return nil, errs.New(errs.CorruptSource, "a partial of %d aggregates for an aggregate of %d", len(states), len(a.Aggs))
	}
	if len(a.Groups) > 0 {
		if p.Keys, err = readKeys(a, keys, p.Groups); err != nil {
			return nil, err
		}
	}
	for i, s := range states {
		acc, err := agg.DecodeState(a.Aggs[i].Spec(), s)
		if err != nil {
			return nil, err
		}
		// Merging a state of more groups than the keys maps would read past the
		// mapping.
		if n := stateGroups(s); n > uint64(p.Groups) {
			return nil, errs.New(errs.CorruptSource, "a partial's state of %s holds %d groups, not %d", a.Aggs[i].Spec(), n, p.Groups)
		}
		p.States = append(p.States, acc)
	}
	return p, nil
}

// stateGroups is the number of groups of a partial state in the byte form
// agg.DecodeState has read: its four bytes, its kind, then the groups.
func stateGroups(b []byte) uint64 {
	r := wire.NewReader(b[min(len(b), 4):], "a partial state")
	r.Bytes()
	return r.Uvarint()
}

func readKeys(a *plan.Aggregate, b []byte, groups int) ([]arrow.Array, error) {
	rd, err := newIPCReader(b)
	if err != nil {
		return nil, errs.New(errs.CorruptSource, "a partial's keys cannot be read: %w", err)
	}
	defer rd.Release()
	if !rd.Next() {
		return nil, errs.New(errs.CorruptSource, "a partial's keys cannot be read: %v", rd.Err())
	}
	rec := rd.Record()
	if int(rec.NumCols()) != len(a.Groups) || rec.NumRows() != int64(groups) {
		return nil, errs.New(errs.CorruptSource, "a partial's keys are %d columns of %d rows, not %d of %d", rec.NumCols(), rec.NumRows(), len(a.Groups), groups)
	}
	out := make([]arrow.Array, len(a.Groups))
	for i, c := range rec.Columns() {
		if !arrow.TypeEqual(c.DataType(), a.Groups[i].Type()) {
			return nil, errs.New(errs.CorruptSource, "a partial's key %d is %s, not %s", i, c.DataType(), a.Groups[i].Type())
		}
		if err := touchValues(c); err != nil {
			return nil, errs.New(errs.CorruptSource, "a partial's key %d cannot be read: %v", i, err)
		}
		c.Retain()
		out[i] = c
	}
	return out, nil
}

// touchValues reads every value of arr, and the offsets of NULL strings too (the
// key table reads them). Arrow's reader checks neither an array's offsets nor its
// validity against its buffers: a damaged one panics where a value is read, here
// rather than where the keys are merged.
func touchValues(arr arrow.Array) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	for i := range arr.Len() {
		switch a := arr.(type) {
		case *array.String:
			a.Value(i)
		case *array.LargeString:
			a.Value(i)
		case *array.Binary:
			a.Value(i)
		case *array.LargeBinary:
			a.Value(i)
		}
		types.ValueAt(arr, i)
	}
	return nil
}

// A Merger merges the partials of one aggregate into one.
type Merger struct {
	a      *plan.Aggregate
	keys   *kernels.KeyTable
	states []agg.Accumulator
	groups int
}

// NewMerger returns a merger of a's partials holding none yet (its result is then
// the aggregate over no row).
func NewMerger(a *plan.Aggregate) (*Merger, error) {
	m := &Merger{a: a}
	if len(a.Groups) > 0 {
		kt := make([]arrow.DataType, len(a.Groups))
		for i, g := range a.Groups {
			kt[i] = g.Type()
		}
		m.keys = kernels.NewKeyTable(kt)
	} else {
		m.groups = 1
	}
	for i := range a.Aggs {
		acc, err := agg.New(a.Aggs[i].Spec())
		if err != nil {
			return nil, err
		}
		acc.Resize(m.groups)
		m.states = append(m.states, acc)
	}
	return m, nil
}

// Add merges p into the merger.
func (m *Merger) Add(p *Partial) error {
	if len(p.States) != len(m.states) {
		return errs.New(errs.CorruptSource, "a partial of %d aggregates for an aggregate of %d", len(p.States), len(m.states))
	}
	mapping := []uint32{0}
	if m.keys != nil {
		if len(p.Keys) != len(m.a.Groups) {
			return errs.New(errs.CorruptSource, "a partial of %d keys for an aggregate of %d", len(p.Keys), len(m.a.Groups))
		}
		mapping = make([]uint32, p.Groups)
		if p.Groups > 0 {
			m.keys.Insert(p.Keys, nil, mapping)
		}
		m.groups = m.keys.Len()
	}
	for i, acc := range m.states {
		acc.Resize(m.groups)
		if err := acc.Merge(p.States[i], mapping); err != nil {
			return err
		}
	}
	return nil
}

// Result is the merged partial.
func (m *Merger) Result() *Partial {
	p := &Partial{States: m.states, Groups: m.groups}
	if m.keys != nil {
		p.Keys = m.keys.Keys()
	}
	return p
}

// MergeForms merges partials of aggregate a (a fragment's, UnmarshalFragment), each
// in its byte form, into the byte form of one: a runner's combining step.
func MergeForms(a *plan.Aggregate, forms ...[]byte) ([]byte, error) {
	m, err := NewMerger(a)
	if err != nil {
		return nil, err
	}
	for _, b := range forms {
		p, err := UnmarshalPartial(a, b)
		if err != nil {
			return nil, err
		}
		if err := m.Add(p); err != nil {
			return nil, err
		}
	}
	return m.Result().MarshalBinary()
}

// RunZone runs the aggregate of fragment (MarshalFragment's form) over the zone z
// describes and returns its partial. The zone's file is held to its version as
// ReadZone holds it. memoryLimit bounds the bytes the aggregate holds (0: no bound).
func RunZone(ctx context.Context, fragment []byte, z *source.ZoneRef, memoryLimit int64) (_ *Partial, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errs.FromPanic(r, debug.Stack())
		}
	}()
	a, scan, err := UnmarshalFragment(fragment)
	if err != nil {
		return nil, err
	}
	var p *Partial
	err = readChecked(ctx, z, func(l *source.Listing, store storage.Store, fi int) error {
		if len(scan.Cols) != len(l.Schema.Fields()) {
			return errs.New(errs.SourceChanged, "the source of %q has %d columns, not the %d the run was planned with", z.Table.Location, len(l.Schema.Fields()), len(scan.Cols))
		}
		scan.Ref = &plan.TableRef{Location: z.Table.Location, Listing: l, Rows: -1, Version: z.Table.Version, Store: store}
		only := plan.ZoneID{File: fi, RowGroup: z.RowGroup}
		scan.Zones = &plan.ZoneSkip{Only: map[plan.ZoneID]bool{only: true}}
		// A zone is read with every core of the worker: runners hand a worker's
		// elements to it one after another (prism in process does).
		env := &exec.Env{Threads: runtime.GOMAXPROCS(0), Store: store}
		if memoryLimit > 0 {
			env.Budget = exec.NewBudget(memoryLimit)
		}
		keys, states, err := exec.Partial(ctx, env, a)
		if err != nil {
			return err
		}
		p = NewPartial(a, keys, states)
		return nil
	})
	return p, err
}
