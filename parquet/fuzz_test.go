package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/vector"
)

// memReader is a storage.Reader over bytes.
type memReader struct{ *bytes.Reader }

func (memReader) Close() error { return nil }

func newMem(b []byte) memReader { return memReader{bytes.NewReader(b)} }

// smallFile is a Parquet file written here: an int64, a nullable string and a double,
// in two row groups.
func smallFile(t testing.TB) []byte {
	mem := memory.DefaultAllocator
	ib := array.NewInt64Builder(mem)
	sb := array.NewStringBuilder(mem)
	fb := array.NewFloat64Builder(mem)
	for i := 0; i < 50; i++ {
		ib.Append(int64(i * 3))
		if i%7 == 0 {
			sb.AppendNull()
		} else {
			sb.Append("v" + string(rune('a'+i%26)))
		}
		fb.Append(float64(i) / 4)
	}
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	rec := array.NewRecord(sch, []arrow.Array{ib.NewArray(), sb.NewArray(), fb.NewArray()}, 50)
	var buf bytes.Buffer
	props := pq.NewWriterProperties(pq.WithMaxRowGroupLength(25), pq.WithDictionaryDefault(true))
	if err := pqarrow.WriteTable(array.NewTableFromRecords(sch, []arrow.Record{rec}), &buf, 25, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// openAndRead opens data and reads its first row group; it must not panic, and any
// failure must be CORRUPT_SOURCE.
func openAndRead(t *testing.T, data []byte) {
	ctx := context.Background()
	f, err := Open(ctx, newMem(data), "fuzz.parquet")
	if err != nil {
		if errs.CodeOf(err) != errs.CorruptSource {
			t.Fatalf("open: code %s: %v", errs.CodeOf(err), err)
		}
		return
	}
	if f.NumRowGroups() == 0 {
		return
	}
	cols := make([]int, f.Schema().NumFields())
	for i := range cols {
		cols[i] = i
	}
	// Stop after a few batches: a corrupt header may promise a huge row group.
	batches := 0
	err = f.ReadRowGroup(ctx, 0, cols, func(b *vector.Batch) error {
		batches++
		if batches > 8 {
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop && errs.CodeOf(err) != errs.CorruptSource {
		t.Fatalf("read: code %s: %v", errs.CodeOf(err), err)
	}
	// The late and ranged reads and the page index go through the page walker's own
	// header parsing: the same rules hold.
	for c := range cols {
		f.PageIndex(0, c)
	}
	rows := f.RowGroup(0).Rows
	early := make([]bool, len(cols))
	early[0] = true
	batches = 0
	err = f.ReadRowGroupLate(ctx, 0, []RowRange{{rows / 3, rows / 3}, {rows - rows/4, rows / 4}}, cols, early,
		func(b *vector.Batch, late Late) error {
			batches++
			if batches > 8 {
				return errStop
			}
			sel := []int32{0, int32(b.Rows / 2), int32(b.Rows - 1)}
			switch batches % 4 {
			case 1:
				return late(nil, nil, false)
			case 2:
				return late(nil, sel, false)
			case 3:
				return late(nil, sel, true)
			}
			return nil
		})
	if err != nil && err != errStop && errs.CodeOf(err) != errs.CorruptSource {
		t.Fatalf("late read: code %s: %v", errs.CodeOf(err), err)
	}
}

var errStop = errs.New(errs.Canceled, "stop")

// seedFiles are real files the fuzz targets start from: files written here in the
// encodings, codecs and page versions the readers handle, with and without a stored
// Arrow schema, and small files of parquet-testing written by other engines.
func seedFiles(t testing.TB) [][]byte {
	files := [][]byte{smallFile(t), arrowSchemaFile(t), compressedFile(t, compress.Codecs.Zstd),
		compressedFile(t, compress.Codecs.Snappy), compressedFile(t, compress.Codecs.Gzip), pageV2File(t)}
	if dir, err := shareddata.Find(); err == nil {
		for _, name := range []string{"apache/alltypes_plain.parquet", "apache/nulls.snappy.parquet",
			"duckdb/date.parquet", "apache/int32_decimal.parquet", "apache/datapage_v2.snappy.parquet",
			"apache/nested_lists.snappy.parquet", "apache/alltypes_dictionary.parquet",
			"apache/byte_stream_split.zstd.parquet", "apache/delta_byte_array.parquet"} {
			if b, err := os.ReadFile(filepath.Join(dir, "parquet-testing", name)); err == nil {
				files = append(files, b)
			}
		}
	}
	return files
}

// pageV2File is smallFile's data in V2 data pages, several to a column chunk.
func pageV2File(t testing.TB) []byte {
	f, err := Open(context.Background(), newMem(smallFile(t)), "small.parquet")
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.Record
	for g := 0; g < f.NumRowGroups(); g++ {
		err := f.ReadRowGroup(context.Background(), g, []int{0, 1, 2}, func(b *vector.Batch) error {
			cols := make([]arrow.Array, len(b.Cols))
			for i, c := range b.Cols {
				if d, ok := c.(*array.Dictionary); ok {
					c, err = normalize(d, arrow.BinaryTypes.String)
					if err != nil {
						return err
					}
				}
				c.Retain()
				cols[i] = c
			}
			recs = append(recs, array.NewRecord(f.Schema(), cols, int64(b.Rows)))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	props := pq.NewWriterProperties(pq.WithDataPageVersion(pq.DataPageV2), pq.WithDataPageSize(64),
		pq.WithCompression(compress.Codecs.Snappy), pq.WithDictionaryDefault(false))
	if err := pqarrow.WriteTable(array.NewTableFromRecords(f.Schema(), recs), &buf, 20, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// footerStart is where the footer of a well-formed file begins.
func footerStart(data []byte) int {
	return len(data) - 8 - int(binary.LittleEndian.Uint32(data[len(data)-8:]))
}

// mutate returns base with patch applied in [from, to): written over the bytes at
// from+at%(to-from), or, by mode, inserted there or replacing as many bytes as it
// has with nothing (a deletion). A footer that changes length keeps its length field
// right when keepLength is set, so that the mutation reaches the Thrift parser.
func mutate(base []byte, from, to int, at uint32, patch []byte, mode uint8, keepLength bool) []byte {
	if to <= from {
		return base
	}
	p := from + int(at%uint32(to-from))
	out := bytes.Clone(base)
	switch mode % 3 {
	case 0:
		copy(out[p:to], patch)
		return out
	case 1:
		out = append(append(out[:p:p], patch...), base[p:]...)
	case 2:
		out = append(out[:p:p], base[min(p+len(patch), to):]...)
	}
	if keepLength && len(out) >= 8 {
		flen := int64(to-from) + int64(len(out)-len(base))
		binary.LittleEndian.PutUint32(out[len(out)-8:], uint32(max(flen, 0)))
	}
	return out
}

// allocGuard fails the test when fn allocates more than a corrupt file may make
// Lore allocate: a little over the largest page buffer accepted.
func allocGuard(t *testing.T, fn func()) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 3*maxUncompressedPage {
		t.Fatalf("reading the input allocated %d MiB", n>>20)
	}
}

// FuzzOpenFooter opens and reads whole files, mutated anywhere.
func FuzzOpenFooter(f *testing.F) {
	small := smallFile(f)
	f.Add(small[:len(small)-1])
	f.Add(small[:len(small)/2])
	f.Add(small[len(small)/2:])
	f.Add([]byte("PAR1PAR1"))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	for _, b := range seedFiles(f) {
		f.Add(b)
		f.Add(b[:len(b)-9])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		allocGuard(t, func() { openAndRead(t, data) })
	})
}

// FuzzFooterMutation mutates the footers of real files (overwrites, insertions and
// deletions within the Thrift FileMetaData, the length kept consistent) and opens and
// reads them.
func FuzzFooterMutation(f *testing.F) {
	bases := seedFiles(f)
	for i, b := range bases {
		n := len(b) - 8 - footerStart(b)
		for _, at := range []int{0, n / 7, n / 3, n / 2, n - 40, n - 2} {
			f.Add(uint8(i), uint32(max(at, 0)), []byte{0xff}, uint8(0))
			f.Add(uint8(i), uint32(max(at, 0)), []byte{0x19, 0xfc, 0xff, 0xff, 0x0f}, uint8(1))
			f.Add(uint8(i), uint32(max(at, 0)), []byte{0, 0}, uint8(2))
		}
		// The stored Arrow schema's bytes, where there is one.
		if k := bytes.LastIndex(b, []byte("ARROW:schema")); k > 0 {
			f.Add(uint8(i), uint32(k-footerStart(b)+30), []byte("b"), uint8(0))
			f.Add(uint8(i), uint32(k-footerStart(b)+200), []byte("////"), uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, at uint32, patch []byte, mode uint8) {
		base := bases[int(which)%len(bases)]
		data := mutate(base, footerStart(base), len(base)-8, at, patch, mode, true)
		allocGuard(t, func() { openAndRead(t, data) })
	})
}

// FuzzReadPages mutates the page headers and page bodies (dictionary and data pages)
// of real files and reads every column of every row group.
func FuzzReadPages(f *testing.F) {
	bases := seedFiles(f)
	for i, b := range bases {
		ff, err := Open(context.Background(), newMem(b), "seed.parquet")
		if err != nil {
			continue
		}
		for g := 0; g < ff.NumRowGroups(); g++ {
			for leaf := 0; leaf < ff.sch.NumColumns(); leaf++ {
				w, err := ff.chunkWalker(g, leaf)
				if w == nil || err != nil {
					continue
				}
				from := w.pos
				for k := 0; k < 4; k++ {
					pg, ok, err := w.next()
					if !ok || err != nil {
						break
					}
					// The page's header (its first and last bytes) and its body.
					for _, at := range []int64{from, pg.body - 2, pg.body} {
						f.Add(uint8(i), uint32(at-4), []byte{0xff}, uint8(0))
						f.Add(uint8(i), uint32(at-4), []byte{0x7f, 0xff, 0xff, 0xff}, uint8(0))
					}
					from = w.pos
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, at uint32, patch []byte, mode uint8) {
		base := bases[int(which)%len(bases)]
		// Pages lie between the leading magic bytes and the footer; overwriting keeps
		// every offset in the footer right.
		data := mutate(base, 4, footerStart(base), at, patch, 0, false)
		allocGuard(t, func() { readEverything(t, data) })
	})
}

// readEverything opens data and reads every column of every row group, a few
// batches of each, on the page path and on the library's; any failure must be
// CORRUPT_SOURCE.
func readEverything(t *testing.T, data []byte) {
	ctx := context.Background()
	for _, path := range []int{pathPages, pathLibrary} {
		withPath(path, func() {
			f, err := Open(ctx, newMem(data), "fuzz.parquet")
			if err != nil {
				if errs.CodeOf(err) != errs.CorruptSource {
					t.Fatalf("open: code %s: %v", errs.CodeOf(err), err)
				}
				return
			}
			cols := make([]int, f.Schema().NumFields())
			for i := range cols {
				cols[i] = i
			}
			for g := 0; g < f.NumRowGroups(); g++ {
				batches := 0
				err := f.ReadRowGroup(ctx, g, cols, func(b *vector.Batch) error {
					if batches++; batches > 8 {
						return errStop
					}
					return nil
				})
				if err != nil && err != errStop && errs.CodeOf(err) != errs.CorruptSource {
					t.Fatalf("%s path, row group %d: code %s: %v", pathNames[path], g, errs.CodeOf(err), err)
				}
			}
		})
	}
}

// TestSmallFileRoundTrip checks the file the fuzz target starts from reads back whole.
func TestSmallFileRoundTrip(t *testing.T) {
	f, err := Open(context.Background(), newMem(smallFile(t)), "small.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != 50 || f.NumRowGroups() != 2 {
		t.Fatalf("%d rows in %d row groups", f.NumRows(), f.NumRowGroups())
	}
	rg := f.RowGroup(1)
	is := rg.Columns[0]
	if !is.HasMinMax || is.Min.I != 75 || is.Max.I != 147 || !is.MinExact || !is.MaxExact {
		t.Errorf("stats of i in row group 1: %+v", is)
	}
	ss := f.RowGroup(0).Columns[1]
	if !ss.HasNullCount || ss.NullCount != 4 || ss.MinExact {
		t.Errorf("stats of s in row group 0: %+v (byte-array bounds without flags are not exact)", ss)
	}
	var sum int64
	err = f.ReadRowGroup(context.Background(), 1, []int{2, 0}, func(b *vector.Batch) error {
		is := b.Cols[1].(*array.Int64)
		for i := 0; i < b.Rows; i++ {
			sum += is.Value(i)
		}
		if b.Cols[0].DataType().ID() != arrow.FLOAT64 {
			t.Errorf("column order: first is %s", b.Cols[0].DataType())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(3 * (25 + 49) * 25 / 2); sum != want {
		t.Errorf("sum %d, want %d", sum, want)
	}
}
