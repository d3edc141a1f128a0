// Package vector is Lore's batch format: Arrow arrays of equal length plus an
// optional selection vector. Filters narrow the selection instead of copying rows;
// operators that must materialise (sorts, joins' build sides, results) gather.
//
// Invariants: every column of a batch has Rows elements; Sel, when not nil, holds
// strictly increasing positions in [0, Rows). Batches own no memory beyond their
// arrays, which are garbage collected (Lore allocates with the Go allocator).
package vector

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BatchSize is the number of rows operators aim to put in a batch.
const BatchSize = 8192

// Batch is a set of columns of equal length with an optional selection.
type Batch struct {
	Cols []arrow.Array
	Rows int     // physical length of every column
	Sel  []int32 // selected positions, ascending; nil selects every row
}

// New returns a batch over cols selecting every row.
func New(cols []arrow.Array, rows int) *Batch { return &Batch{Cols: cols, Rows: rows} }

// Len is the number of selected rows.
func (b *Batch) Len() int {
	if b.Sel != nil {
		return len(b.Sel)
	}
	return b.Rows
}

// Selection returns the selected positions, materialising the identity selection
// when the batch selects every row.
func (b *Batch) Selection() []int32 {
	if b.Sel != nil {
		return b.Sel
	}
	return Identity(b.Rows)
}

// Identity returns the positions 0..n-1.
func Identity(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(i)
	}
	return s
}

// Compact returns a batch without a selection: each column gathered at the selected
// positions, in the selection's order (which may be any order here). Nil (pruned)
// columns stay nil. A batch that selects every row is returned as it is.
func (b *Batch) Compact() *Batch { return b.CompactInto(nil) }

// CompactInto is Compact whose fixed-width columns are gathered into buffers room
// lends (TakeInto); room nil allocates.
func (b *Batch) CompactInto(room func(n int) []byte) *Batch {
	if b.Sel == nil {
		return b
	}
	cols := make([]arrow.Array, len(b.Cols))
	for i, c := range b.Cols {
		if c != nil {
			cols[i] = TakeInto(c, b.Sel, room)
		}
	}
	return &Batch{Cols: cols, Rows: len(b.Sel)}
}

// Record converts a batch to an Arrow record with the given schema, compacting first.
func (b *Batch) Record(schema *arrow.Schema) arrow.Record {
	c := b.Compact()
	return array.NewRecord(schema, c.Cols, int64(c.Rows))
}

// FromRecord wraps a record's columns as a batch selecting every row.
func FromRecord(r arrow.Record) *Batch {
	cols := make([]arrow.Array, r.NumCols())
	for i := range cols {
		cols[i] = r.Column(i)
	}
	return &Batch{Cols: cols, Rows: int(r.NumRows())}
}

// Allocator is the allocator Lore's arrays are built with.
var Allocator memory.Allocator = memory.DefaultAllocator
