package iceberg

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	ice "github.com/apache/iceberg-go"

	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

func TestPartitionRange(t *testing.T) {
	us := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	ns := &arrow.TimestampType{Unit: arrow.Nanosecond}
	date := arrow.FixedWidthTypes.Date32
	day := func(tm time.Time) int64 { return tm.Unix() / 86400 }
	at := func(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, time.UTC) }
	i := func(n int64) types.Value { return types.Value{Type: arrow.PrimitiveTypes.Int32, I: n} }
	tr := func(name string) transform {
		t, err := parseTransform(name)
		if err != nil {
			panic(err)
		}
		return t
	}
	cases := []struct {
		name     string
		tr       transform
		dt       arrow.DataType
		lo, hi   types.Value
		min, max int64
		ok       bool
	}{
		{"identity long", tr("identity"), arrow.PrimitiveTypes.Int64, types.IntValue(-3), types.IntValue(9), -3, 9, true},
		{"truncate int", tr("truncate[10]"), arrow.PrimitiveTypes.Int32, types.Value{Type: arrow.PrimitiveTypes.Int32, I: -20}, types.Value{Type: arrow.PrimitiveTypes.Int32, I: 30}, -20, 39, true},
		{"day of date", tr("day"), date, i(day(at(2024, 2, 28, 0))), i(day(at(2024, 3, 1, 0))), day(at(2024, 2, 28, 0)), day(at(2024, 3, 1, 0)), true},
		{"month of date", tr("month"), date, i((2024-1970)*12 + 1), i((2024-1970)*12 + 1), day(at(2024, 2, 1, 0)), day(at(2024, 2, 29, 0)), true},
		{"month before 1970", tr("month"), date, i(-1), i(-1), day(at(1969, 12, 1, 0)), day(at(1969, 12, 31, 0)), true},
		{"year of date", tr("year"), date, i(2000 - 1970), i(2001 - 1970), day(at(2000, 1, 1, 0)), day(at(2001, 12, 31, 0)), true},
		{"year 1600", tr("year"), date, i(1600 - 1970), i(1600 - 1970), day(at(1600, 1, 1, 0)), day(at(1600, 12, 31, 0)), true},
		{"day of timestamp", tr("day"), us, i(day(at(2023, 7, 4, 0))), i(day(at(2023, 7, 4, 0))), at(2023, 7, 4, 0).UnixMicro(), at(2023, 7, 5, 0).UnixMicro() - 1, true},
		{"hour of timestamp_ns", tr("hour"), ns, i(at(2023, 7, 4, 5).Unix() / 3600), i(at(2023, 7, 4, 5).Unix() / 3600), at(2023, 7, 4, 5).UnixNano(), at(2023, 7, 4, 6).UnixNano() - 1, true},
		{"month of timestamp", tr("month"), us, i((2023-1970)*12 + 11), i((2023-1970)*12 + 11), at(2023, 12, 1, 0).UnixMicro(), at(2024, 1, 1, 0).UnixMicro() - 1, true},
		{"hour of date", tr("hour"), date, i(1), i(2), 0, 0, false},
		{"bucket", tr("bucket[4]"), arrow.PrimitiveTypes.Int64, i(0), i(3), 0, 0, false},
		{"identity double", tr("identity"), arrow.PrimitiveTypes.Float64, types.FloatValue(1), types.FloatValue(2), 0, 0, false},
		{"truncate string", tr("truncate[2]"), arrow.BinaryTypes.String, types.StringValue("ab"), types.StringValue("cd"), 0, 0, false},
		{"NULL", tr("day"), date, types.NullOf(arrow.PrimitiveTypes.Int32), i(3), 0, 0, false},
	}
	for _, c := range cases {
		min, max, ok := partitionRange(c.tr, c.dt, c.lo, c.hi)
		if ok != c.ok {
			t.Errorf("%s: ok = %v", c.name, ok)
			continue
		}
		if ok && (min.I != c.min || max.I != c.max || !arrow.TypeEqual(min.Type, c.dt)) {
			t.Errorf("%s: [%d, %d] %s, want [%d, %d]", c.name, min.I, max.I, types.Name(min.Type), c.min, c.max)
		}
	}
}

// TestPartitionSummariesSkipFiles reads a table partitioned by day(ts) whose entries
// state no column bounds, in three manifests of two days each: a filter on ts skips
// the files of the days it rules out, by the manifests' summaries and the files'
// partition tuples, and reads the rest exactly.
func TestPartitionSummariesSkipFiles(t *testing.T) {
	dir := t.TempDir()
	schema := ice.NewSchema(0,
		ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64},
		ice.NestedField{ID: 2, Name: "ts", Type: ice.PrimitiveTypes.TimestampTz},
	)
	spec := ice.NewPartitionSpecID(0, ice.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "ts_day", Transform: ice.DayTransform{}})
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	tsType := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	snap, seq := int64(1), int64(1)
	var manifests []ice.ManifestFile
	for m := range 3 {
		var entries []ice.ManifestEntry
		for d := 2 * m; d < 2*m+2; d++ {
			name := fmt.Sprintf("data/day%d.parquet", d)
			size := writeParquet(t, filepath.Join(dir, name), []arrow.Field{idField("id", types.Int64, 1), idField("ts", tsType, 2)}, func(b *array.RecordBuilder) {
				for h := range 3 {
					b.Field(0).(*array.Int64Builder).Append(int64(d*10 + h))
					b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(base.AddDate(0, 0, d).Add(time.Duration(h*8) * time.Hour).UnixMicro()))
				}
			})
			dayNum := int32(base.AddDate(0, 0, d).Unix() / 86400)
			df, err := ice.NewDataFileBuilder(spec, ice.EntryContentData, name, ice.ParquetFile, map[int]any{1000: dayNum}, nil, nil, 3, size)
			if err != nil {
				t.Fatal(err)
			}
			s := snap
			entries = append(entries, ice.NewManifestEntry(ice.EntryStatusADDED, &s, nil, nil, df.Build()))
		}
		name := fmt.Sprintf("metadata/m%d.avro", m)
		manifests = append(manifests, writeManifest(t, filepath.Join(dir, name), name, spec, schema, snap, ice.ManifestContentData, entries...))
	}
	writeManifestList(t, filepath.Join(dir, "metadata/snap-1.avro"), snap, seq, manifests...)
	meta := `{"format-version": 2, "table-uuid": "5e8a3c57-51a4-4a0c-9d0b-0a3f3a6f0d11", "location": "` + dir + `",
  "last-sequence-number": 1, "last-updated-ms": 1700000000000, "last-column-id": 2, "current-schema-id": 0,
  "schemas": [{"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": false, "type": "long"},
    {"id": 2, "name": "ts", "required": false, "type": "timestamptz"}]}],
  "default-spec-id": 0, "last-partition-id": 1000,
  "partition-specs": [{"spec-id": 0, "fields": [{"name": "ts_day", "transform": "day", "source-id": 2, "field-id": 1000}]}],
  "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}],
  "properties": {}, "current-snapshot-id": 1,
  "snapshots": [{"snapshot-id": 1, "sequence-number": 1, "timestamp-ms": 1700000000000, "manifest-list": "metadata/snap-1.avro", "summary": {"operation": "append"}}]}`
	if err := os.WriteFile(filepath.Join(dir, "metadata/v1.metadata.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l, err := Open(ctx, storage.Local{}, dir, source.AsOf{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Files) != 6 {
		t.Fatalf("%d files, want 6", len(l.Files))
	}
	for _, f := range l.Files {
		g := f.Group
		if g == nil || !g.Columns[1].HasMinMax || !g.Columns[1].HasNullCount || g.Columns[1].NullCount != 0 {
			t.Fatalf("%s: the manifest's summaries give no bounds of ts: %+v", f.Info.Path, g)
		}
		if m := f.Meta; m == nil || !m.Columns[1].HasMinMax {
			t.Fatalf("%s: the partition tuple gives no bounds of ts", f.Info.Path)
		}
	}
	from := types.Value{Type: tsType, I: base.AddDate(0, 0, 3).Add(9 * time.Hour).UnixMicro()}
	for _, c := range []struct {
		op   string
		days []int // the days whose files are read
	}{
		{">=", []int{3, 4, 5}},
		{"<", []int{0, 1, 2, 3}},
		{"=", []int{3}},
		{"<", nil},
	} {
		v := from
		if c.days == nil {
			v = types.Value{Type: tsType, I: base.UnixMicro()}
		}
		var n source.Counters
		spec := source.ScanSpec{Columns: []string{"id"}, Filters: []source.Predicate{{Column: "ts", Op: c.op, Values: []types.Value{v}}}}
		p, err := l.Plan(ctx, storage.Local{}, spec, &n)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := n.FilesSkipped.Load(), int64(6-len(c.days)); got != want {
			t.Errorf("ts %s %d: %d files skipped, want %d", c.op, v.I, got, want)
		}
		var got, want []string
		for _, m := range p.Morsels {
			err := p.Read(ctx, m, func(b *vector.Batch) error {
				for i := range b.Rows {
					got = append(got, types.ValueAt(b.Cols[0], i).String())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, d := range c.days {
			for h := range 3 {
				want = append(want, fmt.Sprint(d*10+h))
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("ts %s %d: read ids %v, want %v", c.op, v.I, got, want)
		}
	}
	// The manifests' summaries alone (days 0-1, 2-3, 4-5) skip whole manifests.
	groups := *l
	groups.Files = slices.Clone(l.Files)
	for i := range groups.Files {
		groups.Files[i].Meta = nil
	}
	for _, c := range []struct {
		op      string
		at      int64
		skipped int64
	}{{">=", from.I, 2}, {"<", from.I, 2}, {"=", from.I, 4}, {"<", base.UnixMicro(), 6}, {">", base.AddDate(0, 0, 6).UnixMicro(), 6}} {
		var n source.Counters
		spec := source.ScanSpec{Columns: []string{"id"}, Filters: []source.Predicate{{Column: "ts", Op: c.op, Values: []types.Value{{Type: tsType, I: c.at}}}}}
		if _, err := groups.Plan(ctx, storage.Local{}, spec, &n); err != nil {
			t.Fatal(err)
		}
		if got := n.FilesSkipped.Load(); got != c.skipped {
			t.Errorf("summaries alone, ts %s %d: %d files skipped, want %d", c.op, c.at, got, c.skipped)
		}
	}
}
