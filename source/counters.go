package source

import "sync/atomic"

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
	RowsScanned            atomic.Int64
	CompressedBytesRead    atomic.Int64
}

// Snapshot is a plain copy of Counters, as it appears in a query record.
type Snapshot struct {
	FilesPrunedByPartition int64 `json:"files_pruned_by_partition"`
	FilesConsidered        int64 `json:"files_considered"`
	FilesSkipped           int64 `json:"files_skipped"`
	FilesOpened            int64 `json:"files_opened"`
	RowGroupsConsidered    int64 `json:"row_groups_considered"`
	RowGroupsPruned        int64 `json:"row_groups_pruned"`
	RowGroupsAnswered      int64 `json:"row_groups_answered"`
	RowGroupsRead          int64 `json:"row_groups_read"`
	RowsScanned            int64 `json:"rows_scanned"`
	CompressedBytesRead    int64 `json:"compressed_bytes_read"`
}

// Snapshot copies the counters.
func (c *Counters) Snapshot() Snapshot {
	return Snapshot{
		FilesPrunedByPartition: c.FilesPrunedByPartition.Load(),
		FilesConsidered:        c.FilesConsidered.Load(),
		FilesSkipped:           c.FilesSkipped.Load(),
		FilesOpened:            c.FilesOpened.Load(),
		RowGroupsConsidered:    c.RowGroupsConsidered.Load(),
		RowGroupsPruned:        c.RowGroupsPruned.Load(),
		RowGroupsAnswered:      c.RowGroupsAnswered.Load(),
		RowGroupsRead:          c.RowGroupsRead.Load(),
		RowsScanned:            c.RowsScanned.Load(),
		CompressedBytesRead:    c.CompressedBytesRead.Load(),
	}
}
