package lore

import (
	"context"
	"sync"

	"github.com/loredb/lore/exec"
)

// Live states of a statement's Progress.
const (
	// ProgressQueued: the statement waits for admission (Options.MaxRunning).
	ProgressQueued = "queued"
	// ProgressRunning: the statement runs (or binds and plans, before it would wait).
	ProgressRunning = "running"
)

// Progress is the live state of one statement, for a server's GET /v1/queries/{id}:
// whether it waits for admission or runs, and how far its scans are. The engine
// updates it as the statement goes (WithProgress); Snapshot may be called at any
// time from any goroutine.
type Progress struct {
	mu    sync.Mutex
	state string
	scans []*exec.ScanStats
}

// ProgressSnapshot is a Progress at one moment. Files are done when pruned by
// partition, skipped by their statistics, or opened (their footer read: planning
// reads every footer before the row groups); row groups when pruned, answered from
// statistics or read. Planned counts grow while scans plan.
type ProgressSnapshot struct {
	State            string `json:"-"`
	FilesDone        int64  `json:"files_done"`
	FilesPlanned     int64  `json:"files_planned"`
	RowGroupsDone    int64  `json:"row_groups_done"`
	RowGroupsPlanned int64  `json:"row_groups_planned"`
	RowsScanned      int64  `json:"rows_scanned"`
	BytesRead        int64  `json:"bytes_read"`
}

// NewProgress returns the Progress of a statement not yet started.
func NewProgress() *Progress { return &Progress{state: ProgressRunning} }

type progressKey struct{}

// WithProgress makes the statements run with ctx report their live state to p.
func WithProgress(ctx context.Context, p *Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// progressOf is the Progress of ctx's statement, or nil.
func progressOf(ctx context.Context) *Progress {
	p, _ := ctx.Value(progressKey{}).(*Progress)
	return p
}

func (p *Progress) setState(s string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.state = s
	p.mu.Unlock()
}

// addScan follows one more of the statement's scans (exec.Env.OnScan).
func (p *Progress) addScan(s *exec.ScanStats) {
	p.mu.Lock()
	p.scans = append(p.scans, s)
	p.mu.Unlock()
}

// Snapshot reads the statement's state and its scans' counters now.
func (p *Progress) Snapshot() ProgressSnapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := ProgressSnapshot{State: p.state}
	for _, s := range p.scans {
		c := s.Counters.Snapshot()
		if l := s.Node.Ref.Listing; l != nil {
			out.FilesPlanned += int64(len(l.Files))
		}
		out.FilesDone += c.FilesPrunedByPartition + c.FilesSkipped + c.FilesOpened
		out.RowGroupsPlanned += c.RowGroupsConsidered
		out.RowGroupsDone += c.RowGroupsPruned + c.RowGroupsAnswered + c.RowGroupsRead
		out.RowsScanned += c.RowsScanned
		out.BytesRead += c.CompressedBytesRead
	}
	return out
}
