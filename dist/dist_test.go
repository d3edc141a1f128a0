package dist_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loredb/lore/dist"
	"github.com/loredb/lore/dist/disttest"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/source/delta"
	"github.com/loredb/lore/source/iceberg"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/stats/profile"
	"github.com/loredb/lore/storage"
)

// table is one table the tests read: how to open it, and how workers name it.
type table struct {
	name, format, location string
	open                   func(ctx context.Context) (*source.Listing, error)
}

func lakeTables(t *testing.T) []table {
	dir := shareddata.Dir(t)
	var out []table
	var deltas []struct {
		Table string `json:"table"`
	}
	readFacts(t, filepath.Join(dir, "delta", "facts.json"), &deltas)
	for _, f := range deltas {
		loc := filepath.Join(dir, "delta", f.Table)
		out = append(out, table{"delta " + f.Table, "delta", loc, func(ctx context.Context) (*source.Listing, error) {
			return delta.Open(ctx, storage.Local{}, loc, source.AsOf{})
		}})
	}
	var icebergs []struct {
		Table        string `json:"table"`
		MetadataFile string `json:"metadata_file"`
	}
	readFacts(t, filepath.Join(dir, "iceberg", "facts.json"), &icebergs)
	for _, f := range icebergs {
		loc := filepath.Join(dir, "iceberg", "duckdb-iceberg", f.Table, f.MetadataFile)
		out = append(out, table{"iceberg " + f.Table, "iceberg", loc, func(ctx context.Context) (*source.Listing, error) {
			return iceberg.Open(ctx, storage.Local{}, loc, source.AsOf{})
		}})
	}
	return out
}

func readFacts(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// distributed does what a run does with the zones of rec: each read on its own from
// its descriptor's bytes, the results written as lines and read back, the column
// profiles merged in zone order.
func distributed(ctx context.Context, tb table, l *source.Listing, rec *stats.Record, v source.Version) error {
	refs, err := dist.ZoneRefs(l, rec, dist.TableRefOf(tb.format, tb.location, l, v))
	if err != nil {
		return err
	}
	job, err := dist.MarshalJob(nil, refs)
	if err != nil {
		return err
	}
	_, descs, err := dist.UnmarshalJob(job)
	if err != nil {
		return err
	}
	var lines []string
	columns := make([]stats.ColumnProfile, len(rec.Columns))
	for _, d := range descs {
		z, err := source.UnmarshalZoneRef(d)
		if err != nil {
			return err
		}
		res, err := dist.ReadZone(ctx, z, profile.Options{})
		if err != nil {
			return err
		}
		line, err := dist.ZoneLine(z.Zone, res)
		if err != nil {
			return err
		}
		lines = append(lines, line)
		for c := range columns {
			columns[c].Merge(&res.Columns[c])
		}
	}
	for c := range columns {
		line, err := dist.ColumnLine(c, &columns[c])
		if err != nil {
			return err
		}
		lines = append(lines, line)
	}
	zones, cols, err := dist.ReadResults(ctx, strings.NewReader(strings.Join(lines, "\n")), len(rec.Zones), len(rec.Columns))
	if err != nil {
		return err
	}
	return profile.Apply(l, rec, zones, cols)
}

// TestZonesReadByWorkers: for a Hive table and every Delta and Iceberg table of the
// shared data, the record built from zones read apart (descriptors, workers'
// resolution, results' lines) is the local full read's, byte for byte; a table the
// local read refuses is refused the same way.
func TestZonesReadByWorkers(t *testing.T) {
	ctx := context.Background()
	hive := disttest.WriteHive(t)
	tables := append([]table{{"hive", "parquet", hive, func(ctx context.Context) (*source.Listing, error) {
		return source.Resolve(ctx, storage.Local{}, hive)
	}}}, lakeTables(t)...)
	compared := 0
	for _, tb := range tables {
		t.Run(tb.name, func(t *testing.T) {
			l, err := tb.open(ctx)
			if err != nil {
				t.Skipf("not readable here: %v", err)
			}
			want, _, err := disttest.FootersRecord(ctx, l)
			if err != nil {
				t.Skipf("no footers' record: %v", err)
			}
			localErr := profile.Full(ctx, storage.Local{}, l, want, profile.Options{Threads: 2})
			rec, v, err := disttest.FootersRecord(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			distErr := distributed(ctx, tb, l, rec, v)
			if localErr != nil || distErr != nil {
				if errs.CodeOf(localErr) != errs.CodeOf(distErr) {
					t.Fatalf("local: %v; distributed: %v", localErr, distErr)
				}
				return
			}
			want.ComputedAtMS, rec.ComputedAtMS = 0, 0
			a, _ := want.Marshal()
			b, _ := rec.Marshal()
			if !bytes.Equal(a, b) {
				t.Errorf("the record of zones read by workers differs from the local full read's")
			}
			compared++
		})
	}
	if compared < 20 {
		t.Errorf("only %d tables compared", compared)
	}
}

// TestWorkerRefusesAChangedFile: a file rewritten after the run was planned fails
// the zone with SOURCE_CHANGED, whether the worker resolves the table after the
// change or had resolved it before.
func TestWorkerRefusesAChangedFile(t *testing.T) {
	ctx := context.Background()
	for _, resolvedBefore := range []bool{false, true} {
		dir := disttest.WriteHive(t)
		tb := table{"hive", "parquet", dir, nil}
		l, err := source.Resolve(ctx, storage.Local{}, dir)
		if err != nil {
			t.Fatal(err)
		}
		rec, v, err := disttest.FootersRecord(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		refs, err := dist.ZoneRefs(l, rec, dist.TableRefOf(tb.format, tb.location, l, v))
		if err != nil {
			t.Fatal(err)
		}
		if resolvedBefore {
			if _, err := dist.ReadZone(ctx, &refs[0], profile.Options{}); err != nil {
				t.Fatal(err)
			}
		}
		last := &refs[len(refs)-1]
		b, err := os.ReadFile(last.Path)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
		if err := os.WriteFile(last.Path+".tmp", b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(last.Path+".tmp", last.Path); err != nil {
			t.Fatal(err)
		}
		_, err = dist.ReadZone(ctx, last, profile.Options{})
		if errs.CodeOf(err) != errs.SourceChanged {
			t.Errorf("resolved before the change %v: %v, want SOURCE_CHANGED", resolvedBefore, err)
		}
	}
}

// TestBadDescriptors: a zone descriptor or a job cut short, padded or of another
// version is CORRUPT_SOURCE, never a panic.
func TestBadDescriptors(t *testing.T) {
	ctx := context.Background()
	dir, l, rec, v := disttest.Hive(t)
	refs, err := dist.ZoneRefs(l, rec, dist.TableRefOf("parquet", dir, l, v))
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	refs[0].Table.S3PathStyle, refs[0].Columns = &yes, []string{"id", "s"}
	zb, err := refs[0].MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := source.UnmarshalZoneRef(zb)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := back.MarshalBinary(); !bytes.Equal(again, zb) || back.Marker != refs[0].Marker || *back.Table.S3PathStyle != true {
		t.Fatal("a zone descriptor changes in a round trip")
	}
	jb, err := dist.MarshalJob(nil, refs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		b    []byte
		read func([]byte) error
	}{
		{"descriptor", zb, func(b []byte) error { _, err := source.UnmarshalZoneRef(b); return err }},
		{"job", jb, func(b []byte) error { _, _, err := dist.UnmarshalJob(b); return err }},
	} {
		bad := [][]byte{nil, append(append([]byte{}, f.b...), 1)}
		for n := 0; n < len(f.b); n += max(1, len(f.b)/300) {
			bad = append(bad, f.b[:n])
		}
		other := append([]byte{}, f.b...)
		other[3]++
		bad = append(bad, other)
		for i, b := range bad {
			if err := f.read(b); errs.CodeOf(err) != errs.CorruptSource {
				t.Errorf("%s: bad bytes %d (%d of them): %v, want CORRUPT_SOURCE", f.name, i, len(b), err)
			}
		}
	}
	for _, text := range []string{"z\t0", "q\t0\tAA==", "z\t99\tAA==", "c\t0\t!!", "z\t-1\tAA==", "z\t0\tTFpSAQ=="} {
		if _, _, err := dist.ReadResults(ctx, strings.NewReader(text), len(rec.Zones), len(rec.Columns)); errs.CodeOf(err) != errs.CorruptSource {
			t.Errorf("results %q: %v, want CORRUPT_SOURCE", text, err)
		}
	}
}
