package stats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/loredb/lore/errs"
)

// TestRecordPartsRoundTrip stores a record as head and detail, reads the head
// alone, and checks that the table-level facts are there before the detail is read,
// and that after LoadDetail the record is the one written.
func TestRecordPartsRoundTrip(t *testing.T) {
	r := testRecord()
	head, detail, err := r.MarshalParts()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(head, []byte(`"per_file":null`)) || !bytes.Contains(head, []byte(`"zones":null`)) {
		t.Fatalf("the head holds detail: %s", head)
	}
	if !bytes.Contains(detail, []byte(`"per_file"`)) || !bytes.Contains(detail, []byte(`"zones"`)) {
		t.Fatalf("the detail lacks its lists: %s", detail)
	}
	loads := 0
	back, err := UnmarshalHead(head, func() ([]byte, error) { loads++; return detail, nil })
	if err != nil {
		t.Fatal(err)
	}
	if back.PerFile != nil || back.Zones != nil || loads != 0 {
		t.Fatalf("the head decoded the detail: %d loads, %+v", loads, back)
	}
	// Everything a table-level answer uses is in the head.
	want := *r
	want.PerFile, want.Zones = nil, nil
	got := *back
	got.detail = nil
	if !reflect.DeepEqual(&got, &want) {
		t.Fatalf("head:\n%+v\nwant\n%+v", &got, &want)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := back.LoadDetail(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if loads != 1 {
		t.Fatalf("detail loaded %d times", loads)
	}
	back.detail = nil
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("after LoadDetail:\n%+v\nwant\n%+v", back, r)
	}
}

// TestRecordOldDocumentsStillRead reads a version 2 document (the detail inline, as
// catalogs written before version 3 hold it) through UnmarshalHead: it is decoded
// whole and never asks for a detail apart.
func TestRecordOldDocumentsStillRead(t *testing.T) {
	r := testRecord()
	r.DocumentVersion = 2
	doc, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalHead(doc, func() ([]byte, error) {
		t.Fatal("a version 2 document asked for a detail apart")
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r.DocumentVersion = DocumentVersion
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("version 2:\n%+v\nwant\n%+v", back, r)
	}
	// Reformatted, its version is not where Lore writes it: it is still found.
	var indented bytes.Buffer
	if err := json.Indent(&indented, doc, "", "  "); err != nil {
		t.Fatal(err)
	}
	if back, err = Unmarshal(indented.Bytes()); err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("version 2 indented: %v\n%+v\nwant\n%+v", err, back, r)
	}
	if _, err := Unmarshal([]byte(`{"document_version":4,"columns":[]}`)); errs.CodeOf(err) != errs.Internal {
		t.Fatalf("version 4 by its prefix: %v", err)
	}
	// A whole version 3 document (Marshal) read without a detail function is whole.
	doc, err = r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if back, err = UnmarshalHead(doc, nil); err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("whole version 3: %v\n%+v\nwant\n%+v", err, back, r)
	}
}

// TestRecordDetailFailures: a detail that cannot be read, or disagrees with its
// head, leaves the record without detail and says so to every caller, and a head
// that holds a detail of its own is refused.
func TestRecordDetailFailures(t *testing.T) {
	r := testRecord()
	head, _, err := r.MarshalParts()
	if err != nil {
		t.Fatal(err)
	}
	for name, load := range map[string]func() ([]byte, error){
		"unreadable":   func() ([]byte, error) { return nil, errors.New("disk gone") },
		"not json":     func() ([]byte, error) { return []byte(`{"per_file": [`), nil },
		"file count":   func() ([]byte, error) { return []byte(`{"per_file": [{"path": "a", "columns": [{}, {}, {}]}]}`), nil },
		"zone columns": func() ([]byte, error) { return []byte(`{"zones": [{"row_group": 0, "columns": [{}]}]}`), nil },
	} {
		back, err := UnmarshalHead(head, load)
		if err != nil {
			t.Fatalf("%s: the head was refused: %v", name, err)
		}
		for range 2 {
			if err := back.LoadDetail(); err == nil {
				t.Errorf("%s: no error", name)
			}
		}
		if back.PerFile != nil || back.Zones != nil {
			t.Errorf("%s: a detail that failed was kept", name)
		}
		if back.listsFilesOf(nil) || back.UnchangedFileMetas(nil, nil) != nil {
			t.Errorf("%s: the files of a failed detail are used", name)
		}
		if _, err := back.Marshal(); err == nil {
			t.Errorf("%s: a record without its detail was written", name)
		}
	}
	whole, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := UnmarshalHead(whole, func() ([]byte, error) { return nil, nil }); errs.CodeOf(err) != errs.Internal {
		t.Fatalf("a head with its detail inline read as a head: %v", err)
	}
}

// TestRecordCopiedBeforeDetail: a copy of a record made before its detail was
// loaded would keep no detail; loading it then is a BUG error, not an empty list.
func TestRecordCopiedBeforeDetail(t *testing.T) {
	head, detail, err := testRecord().MarshalParts()
	if err != nil {
		t.Fatal(err)
	}
	r, err := UnmarshalHead(head, func() ([]byte, error) { return detail, nil })
	if err != nil {
		t.Fatal(err)
	}
	c := *r
	if err := r.LoadDetail(); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadDetail(); err == nil {
		t.Fatal("a copy made before the detail was loaded went unnoticed")
	}
}

// benchRecord is a record shaped like ANALYZE's of an events table: eight columns,
// files files of one row group each, every bound set.
func benchRecord(files int) *Record {
	r := testRecord()
	n := int64(0)
	col := ZoneColumn{NullCount: &n, Min: []byte("gAYN1xFtfFU="), Max: []byte("gAYN6VxxfGo="), BoundsExact: true}
	cols := make([]ZoneColumn, len(r.Columns))
	for i := range cols {
		cols[i] = col
	}
	r.Files, r.PerFile, r.Zones = files, nil, nil
	for f := range files {
		r.PerFile = append(r.PerFile, File{Path: fmt.Sprintf("/lake/events/part-%05d.parquet", f), Rows: 10_000,
			Bytes: 300_000, Marker: "6c3a0000000000000000", Columns: cols})
		r.Zones = append(r.Zones, Zone{File: f, Rows: 10_000, Columns: cols})
	}
	return r
}

// BenchmarkRecordDecode is what a statement answered from the table-level partials
// decodes of a record of files files: the whole document (version 2, and Unmarshal)
// against the head alone (version 3, UnmarshalHead with the detail left unread).
func BenchmarkRecordDecode(b *testing.B) {
	for _, files := range []int{20, 100, 1000} {
		r := benchRecord(files)
		whole, err := r.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		head, detail, err := r.MarshalParts()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("files=%d/whole", files), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(whole)))
			for b.Loop() {
				if _, err := Unmarshal(whole); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("files=%d/head", files), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(head)))
			for b.Loop() {
				if _, err := UnmarshalHead(head, func() ([]byte, error) { return detail, nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
