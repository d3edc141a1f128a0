package types

import (
	"encoding/hex"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// UUIDType is Lore's UUID: a binary type whose values are always 16 bytes, the UUID
// in network (big-endian) order. Its arrays are plain Arrow binary arrays, so every
// kernel that compares, hashes, sorts or groups bytes handles UUIDs as they are: the
// order of the bytes compared as unsigned is the order of the text forms, which is
// DuckDB's UUID order. What differs from BLOB is the name, the text form
// (8-4-4-4-12 lower-case hex) and the casts; arrow.TypeEqual tells the two apart.
type UUIDType struct{ arrow.BinaryType }

// Name is the Arrow extension-style name of the type.
func (*UUIDType) Name() string { return "uuid" }

// String is the type's name in Arrow's messages.
func (*UUIDType) String() string { return "uuid" }

// Fingerprint distinguishes UUID from BLOB in Arrow's type caches.
func (*UUIDType) Fingerprint() string { return "uuid" }

// UUID is the UUID type.
var UUID arrow.DataType = &UUIDType{}

// IsUUID reports the UUID type.
func IsUUID(dt arrow.DataType) bool {
	_, ok := Unwrap(dt).(*UUIDType)
	return ok
}

// FormatUUID renders 16 bytes as DuckDB does: 8-4-4-4-12 lower-case hex digits.
// Other lengths are rendered as a BLOB (they cannot come from a UUID column).
func FormatUUID(b string) string {
	if len(b) != 16 {
		return formatBlob(b)
	}
	var out [36]byte
	j := 0
	for i := 0; i < 16; i++ {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		hex.Encode(out[j:j+2], []byte{b[i]})
		j += 2
	}
	return string(out[:])
}

// ParseUUID reads a UUID's text form as DuckDB accepts it: 32 hex digits in either
// case, optionally in braces, hyphens anywhere between them ignored.
func ParseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	if len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' {
		s = s[1 : len(s)-1]
	}
	n := 0 // hex digits read
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '-' {
			continue
		}
		d, ok := HexDigit(c)
		if !ok || n == 32 {
			return u, false
		}
		u[n/2] |= d << (4 * (1 - n%2))
		n++
	}
	return u, n == 32
}

// HexDigit is the value of one hexadecimal digit, of either case.
func HexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// NewBuilder is array.NewBuilder that keeps a UUID type: the library's builder for
// any binary type builds plain BLOB arrays.
func NewBuilder(mem memory.Allocator, dt arrow.DataType) array.Builder {
	if u, ok := dt.(*UUIDType); ok {
		return array.NewBinaryBuilder(mem, u)
	}
	return array.NewBuilder(mem, dt)
}
