package parquet

import (
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// The library's Snappy and Zstandard decoders size their output from the compressed
// data itself: a Snappy block starts with its decoded length (up to 4 GiB), and a
// Zstandard frame header may state a content size (up to 64 GiB by default), and
// either is allocated before a byte is decoded. A corrupt page would then be a fatal
// out-of-memory. Every caller (Lore's page path and the library's page readers) hands
// the decoder a destination as long as the page header says the page decompresses to,
// so these replacements decode into it and refuse data that claims more.

func init() {
	for c, codec := range map[compress.Compression]func(compress.Codec) compress.Codec{
		compress.Codecs.Snappy: func(c compress.Codec) compress.Codec { return boundedSnappy{c} },
		compress.Codecs.Zstd:   func(c compress.Codec) compress.Codec { return boundedZstd{c} },
	} {
		if orig, err := compress.GetCodec(c); err == nil {
			compress.RegisterCodec(c, codec(orig))
		}
	}
}

// boundedSnappy is the library's Snappy codec, decoding no more than its destination
// holds.
type boundedSnappy struct{ compress.Codec }

func (c boundedSnappy) Decode(dst, src []byte) []byte {
	out, err := c.DecodeWithError(dst, src)
	if err != nil {
		panic(err)
	}
	return out
}

func (boundedSnappy) DecodeWithError(dst, src []byte) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return nil, err
	}
	if limit := decodeLimit(dst); n > limit {
		return nil, fmt.Errorf("snappy block decodes to %d bytes, more than the %d expected", n, limit)
	}
	return snappy.Decode(dst, src)
}

// boundedZstd is the library's Zstandard codec, decoding no more than its
// destination holds.
type boundedZstd struct{ compress.Codec }

// zstdDecoder decodes whole frames into the capacity of the slice it is given and no
// further, whatever size a frame header states; zstdAnySize, for a caller without a
// destination, decodes up to the largest page accepted.
var (
	zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxMemory(maxUncompressedPage))
	})
	zstdAnySize = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxUncompressedPage))
	})
)

func (c boundedZstd) Decode(dst, src []byte) []byte {
	out, err := c.DecodeWithError(dst, src)
	if err != nil {
		panic(err)
	}
	return out
}

func (boundedZstd) DecodeWithError(dst, src []byte) ([]byte, error) {
	get := zstdDecoder
	if dst == nil {
		get = zstdAnySize
	}
	d, err := get()
	if err != nil {
		return nil, err
	}
	// The decoder may write into all of dst's capacity, which the caller already
	// holds: its fast path wants room past the end of the output, and without it
	// every block takes the slow, bounds-checked one. Anything past len(dst) is
	// still refused.
	out, err := d.DecodeAll(src, dst[:0:cap(dst)])
	if err != nil {
		return nil, err
	}
	if len(out) > len(dst) {
		return nil, fmt.Errorf("zstd frame decodes to %d bytes, more than the %d expected", len(out), len(dst))
	}
	return out, nil
}

// decodeLimit is the most a decoder may write for destination dst: its length, or
// for no destination the largest page accepted.
func decodeLimit(dst []byte) int {
	if dst == nil {
		return maxUncompressedPage
	}
	return len(dst)
}
