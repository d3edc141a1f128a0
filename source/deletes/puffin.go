package deletes

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
)

// icebergDVMagic opens the vector inside an Iceberg deletion-vector-v1 blob.
var icebergDVMagic = []byte{0xD1, 0xD3, 0x39, 0x64}

// maxPuffinDV bounds a deletion vector blob. A Roaring bitmap of every position of a
// 2^31-row file is under 300 MiB; a blob claiming more is not a deletion vector.
const maxPuffinDV = 1 << 30

// ReadPuffinDV reads an Iceberg v3 deletion vector: the blob at [offset, offset+length)
// of a Puffin file (the manifest's content_offset and content_size_in_bytes) is a
// big-endian uint32 length of magic and bitmap, the magic bytes D1 D3 39 64, the
// portable 64-bit Roaring bitmap, then a big-endian CRC-32 of magic and bitmap. Only
// the blob's own bytes are read, so a bare blob with no Puffin file around it (what
// older DuckDB wrote) reads the same. The decoded cardinality must equal cardinality
// (the manifest's record_count); a negative cardinality is not checked.
func ReadPuffinDV(ctx context.Context, store storage.Store, path string, offset, length int64, cardinality int64) (*Positions, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if offset < 0 || length < 0 || length > maxPuffinDV {
		return nil, corrupt("deletion vector at offset %d of %q: blob length %d", offset, path, length)
	}
	r, err := store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// Checked against the file before the buffer is made, so it is backed by bytes.
	if offset > r.Size()-length {
		return nil, corrupt("deletion vector at offset %d of %q: %d bytes do not fit a file of %d bytes", offset, path, length, r.Size())
	}
	blob := make([]byte, length)
	if err := readAt(r, blob, offset); err != nil {
		return nil, errs.New(errs.SourceUnavailable, "cannot read deletion vector at offset %d of %q: %w", offset, path, err)
	}
	p, err := DecodePuffinDV(blob)
	if err != nil {
		return nil, corrupt("deletion vector at offset %d of %q: %w", offset, path, err)
	}
	if cardinality >= 0 && p.Len() != cardinality {
		return nil, corrupt("deletion vector at offset %d of %q deletes %d rows, its manifest says %d", offset, path, p.Len(), cardinality)
	}
	return p, nil
}

// DecodePuffinDV decodes one deletion-vector-v1 blob (length, magic, bitmap, CRC), which
// must fill blob exactly.
func DecodePuffinDV(blob []byte) (*Positions, error) {
	if len(blob) < 12 {
		return nil, corrupt("blob of %d bytes is too short for a deletion vector", len(blob))
	}
	n := int64(binary.BigEndian.Uint32(blob))
	if n != int64(len(blob))-8 {
		return nil, corrupt("vector length %d does not fill a blob of %d bytes", n, len(blob))
	}
	data := blob[4 : 4+n]
	if !bytes.Equal(data[:4], icebergDVMagic) {
		return nil, corrupt("magic % x, want % x", data[:4], icebergDVMagic)
	}
	if got, want := crc32.ChecksumIEEE(data), binary.BigEndian.Uint32(blob[4+n:]); got != want {
		return nil, corrupt("checksum %08x, stored %08x", got, want)
	}
	return DecodeRoaring64(data[4:])
}
