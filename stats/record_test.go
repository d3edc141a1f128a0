package stats

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
)

// testRecord is a record with every kind of field set, its detail included.
func testRecord() *Record {
	n0, n3, d := int64(0), int64(3), int64(42)
	h := NewHLL()
	h.AddHash(12345)
	hb, _ := h.MarshalBinary()
	r := &Record{
		DocumentVersion: DocumentVersion, TableID: 7,
		SourceVersion: source.Version{IdentitySHA256: "ab12", Kind: source.KindListing, Files: 2},
		ComputedAtMS:  99, Depth: DepthFull, Format: "parquet", Location: "/lake/t",
		Rows: 10, Bytes: 200, Files: 2, RowGroups: 3, PartitionColumns: []string{"day"},
		Columns: []Column{
			{Name: "s", DataType: "VARCHAR", NullCount: &n0, Min: []byte{}, Max: []byte("z"), BoundsExact: true,
				Distinct: hb, DistinctExact: &d},
			{Name: "x", DataType: "DOUBLE", NullCount: &n3, HasNaN: true},
			{Name: "y", DataType: "BIGINT"},
		},
		PerFile: []File{
			{Path: "a", Rows: 5, Columns: make([]ZoneColumn, 3)},
			{Path: "b", Rows: 5, Columns: make([]ZoneColumn, 3)},
		},
		PerFileComplete: true,
		Zones:           []Zone{{File: 1, RowGroup: 0, Rows: 5, Columns: []ZoneColumn{{Sum: "12.5"}, {}, {}}}},
	}
	return r
}

func TestRecordDocumentRoundTrip(t *testing.T) {
	r := testRecord()
	doc, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Unmarshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip:\n%+v\n%+v", back, r)
	}
	// An empty string bound stays a bound; an absent one stays absent.
	if back.Columns[0].Min == nil || len(back.Columns[0].Min) != 0 || back.Columns[2].Min != nil {
		t.Fatalf("bounds: %q %q", back.Columns[0].Min, back.Columns[2].Min)
	}
	// An unknown null count is absent from the document, never 0.
	if bytes.Contains(doc, []byte(`"name":"y","data_type":"BIGINT","null_count"`)) {
		t.Fatalf("unknown null count written: %s", doc)
	}
}

func TestRecordRefusesOtherVersionsAndBadShapes(t *testing.T) {
	for _, doc := range []string{
		`{"document_version": 4}`,
		`{}`,
		`not json`,
		`{"document_version": 1, "files": 2, "columns": [{"name": "a"}], "per_file": [{"path": "x", "columns": [{}]}]}`,
		`{"document_version": 1, "columns": [{"name": "a"}], "zones": [{"columns": []}]}`,
		// Zones of whole files came with version 2; no zone has a lower row group.
		`{"document_version": 1, "columns": [{"name": "a"}], "zones": [{"row_group": -1, "columns": [{}]}]}`,
		`{"document_version": 2, "columns": [{"name": "a"}], "zones": [{"row_group": -2, "columns": [{}]}]}`,
	} {
		if _, err := Unmarshal([]byte(doc)); errs.CodeOf(err) != errs.Internal {
			t.Errorf("%s: %v", doc, err)
		}
	}
	// A version 1 document is read as version 2, and written back as the current one.
	r, err := Unmarshal([]byte(`{"document_version": 1, "columns": [{"name": "a"}], "zones": [{"row_group": 0, "columns": [{}]}]}`))
	if err != nil || r.DocumentVersion != DocumentVersion {
		t.Fatalf("a version 1 document: %+v, %v", r, err)
	}
	if _, err := r.Marshal(); err != nil {
		t.Fatal(err)
	}
	bad := &Record{DocumentVersion: 4}
	if _, err := bad.Marshal(); err == nil {
		t.Fatal("a record of an unknown version was written")
	}
}

func TestCurrentIsTheStalenessRule(t *testing.T) {
	v := source.Version{IdentitySHA256: "aa", Kind: source.KindListing, Files: 1}
	r := &Record{SourceVersion: v, Rows: 10}
	cases := []struct {
		pinned source.Version
		rows   int64
		want   bool
	}{
		{v, 10, true},
		{v, 11, false}, // rows moved under the same identity: never answer
		{v, -1, false}, // rows unknown
		{source.Version{IdentitySHA256: "bb", Kind: source.KindListing, Files: 1}, 10, false},
		{source.Version{IdentitySHA256: "aa", Kind: source.KindFile}, 10, false},
		{source.Version{}, 10, false},
	}
	for _, c := range cases {
		if got := Current(r, c.pinned, c.rows); got != c.want {
			t.Errorf("Current(%+v, %d) = %v", c.pinned, c.rows, got)
		}
	}
	if Current(nil, v, 10) {
		t.Fatal("no record is current")
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
}

func TestZoneMergeKeepsOnlyWhatEveryZoneKnows(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	m := NewZoneMerge()
	m.Add(ZoneColumn{NullCount: n(1), Min: []byte("b"), Max: []byte("d"), BoundsExact: true}, 10)
	m.Add(ZoneColumn{NullCount: n(5), Min: nil, Max: nil}, 5) // all NULL: no bounds needed
	m.Add(ZoneColumn{NullCount: n(0), Min: []byte("a"), Max: []byte("c"), BoundsExact: false}, 3)
	z := m.Result()
	if *z.NullCount != 6 || string(z.Min) != "a" || string(z.Max) != "d" || z.BoundsExact {
		t.Fatalf("merge: %+v", z)
	}
	m.Add(ZoneColumn{NullCount: nil, Min: nil}, 4) // rows of unknown range
	if z := m.Result(); z.NullCount != nil || z.Min != nil {
		t.Fatalf("merge with an unknown zone: %+v", z)
	}
}
