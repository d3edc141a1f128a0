package parquet

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/vector"
)

// ReadRowGroup reads the top-level columns cols (indexes into Schema) of row group rg
// and calls fn with batches of about vector.BatchSize rows whose Cols are in the order
// of cols. With no columns, fn still gets batches with Rows set (the footer's count) and
// no Cols. Errors decoding data are errs.CorruptSource naming the file and the row
// group; an error from fn is returned as it is. ctx is checked between batches.
func (f *File) ReadRowGroup(ctx context.Context, rg int, cols []int, fn func(*vector.Batch) error) error {
	if rg < 0 || rg >= len(f.groups) {
		return errs.New(errs.Internal, "BUG: row group %d of %q out of range", rg, f.name)
	}
	for _, c := range cols {
		if c < 0 || c >= len(f.cols) {
			return errs.New(errs.Internal, "BUG: column %d of %q out of range", c, f.name)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(cols) == 0 {
		for left := f.groups[rg].Rows; left > 0; {
			n := min(left, vector.BatchSize)
			if err := fn(&vector.Batch{Cols: []arrow.Array{}, Rows: int(n)}); err != nil {
				return err
			}
			left -= n
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return nil
	}
	if f.src == nil {
		return errs.New(errs.Internal, "BUG: %q has no open reader", f.name)
	}
	rd, err := f.openGroup(ctx, rg, cols)
	if err != nil {
		return err
	}
	defer rd.release()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := rd.next()
		if err != nil || b == nil {
			return err
		}
		if err := fn(b); err != nil {
			return err
		}
	}
}

// groupReader reads the distinct requested columns of one row group in lockstep.
type groupReader struct {
	f       *File
	rg      int
	uniq    []int // distinct schema columns read
	readers []*pqarrow.ColumnReader
	pos     []int // for each requested column, its index in uniq
	rows    int64
}

func (f *File) openGroup(ctx context.Context, rg int, cols []int) (g *groupReader, err error) {
	g = &groupReader{f: f, rg: rg, pos: make([]int, len(cols))}
	defer func() {
		if p := recover(); p != nil {
			g.release()
			g, err = nil, f.readError(rg, panicText(p))
		}
	}()
	rdr, err := file.NewParquetReader(io.NewSectionReader(f.src, 0, f.size),
		file.WithReadProps(readProps()), file.WithMetadata(f.meta))
	if err != nil {
		return nil, f.readError(rg, err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, f.readError(rg, err)
	}
	seen := map[int]int{}
	for i, c := range cols {
		k, ok := seen[c]
		if !ok {
			k = len(g.uniq)
			seen[c] = k
			g.uniq = append(g.uniq, c)
			leaves := map[int]bool{}
			for _, l := range f.cols[c].leaves {
				leaves[l] = true
			}
			cr, err := fr.GetFieldReader(ctx, c, leaves, []int{rg})
			if err != nil {
				g.release()
				return nil, f.readError(rg, err)
			}
			g.readers = append(g.readers, cr)
		}
		g.pos[i] = k
	}
	return g, nil
}

func (g *groupReader) release() {
	for _, r := range g.readers {
		if r != nil {
			r.Release()
		}
	}
	g.readers = nil
}

// next reads the next batch, or returns nil at the end of the row group.
func (g *groupReader) next() (b *vector.Batch, err error) {
	f := g.f
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, f.readError(g.rg, panicText(p))
		}
	}()
	arrs := make([]arrow.Array, len(g.uniq))
	n := -1
	for k, r := range g.readers {
		ch, err := r.NextBatch(vector.BatchSize)
		if err != nil {
			return nil, f.readError(g.rg, err)
		}
		arr, err := single(ch)
		ch.Release()
		if err != nil {
			return nil, f.readError(g.rg, err)
		}
		c := g.uniq[k]
		arr, err = normalize(arr, f.schema.Field(c).Type)
		if err != nil {
			return nil, f.readError(g.rg, err)
		}
		if n < 0 {
			n = arr.Len()
		} else if arr.Len() != n {
			return nil, f.readError(g.rg, fmt.Errorf("column %q has %d values where %q has %d",
				f.schema.Field(c).Name, arr.Len(), f.schema.Field(g.uniq[0]).Name, n))
		}
		arrs[k] = arr
	}
	if n <= 0 {
		if g.rows != f.groups[g.rg].Rows && f.groups[g.rg].Rows != 0 {
			return nil, f.readError(g.rg, fmt.Errorf("read %d rows, the footer says %d", g.rows, f.groups[g.rg].Rows))
		}
		return nil, nil
	}
	g.rows += int64(n)
	out := make([]arrow.Array, len(g.pos))
	for i, k := range g.pos {
		out[i] = arrs[k]
	}
	return &vector.Batch{Cols: out, Rows: n}, nil
}

func (f *File) readError(rg int, cause any) error {
	return errs.New(errs.CorruptSource, "cannot read row group %d of %q: %v", rg, f.name, cause)
}

// single turns a chunked array into one array.
func single(ch *arrow.Chunked) (arrow.Array, error) {
	chunks := ch.Chunks()
	switch len(chunks) {
	case 0:
		return array.MakeArrayOfNull(memory.DefaultAllocator, ch.DataType(), 0), nil
	case 1:
		chunks[0].Retain()
		return chunks[0], nil
	}
	return array.Concatenate(chunks, memory.DefaultAllocator)
}
