package dist_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/dist"
	"github.com/loredb/lore/dist/disttest"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// readKeys reads the columns names of the Parquet file path, in the file's order,
// as one key a row.
func readKeys(t *testing.T, path string, names ...string) [][]types.Value {
	t.Helper()
	ctx := context.Background()
	l, err := source.Resolve(ctx, storage.Local{}, path)
	if err != nil {
		t.Fatal(err)
	}
	fields := l.Schema.Fields()
	scan := &plan.Scan{Ref: &plan.TableRef{Location: path, Listing: l, Rows: -1}, Cols: make([]plan.Column, len(fields)), Required: make([]bool, len(fields))}
	for i, f := range fields {
		scan.Cols[i] = plan.Column{Name: f.Name, Type: f.Type}
	}
	var idx []int
	for _, n := range names {
		i := source.FieldIndex(l.Schema, n)
		scan.Required[i] = true
		idx = append(idx, i)
	}
	var out [][]types.Value
	err = exec.Stream(ctx, &exec.Env{Threads: 1, Store: storage.Local{}}, scan, func(r arrow.Record) error {
		for row := range int(r.NumRows()) {
			key := make([]types.Value, len(idx))
			for k, i := range idx {
				key[k] = types.ValueAt(r.Column(i), row)
			}
			out = append(out, key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// hiveSort is a sort of the Hive test table's columns by (s, x).
func hiveSort(stage string, ranges int) *dist.SortSpec {
	return &dist.SortSpec{Columns: []string{"id", "x", "s"}, Keys: []int{2, 1}, Ranges: ranges, Samples: 8, Stage: stage,
		Layout: parquet.LayoutOptions{ClusteredBy: []string{"s", "x"}, RowGroupRows: 700, Bloom: []string{"id"}, CreatedBy: "lore test",
			KeyValue: map[string]string{"b": "2", "a": "1"}}}
}

// TestSortOfZones: the steps of a distributed OPTIMIZE run one after another in
// this process — every zone sampled, the cuts chosen, every zone cut into pieces,
// every range written — leave the table's rows, every one once, in files that read
// in range order hold them sorted by the clustering key; each range's files are
// named as the results say they must be.
func TestSortOfZones(t *testing.T) {
	ctx := context.Background()
	dir, l, rec, v := disttest.Hive(t)
	refs, err := dist.ZoneRefs(l, rec, dist.TableRefOf("parquet", dir, l, v))
	if err != nil {
		t.Fatal(err)
	}
	for _, ranges := range []int{1, 5} {
		t.Run(fmt.Sprint(ranges, " ranges"), func(t *testing.T) {
			spec := hiveSort(t.TempDir(), ranges)
			var samples [][]byte
			for i := range refs {
				s, err := dist.SampleZone(ctx, spec, &refs[i], 0)
				if err != nil {
					t.Fatal(err)
				}
				samples = append(samples, s)
			}
			cuts, err := dist.Splitters(spec, samples)
			if err != nil {
				t.Fatal(err)
			}
			pieces := make([][][]byte, ranges)
			for i := range refs {
				ps, err := dist.RouteZone(ctx, spec, &refs[i], cuts, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range ps {
					pieces[p.Range] = append(pieces[p.Range], p.Rows)
				}
			}
			var files []string
			var rows int64
			used := 0
			for r, ps := range pieces {
				if len(ps) > 0 {
					used++
				}
				written, err := dist.WriteRange(ctx, spec, r, func() ([]byte, bool) {
					if len(ps) == 0 {
						return nil, false
					}
					b := ps[0]
					ps = ps[1:]
					return b, true
				}, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				for k, f := range written {
					if filepath.Base(f.Path) != dist.RangeFileName(r, k+1) {
						t.Errorf("range %d's file %d is %s", r, k+1, f.Path)
					}
					files = append(files, f.Path)
					rows += f.Rows
				}
			}
			if rows != 16200 {
				t.Errorf("%d rows written, want 16200", rows)
			}
			if ranges > 1 && used < ranges-1 {
				t.Errorf("%d of %d ranges hold rows", used, ranges)
			}
			var last []types.Value
			ids := map[string]bool{}
			for _, f := range files {
				for _, key := range readKeys(t, f, "s", "x", "id") {
					if last != nil && parquet.CompareKeys(last[:2], key[:2]) > 0 {
						t.Fatalf("%s: %v after %v", filepath.Base(f), key, last)
					}
					last = key
					ids[key[2].String()] = true
				}
			}
			// Every id but NULL's once (NULL ids are many).
			if len(ids) < 16200-16200/17-1 {
				t.Errorf("%d distinct ids written", len(ids))
			}
		})
	}
}

// TestSortSpecForm: a sort reads back as it was written; a damaged one, a sort no
// worker could run, and a job whose sort is damaged are CORRUPT_SOURCE.
func TestSortSpecForm(t *testing.T) {
	spec := hiveSort("/stage", 3)
	b, err := spec.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got, err := dist.UnmarshalSortSpec(b)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%+v", *got) != fmt.Sprintf("%+v", *spec) {
		t.Errorf("read back %+v\nwant %+v", *got, *spec)
	}
	job, err := dist.MarshalJob(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if work, _, err := dist.UnmarshalJob(job); err != nil || !dist.IsSort(work) {
		t.Errorf("a job of a sort: %v", err)
	}
	for _, bad := range []*dist.SortSpec{
		{Columns: []string{"a"}, Keys: []int{1}, Ranges: 1, Samples: 1, Stage: "/s", Layout: parquet.LayoutOptions{ClusteredBy: []string{"a"}}},
		{Columns: []string{"a"}, Keys: []int{0}, Ranges: 0, Samples: 1, Stage: "/s", Layout: parquet.LayoutOptions{ClusteredBy: []string{"a"}}},
		{Columns: []string{"a"}, Keys: []int{0}, Ranges: 1, Samples: 1, Layout: parquet.LayoutOptions{ClusteredBy: []string{"a"}}},
		{Columns: []string{"a", "b"}, Keys: []int{0}, Ranges: 1, Samples: 1, Stage: "/s", Layout: parquet.LayoutOptions{ClusteredBy: []string{"b"}}},
	} {
		if _, err := bad.MarshalBinary(); err == nil {
			t.Errorf("%+v was written", *bad)
		}
	}
	for i := 0; i < len(b); i++ {
		for _, mask := range []byte{0x01, 0xff} {
			flipped := append([]byte{}, b...)
			flipped[i] ^= mask
			if _, err := dist.UnmarshalSortSpec(flipped); err != nil && errs.CodeOf(err) != errs.CorruptSource {
				t.Errorf("byte %d ^ %#x: %v, want CORRUPT_SOURCE or a sort", i, mask, err)
			}
		}
		if _, err := dist.UnmarshalSortSpec(b[:i]); errs.CodeOf(err) != errs.CorruptSource {
			t.Errorf("cut to %d bytes: %v, want CORRUPT_SOURCE", i, err)
		}
		job, _ := dist.MarshalJob(b[:i], nil)
		if _, _, err := dist.UnmarshalJob(job); i > 0 && errs.CodeOf(err) != errs.CorruptSource {
			t.Errorf("a job of a sort cut to %d bytes: %v, want CORRUPT_SOURCE", i, err)
		}
	}
}

// TestSortResults: the lines of a distributed OPTIMIZE read back as every range's
// files and every zone's time; a zone without its time, a range twice or out of
// bounds, a file not named as its range's, are CORRUPT_SOURCE.
func TestSortResults(t *testing.T) {
	ctx := context.Background()
	files := []parquet.WrittenFile{{Path: "/x/" + dist.RangeFileName(1, 1), Rows: 10, RowGroups: 1, Bytes: 100},
		{Path: "/x/" + dist.RangeFileName(1, 2), Rows: 5, RowGroups: 1, Bytes: 60}}
	good := []string{dist.TimeLine(1, 5), dist.RangeLine(1, files), dist.TimeLine(0, 7)}
	got, took, err := dist.ReadSortResults(ctx, strings.NewReader(strings.Join(good, "\n")), 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || len(got[0]) != 0 || len(got[1]) != 2 || got[1][1].Path != dist.RangeFileName(1, 2) || got[1][1].Rows != 5 || got[1][0].Bytes != 100 || len(took) != 2 {
		t.Errorf("read back %+v, %v", got, took)
	}
	misnamed := []parquet.WrittenFile{{Path: "/x/" + dist.RangeFileName(2, 1)}}
	escaping := []parquet.WrittenFile{{Path: "../" + dist.RangeFileName(1, 1)}}
	for name, lines := range map[string][]string{
		"a zone without its time": {dist.TimeLine(0, 1), dist.RangeLine(1, files)},
		"a range twice":           {dist.TimeLine(0, 1), dist.TimeLine(1, 1), dist.RangeLine(1, files), dist.RangeLine(1, files)},
		"a range out of bounds":   {dist.TimeLine(0, 1), dist.TimeLine(1, 1), dist.RangeLine(3, nil)},
		"a file of another range": {dist.TimeLine(0, 1), dist.TimeLine(1, 1), dist.RangeLine(1, misnamed)},
		"a line of a partial":     {dist.TimeLine(0, 1), dist.TimeLine(1, 1), dist.PartialLine([]byte("x"))},
	} {
		_, _, err := dist.ReadSortResults(ctx, strings.NewReader(strings.Join(lines, "\n")), 2, 3)
		if errs.CodeOf(err) != errs.CorruptSource {
			t.Errorf("%s: %v, want CORRUPT_SOURCE", name, err)
		}
	}
	// A name is only ever a base name: the path a worker wrote it under is dropped.
	got, _, err = dist.ReadSortResults(ctx, strings.NewReader(strings.Join([]string{dist.TimeLine(0, 1), dist.TimeLine(1, 1), dist.RangeLine(1, escaping)}, "\n")), 2, 3)
	if err != nil || got[1][0].Path != dist.RangeFileName(1, 1) {
		t.Errorf("a file written under another directory: %v, %+v", err, got)
	}
}
