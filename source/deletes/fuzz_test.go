package deletes

import (
	"context"
	"encoding/binary"
	"errors"
	"github.com/loredb/lore/internal/shareddata"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/loredb/lore/errs"
)

// fixtureFiles reads the shared fixtures at rels; without the data the fuzz targets
// still run on their generated seeds.
func fixtureFiles(rels ...string) [][]byte {
	root, err := shareddata.Find()
	if err != nil {
		return nil
	}
	var out [][]byte
	for _, rel := range rels {
		if b, err := os.ReadFile(filepath.Join(root, rel)); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// puffinSeeds are the Iceberg deletion-vector blobs among the fixtures.
func puffinSeeds() [][]byte {
	return fixtureFiles(
		icebergDeletes+"/small-alternating-values-position-index.bin",
		icebergDeletes+"/small-and-large-values-position-index.bin",
		icebergDeletes+"/empty-position-index.bin",
		icebergDeletes+"/all-container-types-position-index.bin",
		"iceberg/duckdb-iceberg/data/persistent/legacy_bare_deletion_vector/warehouse/default/legacy_bare_deletion_vector/data/legacy-bare-deletion-vector.puffin",
	)
}

// deltaInlineSeeds are inline DVs of kernel-rs/cdf-table-with-dv: text, size, cardinality.
var deltaInlineSeeds = []struct {
	text string
	size int32
	card int64
}{
	{"^Bg9^0rr910000000000iXQKl0rr91000935c8Xg000311onP9", 40, 4},
	{"^Bg9^0rr910000000000iXQKl0rr91000315c8Xg000f5", 36, 2},
	{"^Bg9^0rr910000000000iXQKl0rr91000005c8Xg##093", 34, 1},
}

func FuzzDecodeRoaring64(f *testing.F) {
	for _, b := range fixtureFiles(
		icebergDeletes+"/64mapempty.bin", icebergDeletes+"/64map32bitvals.bin",
		icebergDeletes+"/64mapspreadvals.bin", icebergDeletes+"/64maphighvals.bin",
		"delta/delta-rs/table-with-dv-small/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin",
		"delta/kernel-rs/with-short-dv/deletion_vector_ae7177f2-6d17-4ea8-819b-8d62fa2c5469.bin",
	) {
		if len(b) > 13 && b[0] == deltaFileVersion { // a Delta DV file: size, magic, bitmap, CRC
			b = b[9 : len(b)-4]
		}
		f.Add(b)
	}
	for _, b := range puffinSeeds() {
		f.Add(b[8 : len(b)-4])
	}
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 6 {
		pos := randomPositions(r)
		f.Add(encodeRoaring64(pos[:min(len(pos), 200)], i%2 == 0))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeRoaring64(b)
		if err != nil {
			if !errors.Is(err, errs.ErrCorruptSource) {
				t.Fatalf("error without CORRUPT_SOURCE: %v", err)
			}
			return
		}
		checkConsistent(t, p)
		if p.Len() <= 1<<16 {
			// What decodes re-encodes to a bitmap that decodes to the same set.
			all := p.AppendTo(nil)
			q, err := DecodeRoaring64(encodeRoaring64(all, true))
			if err != nil || !slices.Equal(q.AppendTo(nil), all) {
				t.Fatalf("re-encoded bitmap differs: %v", err)
			}
		}
	})
}

func FuzzZ85Decode(f *testing.F) {
	for _, s := range deltaInlineSeeds {
		f.Add(s.text, int(s.size))
	}
	f.Add("vBn[lx{q8@P<9BNH/isA", 16)
	f.Add("HelloWorld", 8)
	f.Add("##093", 2)
	f.Add("###00", 1)
	f.Add("#####", 4)
	f.Fuzz(func(t *testing.T, s string, size int) {
		b, err := Z85Decode(s, size)
		if err != nil {
			if !errors.Is(err, errs.ErrCorruptSource) {
				t.Fatalf("error without CORRUPT_SOURCE: %v", err)
			}
			return
		}
		if len(b) != size {
			t.Fatalf("%d bytes, want %d", len(b), size)
		}
		// Decoding is exact: the bytes encode back to the same text in the form it had.
		again := z85EncodeZeroPadded(b)
		if size%4 != 0 && s[len(s)-5] == z85Pad {
			again = z85EncodeHashPadded(b)
		}
		if again != s {
			t.Fatalf("%q decodes to %x, which encodes to %q", s, b, again)
		}
	})
}

func FuzzDVRead(f *testing.F) {
	for _, s := range deltaInlineSeeds {
		f.Add(s.text, s.size, s.card)
	}
	vector := binary.LittleEndian.AppendUint32(nil, deltaMagic)
	vector = append(vector, encodeRoaring64([]int64{0, 1, 2, 70000, 1 << 33}, true)...)
	f.Add(z85EncodeZeroPadded(vector), int32(len(vector)), int64(5))
	f.Fuzz(func(t *testing.T, text string, size int32, card int64) {
		dv := DV{StorageType: StorageInline, PathOrInlineDv: text, SizeInBytes: size, Cardinality: card}
		p, err := dv.Read(context.Background(), nil, "")
		if err != nil {
			if !errors.Is(err, errs.ErrCorruptSource) {
				t.Fatalf("error without CORRUPT_SOURCE: %v", err)
			}
			return
		}
		if p.Len() != card {
			t.Fatalf("read %d positions, cardinality %d", p.Len(), card)
		}
		checkConsistent(t, p)
	})
}

func FuzzPuffinBlob(f *testing.F) {
	for _, b := range puffinSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, blob []byte) {
		check := func(blob []byte) {
			p, err := DecodePuffinDV(blob)
			if err != nil {
				if !errors.Is(err, errs.ErrCorruptSource) {
					t.Fatalf("error without CORRUPT_SOURCE: %v", err)
				}
				return
			}
			checkConsistent(t, p)
		}
		check(blob)
		// The same bytes with the length and checksum made right, so that mutations
		// reach the bitmap behind the framing.
		if len(blob) >= 12 {
			fixed := slices.Clone(blob)
			binary.BigEndian.PutUint32(fixed, uint32(len(fixed)-8))
			binary.BigEndian.PutUint32(fixed[len(fixed)-4:], crc32.ChecksumIEEE(fixed[4:len(fixed)-4]))
			check(fixed)
		}
	})
}
