package parquet

import (
	"fmt"
	"os"
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
	if z := nativeZstd(dst, src); z != nil {
		return z.decode(dst, src)
	}
	return goZstd(dst, src)
}

// nativeZstd is the system library when it should decode src into dst: it is
// loaded, not turned off (LORE_ZSTD=go), and there is a destination to bound its
// output. Under nativeZstdMin compressed bytes the pure-Go decoder is kept, as the
// call into C costs more than it saves there.
func nativeZstd(dst, src []byte) *libzstd {
	if dst == nil || len(src) < nativeZstdMin || zstdPureGo {
		return nil
	}
	return loadLibzstd()
}

// zstdPureGo turns the system library off: LORE_ZSTD=go in the environment decodes
// every Zstandard page with the pure-Go decoder, for tests and diagnosis.
var zstdPureGo = os.Getenv("LORE_ZSTD") == "go"

// nativeZstdMin is the smallest compressed page the system library decodes. Below
// about a kilobyte the pure-Go decoder is as fast or faster (libzstd resets more
// state per frame, and each call crosses into C); above it libzstd pulls ahead
// (BenchmarkZstdSmallPages). Tests set it to 0 to send every page to the library.
var nativeZstdMin = 1 << 10

// goZstd decodes src into dst with the pure-Go decoder, refusing output longer
// than dst (or, without a destination, than the largest page accepted).
func goZstd(dst, src []byte) ([]byte, error) {
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
