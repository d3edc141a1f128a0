package parquet

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// fileEncoder encodes one Parquet file's row groups for a LayoutWriter, a page of
// every column per call.
type fileEncoder interface {
	// newRowGroup opens a row group; the previous one must be closed.
	newRowGroup() error
	// writePage encodes rec's rows as the next page of each column of the open
	// row group. rec is the encoder's until it returns (columnEncoder retains the
	// columns it still needs).
	writePage(rec arrow.Record) error
	// rowGroupBytes is the encoded, compressed bytes of the open row group's closed
	// pages: exact, or (columnEncoder, while pages are being encoded) estimated
	// from the pages done so far.
	rowGroupBytes(exact bool) int64
	// closeRowGroup finishes the open row group.
	closeRowGroup() error
	// fileBytes is the compressed bytes of the file so far, closed row groups
	// included.
	fileBytes() int64
	// finish closes the open row group, adds kv (in order) to the footer and writes
	// it. The encoder is done either way.
	finish(kv [][2]string) error
	// abort stops, leaving the file as it is.
	abort()
}

// newFileEncoder starts a file of schema on w. A schema of flat columns is encoded
// a column per goroutine (columnEncoder); one with nested columns, whose levels
// only arrow-go's record writer builds, one column after another (recordEncoder).
func newFileEncoder(schema *arrow.Schema, w io.Writer, props *pq.WriterProperties) (fileEncoder, error) {
	arrProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	for _, f := range schema.Fields() {
		if types.IsNested(f.Type) {
			fw, err := pqarrow.NewFileWriter(schema, w, props, arrProps)
			if err != nil {
				return nil, err
			}
			return &recordEncoder{fw: fw}, nil
		}
	}
	sc, err := pqarrow.ToParquet(schema, props, arrProps)
	if err != nil {
		return nil, err
	}
	// The Arrow schema in the footer, as arrow-go's record writer stores it, so that
	// Arrow readers get back the types written.
	meta := metadata.KeyValueMetadata{}
	for i, k := range schema.Metadata().Keys() {
		meta.Append(k, schema.Metadata().Values()[i])
	}
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(arrowSchemaBytes(schema, props.Allocator())))
	pw, err := file.NewParquetWriterWithError(w, sc.Root(), file.WithWriterProps(props), file.WithWriteMetadata(meta))
	if err != nil {
		return nil, err
	}
	return &columnEncoder{pw: pw, schema: schema, arrProps: arrProps}, nil
}

// arrowSchemaBytes is the Arrow IPC stream of schema alone (its schema message and
// the end-of-stream marker), the form the ARROW:schema key of a footer holds.
func arrowSchemaBytes(schema *arrow.Schema, mem memory.Allocator) []byte {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	w.Close()
	return buf.Bytes()
}

// recordEncoder writes pages through arrow-go's record writer, a column at a time.
type recordEncoder struct{ fw *pqarrow.FileWriter }

func (e *recordEncoder) newRowGroup() error             { return e.fw.NewBufferedRowGroupChecked() }
func (e *recordEncoder) writePage(r arrow.Record) error { return e.fw.WriteBuffered(r) }
func (e *recordEncoder) rowGroupBytes(bool) int64       { return e.fw.RowGroupTotalCompressedBytes() }
func (e *recordEncoder) closeRowGroup() error           { return nil } // the next row group or the footer closes it
func (e *recordEncoder) fileBytes() int64               { return e.fw.TotalCompressedBytes() }
func (e *recordEncoder) abort()                         { e.fw.Close() }

func (e *recordEncoder) finish(kv [][2]string) error {
	for _, p := range kv {
		if err := e.fw.AppendKeyValueMetadata(p[0], p[1]); err != nil {
			e.fw.Close()
			return err
		}
	}
	return e.fw.Close()
}

// columnEncoder encodes each column of a row group in its own goroutine: a page of
// one column does not wait for the other columns' pages, so encoding, dictionary
// building and compression use every core. Each column chunk of a buffered row
// group has its own writer, page buffers and index builders; the chunks are copied
// into the file, in column order, when the row group closes.
type columnEncoder struct {
	pw       *file.Writer
	schema   *arrow.Schema
	arrProps pqarrow.ArrowWriterProperties
	rgw      file.BufferedRowGroupWriter
	cols     []*columnWorker
	failed   atomic.Bool
	// pending counts the pages handed to workers and not yet encoded.
	pending sync.WaitGroup
	// rows is the rows handed to the workers in the open row group.
	rows int64
}

// columnWorker encodes the pages of one column chunk in order.
type columnWorker struct {
	pages chan arrow.Array
	done  chan struct{}
	err   error
	// bytes and rows are the chunk's compressed bytes and its rows after its
	// last encoded page.
	bytes, rows atomic.Int64
}

// pagesAhead is how many pages of a column may wait for its worker.
const pagesAhead = 4

func (e *columnEncoder) newRowGroup() error {
	rgw, err := e.pw.AppendBufferedRowGroupChecked()
	if err != nil {
		return err
	}
	e.rgw, e.rows = rgw, 0
	e.cols = make([]*columnWorker, e.schema.NumFields())
	for i, f := range e.schema.Fields() {
		cw, err := rgw.Column(i)
		if err != nil {
			e.stop()
			return err
		}
		w := &columnWorker{pages: make(chan arrow.Array, pagesAhead), done: make(chan struct{})}
		e.cols[i] = w
		go w.run(pqarrow.NewArrowWriteContext(context.Background(), &e.arrProps), cw, f.Nullable, e)
	}
	return nil
}

// run encodes pages until its channel closes. After an error it drops the rest.
func (w *columnWorker) run(ctx context.Context, cw file.ColumnChunkWriter, nullable bool, e *columnEncoder) {
	defer close(w.done)
	var def []int16
	for arr := range w.pages {
		if w.err == nil {
			var levels []int16
			if nullable {
				// A flat optional column: definition level 1 for a value, 0 for a null.
				def = defLevels(def, arr)
				levels = def
			}
			if err := writeColumn(ctx, cw, arr, levels, nullable); err != nil {
				w.err = err
				e.failed.Store(true)
			}
			w.bytes.Store(cw.TotalCompressedBytes())
		}
		w.rows.Add(int64(arr.Len()))
		arr.Release()
		e.pending.Done()
	}
}

// writeColumn encodes arr into cw, a panic of the encoder returned as an error: it
// runs on a goroutine of its own, where a panic would end the process.
func writeColumn(ctx context.Context, cw file.ColumnChunkWriter, arr arrow.Array, levels []int16, nullable bool) (err error) {
	defer errs.Recover(&err)
	return pqarrow.WriteArrowToColumn(ctx, cw, arr, levels, nil, nullable)
}

// defLevels fills buf with arr's definition levels.
func defLevels(buf []int16, arr arrow.Array) []int16 {
	n := arr.Len()
	if cap(buf) < n {
		buf = make([]int16, n)
	}
	buf = buf[:n]
	if arr.NullN() == 0 {
		for i := range buf {
			buf[i] = 1
		}
		return buf
	}
	for i := range buf {
		if arr.IsValid(i) {
			buf[i] = 1
		} else {
			buf[i] = 0
		}
	}
	return buf
}

func (e *columnEncoder) writePage(rec arrow.Record) error {
	if e.failed.Load() {
		return e.stop()
	}
	e.pending.Add(len(e.cols))
	for i, w := range e.cols {
		c := rec.Column(i)
		c.Retain()
		w.pages <- c
	}
	e.rows += rec.NumRows()
	return nil
}

// rowGroupBytes adds up the columns' bytes. A column with pages still in its
// worker's queue is counted at the bytes per row of its encoded pages; one with
// none encoded yet, or an exact count, waits for the workers.
func (e *columnEncoder) rowGroupBytes(exact bool) int64 {
	if exact {
		e.pending.Wait()
	}
	var n int64
	for _, w := range e.cols {
		rows, bytes := w.rows.Load(), w.bytes.Load()
		if rows == 0 && e.rows > 0 {
			if exact {
				continue
			}
			return e.rowGroupBytes(true)
		}
		n += bytes
		if rows > 0 && rows < e.rows {
			n += (e.rows - rows) * bytes / rows
		}
	}
	return n
}

// stop ends the workers and returns the first error of one.
func (e *columnEncoder) stop() error {
	var first error
	for i, w := range e.cols {
		if w == nil {
			continue
		}
		close(w.pages)
		<-w.done
		if w.err != nil && first == nil {
			first = fmt.Errorf("column %q: %w", e.schema.Field(i).Name, w.err)
		}
	}
	e.cols = nil
	return first
}

func (e *columnEncoder) closeRowGroup() error {
	if e.rgw == nil {
		return nil
	}
	err := e.stop()
	if err != nil {
		return err
	}
	rgw := e.rgw
	e.rgw = nil
	return rgw.Close()
}

func (e *columnEncoder) fileBytes() int64 { return e.pw.TotalCompressedBytes() }

func (e *columnEncoder) finish(kv [][2]string) error {
	if err := e.closeRowGroup(); err != nil {
		e.abort()
		return err
	}
	for _, p := range kv {
		if err := e.pw.AppendKeyValueMetadata(p[0], p[1]); err != nil {
			e.pw.Close()
			return err
		}
	}
	return e.pw.Close()
}

func (e *columnEncoder) abort() {
	e.stop()
	e.rgw = nil
	e.pw.Close()
}

var (
	_ fileEncoder = (*recordEncoder)(nil)
	_ fileEncoder = (*columnEncoder)(nil)
)
