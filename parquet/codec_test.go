package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/vector"
)

// compressedFile is a file of one int64 column, dictionary-encoded, compressed with
// codec, in one row group.
func compressedFile(t testing.TB, codec compress.Compression) []byte {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := 0; i < 3000; i++ {
		b.Append(int64(i % 500))
	}
	sch := arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecord(sch, []arrow.Array{b.NewArray()}, 3000)
	var buf bytes.Buffer
	props := pq.NewWriterProperties(pq.WithCompression(codec), pq.WithDictionaryDefault(true))
	if err := pqarrow.WriteTable(array.NewTableFromRecords(sch, []arrow.Record{rec}), &buf, 3000, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pages lists the pages of column chunk leaf of row group rg of data.
func pagesOf(t testing.TB, data []byte, rg, leaf int) []pageAt {
	f, err := Open(context.Background(), newMem(data), "pages.parquet")
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.chunkWalker(rg, leaf)
	if err != nil || w == nil {
		t.Fatalf("no page walker (%v)", err)
	}
	var out []pageAt
	for {
		p, ok, err := w.next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, p)
	}
}

// readMeasured reads every column of every row group of data; it returns the first error
// and the bytes allocated.
func readMeasured(data []byte) (alloc uint64, err error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	defer func() {
		runtime.ReadMemStats(&after)
		alloc = after.TotalAlloc - before.TotalAlloc
	}()
	f, err := Open(context.Background(), newMem(data), "bomb.parquet")
	if err != nil {
		return 0, err
	}
	cols := make([]int, f.Schema().NumFields())
	for i := range cols {
		cols[i] = i
	}
	for g := 0; g < f.NumRowGroups(); g++ {
		if err := f.ReadRowGroup(context.Background(), g, cols, func(*vector.Batch) error { return nil }); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// TestDecompressionBombs replaces the body of a dictionary or data page with
// compressed data claiming to decode to gigabytes (a Snappy length, a Zstandard frame
// content size): reading is CORRUPT_SOURCE, on the page path and on the library's,
// without allocating what the data claims.
func TestDecompressionBombs(t *testing.T) {
	bombs := map[compress.Compression]func(n int) []byte{
		compress.Codecs.Snappy: func(n int) []byte {
			b := binary.AppendUvarint(nil, 0xF0000000)
			return append(b, make([]byte, n-len(b))...)
		},
		compress.Codecs.Zstd: func(n int) []byte {
			// Magic, a frame with a 1 MiB window and an 8-byte content size of 40 GiB,
			// then one raw block holding the rest.
			b := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
			b = append(b, 0xC0, 0x50)
			b = binary.LittleEndian.AppendUint64(b, 40<<30)
			raw := n - len(b) - 3
			b = append(b, byte(raw<<3|1), byte(raw>>5), byte(raw>>13))
			return append(b, make([]byte, raw)...)
		},
	}
	for codec, bomb := range bombs {
		good := compressedFile(t, codec)
		pages := pagesOf(t, good, 0, 0)
		for _, which := range []int{pageDictionary, pageData} {
			kind := map[int]string{pageDictionary: "dictionary", pageData: "data"}[which]
			t.Run(fmt.Sprintf("%s/%s", codec, kind), func(t *testing.T) {
				for _, p := range pages {
					if int(p.typ) != which {
						continue
					}
					bad := bytes.Clone(good)
					copy(bad[p.body:], bomb(int(p.compressed)))
					for _, native := range []bool{false, true} {
						for _, path := range []int{pathPages, pathTyped, pathLibrary} {
							var alloc uint64
							var err error
							withZstd(native, func() { withPath(path, func() { alloc, err = readMeasured(bad) }) })
							if errs.CodeOf(err) != errs.CorruptSource {
								t.Fatalf("%s path, %s zstd: got %v, want CORRUPT_SOURCE", pathNames[path], zstdModes[native], err)
							}
							if alloc > 64<<20 {
								t.Errorf("%s path, %s zstd: reading allocated %d MiB", pathNames[path], zstdModes[native], alloc>>20)
							}
						}
					}
					return
				}
				t.Fatalf("no page of type %d", which)
			})
		}
	}
}

// TestPageLargerThanChunk gives a data page a header that says it decompresses to
// 60 MiB in a column chunk of under 2 MiB: the page path refuses it as
// CORRUPT_SOURCE before allocating a buffer of that size.
func TestPageLargerThanChunk(t *testing.T) {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := 0; i < 200000; i++ {
		b.Append(int64(i))
	}
	sch := arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecord(sch, []arrow.Array{b.NewArray()}, 200000)
	var buf bytes.Buffer
	props := pq.NewWriterProperties(pq.WithCompression(compress.Codecs.Zstd), pq.WithDictionaryDefault(false))
	if err := pqarrow.WriteTable(array.NewTableFromRecords(sch, []arrow.Record{rec}), &buf, 200000, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	f, err := Open(context.Background(), newMem(good), "good.parquet")
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.chunkWalker(0, 0)
	if err != nil || w == nil {
		t.Fatalf("no page walker (%v)", err)
	}
	// The first page header's uncompressed_page_size (field 2), a 4-byte varint for a
	// page of about 1 MiB, becomes 60 MiB in as many bytes.
	hdr := good[w.pos:]
	r := &thriftReader{b: hdr}
	from, to := -1, -1
	r.structure(func(id int16, typ byte) bool {
		if id == 2 && typ == tI32 {
			from = r.pos
			r.i32()
			to = r.pos
			return true
		}
		return false
	})
	if r.err != nil || to-from != 4 {
		t.Fatalf("uncompressed size at %d..%d of the header (%v)", from, to, r.err)
	}
	bad := bytes.Clone(good)
	v := int64(60 << 20)
	copy(bad[w.pos+int64(from):], binary.AppendUvarint(nil, uint64(v<<1)))
	var alloc uint64
	withPath(pathPages, func() { alloc, err = readMeasured(bad) })
	if errs.CodeOf(err) != errs.CorruptSource {
		t.Fatalf("got %v, want CORRUPT_SOURCE", err)
	}
	if alloc > 32<<20 {
		t.Errorf("reading allocated %d MiB", alloc>>20)
	}
}

// TestDictionaryCountOverPage gives a dictionary page a header that says it holds
// more values than its bytes can: the library's readers (which size a dictionary from
// that count) are not handed the chunk, and reading is CORRUPT_SOURCE on every path.
func TestDictionaryCountOverPage(t *testing.T) {
	good := compressedFile(t, compress.Codecs.Uncompressed)
	f, err := Open(context.Background(), newMem(good), "good.parquet")
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.chunkWalker(0, 0)
	if err != nil || w == nil {
		t.Fatalf("no page walker (%v)", err)
	}
	// The dictionary page header's num_values (field 1 of field 7), 500 in a 2-byte
	// varint, becomes the largest count of 2 bytes.
	r := &thriftReader{b: good[w.pos:]}
	from, to := -1, -1
	r.structure(func(id int16, typ byte) bool {
		if id != 7 || typ != tStruct {
			return false
		}
		r.structure(func(id int16, typ byte) bool {
			if id == 1 && typ == tI32 {
				from = r.pos
				r.i32()
				to = r.pos
				return true
			}
			return false
		})
		return true
	})
	if r.err != nil || to-from != 2 {
		t.Fatalf("dictionary count at %d..%d of the header (%v)", from, to, r.err)
	}
	bad := bytes.Clone(good)
	copy(bad[w.pos+int64(from):], []byte{0xfe, 0x7f})
	for _, path := range []int{pathPages, pathTyped, pathLibrary} {
		withPath(path, func() { _, err = readMeasured(bad) })
		if errs.CodeOf(err) != errs.CorruptSource {
			t.Errorf("%s path: got %v, want CORRUPT_SOURCE", pathNames[path], err)
		}
	}
}

// TestZstdDecodesWithinLength checks the bounded Zstandard codec, with each
// decoder: a frame is decoded into the destination's room (capacity past its length
// lets the pure-Go decoder run its fast path), but output beyond the destination's
// length is still refused.
func TestZstdDecodesWithinLength(t *testing.T) {
	codec, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	plain := bytes.Repeat([]byte("lore zstd page "), 40_000)
	frame := codec.Encode(nil, plain)
	dec := codec.(interface {
		DecodeWithError(dst, src []byte) ([]byte, error)
	})
	for _, native := range []bool{false, true} {
		withZstd(native, func() {
			roomy := make([]byte, len(plain), len(plain)+decodeHeadroom)
			out, err := dec.DecodeWithError(roomy, frame)
			if err != nil || !bytes.Equal(out, plain) {
				t.Fatalf("%s: decoding into a roomy destination: %v (equal %v)", zstdModes[native], err, bytes.Equal(out, plain))
			}
			if &out[0] != &roomy[0] {
				t.Errorf("%s: did not decode in place", zstdModes[native])
			}
			short := make([]byte, len(plain)-1, len(plain)+decodeHeadroom)
			if out, err := dec.DecodeWithError(short, frame); err == nil {
				t.Fatalf("%s: a frame of %d bytes decoded into a destination of %d: %d bytes", zstdModes[native], len(plain), len(short), len(out))
			}
		})
	}
}
