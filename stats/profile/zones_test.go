package profile_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/loredb/lore/dist/disttest"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/stats/profile"
	"github.com/loredb/lore/storage"
)

// TestZonesReadApart: reading every zone on its own (ReadZone), handing each result
// and each column's merged profile through their byte forms, and applying them gives
// Full's record. Merged in zone order it is byte for byte Full's; merged in another
// order only the quantile sketches may differ, and they stay within their error.
func TestZonesReadApart(t *testing.T) {
	tb := writeTable(t)
	ctx := context.Background()
	l, want := metadataRecord(t, tb.dir)
	if err := profile.Full(ctx, storage.Local{}, l, want, profile.Options{Threads: 2}); err != nil {
		t.Fatal(err)
	}
	want.ComputedAtMS = 0
	wantDoc, err := want.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, shuffled := range []bool{false, true} {
		l, rec := metadataRecord(t, tb.dir)
		zones, err := profile.Zones(l, rec)
		if err != nil {
			t.Fatal(err)
		}
		results := make([]profile.ZoneResult, len(zones))
		for _, z := range zones {
			res, err := profile.ReadZone(ctx, storage.Local{}, l, z.File, z.RowGroup, profile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := res.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			back, err := profile.UnmarshalZoneResult(b)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := back.MarshalBinary(); !bytes.Equal(again, b) {
				t.Fatalf("zone %d: its result encodes differently after a round trip", z.Index)
			}
			results[z.Index] = *back
		}
		order := make([]int, len(zones))
		for i := range order {
			order[i] = i
		}
		if shuffled {
			rand.New(rand.NewPCG(7, 7)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		columns := make([]stats.ColumnProfile, len(rec.Columns))
		for _, z := range order {
			for c := range columns {
				p := results[z].Columns[c]
				b, err := p.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				back, err := stats.UnmarshalColumnProfile(b)
				if err != nil {
					t.Fatal(err)
				}
				columns[c].Merge(back)
			}
		}
		if err := profile.Apply(l, rec, results, columns); err != nil {
			t.Fatal(err)
		}
		rec.ComputedAtMS = 0
		doc, err := rec.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !shuffled {
			if !bytes.Equal(doc, wantDoc) {
				t.Error("zones read apart and merged in order give another record than Full")
			}
			continue
		}
		for c := range rec.Columns {
			got, exp := rec.Columns[c], want.Columns[c]
			if !bytes.Equal(got.Distinct, exp.Distinct) {
				t.Errorf("column %s: the distinct-count sketch depends on the merge order", got.Name)
			}
			if d := disttest.QuantilesClose(got.Quantiles, exp.Quantiles, 0.05); d != "" {
				t.Errorf("column %s: %s", got.Name, d)
			}
			got.Quantiles, exp.Quantiles = nil, nil
			rec.Columns[c], want.Columns[c] = got, exp
		}
		saved := want.Columns
		want.Columns = append([]stats.Column(nil), saved...)
		for c := range want.Columns {
			want.Columns[c].Quantiles = nil
		}
		a, _ := rec.Marshal()
		b, _ := want.Marshal()
		want.Columns = saved
		if !bytes.Equal(a, b) {
			t.Error("zones merged in another order give another record than Full, quantile sketches aside")
		}
	}
}

// TestZoneFormsRefuseBadBytes: a zone result or a column profile cut short, padded,
// of another version or not one at all is refused with CORRUPT_SOURCE, never a panic.
func TestZoneFormsRefuseBadBytes(t *testing.T) {
	tb := writeTable(t)
	l, rec := metadataRecord(t, tb.dir)
	zones, err := profile.Zones(l, rec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := profile.ReadZone(context.Background(), storage.Local{}, l, zones[0].File, zones[0].RowGroup, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	zb, err := res.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var pb []byte
	for c := range res.Columns {
		if res.Columns[c].HLL != nil && res.Columns[c].KLL != nil && res.Columns[c].Zone.Min != nil {
			if pb, err = res.Columns[c].MarshalBinary(); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if pb == nil {
		t.Fatal("no column with bounds and both sketches")
	}
	forms := []struct {
		name string
		b    []byte
		read func([]byte) error
	}{
		{"zone result", zb, func(b []byte) error { _, err := profile.UnmarshalZoneResult(b); return err }},
		{"column profile", pb, func(b []byte) error { _, err := stats.UnmarshalColumnProfile(b); return err }},
	}
	for _, f := range forms {
		if err := f.read(f.b); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		bad := [][]byte{nil, []byte("LXX\x01"), append(append([]byte{}, f.b...), 0)}
		for n := 0; n < len(f.b); n += max(1, len(f.b)/200) {
			bad = append(bad, f.b[:n])
		}
		other := append([]byte{}, f.b...)
		other[3] = 9
		bad = append(bad, other)
		for i, b := range bad {
			err := f.read(b)
			if err == nil {
				t.Errorf("%s: bad bytes %d (%d of them) were read", f.name, i, len(b))
			} else if errs.CodeOf(err) != errs.CorruptSource {
				t.Errorf("%s: bad bytes %d: %v, not CORRUPT_SOURCE", f.name, i, err)
			}
		}
	}
}
