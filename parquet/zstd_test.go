package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"

	"github.com/loredb/lore/vector"
)

// needLibzstd returns the system library, or skips the test when it is not loaded.
func needLibzstd(t testing.TB) *libzstd {
	t.Helper()
	z := loadLibzstd()
	if z == nil {
		t.Skip("libzstd.so.1 (1.4.0 or later) is not available")
	}
	return z
}

// withZstd runs fn with the Zstandard codec decoding by the pure-Go decoder
// (native false) or, every page however small, by the system library when it is
// loaded (native true).
func withZstd(native bool, fn func()) {
	savedGo, savedMin := zstdPureGo, nativeZstdMin
	zstdPureGo, nativeZstdMin = !native, 0
	defer func() { zstdPureGo, nativeZstdMin = savedGo, savedMin }()
	fn()
}

// zstdModes names the two decoders for subtests.
var zstdModes = map[bool]string{false: "go", true: "libzstd"}

// sameDecoding decodes src into a destination of n bytes with both decoders and
// fails unless both refuse it or both produce the same bytes. It reports whether
// the data decoded.
func sameDecoding(t *testing.T, z *libzstd, what string, src []byte, n int) bool {
	t.Helper()
	goOut, goErr, cOut, cErr := decodeBoth(z, src, n)
	switch {
	case (goErr == nil) != (cErr == nil):
		t.Errorf("%s: pure Go: %v, libzstd: %v", what, goErr, cErr)
	case goErr == nil && !bytes.Equal(goOut, cOut):
		t.Errorf("%s: the decoders disagree (%d and %d bytes)", what, len(goOut), len(cOut))
	}
	return goErr == nil && cErr == nil
}

// decodeBoth decodes src into a destination of n bytes with each decoder.
func decodeBoth(z *libzstd, src []byte, n int) (goOut []byte, goErr error, cOut []byte, cErr error) {
	goOut, goErr = goZstd(make([]byte, n, n+decodeHeadroom), src)
	cOut, cErr = z.decode(make([]byte, n), src)
	return goOut, goErr, cOut, cErr
}

// damaged decodes src, which is damaged, both ways. Without a checksum not every
// damage can be told (libzstd checks less than the pure-Go decoder, which compares
// each block's output with its header's size): either may decode it, but never to
// more than n bytes, and when both do they agree. It reports whether the decoders
// differed on refusing it.
func damaged(t *testing.T, z *libzstd, what string, src []byte, n int) bool {
	t.Helper()
	goOut, goErr, cOut, cErr := decodeBoth(z, src, n)
	if len(goOut) > n || len(cOut) > n {
		t.Errorf("%s: decoded to %d and %d bytes, more than %d", what, len(goOut), len(cOut), n)
	}
	if goErr == nil && cErr == nil && !bytes.Equal(goOut, cOut) {
		t.Errorf("%s: the decoders disagree (%d and %d bytes)", what, len(goOut), len(cOut))
	}
	return (goErr == nil) != (cErr == nil)
}

// sameOnDamage checks src decodes alike both ways when whole, is refused by both
// decoders for a destination a byte short, and that truncations and byte changes at
// positions spread over it are damage (see damaged) and, when the frames carry a
// checksum, refused by both. It returns how often the decoders differed on refusing.
func sameOnDamage(t *testing.T, z *libzstd, what string, src []byte, n int, checksum bool, rng *rand.Rand) (differed int) {
	t.Helper()
	if !sameDecoding(t, z, what, src, n) {
		t.Errorf("%s: does not decode", what)
	}
	if n > 0 {
		if _, err := z.decode(make([]byte, n-1), src); err == nil {
			t.Errorf("%s: decoded into a destination a byte short", what)
		}
	}
	try := func(what string, bad []byte) {
		if checksum {
			sameDecoding(t, z, what, bad, n)
		} else if damaged(t, z, what, bad, n) {
			differed++
		}
	}
	for _, c := range []int{0, 1, 4, 5, 6, 9, 12, len(src) / 2, len(src) - 4, len(src) - 1} {
		if c >= 0 && c < len(src) {
			try(fmt.Sprintf("%s cut to %d", what, c), src[:c])
		}
	}
	for i := 0; i < 40 && len(src) > 0; i++ {
		at := rng.IntN(len(src))
		if i < 12 {
			at = i % len(src) // the frame header
		}
		bad := bytes.Clone(src)
		bad[at] ^= byte(1 + rng.IntN(255))
		try(fmt.Sprintf("%s byte %d changed", what, at), bad)
	}
	return differed
}

// skippable is a skippable frame carrying payload.
func skippable(payload []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0x184D2A53)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

// streamed is plain compressed by the streaming encoder, whose frame states no
// content size.
func streamed(t *testing.T, plain []byte, opts ...zstd.EOption) []byte {
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(plain); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestZstdNativeMatchesGo decodes frames of every shape the format allows (with and
// without a content size or checksum, concatenated, among skippable frames, empty,
// of raw, RLE and compressed blocks) with the system library and with the pure-Go
// decoder, whole and damaged: both decode to the same bytes or both refuse.
func TestZstdNativeMatchesGo(t *testing.T) {
	z := needLibzstd(t)
	rng := rand.New(rand.NewPCG(17, 1))
	text := []byte(strings.Repeat("lore reads zstd pages; ", 3000))
	for i := range text {
		if i%97 == 0 {
			text[i] = byte('a' + i%26)
		}
	}
	noise := make([]byte, 70_000)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	zeros := make([]byte, 300_000)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	best, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderCRC(false))
	if err != nil {
		t.Fatal(err)
	}
	type input struct {
		name  string
		src   []byte
		plain []byte
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	inputs := []input{
		{"text", enc.EncodeAll(text, nil), text},
		{"text best no checksum", best.EncodeAll(text, nil), text},
		{"noise", enc.EncodeAll(noise, nil), noise},
		{"zeros", enc.EncodeAll(zeros, nil), zeros},
		{"no content size", streamed(t, text), text},
		{"no content size best", streamed(t, noise, zstd.WithEncoderLevel(zstd.SpeedBestCompression)), noise},
		{"empty frame", enc.EncodeAll(nil, nil), nil},
		{"concatenated", cat(enc.EncodeAll(text, nil), streamed(t, noise), enc.EncodeAll(zeros, nil)), cat(text, noise, zeros)},
		{"skippable around", cat(skippable([]byte("before")), enc.EncodeAll(text, nil), skippable(nil), enc.EncodeAll(noise, nil), skippable([]byte("after"))), cat(text, noise)},
	}
	for _, in := range inputs {
		sameOnDamage(t, z, in.name, in.src, len(in.plain), in.name != "text best no checksum", rng)
		// A destination with room to spare: both decode the same bytes into it.
		sameDecoding(t, z, in.name+" into a larger destination", in.src, len(in.plain)+1000)
	}
	// No data at all decodes to nothing, both ways.
	sameDecoding(t, z, "no bytes", nil, 0)
	sameDecoding(t, z, "no bytes into room", nil, 100)
}

// compressedPages is every page body of the file data compressed with codec (the
// compressed part of it), with the length it decompresses to; of leaf only, unless
// that is negative.
func compressedPages(data []byte, name string, codec compress.Compression, only int) (bodies [][]byte, sizes []int) {
	f, err := Open(context.Background(), newMem(data), name)
	if err != nil {
		return nil, nil // a file the reader refuses has no pages to compare
	}
	for rg := 0; rg < f.NumRowGroups(); rg++ {
		for leaf := 0; leaf < f.sch.NumColumns(); leaf++ {
			if only >= 0 && leaf != only {
				continue
			}
			if cc := f.chunk(rg, leaf); cc == nil || cc.codec != codec {
				continue
			}
			w, err := f.chunkWalker(rg, leaf)
			if err != nil || w == nil {
				continue
			}
			for {
				p, ok, err := w.next()
				if err != nil || !ok {
					break
				}
				if p.typ == pageDataV2 && !p.v2Compressed {
					continue
				}
				levels := 0
				if p.typ == pageDataV2 {
					levels = int(p.defLen + p.repLen)
				}
				end := p.body + int64(p.compressed)
				if levels > int(p.compressed) || levels > int(p.uncompressed) || end > int64(len(data)) {
					continue
				}
				bodies = append(bodies, data[p.body+int64(levels):end])
				sizes = append(sizes, int(p.uncompressed)-levels)
			}
		}
	}
	return bodies, sizes
}

// writeZstdFile writes a Lore file of rows rows (integers, doubles, dates, short
// strings) compressed with zstd, and returns its bytes.
func writeZstdFile(t testing.TB, rows int) []byte { return writeTestFile(t, rows, "zstd") }

// writeTestFile writes the file of writeZstdFile compressed with codec.
func writeTestFile(t testing.TB, rows int, codec string) []byte {
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "key", Type: arrow.PrimitiveTypes.Int64},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
		{Name: "note", Type: arrow.BinaryTypes.String},
	}, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"furiously", "quickly", "regular", "ironic", "final", "pending", "deposits", "requests"}
	path := filepath.Join(t.TempDir(), "z.parquet")
	err := WriteFile(path, sch, func(emit func(arrow.Record) error) error {
		for done := 0; done < rows; {
			n := min(rows-done, 50_000)
			k := array.NewInt64Builder(memory.DefaultAllocator)
			p := array.NewFloat64Builder(memory.DefaultAllocator)
			d := array.NewDate32Builder(memory.DefaultAllocator)
			s := array.NewStringBuilder(memory.DefaultAllocator)
			for i := 0; i < n; i++ {
				k.Append(int64(done+i) * 4)
				p.Append(float64(rng.IntN(10_000_000)) / 100)
				d.Append(arrow.Date32(8000 + rng.IntN(2500)))
				s.Append(words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))] + fmt.Sprint(rng.IntN(1000)))
			}
			rec := array.NewRecord(sch, []arrow.Array{k.NewArray(), p.NewArray(), d.NewArray(), s.NewArray()}, int64(n))
			err := emit(rec)
			rec.Release()
			if err != nil {
				return err
			}
			done += n
		}
		return nil
	}, WriteOptions{Compression: codec, RowGroupRows: int64(rows)})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestZstdNativeMatchesGoOnPages decodes every Zstandard page of the shared files
// written by other engines, and of a file Lore writes, with both decoders, whole and
// damaged: both decode to the same bytes or both refuse.
func TestZstdNativeMatchesGoOnPages(t *testing.T) {
	z := needLibzstd(t)
	rng := rand.New(rand.NewPCG(17, 2))
	files := map[string][]byte{"lore-written": writeZstdFile(t, 120_000)}
	root := dataDir(t)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[strings.TrimPrefix(path, root+"/")] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pages, damagedPages, differed := 0, 0, 0
	for name, data := range files {
		bodies, sizes := compressedPages(data, name, compress.Codecs.Zstd, -1)
		for i, body := range bodies {
			what := fmt.Sprintf("%s page %d", name, i)
			if pages%8 == 0 {
				differed += sameOnDamage(t, z, what, body, sizes[i], false, rng)
				damagedPages++
			} else if !sameDecoding(t, z, what, body, sizes[i]) {
				t.Errorf("%s: does not decode", what)
			}
			pages++
		}
	}
	if pages < 20 {
		t.Fatalf("only %d zstd pages compared", pages)
	}
	t.Logf("%d pages of %d files compared, %d damaged 50 ways: one decoder refused what the other decoded %d times", pages, len(files), damagedPages, differed)
}

// TestZstdReadsAlike reads a file Lore writes through every reading path with each
// decoder: the batches are the same.
func TestZstdReadsAlike(t *testing.T) {
	needLibzstd(t)
	data := writeZstdFile(t, 60_000)
	f, err := Open(context.Background(), newMem(data), "z.parquet")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []int{pathPages, pathTyped, pathLibrary} {
		var read [2][][]*vector.Batch
		for i, native := range []bool{false, true} {
			withZstd(native, func() {
				withPath(path, func() { read[i], err = readGroups(f) })
			})
			if err != nil {
				t.Fatalf("%s path with %s: %v", pathNames[path], zstdModes[native], err)
			}
		}
		for g := range read[0] {
			if len(read[0][g]) != len(read[1][g]) {
				t.Fatalf("%s path, row group %d: %d and %d batches", pathNames[path], g, len(read[0][g]), len(read[1][g]))
			}
			for b, want := range read[0][g] {
				got := read[1][g][b]
				for c := range want.Cols {
					if !sameArray(got.Cols[c], want.Cols[c]) {
						t.Errorf("%s path, row group %d, batch %d, column %d differs", pathNames[path], g, b, c)
					}
				}
			}
		}
	}
}

// BenchmarkZstdPages decompresses the Zstandard pages of a file with each decoder
// (the bytes per second are the decompressed bytes), all of them and column by
// column: a file Lore writes, or the file LORE_ZSTD_BENCH_FILE names (a
// DuckDB-written lineitem, say).
func BenchmarkZstdPages(b *testing.B) {
	var data []byte
	if name := os.Getenv("LORE_ZSTD_BENCH_FILE"); name != "" {
		var err error
		if data, err = os.ReadFile(name); err != nil {
			b.Fatal(err)
		}
	} else {
		data = writeZstdFile(b, 300_000)
	}
	f, err := Open(context.Background(), newMem(data), "bench.parquet")
	if err != nil {
		b.Fatal(err)
	}
	bodies, sizes := compressedPages(data, "bench.parquet", compress.Codecs.Zstd, -1)
	b.Run("column=all", func(b *testing.B) { benchZstd(b, bodies, sizes) })
	for leaf := 0; leaf < f.sch.NumColumns(); leaf++ {
		bodies, sizes := compressedPages(data, "bench.parquet", compress.Codecs.Zstd, leaf)
		if len(bodies) == 0 {
			continue
		}
		b.Run("column="+f.sch.Column(leaf).Name(), func(b *testing.B) { benchZstd(b, bodies, sizes) })
	}
}

// BenchmarkZstdSmallPages decompresses pages of a few sizes with each decoder, to
// find under which size calling into C does not pay.
func BenchmarkZstdSmallPages(b *testing.B) {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, size := range []int{256, 1 << 10, 2 << 10, 4 << 10, 8 << 10, 64 << 10} {
		var bodies [][]byte
		var sizes []int
		for range 64 {
			plain := make([]byte, size)
			for i := range plain {
				plain[i] = byte('a' + rng.IntN(8)) // compressible, not trivially
			}
			bodies = append(bodies, enc.EncodeAll(plain, nil))
			sizes = append(sizes, size)
		}
		b.Run(fmt.Sprintf("size=%d,compressed=%d", size, len(bodies[0])), func(b *testing.B) { benchZstd(b, bodies, sizes) })
	}
}

// benchZstd decodes bodies, each into a buffer of its size, with each decoder.
func benchZstd(b *testing.B, bodies [][]byte, sizes []int) {
	total, most := 0, 0
	for _, n := range sizes {
		total += n
		most = max(most, n)
	}
	dst := make([]byte, most+decodeHeadroom)
	decoders := map[string]func(dst, src []byte) ([]byte, error){"go": goZstd}
	if z := loadLibzstd(); z != nil {
		decoders["libzstd"] = z.decode
	}
	for _, name := range []string{"go", "libzstd"} {
		decode := decoders[name]
		if decode == nil {
			continue
		}
		b.Run("decoder="+name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(total))
			for b.Loop() {
				for i, body := range bodies {
					if _, err := decode(dst[:sizes[i]], body); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// TestZstdChoice checks which decoder a page goes to: the system library for a
// page of a kilobyte or more when it is loaded, the pure-Go decoder for smaller
// pages, for a caller without a destination, and for every page in a process
// started with LORE_ZSTD=go.
func TestZstdChoice(t *testing.T) {
	big, small, dst := make([]byte, 4096), make([]byte, 100), make([]byte, 1<<20)
	if os.Getenv("LORE_ZSTD_CHILD") != "" {
		if nativeZstd(dst, big) != nil {
			t.Fatal("LORE_ZSTD=go: a page went to libzstd")
		}
		return
	}
	z := needLibzstd(t)
	t.Logf("libzstd %s", nativeZstdVersion())
	if os.Getenv("LORE_ZSTD") == "" {
		if nativeZstd(dst, big) != z {
			t.Error("a page of 4 KiB did not go to libzstd")
		}
	}
	if nativeZstd(dst, small) != nil || nativeZstd(nil, big) != nil {
		t.Error("a page of 100 bytes, or one without a destination, went to libzstd")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestZstdChoice$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LORE_ZSTD=go", "LORE_ZSTD_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("with LORE_ZSTD=go: %v\n%s", err, out)
	}
}

// BenchmarkSnappyPages decompresses every Snappy page of a file Lore writes, or of
// the file LORE_SNAPPY_BENCH_FILE names, with the codec Lore registers (klauspost's
// snappy package, its S2 assembly decoder), for comparison with BenchmarkZstdPages.
func BenchmarkSnappyPages(b *testing.B) {
	var data []byte
	if name := os.Getenv("LORE_SNAPPY_BENCH_FILE"); name != "" {
		var err error
		if data, err = os.ReadFile(name); err != nil {
			b.Fatal(err)
		}
	} else {
		data = writeTestFile(b, 300_000, "snappy")
	}
	bodies, sizes := compressedPages(data, "bench.parquet", compress.Codecs.Snappy, -1)
	total, most := 0, 0
	for _, n := range sizes {
		total += n
		most = max(most, n)
	}
	codec, err := compress.GetCodec(compress.Codecs.Snappy)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, most)
	b.ReportAllocs()
	b.SetBytes(int64(total))
	for b.Loop() {
		for i, body := range bodies {
			if _, err := compress.Decode(codec, dst[:sizes[i]], body); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestZstdConcurrent decodes different frames from many goroutines at once through
// the codec: each gets its own decompression context, so every output is its own
// frame's.
func TestZstdConcurrent(t *testing.T) {
	needLibzstd(t)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	var plains, frames [][]byte
	for i := range 8 {
		plain := []byte(strings.Repeat(fmt.Sprintf("goroutine %d writes its own page; ", i), 2000+i*300))
		plains = append(plains, plain)
		frames = append(frames, enc.EncodeAll(plain, nil))
	}
	codec, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	withZstd(true, func() {
		var wg sync.WaitGroup
		errc := make(chan error, len(frames))
		for i := range frames {
			wg.Go(func() {
				dst := make([]byte, len(plains[i]))
				for range 50 {
					out, err := compress.Decode(codec, dst, frames[i])
					if err != nil || !bytes.Equal(out, plains[i]) {
						errc <- fmt.Errorf("goroutine %d: %v (equal %v)", i, err, bytes.Equal(out, plains[i]))
						return
					}
				}
			})
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Error(err)
		}
	})
}
