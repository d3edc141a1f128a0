package profile

import (
	"cmp"
	"context"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/wire"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/storage"
)

// The pieces of Full for a run that reads zones elsewhere: Zones lists them,
// ReadZone reads one (in any process that reaches the store), and Apply upgrades the
// record from every zone's result and every column's merged profile. Full is the
// same three steps in one process.

// Zone is one zone of a record: row group RowGroup of the listing's file File.
type Zone struct{ Index, File, RowGroup int }

// Zones lists the zones of rec, a record stats.FromFooters built of l, in order.
func Zones(l *source.Listing, rec *stats.Record) ([]Zone, error) {
	if err := rec.LoadDetail(); err != nil {
		return nil, err
	}
	if _, err := zoneIndex(l, rec); err != nil {
		return nil, err
	}
	out := make([]Zone, len(rec.Zones))
	for z, zone := range rec.Zones {
		out[z] = Zone{Index: z, File: zone.File, RowGroup: zone.RowGroup}
	}
	return out, nil
}

// ReadZone reads row group rg of file fi of l through store, as Full reads it. Its
// memory limit is opt's; its progress is not reported.
func ReadZone(ctx context.Context, store storage.Store, l *source.Listing, fi, rg int, opt Options) (*ZoneResult, error) {
	if fi < 0 || fi >= len(l.Files) {
		return nil, errs.New(errs.Internal, "BUG: file %d of a listing of %d", fi, len(l.Files))
	}
	sub := *l
	sub.Files, sub.Single = l.Files[fi:fi+1], false
	footers, err := sub.Footers(ctx, store)
	if err != nil {
		return nil, err
	}
	_, present := presentColumns(l, footers[0], fi)
	names := make([]string, len(present))
	for k, i := range present {
		names[k] = l.Schema.Field(i).Name
	}
	plan, err := sub.Plan(ctx, store, source.ScanSpec{Columns: names}, nil)
	if err != nil {
		return nil, err
	}
	t := task{zone: -1, path: l.Files[fi].Info.Path, plan: plan, cols: present}
	found := false
	for _, m := range plan.Morsels {
		if m.RowGroup == rg {
			t.morsel, found = m, true
			break
		}
	}
	if !found {
		return nil, errs.New(errs.SourceChanged, "%q has no row group %d", t.path, rg)
	}
	zr := zoneReader{location: l.Location, cols: planColumns(l), mem: &budget{limit: opt.MemoryLimit}}
	var hashes []uint64
	res, _, err := zr.readZone(ctx, &t, &hashes)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// Apply upgrades rec — a record stats.FromFooters built of l — to depth full, as
// Full does, from the result of reading each of its zones (by zone; their sketches
// are not used) and each column's profile merged over every zone (by table column).
// rec is changed only when Apply returns nil.
func Apply(l *source.Listing, rec *stats.Record, zones []ZoneResult, columns []stats.ColumnProfile) error {
	if err := rec.LoadDetail(); err != nil {
		return err
	}
	firstZone, err := zoneIndex(l, rec)
	if err != nil {
		return err
	}
	cols := planColumns(l)
	if len(rec.Columns) != len(cols) || len(columns) != len(cols) || len(zones) != len(rec.Zones) {
		return errs.New(errs.Internal, "BUG: results of %d zones and %d columns for a record of %q with %d and %d",
			len(zones), len(columns), l.Location, len(rec.Zones), len(rec.Columns))
	}
	zoneCols := make([][]stats.ZoneColumn, len(zones))
	zoneRows := make([]int64, len(zones))
	for z := range zones {
		if len(zones[z].Columns) != len(cols) || zones[z].Rows > rec.Zones[z].Rows ||
			(zones[z].Rows < rec.Zones[z].Rows && len(l.Files[rec.Zones[z].File].Equality) == 0) {
			return errs.New(errs.CorruptSource, "the result of zone %d of %q has %d rows and %d columns; the zone has %d and %d",
				z, l.Location, zones[z].Rows, len(zones[z].Columns), rec.Zones[z].Rows, len(cols))
		}
		zoneCols[z] = make([]stats.ZoneColumn, len(cols))
		for c := range cols {
			zoneCols[z][c] = zones[z].Columns[c].Zone
		}
		zoneRows[z] = zones[z].Rows
	}
	// A column of no values records the empty sketch, as Full does.
	hll := make([]*stats.HLL, len(cols))
	kll := make([]*stats.KLL, len(cols))
	for c := range cols {
		if cols[c].hll {
			hll[c] = cmp.Or(columns[c].HLL, stats.NewHLL())
		}
		if cols[c].kll {
			kll[c] = cmp.Or(columns[c].KLL, stats.NewKLL())
		}
	}
	return apply(l, rec, firstZone, zoneCols, zoneRows, hll, kll)
}

// zoneResultVersion is the version of a zone result's byte form:
//
//	"LZR" zoneResultVersion    four bytes
//	rows                       uvarint
//	columns                    uvarint count, then each column's profile
//	                           (stats.ColumnProfile's form), length-prefixed
const zoneResultVersion = 1

var zoneResultForm = wire.Form{Magic: [3]byte{'L', 'Z', 'R'}, Version: zoneResultVersion, What: "a zone result"}

// MarshalBinary returns the result's byte form.
func (r *ZoneResult) MarshalBinary() ([]byte, error) {
	w := zoneResultForm.Writer()
	w.Uvarint(uint64(r.Rows))
	w.Uvarint(uint64(len(r.Columns)))
	for i := range r.Columns {
		b, err := r.Columns[i].MarshalBinary()
		if err != nil {
			return nil, err
		}
		w.Bytes(b)
	}
	return w.B, nil
}

// UnmarshalZoneResult reads a zone result's byte form; bytes that are not one are
// refused with CORRUPT_SOURCE.
func UnmarshalZoneResult(b []byte) (*ZoneResult, error) {
	r, err := zoneResultForm.Reader(b)
	if err != nil {
		return nil, err
	}
	res := &ZoneResult{Rows: int64(r.Uvarint())}
	res.Columns = make([]stats.ColumnProfile, r.Count(1))
	for i := range res.Columns {
		cb := r.Bytes()
		if r.Err() != nil {
			break
		}
		p, err := stats.UnmarshalColumnProfile(cb)
		if err != nil {
			return nil, err
		}
		res.Columns[i] = *p
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	if res.Rows < 0 {
		return nil, errs.New(errs.CorruptSource, "cannot read a zone result: %d rows", res.Rows)
	}
	return res, nil
}
