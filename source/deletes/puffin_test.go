package deletes

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
)

const icebergDeletes = "iceberg/unit/iceberg-go/table-dv-testdata/deletes"

// The *-position-index.bin files of Iceberg's Java tests are whole deletion-vector-v1
// blobs (big-endian length, magic D1 D3 39 64, bitmap, big-endian CRC), as xxd shows:
// they are what a Puffin file holds at a blob's offset.
func TestIcebergPositionIndexes(t *testing.T) {
	for _, c := range []struct {
		file string
		want []int64
		card int64
	}{
		{"small-alternating-values-position-index.bin", []int64{1, 3, 5, 7, 9}, 5},
		{"small-and-large-values-position-index.bin", []int64{100, 101, 2147483747, 2147483748}, 4},
		{"empty-position-index.bin", nil, 0},
		{"all-container-types-position-index.bin", nil, 132561},
	} {
		t.Run(c.file, func(t *testing.T) {
			rel := filepath.Join(icebergDeletes, c.file)
			blob := fixture(t, rel)
			p, err := DecodePuffinDV(blob)
			if err != nil {
				t.Fatal(err)
			}
			if p.Len() != c.card {
				t.Fatalf("Len = %d, want %d", p.Len(), c.card)
			}
			if c.want != nil && !slices.Equal(p.AppendTo(nil), c.want) {
				t.Errorf("positions %v, want %v", p.AppendTo(nil), c.want)
			}
			path := filepath.Join(sharedData(t), rel)
			q, err := ReadPuffinDV(context.Background(), storage.Local{}, path, 0, int64(len(blob)), c.card)
			if err != nil || !slices.Equal(q.AppendTo(nil), p.AppendTo(nil)) {
				t.Errorf("ReadPuffinDV: %v", err)
			}
			if _, err := ReadPuffinDV(context.Background(), storage.Local{}, path, 0, int64(len(blob)), c.card+1); !errors.Is(err, errs.ErrCorruptSource) {
				t.Errorf("a cardinality that disagrees: %v", err)
			}
		})
	}
}

// all-container-types holds, in two buckets, an array container, a short run and a
// container of 65534 positions that Java's runOptimize turned from a bitmap into a run;
// so the file has arrays and runs but no bitmap container (bitmaps are covered by
// TestPositionsAgainstReference).
func TestAllContainerTypes(t *testing.T) {
	p, err := DecodePuffinDV(fixture(t, filepath.Join(icebergDeletes, "all-container-types-position-index.bin")))
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	span := func(from, to int64) {
		for v := from; v <= to; v++ {
			want = append(want, v)
		}
	}
	for _, b := range []struct{ high, a1, a2, runFrom, runTo int64 }{{0, 5, 7, 1, 999}, {1, 10, 20, 10, 499}} {
		base := b.high << 32
		want = append(want, base|b.a1, base|b.a2)
		span(base+1<<16+b.runFrom, base+1<<16+b.runTo)
		span(base+2<<16+1, base+2<<16+65534)
	}
	if got := p.AppendTo(nil); !slices.Equal(got, want) {
		t.Fatalf("%d positions differ from the %d expected", len(got), len(want))
	}
	kinds := map[uint8]int{}
	for _, c := range p.chunks {
		kinds[c.kind]++
	}
	if kinds[kindArray] != 2 || kinds[kindRun] != 4 {
		t.Errorf("container kinds %v, want 2 arrays and 4 runs", kinds)
	}
	q, err := FromSorted(want)
	if err != nil {
		t.Fatal(err)
	}
	last := want[len(want)-1]
	for first := int64(-5); first < last+10000; first += 8191 {
		if first > 3<<16 && first < 1<<32 {
			first = 1<<32 - 5
		}
		got, exp := p.Live(first, 8191, nil), q.Live(first, 8191, nil)
		if !slices.Equal(got, exp) || (got == nil) != (exp == nil) {
			t.Fatalf("Live(%d) differs between the decoded runs and rebuilt arrays and bitmaps", first)
		}
		if p.CountIn(first, 8191) != q.CountIn(first, 8191) {
			t.Fatalf("CountIn(%d) differs", first)
		}
	}
}

// The 64map*.bin files are bare 64-bit Roaring bitmaps (no blob framing), from the
// Roaring Java/C cross-format tests.
func TestRoaring64Files(t *testing.T) {
	spread := func(keys, vals int64) []int64 {
		var out []int64
		for k := range keys {
			for v := range vals {
				out = append(out, k<<32|v)
			}
		}
		return out
	}
	for _, dir := range []string{icebergDeletes, "iceberg/unit/iceberg-python/bitmaps"} {
		for _, c := range []struct {
			file string
			want []int64
		}{
			{"64mapempty.bin", nil},
			{"64map32bitvals.bin", spread(1, 10)},
			{"64mapspreadvals.bin", spread(10, 10)},
		} {
			p, err := DecodeRoaring64(fixture(t, filepath.Join(dir, c.file)))
			if err != nil {
				t.Fatalf("%s/%s: %v", dir, c.file, err)
			}
			if got := p.AppendTo(nil); !slices.Equal(got, c.want) {
				t.Errorf("%s/%s: %v, want %v", dir, c.file, got, c.want)
			}
		}
		// Keys above 2^31-1 are invalid for Iceberg (and for Delta, whose keys index an
		// array); this file must be refused.
		if _, err := DecodeRoaring64(fixture(t, filepath.Join(dir, "64maphighvals.bin"))); !errors.Is(err, errs.ErrCorruptSource) {
			t.Errorf("%s/64maphighvals.bin: %v, want CORRUPT_SOURCE", dir, err)
		}
	}
}

// puffinBlob is one blob of a Puffin footer.
type puffinBlob struct {
	Type       string            `json:"type"`
	Offset     int64             `json:"offset"`
	Length     int64             `json:"length"`
	Properties map[string]string `json:"properties"`
}

// puffinBlobs reads the footer of an uncompressed Puffin file: ... "PFA1" JSON, payload
// size (LE int32), flags (4 bytes), "PFA1".
func puffinBlobs(t *testing.T, b []byte) []puffinBlob {
	t.Helper()
	n := len(b)
	if n < 12 || string(b[n-4:]) != "PFA1" || b[n-8] != 0 {
		t.Fatal("not an uncompressed Puffin file")
	}
	size := int(binary.LittleEndian.Uint32(b[n-12:]))
	var footer struct{ Blobs []puffinBlob }
	if err := json.Unmarshal(b[n-12-size:n-12], &footer); err != nil {
		t.Fatal(err)
	}
	return footer.Blobs
}

func TestPuffinFiles(t *testing.T) {
	files := map[string][][]int64{
		"iceberg/unit/iceberg-go/puffin-testdata/deletion-vector-v1.puffin": {{1, 3, 5, 7, 9}},
		icebergDeletes + "/single-blob-dv.puffin":                           {{1, 3, 5, 7, 9}},
		icebergDeletes + "/multi-blob-dv.puffin":                            {{0, 100, 200}, {50, 150}},
	}
	for rel, want := range files {
		path := filepath.Join(sharedData(t), rel)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		blobs := puffinBlobs(t, b)
		if len(blobs) != len(want) {
			t.Fatalf("%s: %d blobs, want %d", rel, len(blobs), len(want))
		}
		for i, blob := range blobs {
			card, err := strconv.ParseInt(blob.Properties["cardinality"], 10, 64)
			if blob.Type != "deletion-vector-v1" || err != nil {
				t.Fatalf("%s blob %d: %+v", rel, i, blob)
			}
			p, err := ReadPuffinDV(context.Background(), storage.Local{}, path, blob.Offset, blob.Length, card)
			if err != nil {
				t.Fatalf("%s blob %d: %v", rel, i, err)
			}
			if got := p.AppendTo(nil); !slices.Equal(got, want[i]) {
				t.Errorf("%s blob %d: %v, want %v", rel, i, got, want[i])
			}
		}
	}
	// The payload iceberg-go lifted from Java is the small-alternating blob itself.
	if !bytes.Equal(fixture(t, "iceberg/unit/iceberg-go/puffin-testdata/deletion-vector-v1-payload.bin"),
		fixture(t, filepath.Join(icebergDeletes, "small-alternating-values-position-index.bin"))) {
		t.Error("deletion-vector-v1-payload.bin is not the small-alternating blob")
	}
}

// Older DuckDB wrote the DV blob alone, with no Puffin magic or footer. Its manifest
// (legacy-bare-deletion-vector-m0.avro) gives content_offset 0, content_size_in_bytes
// 42 and record_count 1; reading exactly those bytes decodes it like any blob.
func TestLegacyBareDeletionVector(t *testing.T) {
	path := filepath.Join(sharedData(t), "iceberg/duckdb-iceberg/data/persistent/legacy_bare_deletion_vector/warehouse/default/legacy_bare_deletion_vector/data/legacy-bare-deletion-vector.puffin")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(b, []byte("PFA1")) || len(b) != 42 {
		t.Fatalf("fixture is not the bare 42-byte blob (%d bytes)", len(b))
	}
	p, err := ReadPuffinDV(context.Background(), storage.Local{}, path, 0, 42, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.AppendTo(nil); !slices.Equal(got, []int64{1}) {
		t.Errorf("deleted %v, want [1]", got)
	}
}

func TestPuffinDVRejects(t *testing.T) {
	good := fixture(t, filepath.Join(icebergDeletes, "small-alternating-values-position-index.bin"))
	mutations := map[string]func([]byte) []byte{
		"length":       func(b []byte) []byte { b[3]++; return b },
		"magic":        func(b []byte) []byte { b[4] = 0; return b },
		"checksum":     func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b },
		"bitmap":       func(b []byte) []byte { b[20] ^= 1; return b },
		"truncated":    func(b []byte) []byte { return b[:len(b)-1] },
		"extra byte":   func(b []byte) []byte { return append(b, 0) },
		"short":        func(b []byte) []byte { return b[:8] },
		"no bytes":     func(b []byte) []byte { return nil },
		"huge length":  func(b []byte) []byte { b[0] = 0xFF; return b },
		"zero payload": func(b []byte) []byte { return []byte{0, 0, 0, 4, 0xD1, 0xD3, 0x39, 0x64, 0, 0, 0, 0} },
	}
	for name, m := range mutations {
		if _, err := DecodePuffinDV(m(slices.Clone(good))); !errors.Is(err, errs.ErrCorruptSource) {
			t.Errorf("%s: %v, want CORRUPT_SOURCE", name, err)
		}
	}
	path := filepath.Join(sharedData(t), icebergDeletes, "small-alternating-values-position-index.bin")
	ctx := context.Background()
	for _, c := range []struct{ off, n int64 }{{-1, 50}, {0, 51}, {1, 50}, {0, -1}, {0, 1 << 40}, {1 << 62, 50}} {
		if _, err := ReadPuffinDV(ctx, storage.Local{}, path, c.off, c.n, 5); !errors.Is(err, errs.ErrCorruptSource) {
			t.Errorf("offset %d length %d: %v, want CORRUPT_SOURCE", c.off, c.n, err)
		}
	}
	if _, err := ReadPuffinDV(ctx, storage.Local{}, path+".missing", 0, 50, 5); !errors.Is(err, errs.ErrSourceUnavailable) {
		t.Errorf("missing file: %v, want SOURCE_UNAVAILABLE", err)
	}
}
