package parquet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"golang.org/x/sync/errgroup"

	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/vector"
)

// TestPageShareDecompressesEachPageOnce: parts of a row group whose chunks are single
// pages (as DuckDB writes them), read at once through one share, give the rows of
// the row group read whole, and the share holds one decompressed body per page of
// the chunks — a dictionary page and a data page each — however the parts met them.
// Once every part is done, the share keeps none.
func TestPageShareDecompressesEachPageOnce(t *testing.T) {
	const rows = 50_000
	dir := t.TempDir()
	path := filepath.Join(dir, "t.parquet")
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i) * 7)
		if i%11 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("v%d", i%300))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := pq.NewWriterProperties(pq.WithMaxRowGroupLength(rows), pq.WithDictionaryFor("id", false),
		pq.WithCompression(compress.Codecs.Snappy), pq.WithDataPageSize(64<<20))
	if err := pqarrow.WriteTable(array.NewTableFromRecords(sch, []arrow.RecordBatch{rec}), out, rows, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	out.Close()

	ctx := context.Background()
	r, err := storage.Local{}.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := Open(ctx, r, "t.parquet")
	if err != nil {
		t.Fatal(err)
	}
	cols := []int{0, 1}
	if whole, size, err := f.WholePages(0, cols); err != nil || whole != size {
		t.Fatalf("chunks of single pages: %d of %d bytes (%v)", whole, size, err)
	}
	read := func(f *File, rr []RowRange) (string, error) {
		var s []byte
		err := f.ReadRowGroupLate(ctx, 0, rr, cols, nil, func(b *vector.Batch, _ Late) error {
			id, str := b.Cols[0].(*array.Int64), b.Cols[1]
			for i := range b.Rows {
				s = fmt.Appendf(s, "%d:%s;", id.Value(i), str.ValueStr(i))
			}
			return nil
		})
		return string(s), err
	}
	want, err := read(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	parts := []RowRange{{0, 16_000}, {16_000, 17_000}, {33_000, 17_000}}
	for round := range 20 {
		// One part more than is read: the test holds the share open to look at it
		// once the parts are done.
		share := NewPageShare(0, cols, len(parts)+1)
		got := make([]string, len(parts))
		var g errgroup.Group
		for i, rr := range parts {
			g.Go(func() error {
				defer share.Done()
				var err error
				got[i], err = read(f.Sharing(share), []RowRange{rr})
				return err
			})
		}
		// The pages the share must hold, counted before the last part is done.
		pages := 0
		for _, c := range cols {
			w, err := f.chunkWalker(0, f.cols[c].leaves[0])
			if err != nil {
				t.Fatal(err)
			}
			for {
				_, ok, err := w.next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				pages++
			}
			w.close()
		}
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
		if all := got[0] + got[1] + got[2]; all != want {
			t.Fatalf("round %d: the parts read %d bytes of rows, not the %d of the whole row group, or other rows", round, len(all), len(want))
		}
		if len(share.pages) != pages || pages != 3 {
			t.Fatalf("round %d: the share holds %d pages; the chunks have %d (want a dictionary and two data pages)", round, len(share.pages), pages)
		}
		share.Done()
		if len(share.pages) != 0 {
			t.Fatalf("round %d: %d pages kept after every part is done", round, len(share.pages))
		}
	}
}

// panickyCodec decodes nothing: once let go, it panics.
type panickyCodec struct {
	compress.Codec
	go_ chan struct{}
}

func (c panickyCodec) DecodeWithError(dst, src []byte) ([]byte, error) {
	<-c.go_
	panic("decoder fault")
}

// TestPageShareDecoderPanic: when the part decompressing a page panics, a part
// waiting for that page gets an error instead of waiting for ever.
func TestPageShareDecoderPanic(t *testing.T) {
	body := bytes.Repeat([]byte{7}, 64)
	codec := panickyCodec{go_: make(chan struct{})}
	p := pageAt{pageHeader: pageHeader{typ: pageData, uncompressed: 128, compressed: int32(len(body))}}
	walker := func() *pageWalker {
		return &pageWalker{src: bytes.NewReader(body), end: int64(len(body)), codec: codec, most: 1 << 20}
	}
	share := NewPageShare(0, nil, 2)
	first := make(chan any)
	go func() {
		defer func() { first <- recover() }()
		share.page(walker(), p)
	}()
	for { // until the first part has claimed the page
		share.mu.Lock()
		n := len(share.pages)
		share.mu.Unlock()
		if n == 1 {
			break
		}
		runtime.Gosched()
	}
	second := make(chan error)
	go func() {
		_, err := share.page(walker(), p)
		second <- err
	}()
	close(codec.go_)
	if r := <-first; r == nil {
		t.Fatal("the first part's decoder did not panic")
	}
	select {
	case err := <-second:
		if err == nil {
			t.Fatal("the waiting part got the page of a decoder that panicked")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting part still waits for the page")
	}
}
