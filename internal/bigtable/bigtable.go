// Package bigtable writes the large tables benchmarks plan over (a Delta log, an
// Iceberg table of 10,000 files) once, into a cache under the temporary directory, and
// the small Parquet files they consist of. Test and benchmark code only.
package bigtable

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Cached is a table built once per process and kept across runs.
type Cached struct {
	once sync.Once
	dir  string
	err  error
}

// Dir returns the directory name under os.TempDir() holding the table, writing it
// with write first when done does not find it complete. The table is written under a
// temporary name and renamed when complete, so an interrupted run leaves nothing that
// looks finished.
func (c *Cached) Dir(tb testing.TB, name, done string, write func(root string) error) string {
	tb.Helper()
	c.once.Do(func() {
		dir := filepath.Join(os.TempDir(), name)
		finished := func() bool {
			_, err := os.Stat(filepath.Join(dir, done))
			return err == nil
		}
		if finished() {
			c.dir = dir
			return
		}
		tmp, err := os.MkdirTemp(os.TempDir(), name+".tmp-")
		if err != nil {
			c.err = err
			return
		}
		if err := write(tmp); err != nil {
			os.RemoveAll(tmp)
			c.err = err
			return
		}
		if err := os.Rename(tmp, dir); err != nil {
			// Another process may have finished it first: use that one.
			os.RemoveAll(tmp)
			if !finished() {
				c.err = err
				return
			}
		}
		c.dir = dir
	})
	if c.err != nil {
		tb.Fatalf("cannot write the table %s: %v", name, c.err)
	}
	return c.dir
}

// IDFile is a Parquet file of one int64 column id holding first, first+1, …,
// first+rows-1, with statistics.
func IDFile(first int64, rows int) ([]byte, error) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	props := pq.NewWriterProperties(pq.WithCompression(compress.Codecs.Snappy), pq.WithStats(true))
	ids := make([]int64, rows)
	for k := range ids {
		ids[k] = first + int64(k)
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(ids, nil)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(rows))
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	if err := pqarrow.WriteTable(tbl, &buf, int64(rows), props, pqarrow.DefaultWriterProps()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
