package source

import (
	"sync"
	"sync/atomic"
)

// Counters are what one scan skipped and read, layer by layer (SPEC §8). They are
// updated atomically by parallel readers and copied into the query record.
type Counters struct {
	FilesPrunedByPartition atomic.Int64
	FilesConsidered        atomic.Int64
	FilesSkipped           atomic.Int64
	FilesOpened            atomic.Int64
	RowGroupsConsidered    atomic.Int64
	RowGroupsPruned        atomic.Int64
	RowGroupsAnswered      atomic.Int64
	RowGroupsRead          atomic.Int64
	// RowGroupsPrunedByBloom are the row groups of RowGroupsPruned that a bloom
	// filter ruled out after their statistics admitted them.
	RowGroupsPrunedByBloom atomic.Int64
	BloomFiltersRead       atomic.Int64
	BloomFilterBytesRead   atomic.Int64
	RowsScanned            atomic.Int64
	CompressedBytesRead    atomic.Int64
	// PagesSkipped are the pages of filtered columns whose page-index statistics
	// exclude a filter, counted once per row group read.
	PagesSkipped atomic.Int64
	// CompressedBytesSelected is the part of CompressedBytesRead in the pages the
	// page index leaves to read (whole chunks where a column has no offset index).
	CompressedBytesSelected atomic.Int64
	// RowFilterRowsExamined and RowFilterRowsAdmitted are the rows a row filter
	// (late materialisation) ran on and kept: only the admitted rows have the rest of
	// the projection decoded.
	RowFilterRowsExamined atomic.Int64
	RowFilterRowsAdmitted atomic.Int64
	// RowGroupsFilterProved are the row groups read whose statistics proved some of
	// the filter's conjuncts true on every row: those conjuncts did not run on them,
	// and columns only they read were not decoded.
	RowGroupsFilterProved atomic.Int64
	// Limit, when set, is the statement's max_rows_scanned breaker, shared by all its
	// scans: every batch read is charged to it and a read past it fails.
	Limit *RowLimit
}

// RowLimit is a statement's breaker on the rows its scans read (max_rows_scanned):
// scans charge every batch they decode, in any worker, and the charge that takes the
// total past Max fails with the error Trip makes. Safe for concurrent use.
type RowLimit struct {
	// Max is the most rows the statement's scans may read.
	Max int64
	// Trip makes the error of the charge that went past Max (and may stop the rest
	// of the statement, e.g. by canceling its context); called once.
	Trip  func(scanned int64) error
	total atomic.Int64
	once  sync.Once
	err   error
}

// charge adds rows to the total and fails once the total is past Max.
func (l *RowLimit) charge(rows int64) error {
	if l == nil {
		return nil
	}
	n := l.total.Add(rows)
	if n <= l.Max {
		return nil
	}
	l.once.Do(func() { l.err = l.Trip(n) })
	return l.err
}

// Snapshot is a plain copy of Counters, as it appears in a query record.
type Snapshot struct {
	FilesPrunedByPartition  int64 `json:"files_pruned_by_partition"`
	FilesConsidered         int64 `json:"files_considered"`
	FilesSkipped            int64 `json:"files_skipped"`
	FilesOpened             int64 `json:"files_opened"`
	RowGroupsConsidered     int64 `json:"row_groups_considered"`
	RowGroupsPruned         int64 `json:"row_groups_pruned"`
	RowGroupsAnswered       int64 `json:"row_groups_answered"`
	RowGroupsRead           int64 `json:"row_groups_read"`
	RowGroupsPrunedByBloom  int64 `json:"row_groups_pruned_by_bloom"`
	BloomFiltersRead        int64 `json:"bloom_filters_read"`
	BloomFilterBytesRead    int64 `json:"bloom_filter_bytes_read"`
	RowsScanned             int64 `json:"rows_scanned"`
	CompressedBytesRead     int64 `json:"compressed_bytes_read"`
	PagesSkipped            int64 `json:"pages_skipped"`
	CompressedBytesSelected int64 `json:"compressed_bytes_selected"`
	RowFilterRowsExamined   int64 `json:"row_filter_rows_examined"`
	RowFilterRowsAdmitted   int64 `json:"row_filter_rows_admitted"`
	RowGroupsFilterProved   int64 `json:"row_groups_filter_proved"`
}

// Snapshot copies the counters.
func (c *Counters) Snapshot() Snapshot {
	return Snapshot{
		FilesPrunedByPartition:  c.FilesPrunedByPartition.Load(),
		FilesConsidered:         c.FilesConsidered.Load(),
		FilesSkipped:            c.FilesSkipped.Load(),
		FilesOpened:             c.FilesOpened.Load(),
		RowGroupsConsidered:     c.RowGroupsConsidered.Load(),
		RowGroupsPruned:         c.RowGroupsPruned.Load(),
		RowGroupsAnswered:       c.RowGroupsAnswered.Load(),
		RowGroupsRead:           c.RowGroupsRead.Load(),
		RowGroupsPrunedByBloom:  c.RowGroupsPrunedByBloom.Load(),
		BloomFiltersRead:        c.BloomFiltersRead.Load(),
		BloomFilterBytesRead:    c.BloomFilterBytesRead.Load(),
		RowsScanned:             c.RowsScanned.Load(),
		CompressedBytesRead:     c.CompressedBytesRead.Load(),
		PagesSkipped:            c.PagesSkipped.Load(),
		CompressedBytesSelected: c.CompressedBytesSelected.Load(),
		RowFilterRowsExamined:   c.RowFilterRowsExamined.Load(),
		RowFilterRowsAdmitted:   c.RowFilterRowsAdmitted.Load(),
		RowGroupsFilterProved:   c.RowGroupsFilterProved.Load(),
	}
}
