package lore

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/types"
)

// Estimate is a dry run's account of what a statement would read (SPEC §13): the
// plan's pruning worked out from the statistics record and the files' footers,
// without reading data. The figures are upper bounds: the page index, bloom filters
// and values known only while running (a subquery's) may read less.
type Estimate struct {
	// Mode is how the statement would be answered: "context" (from statistics: no
	// reads) or "scan".
	Mode string `json:"mode"`
	// Files, RowGroups, Rows and Bytes are what would be read over all scans: files
	// with a row group to read, those row groups, their rows and the compressed bytes
	// of the column chunks read.
	Files     int64 `json:"files"`
	RowGroups int64 `json:"row_groups"`
	Rows      int64 `json:"rows"`
	Bytes     int64 `json:"bytes"`
	// Scans is the same per scan, with what pruning left out.
	Scans []ScanEstimate `json:"scans"`
}

// ScanEstimate is what one scan would read and what pruning spares it.
type ScanEstimate struct {
	Table                  string `json:"table"`
	Location               string `json:"location"`
	FilesPrunedByPartition int64  `json:"files_pruned_by_partition"`
	FilesConsidered        int64  `json:"files_considered"`
	FilesSkipped           int64  `json:"files_skipped"`
	// FilesOpened is how many footers planning read (or found cached).
	FilesOpened         int64 `json:"files_opened"`
	RowGroupsConsidered int64 `json:"row_groups_considered"`
	RowGroupsPruned     int64 `json:"row_groups_pruned"`
	RowGroupsAnswered   int64 `json:"row_groups_answered"`
	Files               int64 `json:"files"`
	RowGroups           int64 `json:"row_groups"`
	Rows                int64 `json:"rows"`
	Bytes               int64 `json:"bytes"`
}

// Estimate is a dry run of a query: what it would read, as Query with the setting
// dry_run = true finds it, without running it. The query record (mode "dry_run") is
// kept in the query log like any other.
func (e *Engine) Estimate(ctx context.Context, text string, settings map[string]string) (*Estimate, error) {
	s := make(map[string]string, len(settings)+1)
	for k, v := range settings {
		s[k] = v
	}
	s["dry_run"] = "true"
	res, err := e.Query(ctx, text, s)
	if err != nil {
		return nil, err
	}
	if res.Record == nil || res.Record.Estimate == nil {
		// SET SESSION dry_run = false in the text turned the dry run off.
		return nil, errs.New(errs.InvalidSetting, "the statement turned dry_run off: Estimate runs nothing")
	}
	return res.Record.Estimate, nil
}

// dryRun plans node's scans and answers with one row of what they would read; a
// statement answered from statistics reads nothing.
func (e *Engine) dryRun(ctx context.Context, env *exec.Env, node plan.Node, rec *Record) (*Result, error) {
	est := &Estimate{Mode: rec.Execution.Mode, Scans: []ScanEstimate{}}
	if est.Mode != "context" {
		scans, err := exec.Estimate(ctx, env, node)
		if err != nil {
			return nil, err
		}
		for _, sc := range scans {
			est.Scans = append(est.Scans, ScanEstimate{Table: sc.Node.Ref.Name, Location: sc.Node.Ref.Location,
				FilesPrunedByPartition: sc.FilesPrunedByPartition, FilesConsidered: sc.FilesConsidered,
				FilesSkipped: sc.FilesSkipped, FilesOpened: sc.FilesOpened, RowGroupsConsidered: sc.RowGroupsConsidered,
				RowGroupsPruned: sc.RowGroupsPruned, RowGroupsAnswered: sc.RowGroupsAnswered,
				Files: sc.Files, RowGroups: sc.RowGroups, Rows: sc.Rows, Bytes: sc.Bytes})
			est.Files += sc.Files
			est.RowGroups += sc.RowGroups
			est.Rows += sc.Rows
			est.Bytes += sc.Bytes
		}
	}
	rec.Estimate = est
	rec.Execution.Mode = "dry_run"
	fields := []arrow.Field{{Name: "mode", Type: types.String}, {Name: "files", Type: types.Int64},
		{Name: "row_groups", Type: types.Int64}, {Name: "rows", Type: types.Int64}, {Name: "bytes", Type: types.Int64}}
	row := []types.Value{types.StringValue(est.Mode), types.IntValue(est.Files), types.IntValue(est.RowGroups),
		types.IntValue(est.Rows), types.IntValue(est.Bytes)}
	return valuesResult(fields, [][]types.Value{row}), nil
}
