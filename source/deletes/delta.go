package deletes

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
)

// Delta deletion vector storage types.
const (
	StorageInline   = "i" // the bitmap itself, Z85-encoded, in pathOrInlineDv
	StorageUUID     = "u" // a deletion_vector_<uuid>.bin file under the table root
	StorageAbsolute = "p" // a file at an absolute path or URI
)

// deltaMagic opens every serialized Delta deletion vector (little-endian): the
// RoaringBitmapArray "portable" format, the only one the protocol allows.
const deltaMagic = 1681511377

// deltaFileVersion is the first byte of a deletion vector file.
const deltaFileVersion = 1

// uuidChars is the length of a Z85-encoded UUID (16 bytes).
const uuidChars = 20

// DV is a Delta deletionVector descriptor as it appears in an add/remove action.
type DV struct {
	StorageType    string `json:"storageType"`
	PathOrInlineDv string `json:"pathOrInlineDv"`
	// Offset is where the vector starts in its file (its size prefix); absent for
	// inline vectors.
	Offset *int32 `json:"offset,omitempty"`
	// SizeInBytes is the size of the serialized vector (magic and bitmap).
	SizeInBytes int32 `json:"sizeInBytes"`
	// Cardinality is the number of rows the vector deletes.
	Cardinality int64 `json:"cardinality"`
}

// ID is the descriptor's identity for log replay: storageType + pathOrInlineDv (+ "@" +
// offset when present), "" for no DV. An add and a remove name the same file only when
// their paths and DV IDs are equal.
func (d DV) ID() string {
	if d.StorageType == "" {
		return ""
	}
	id := d.StorageType + d.PathOrInlineDv
	if d.Offset != nil {
		id += "@" + strconv.FormatInt(int64(*d.Offset), 10)
	}
	return id
}

// describe names the vector in errors.
func (d DV) describe() string {
	s := d.StorageType + ":" + d.PathOrInlineDv
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return strconv.Quote(s)
}

// Path resolves a 'u' or 'p' descriptor to the file holding it: 'u' = table root +
// optional random prefix (the characters before the last 20) + "/deletion_vector_" +
// UUID (the last 20 characters, Z85, 16 bytes, as canonical 8-4-4-4-12 hex) + ".bin";
// 'p' = the absolute path or URI given, a file: URI becoming its local path. The
// random prefix is one directory name; one that would leave the table root is refused.
func (d DV) Path(tableRoot string) (string, error) {
	switch d.StorageType {
	case StorageUUID:
		p := d.PathOrInlineDv
		if len(p) < uuidChars {
			return "", corrupt("deletion vector %s: %d characters, shorter than a Z85 UUID", d.describe(), len(p))
		}
		prefix, enc := p[:len(p)-uuidChars], p[len(p)-uuidChars:]
		if prefix == "." || prefix == ".." || strings.ContainsAny(prefix, "/\\\x00") {
			return "", corrupt("deletion vector %s: random prefix %q is not a directory name", d.describe(), prefix)
		}
		u, err := Z85Decode(enc, 16)
		if err != nil {
			return "", corrupt("deletion vector %s: UUID: %w", d.describe(), err)
		}
		name := fmt.Sprintf("deletion_vector_%x-%x-%x-%x-%x.bin", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
		dir := strings.TrimRight(tableRoot, "/")
		if prefix != "" {
			dir += "/" + prefix
		}
		return dir + "/" + name, nil
	case StorageAbsolute:
		return absolutePath(d)
	case StorageInline:
		return "", errs.New(errs.Internal, "deletion vector %s is inline and has no file", d.describe())
	default:
		return "", corrupt("deletion vector %s: unknown storage type %q", d.describe(), d.StorageType)
	}
}

// absolutePath resolves a 'p' descriptor. Delta writes these as URIs (file:/t/x.bin,
// file:///t/x.bin, s3://bucket/x.bin); a file: URI is unescaped to the local path, any
// other scheme is passed through for its store, and a bare path must be absolute.
func absolutePath(d DV) (string, error) {
	p := d.PathOrInlineDv
	scheme, _, found := strings.Cut(p, ":")
	if found && len(scheme) > 1 && !strings.ContainsAny(scheme, "/\\") {
		if !strings.EqualFold(scheme, "file") {
			return p, nil
		}
		u, err := url.Parse(p)
		if err != nil {
			return "", corrupt("deletion vector %s: %w", d.describe(), err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return "", corrupt("deletion vector %s: file URI on host %q", d.describe(), u.Host)
		}
		p = u.Path
	}
	if !strings.HasPrefix(p, "/") {
		return "", corrupt("deletion vector %s: path is not absolute", d.describe())
	}
	return path.Clean(p), nil
}

// Read loads the vector: an inline one is decoded from its Z85 text (magic, then the
// bitmap); a 'u' or 'p' one is read from its file through store at its offset: a
// big-endian uint32 size, then size bytes (magic and bitmap), then a big-endian CRC-32
// (IEEE) of those bytes, which must match. The file's first byte is its format version
// (1). The decoded cardinality must equal d.Cardinality.
func (d DV) Read(ctx context.Context, store storage.Store, tableRoot string) (*Positions, error) {
	if d.SizeInBytes < 4 || d.Cardinality < 0 {
		return nil, corrupt("deletion vector %s: size %d, cardinality %d", d.describe(), d.SizeInBytes, d.Cardinality)
	}
	var data []byte
	switch d.StorageType {
	case StorageInline:
		b, err := Z85Decode(d.PathOrInlineDv, int(d.SizeInBytes))
		if err != nil {
			return nil, corrupt("deletion vector %s: %w", d.describe(), err)
		}
		data = b
	case StorageUUID, StorageAbsolute:
		file, err := d.Path(tableRoot)
		if err != nil {
			return nil, err
		}
		if data, err = d.readFile(ctx, store, file); err != nil {
			return nil, err
		}
	default:
		return nil, corrupt("deletion vector %s: unknown storage type %q", d.describe(), d.StorageType)
	}
	if m := binary.LittleEndian.Uint32(data); m != deltaMagic {
		return nil, corrupt("deletion vector %s: magic %d, want %d", d.describe(), m, deltaMagic)
	}
	p, err := DecodeRoaring64(data[4:])
	if err != nil {
		return nil, corrupt("deletion vector %s: %w", d.describe(), err)
	}
	if p.Len() != d.Cardinality {
		return nil, corrupt("deletion vector %s deletes %d rows, its descriptor says %d", d.describe(), p.Len(), d.Cardinality)
	}
	return p, nil
}

// readFile reads the framed vector (size, magic and bitmap, CRC) from file and returns
// the magic and bitmap once the size and checksum agree.
func (d DV) readFile(ctx context.Context, store storage.Store, file string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	offset := int64(1) // right after the version byte, where writers put the first vector
	if d.Offset != nil {
		offset = int64(*d.Offset)
	}
	r, err := store.Open(ctx, file)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// The frame must lie inside the file after the version byte; checking against the
	// file's size first bounds the buffer by bytes that exist.
	size := int64(d.SizeInBytes)
	if offset < 1 || offset > r.Size()-8-size {
		return nil, corrupt("deletion vector %s of %q: %d bytes at offset %d do not fit a file of %d bytes",
			d.describe(), file, size+8, offset, r.Size())
	}
	var version [1]byte
	if err := readAt(r, version[:], 0); err != nil {
		return nil, readError(d, file, err)
	}
	if version[0] != deltaFileVersion {
		return nil, corrupt("deletion vector %s of %q: file format version %d, want %d", d.describe(), file, version[0], deltaFileVersion)
	}
	buf := make([]byte, 8+size)
	if err := readAt(r, buf, offset); err != nil {
		return nil, readError(d, file, err)
	}
	if n := binary.BigEndian.Uint32(buf); int64(n) != size {
		return nil, corrupt("deletion vector %s of %q: stored size %d, descriptor says %d", d.describe(), file, n, size)
	}
	data := buf[4 : 4+size]
	if got, want := crc32.ChecksumIEEE(data), binary.BigEndian.Uint32(buf[4+size:]); got != want {
		return nil, corrupt("deletion vector %s of %q: checksum %08x, stored %08x", d.describe(), file, got, want)
	}
	return data, nil
}

// readAt fills buf from off. io.ReaderAt may report io.EOF with a full buffer at the end
// of the file; that is a success.
func readAt(r io.ReaderAt, buf []byte, off int64) error {
	n, err := r.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// readError reports a failed read; a short read means the file changed under us or lies
// about its size, which is corruption rather than unavailability.
func readError(d DV, file string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return corrupt("deletion vector %s of %q: truncated: %w", d.describe(), file, err)
	}
	return errs.New(errs.SourceUnavailable, "cannot read deletion vector %s of %q: %w", d.describe(), file, err)
}
